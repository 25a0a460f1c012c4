"""The version catalogue: every server version a target's `version = "…"` can fetch, per engine,
from which sources, and which are already in the cache."""
from __future__ import annotations

from itertools import groupby

from dbdrift import env
from dbdrift.model import ENGINES, JsonObject, version_key
from dbdrift.results.outcomes import VersionsOutcome as VersionsOutcome  # the record report/ renders
from dbdrift.server import engines
from dbdrift.server.versions import SOURCE_ABOUT, SOURCES, source_named


def run(chosen: list[str] | None, source: str | None = None) -> VersionsOutcome:
    """Every engine's catalogue (or `chosen`'s); `source`: only that source's versions (`debian`,
    `debian-sid`), of the engines that have it."""
    names = list(chosen or ENGINES)
    if source is None:
        return VersionsOutcome([listing(engine) for engine in names], env.cache_dir())
    kind, suite = source_named(source, names)
    if chosen:
        for engine in chosen:
            source_named(source, [engine])  # an engine asked for by name must have it
    return VersionsOutcome([listing(engine, kind, suite) for engine in names if kind in SOURCES[engine]],
                           env.cache_dir())


def listing(engine: str, source: str | None = None, suite: str | None = None) -> JsonObject:
    """One engine's versions with their builds and cache state, its sources (and why one could not
    be asked, or which Debian suites could not be read), and the cached versions no source lists
    any more; `source` (and a Debian `suite`): that source's builds only."""
    catalogue = engines.catalogue(engine, env.cache_dir())
    builds = [b for b in (catalogue.builds(source) if source else catalogue.all_builds())
              if suite is None or b.suite == suite]
    cached = {entry.version for entry in engines.cached_builds(engine, env.cache_dir())}
    versions = []
    for version, group in groupby(sorted(builds, key=lambda b: (version_key(b.version), b.version)),
                                  key=lambda b: b.version):
        versions.append({"version": version, "cached": version in cached,
                         "builds": [{"source": b.source, "detail": b.detail, **({"suite": b.suite} if b.suite else {})}
                                    for b in group]})
    sources = []
    for name in [source] if source else SOURCES[engine]:
        error = catalogue.errors.get(name)
        unread = [{"suite": name_of, "error": exc.message, "hint": exc.hint} for name_of, exc in catalogue.unread.items()
                  if name == "debian" and suite in (None, name_of)]
        sources.append({"source": name, "about": SOURCE_ABOUT[(engine, name)],
                        **({"error": error.message, "hint": error.hint} if error else {}),
                        **({"unread": unread} if unread else {})})
    return {"engine": engine, "sources": sources, "versions": versions,
            "cached_only": [] if source else sorted(cached - {v["version"] for v in versions}, key=version_key)}
