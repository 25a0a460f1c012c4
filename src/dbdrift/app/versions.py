"""The version catalogue: every server version a target's `version = "…"` can fetch, per engine,
from which sources, and which are already in the cache."""
from __future__ import annotations

from itertools import groupby

from dbdrift import env
from dbdrift.model import ENGINES, JsonObject, version_key
from dbdrift.results.outcomes import VersionsOutcome as VersionsOutcome  # the record report/ renders
from dbdrift.server import engines
from dbdrift.server.versions import SOURCE_ABOUT, SOURCES


def run(chosen: list[str] | None) -> VersionsOutcome:
    return VersionsOutcome([listing(engine) for engine in chosen or ENGINES], env.cache_dir())


def listing(engine: str) -> JsonObject:
    """One engine's versions with their builds and cache state, its sources (and why one could not
    be asked), and the cached versions no source lists any more."""
    catalogue = engines.catalogue(engine, env.cache_dir())
    builds = catalogue.all_builds()
    cached = {entry.version for entry in engines.cached_builds(engine, env.cache_dir())}
    versions = []
    for version, group in groupby(sorted(builds, key=lambda b: (version_key(b.version), b.version)),
                                  key=lambda b: b.version):
        versions.append({"version": version, "cached": version in cached,
                         "builds": [{"source": b.source, "detail": b.detail, **({"suite": b.suite} if b.suite else {})}
                                    for b in group]})
    sources = []
    for source in SOURCES[engine]:
        error = catalogue.errors.get(source)
        sources.append({"source": source, "about": SOURCE_ABOUT[(engine, source)],
                        **({"error": error.message, "hint": error.hint} if error else {})})
    return {"engine": engine, "sources": sources, "versions": versions,
            "cached_only": sorted(cached - {v["version"] for v in versions}, key=version_key)}
