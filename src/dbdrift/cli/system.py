"""`dbdrift system check`: print host facts, what perf and valgrind can measure here, and
warnings with a concrete fix each. Advice only: exits 0 even with warnings, changes nothing."""
from __future__ import annotations

import argparse
import json
import sys

from dbdrift.app import system as use_case
from dbdrift.cli import options
from dbdrift.report.system import render_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("check",), help="check: host facts, perf support and warnings")
    options.add_format(parser, ("text", "json"), "text: facts, then warnings with hints; json: the facts, warnings, "
                                                 "perf probe and valgrind path")
    parser.add_argument("--steal-window", type=options.duration("--steal-window", positive=False), default="1s",
                        metavar="DURATION",
                        help="how long to watch CPU steal in /proc/stat (default: 1s; 0 skips it)")


def main(args: argparse.Namespace) -> int:
    report = use_case.check(args.steal_window)
    if args.format == "json":
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(report))
    return 0
