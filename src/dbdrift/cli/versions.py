"""`dbdrift versions`: the server versions a target's `version = "…"` can fetch, per engine,
and which of them are already in the cache."""
from __future__ import annotations

import argparse
import json
import sys

from dbdrift import env
from dbdrift.errors import UserError
from dbdrift.model import ENGINES
from dbdrift.server import engines
from dbdrift.server.fetch import short_version


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engine", choices=ENGINES, action="append",
                        help="only this engine (repeatable; default: all)")
    parser.add_argument("--format", choices=("text", "json"), default="text")


def main(args: argparse.Namespace) -> int:
    """One block per engine; an unreachable registry is reported for its engine and the
    others are still listed (exit status 1 then)."""
    listing, failed = [], False
    for engine in args.engine or ENGINES:
        cached = engines.cached_versions(engine, env.cache_dir())
        if engine == "postgres":
            cached = list(dict.fromkeys(short_version(c) for c in cached))
        try:
            source, versions = engines.fetchable_versions(engine)
            listing.append({"engine": engine, "source": source, "versions": versions, "cached": cached})
        except UserError as exc:
            failed = True
            listing.append({"engine": engine, "error": exc.message, "hint": exc.hint, "cached": cached})
    if args.format == "json":
        sys.stdout.write(json.dumps(listing, indent=2) + "\n")
        return 1 if failed else 0
    for entry in listing:
        if "error" in entry:
            sys.stdout.write(f"{entry['engine']}: cannot list: {entry['error']}\n  hint: {entry['hint']}\n")
            if entry["cached"]:
                sys.stdout.write(f"  cached: {', '.join(entry['cached'])}\n")
            continue
        marked = [v + ("*" if v in entry["cached"] else "") for v in entry["versions"]]
        sys.stdout.write(f"{entry['engine']} ({entry['source']}):\n  {_wrap(marked)}\n")
    sys.stdout.write(f"* cached in {env.cache_dir()}; use one as version = \"…\" in a target\n")
    return 1 if failed else 0


def _wrap(words: list[str], width: int = 96) -> str:
    lines, line = [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    lines.append(line)
    return "\n  ".join(lines)
