"""Server builds from Debian's archive: every suite's signed index, each .deb checked against
it, unpacked without dpkg, with the shared libraries the server needs from the same suite.

A suite's InRelease is verified with gpgv and the archive keyring when both are present (the
result says so when they are not); the Packages index must match the SHA256 InRelease gives,
and every .deb the SHA256 its index gives. Indexes are cached under
`<cache>/debian/<mirror>/<suite>/` by hash, so a cached build and a recent listing need no
network. This module downloads and unpacks; relocate.py makes the tree run on this host.
"""
from __future__ import annotations

import hashlib
import json
import lzma
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from dbdrift.env import CacheError, ensure_cache_dir, ensure_dir
from dbdrift.errors import UserError
from dbdrift.model import version_key
from dbdrift.server.debformat import (Package, Release, closure, package_for, parse_packages, parse_release,
                                      unpack_deb, upstream_version)
from dbdrift.server.fetch import FetchSpec, Progress, Registry, download, fetch_document

DEBIAN = Registry("Debian archive", "DBDRIFT_DEBIAN_MIRROR", "https://deb.debian.org/debian")
DEBIAN_SECURITY = Registry("Debian security archive", "DBDRIFT_DEBIAN_SECURITY_MIRROR",
                           "https://deb.debian.org/debian-security")
KEYRING_ENV = "DBDRIFT_DEBIAN_KEYRING"
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
ARCH = "amd64"
INDEX_FRESH_S = 3600.0  # an InRelease younger than this is not asked for again


@dataclass(frozen=True)
class Suite:
    name: str
    security: bool = False
    overlays: str | None = None  # the suite it adds to: its packages' libraries come from there

    @property
    def registry(self) -> Registry:
        return DEBIAN_SECURITY if self.security else DEBIAN


# The order of preference when several suites carry one upstream version: the oldest release
# first (a stable suite's build, with its security update before it), the development ones last.
SUITES = (
    Suite("bullseye-security", True, "bullseye"), Suite("bullseye"),
    Suite("bookworm-security", True, "bookworm"), Suite("bookworm"),
    Suite("trixie-security", True, "trixie"), Suite("trixie"),
    Suite("forky"), Suite("sid"), Suite("experimental", overlays="sid"),
)
SUITE_NAMES = tuple(s.name for s in SUITES)

# engine -> the package that holds the server, by name (group 1, if any, is the major)
SERVER_PACKAGES = {
    "postgres": re.compile(r"postgresql-(\d+)"),
    "mysql": re.compile(r"mysql-server-core(?:-\d+\.\d+)?"),
    "mariadb": re.compile(r"mariadb-server-core(?:-\d+\.\d+)?"),
}
# Unpacked but not kept: documentation, manuals, translations of messages, lintian data.


@dataclass(frozen=True)
class Offer:
    """A server build a suite carries: `version` upstream ("19rc1", "11.8.9")."""

    engine: str
    version: str
    suite: str
    package: str
    deb_version: str  # "19~rc1-1", "1:11.8.9+ds-4"

    @property
    def build(self) -> str:
        """The cache entry's name: debian-<suite>-<package version without epoch>."""
        return f"debian-{self.suite}-{self.deb_version.split(':', 1)[-1]}"


# --- the archive --------------------------------------------------------------------------


class Archive:
    """Debian's suites as this host reaches them (mirrors from DBDRIFT_DEBIAN_MIRROR and
    DBDRIFT_DEBIAN_SECURITY_MIRROR), with the indexes cached under `cache_dir/debian/`."""

    def __init__(self, cache_dir: Path, say: Progress | None = None) -> None:
        self.cache_dir = cache_dir
        self.say = say or (lambda _message: None)
        self._indexes: dict[str, dict[str, Package]] = {}
        self._releases: dict[str, Release] = {}

    def suite_dir(self, suite: Suite) -> Path:
        host = urllib.parse.urlsplit(suite.registry.url).netloc or "mirror"
        return self.cache_dir / "debian" / re.sub(r"[^A-Za-z0-9._-]", "_", host) / suite.name

    # Release files

    def release(self, suite: Suite, offline_ok: bool = True) -> Release:
        """The suite's InRelease, fetched when the cached one is older than INDEX_FRESH_S or
        cannot be used (damaged, another suite's); a cached one is used (and said) when the
        archive cannot be reached. Valid-Until is not enforced: mirrors and snapshots serve
        suites past it, and the signature and the hashes hold the files to Debian regardless."""
        if suite.name in self._releases:
            return self._releases[suite.name]
        path = self.suite_dir(suite) / "InRelease"
        release = None
        if path.is_file() and time.time() - path.stat().st_mtime < INDEX_FRESH_S:
            release = self._cached_release(suite, path)
        if release is None:
            release = self._fetched_release(suite, path, offline_ok)
        self._releases[suite.name] = release
        return release

    def _cached_release(self, suite: Suite, path: Path) -> Release | None:
        """The cached InRelease, or None (said) when it cannot be used: it is fetched again."""
        try:
            return read_release(suite, path)
        except UserError as exc:
            self.say(f"debian {suite.name}: the cached {path} cannot be used ({exc.message}); fetching it again")
            return None

    def _fetched_release(self, suite: Suite, path: Path, offline_ok: bool) -> Release:
        """The InRelease from the mirror, checked before it replaces the cached one; the cached
        one when the mirror cannot be reached and it can be used."""
        url = f"{suite.registry.url}/dists/{suite.name}/InRelease"
        try:
            body = fetch_document(suite.registry, url)
        except UserError as unreachable:
            if not (offline_ok and path.is_file()):
                raise
            try:
                release = read_release(suite, path)
            except UserError as damage:
                raise UserError(f"{unreachable.message}; the cached {path} cannot be used either ({damage.message})",
                                f"{unreachable.hint}; the damaged file may be removed: it is fetched again once "
                                "the archive answers") from None
            self.say(f"debian {suite.name}: archive unreachable, using the index cached "
                     f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(path.stat().st_mtime))}")
            return release
        if body is None:
            raise UserError(f"{url} is missing: the {suite.registry.label} has no suite {suite.name}",
                            f"check {suite.registry.env_var} (a mirror must carry dists/{suite.name})")
        with _staging(path.parent) as tmp:
            fetched = Path(tmp) / "InRelease"
            fetched.write_bytes(body)
            try:
                release = read_release(suite, fetched)
            except UserError as exc:
                raise UserError(f"debian {suite.name}: {url} cannot be used: {exc.message}",
                                "retry; if it persists, the mirror or a proxy serves a wrong or damaged file: "
                                f"try another mirror ({suite.registry.env_var})") from None
            _write_whole(path, body)
        return release

    # Packages indexes

    def index(self, suite: Suite) -> dict[str, Package]:
        """Every binary package of the suite's main/binary-amd64 index, by name (the newest
        version when the index lists several)."""
        if suite.name not in self._indexes:
            self._indexes[suite.name] = parse_packages(self._index_text(suite))
        return self._indexes[suite.name]

    def closure_index(self, suite: Suite) -> dict[str, Package]:
        """The index a suite's packages take their libraries from: its own, over the suite it
        adds to (experimental over sid, a security suite over its release)."""
        index = self.index(suite)
        return {**self.index(suite_named(suite.overlays)), **index} if suite.overlays else index

    def offers(self, suite: Suite, engine: str) -> list[Offer]:
        """The server builds of `engine` the suite carries, read from a digest of its index
        cached beside it (an index is 40-60 MB of text); a digest that names another suite or
        index than the InRelease does, or cannot be read, is made again from the index."""
        release = self.release(suite)
        sha256 = release.files.get(_INDEX_PATH, ("", 0))[0]
        digest = self.suite_dir(suite) / f"offers-{sha256[:16]}.json"
        rows = _digest_rows(digest, suite.name, sha256)
        if rows is None:
            if digest.exists():
                self.say(f"debian {suite.name}: the cached {digest} does not match the suite's index; made again")
            rows = [(p.name, p.version) for p in self.index(suite).values()
                    if any(rx.fullmatch(p.name) for rx in SERVER_PACKAGES.values())
                    or _PGVECTOR.fullmatch(p.name)]
            _write_whole(digest, json.dumps({"suite": suite.name, "index_sha256": sha256, "servers": rows}).encode())
        found = []
        for name, deb_version in rows:
            if SERVER_PACKAGES[engine].fullmatch(name):
                found.append(Offer(engine, upstream_version(deb_version), suite.name, name, deb_version))
        return sorted(found, key=lambda o: version_key(o.version))

    def _index_text(self, suite: Suite) -> str:
        """The suite's Packages index as text: the cached copy when it matches the SHA256 and
        size InRelease gives (else said, and downloaded again), a download checked the same way."""
        release = self.release(suite)
        if _INDEX_PATH not in release.files:
            raise UserError(f"debian {suite.name}: its InRelease lists no {_INDEX_PATH}",
                            f"the mirror ({suite.registry.env_var}) may not carry {ARCH}")
        sha256, size = release.files[_INDEX_PATH]
        path = self.suite_dir(suite) / f"Packages-{sha256[:16]}.xz"
        if path.is_file():
            try:
                check_sha256(path, sha256, size, f"{suite.name}/{_INDEX_PATH}", suite.registry)
            except UserError:
                self.say(f"debian {suite.name}: the cached {path} does not match its InRelease; fetching it again")
                path.unlink(missing_ok=True)
        if not path.is_file():
            url = f"{suite.registry.url}/dists/{suite.name}/{_INDEX_PATH}"
            with _staging(path.parent) as tmp:
                got = download(suite.registry, url, Path(tmp), f"debian {suite.name} index", self.say)
                check_sha256(got, sha256, size, f"{suite.name}/{_INDEX_PATH}", suite.registry)
                os.replace(got, path)
            for old in path.parent.glob("Packages-*.xz"):  # one index per suite is kept
                if old != path:
                    old.unlink(missing_ok=True)
        try:
            return lzma.decompress(path.read_bytes()).decode("utf-8", "replace")
        except lzma.LZMAError as exc:  # it matched InRelease's SHA256: the suite itself is broken
            raise UserError(f"debian {suite.name}: its index {_INDEX_PATH} is not xz ({exc})",
                            f"the mirror ({suite.registry.env_var}) serves a broken suite; try another mirror") from None

    # fetching a build

    def fetch(self, offer: Offer, dest: Path, extra: tuple[str, ...] = ()) -> list[Package]:
        """Download the offer's package, `extra` packages of the same suite when it has them,
        and the libraries they depend on (their Depends, followed through library packages
        only), each checked against the index; unpack all into `dest`. The packages used."""
        suite = suite_named(offer.suite)
        index = self.closure_index(suite)
        packages = closure(index, [offer.package, *extra_in(index, extra)])
        total = sum(p.size for p in packages)
        self.say(f"{offer.engine} {offer.version}: {len(packages)} packages from debian {offer.suite} "
                 f"({total / 1e6:.1f} MB): {', '.join(p.name for p in packages)}")
        own = {p.filename for p in self.index(suite).values()}
        beneath = suite_named(suite.overlays).registry if suite.overlays else suite.registry
        self._unpack([(suite.registry if p.filename in own else beneath, p) for p in packages], dest)
        return packages

    def _unpack(self, packages: list[tuple[Registry, Package]], dest: Path) -> None:
        """Download each package beside `dest`, check it against its index, unpack it into `dest`."""
        ensure_dir(dest)
        with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
            for registry, package in packages:
                deb = download(registry, f"{registry.url}/{package.filename}", Path(tmp),
                               f"{package.name} {package.version}", _quiet(self.say))
                check_sha256(deb, package.sha256, package.size, package.filename, registry)
                unpack_deb(deb, dest)
                deb.unlink()

    def carry_libraries(self, sonames: list[str], libdir: Path) -> list[str]:
        """Put the shared libraries `sonames` (and what they need but the C library) into
        `libdir`, from the stable suite of this host's C library (STABLE_GLIBC); the packages."""
        glibc = host_glibc()
        suite = suite_named(next((name for name, version in STABLE_GLIBC if version <= glibc), STABLE_GLIBC[-1][0]))
        index = self.index(suite)
        found = {s: package_for(s, index) for s in sonames}
        missing = [s for s, package in found.items() if package is None]
        if missing:
            raise UserError(f"no package of debian {suite.name} ships {', '.join(missing)}",
                            "report this; meanwhile install the library on the host")
        seeds = sorted({package for package in found.values() if package is not None})
        packages = [p for p in closure(index, seeds) if p.name not in GLIBC_PACKAGES]
        self.say(f"carrying {', '.join(sonames)} from debian {suite.name}: {', '.join(p.name for p in packages)} "
                 f"({sum(p.size for p in packages) / 1e6:.1f} MB)")
        ensure_dir(libdir)
        with tempfile.TemporaryDirectory(dir=libdir.parent) as tmp:
            root = Path(tmp) / "root"
            self._unpack([(suite.registry, p) for p in packages], root)
            for directory in (root / "lib" / "x86_64-linux-gnu", root / "usr" / "lib" / "x86_64-linux-gnu"):
                for path in sorted(directory.glob("*.so*")) if directory.is_dir() else []:
                    if not (libdir / path.name).exists():
                        shutil.move(str(path), libdir / path.name)
        return [p.name for p in packages]


def _write_whole(path: Path, body: bytes) -> None:
    """Write a file of the cache through a temp file of its own beside it, then rename: fetches
    may run at once, and none reads half a file or renames another's."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=ensure_cache_dir(path.parent))
    except OSError as exc:
        raise CacheError(f"cannot write into the build cache directory {path.parent}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(body)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise CacheError(f"cannot write {path}: {exc.strerror}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _staging(directory: Path) -> tempfile.TemporaryDirectory[str]:
    """A temp dir in the cache directory `directory` (made if need be) for a download checked
    before it is renamed into place."""
    try:
        return tempfile.TemporaryDirectory(dir=ensure_cache_dir(directory), prefix=".fetch-")
    except OSError as exc:
        raise CacheError(f"cannot write into the build cache directory {directory}: {exc.strerror}") from None


_INDEX_PATH = f"main/binary-{ARCH}/Packages.xz"
_PGVECTOR = re.compile(r"postgresql-(\d+)-pgvector")


def suite_named(name: str) -> Suite:
    for suite in SUITES:
        if suite.name == name:
            return suite
    raise UserError(f"unknown Debian suite {name!r}", f"suites: {', '.join(SUITE_NAMES)}")


def _quiet(say: Progress) -> Progress:
    """Per-package lines only for the slow ones: progress after the first PROGRESS_EVERY_S."""
    return lambda message: None if ": downloading " in message else say(message)


# --- verification ---------------------------------------------------------------------------


def read_release(suite: Suite, path: Path) -> Release:
    """The InRelease file `path` as the suite's: signed (when gpgv and the keyring are there),
    parsed, and naming `suite` in its Suite or Codename field (another suite's InRelease,
    validly signed, would hand over that suite's index); a UserError saying why not."""
    try:
        body = path.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}", f"check the permissions of {path.parent}") from None
    try:
        signature = verify_signature(path)
    except UserError as exc:  # the callers name the file
        raise UserError(exc.message.replace(f"{path}: ", ""), exc.hint) from None
    release = parse_release(suite.name, body, signature)
    if suite.name not in release.names:
        said = f"names the suite {' / '.join(release.names)}" if release.names else "names no suite"
        raise UserError(f"it {said}, not {suite.name} (Suite and Codename fields)",
                        f"a mirror ({suite.registry.env_var}) must serve each suite under dists/<suite>/")
    return release


def _digest_rows(digest: Path, suite: str, index_sha256: str) -> list[tuple[str, str]] | None:
    """The server packages a digest lists, when it is the digest of this suite's index (the
    one InRelease names); None when it is missing, damaged or another's."""
    try:
        data = json.loads(digest.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or (data.get("suite"), data.get("index_sha256")) != (suite, index_sha256):
        return None
    rows = data.get("servers")
    if not isinstance(rows, list) or not all(isinstance(r, list) and len(r) == 2 and all(isinstance(x, str) for x in r)
                                             for r in rows):
        return None
    return [(name, version) for name, version in rows]


def verify_signature(inrelease: Path) -> str:
    """gpgv over a clearsigned InRelease with the archive keyring. A bad signature refuses
    the suite; no gpgv or no keyring is said, not refused (the hashes still hold the files
    to the index, but nothing then holds the index to Debian)."""
    keyring = Path(os.environ.get(KEYRING_ENV, "") or KEYRING)
    gpgv = shutil.which("gpgv")
    if gpgv is None:
        return "signature not verified: no gpgv on this host"
    if not keyring.is_file():
        return f"signature not verified: no keyring {keyring} (set {KEYRING_ENV})"
    result = subprocess.run([gpgv, "--status-fd", "1", "--keyring", str(keyring), str(inrelease)],
                            capture_output=True, text=True, timeout=60)
    good = re.findall(r"^\[GNUPG:\] VALIDSIG (\S+)", result.stdout, re.M)
    if result.returncode != 0 or not good:
        why = [ln for ln in result.stderr.splitlines() if ln.strip()][-1:] or [f"gpgv exit {result.returncode}"]
        raise UserError(f"{inrelease}: signature check failed ({why[0].removeprefix('gpgv: ')})",
                        f"the mirror or a proxy serves an index Debian did not sign; remove {inrelease} "
                        f"and retry, or check {DEBIAN.env_var}")
    return f"signature verified by gpgv (key {good[0][-16:]})"


def check_sha256(path: Path, sha256: str, size: int, what: str, registry: Registry) -> None:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    actual_size = path.stat().st_size
    if digest.hexdigest() != sha256 or (size and actual_size != size):
        raise UserError(f"{what}: checksum mismatch (SHA256 {digest.hexdigest()[:16]}…, {actual_size} bytes; "
                        f"the index says {sha256[:16]}…, {size} bytes): refused",
                        f"retry; if it persists, the mirror or a proxy serves a damaged file: try another "
                        f"mirror ({registry.env_var})")


def fetch_spec(archive: Archive, offer: Offer, extra: tuple[str, ...] = ()) -> FetchSpec:
    """How to fetch a Debian server build into a cache entry (versions.py checks and relocates it)."""
    suite = suite_named(offer.suite)
    package = archive.index(suite)[offer.package]
    packages = closure(archive.closure_index(suite), [offer.package, *extra_in(archive.closure_index(suite), extra)])

    def fill(dest: Path, say: Progress) -> str:
        archive.say = say  # the fetch's progress, for the packages' lines too
        used = archive.fetch(offer, dest, extra)
        extras = [f"{p.name}={p.version}" for p in used if p.name in extra]
        return (f"debian:{offer.suite}:{offer.package}={offer.deb_version}"
                + (f"+{','.join(extras)}" if extras else "") + f" ({archive.release(suite).signature})")
    return FetchSpec(offer.build, f"debian {offer.suite} {offer.package} {offer.deb_version} and {len(packages) - 1} "
                     "more packages of its suite (libraries, pgvector)" if extra else
                     f"debian {offer.suite} {offer.package} {offer.deb_version} and {len(packages) - 1} "
                     "library packages of its suite", suite.registry, f"{suite.registry.url}/{package.filename}", fill,
                     sum(p.size for p in packages))


def extra_in(index: dict[str, Package], extra: tuple[str, ...]) -> list[str]:
    """The `extra` packages the index has (pgvector is packaged for some majors only)."""
    return [name for name in extra if name in index]


# --- libraries for builds that run on the host's C library ------------------------------------

# The stable suites by the C library they are built for: a build running on the host's C
# library takes the libraries it lacks from the newest suite this host's C library can run.
STABLE_GLIBC = (("trixie", (2, 41)), ("bookworm", (2, 36)), ("bullseye", (2, 31)))
GLIBC_PACKAGES = ("libc6", "libc-bin", "libc-gconv-modules-extra")


def host_glibc() -> tuple[int, ...]:
    name = os.confstr("CS_GNU_LIBC_VERSION") if "CS_GNU_LIBC_VERSION" in os.confstr_names else ""
    match = re.search(r"(\d+)\.(\d+)", name or "")
    if not match:
        raise UserError("this host's C library is not glibc", "dbdrift's fetched builds need a glibc Linux host")
    return (int(match.group(1)), int(match.group(2)))
