"""`dbdrift bloat A B [C ...]`: how big each target's server binary is, as-is and stripped, with
its text, data and bss and the libraries it loads from its own install, in MB and relative to
the first target (the posts' "version as-is stripped" table). Targets are named as for
`compare` (versions are fetched when not cached). With `--build-dir NAME=DIR` for two targets
or more, the object files of their source builds that grew most."""
from __future__ import annotations

import argparse
import json
import sys

from dbdrift.app import bloat as use_case
from dbdrift.cli import options
from dbdrift.cli.progress import ConsoleProgress
from dbdrift.report.bloat import render_text

EXAMPLES = """\
examples:
  dbdrift bloat 16.9 17.10 18.4                      PostgreSQL's postgres binary per release
  dbdrift bloat mysql:5.7.22 mysql:8.0.15 mysql:8.0.31
  dbdrift bloat old=/opt/mysql-8.0 new=/opt/mysql-9.0 --build-dir old=~/src/8.0/build --build-dir new=~/src/9.0/build

exit status: 0 measured, 1 a build could not be fetched or read, 2 input refused (a target or version
that does not exist), 130 interrupted
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("targets", nargs="+", metavar="TARGET",
                        help="VERSION, ENGINE:VERSION, ENGINE:system or an install directory, optionally NAME=...")
    parser.add_argument("--build-dir", action="append", default=[], metavar="NAME=DIR",
                        help="a target's source build tree (object files); the largest growth of its *.o files "
                             "against the first target that has one is listed")
    options.add_verbosity(parser)
    parser.add_argument("--top", type=int, default=15, help="object files to list (default 15)")
    options.add_format(parser, ("text", "json"), "text: a table per target; json: every size of every target")


def main(args: argparse.Namespace) -> int:
    outcome = use_case.run(args.targets, args.build_dir, args.top, ConsoleProgress(verbosity=args.verbosity))
    if args.format == "json":
        sys.stdout.write(json.dumps(outcome.as_dict(), indent=2) + "\n")
    else:
        sys.stdout.write(render_text(outcome))
    return 0
