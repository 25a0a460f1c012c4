"""`dbdrift catalog`: list microbenchmarks with group, statements per event and SQL."""
from __future__ import annotations

import argparse
import json
import sys

from dbdrift.workloads.sysbench.catalog import CATALOG, GROUP_TITLES, describe, report_order, select_tests
from dbdrift.cli import options
from dbdrift.model import ENGINES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_format(parser, ("text", "json"), "text: the tests by group with their SQL; json: name, group, "
                                                 "statements per event and SQL of each test")
    options.add_tests(parser, "list only these (default: everything)")
    parser.add_argument("--engine", default="postgres", choices=ENGINES)


def main(args: argparse.Namespace) -> int:
    names = [t.name for t in select_tests(options.split_list(args.tests))] if args.tests else list(CATALOG)
    entries = [describe(CATALOG[n], args.engine) for n in report_order(names)]
    if args.format == "json":
        sys.stdout.write(json.dumps(entries, indent=2) + "\n")
        return 0
    group = None
    for e in entries:
        if e["group"] != group:
            group = e["group"]
            sys.stdout.write(f"\n== {GROUP_TITLES[group]}\n")
        sets = ",".join(s for s, on in (("32", e["in_default32"]), ("42", e["in_all42"])) if on) or "-"
        sys.stdout.write(f"{e['name']:<34} {e['rw']:<3} stmts/event={e['statements_per_event']:<3} "
                         f"sets={sets:<5} {e['lua']}\n")
        for sql in e["sql"]:
            sys.stdout.write(f"    {sql if len(sql) < 150 else sql[:147] + '...'}\n")
    return 0
