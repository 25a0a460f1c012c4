"""`dbdrift system check`: print host facts, what perf and valgrind can measure here, and
warnings with a concrete fix each. Advice only: exits 0 even with warnings, changes nothing."""
from __future__ import annotations

import argparse
import json
import sys

from dbdrift.app import system as use_case
from dbdrift.cli import options
from dbdrift.report.system import render_text


EXAMPLES = """\
examples:
  dbdrift system check                          host facts, then each warning with its fix
  dbdrift system check --steal-window 10s       watch CPU steal longer (a VM on a busy host)
  dbdrift system check --format json -o host.json

exit status: 0 checked, warnings included (advice only: it changes nothing), 2 input refused
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
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
