"""`dbdrift campaigns`: what a store holds, one line per campaign, for `report --campaign`."""
from __future__ import annotations

import argparse
import json
import sys

from dbdrift.app import campaigns as use_case
from dbdrift.cli import options
from dbdrift.report.campaigns import campaign_lines


EXAMPLES = """\
examples:
  dbdrift campaigns                             one line per campaign of ./dbdrift.db
  dbdrift campaigns --store nightly.db --format json    ids, targets and run counts, for scripts
  dbdrift report --campaign 3                   then the report of one of them (by name or id)

exit status: 0 listed (an empty store too), 1 a store that cannot be read, 2 no such store, or a file
that is not a dbdrift store
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    options.add_store(parser)
    options.add_format(parser, ("text", "json"), "text: one line per campaign; json: a list with ids, targets "
                                                 "and run counts")


def main(args: argparse.Namespace) -> int:
    store = options.open_store(args.store)
    try:
        listed = use_case.rows(store)
    finally:
        store.close()
    if args.format == "json":
        sys.stdout.write(json.dumps(listed, indent=2) + "\n")
        return 0
    if not listed:
        sys.stdout.write(f"{args.store} holds no campaign\n")
        return 0
    sys.stdout.write("".join(line + "\n" for line in campaign_lines(listed)))
    return 0
