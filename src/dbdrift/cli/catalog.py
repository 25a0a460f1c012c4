"""`dbdrift catalog`: list microbenchmarks with group, statements per event and SQL."""
from __future__ import annotations

import argparse
import json
import sys

from dbdrift.app import catalog as use_case
from dbdrift.app.inputs import ENGINES
from dbdrift.cli import options
from dbdrift.report.catalog import render_text


EXAMPLES = """\
examples:
  dbdrift catalog                               every test by group, with its SQL
  dbdrift catalog --tests point --engine mysql  the point-query group's SQL as MySQL runs it
  dbdrift catalog --format json -o tests.json   name, group, statements per event and SQL of each test

exit status: 0 listed, 2 an unknown test or group (the nearest names are suggested)
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    options.add_format(parser, ("text", "json"), "text: the tests by group with their SQL; json: name, group, "
                                                 "statements per event and SQL of each test")
    options.add_tests(parser, "list only these (default: everything)")
    parser.add_argument("--engine", default="postgres", choices=ENGINES)


def main(args: argparse.Namespace) -> int:
    listing = use_case.listing(options.split_list(args.tests) if args.tests else None, args.engine)
    if args.format == "json":
        sys.stdout.write(json.dumps(listing.entries, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(listing))
    return 0
