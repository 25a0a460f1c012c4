"""`dbdrift campaigns`: what a store holds, one line per campaign, for `report --campaign`."""
from __future__ import annotations

import argparse
import json
import sys

from dbdrift.app import campaigns as use_case
from dbdrift.cli import options
from dbdrift.report.campaigns import campaign_lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
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
