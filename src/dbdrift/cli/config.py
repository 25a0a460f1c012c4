"""`dbdrift config`: the configuration a campaign's targets get, and the named files dbdrift ships.

`config show FILE [TARGET ...]` prints every option a target's server is given, its final value
and where that came from (default, named file, user file, matrix level, settings, dbdrift), from
the same layers the server's configuration is written from (server/layers.py).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dbdrift.app import config as use_case
from dbdrift.app.config import NAMED
from dbdrift.cli import options
from dbdrift.report.config import render_named, render_show

EXAMPLES = """\
examples:
  dbdrift config show examples/matrix.toml         every target's options and where each came from
  dbdrift config show examples/matrix.toml my8-bl1_sync1_dw0 --written   one target, as its my.cnf is written
  dbdrift config list                              the named files: z12a, z13a, cx10a, cx10b
  dbdrift config cat z12a                          one named file, with its comments

exit status: 0 printed, 2 input refused (a campaign file, key or target; a named file that does not exist)
"""
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    show = sub.add_parser("show", help="a campaign's targets: each option, its value and where it came from")
    show.add_argument("campaign", type=Path, help="campaign file (TOML)")
    show.add_argument("targets", nargs="*", metavar="TARGET", help="target names (default: all)")
    show.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="as for `dbdrift run`")
    show.add_argument("--variants", metavar="GLOBS", help="as for `dbdrift run`")
    show.add_argument("--written", action="store_true",
                      help="print the configuration as written to the server, layer by layer, instead")
    sub.add_parser("list", help="the named configuration files shipped with dbdrift")
    cat = sub.add_parser("cat", help="print a named configuration file")
    cat.add_argument("name", help=f"one of {', '.join(NAMED)}")


def main(args: argparse.Namespace) -> int:
    if args.action == "list":
        sys.stdout.write(render_named(use_case.describe()))
    elif args.action == "cat":
        sys.stdout.write(use_case.named_file(args.name))
    else:
        configs = use_case.show(args.campaign, options.campaign_sets(args), args.targets)
        sys.stdout.write(render_show(configs, args.written))
    return 0
