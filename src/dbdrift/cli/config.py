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
  dbdrift config show z12b                         a named file as a target of it gets it
  dbdrift config show z12a_c8r32 --version mysql:8.0.33   sized for the posts' 8-core, 32 GB host
  dbdrift config list                              the named files (z12a, z12b, z13a, cx10a, ...)
  dbdrift config cat z12c_sync                     one named file, with its comments

exit status: 0 printed, 2 input refused (a campaign file, key or target; a named file that does not exist)
"""
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    show = sub.add_parser("show", help="a campaign's targets, or a named file: each option, its value and where "
                                       "it came from")
    show.add_argument("campaign", type=Path, help="campaign file (TOML), or a named config (z12a, z12a_c8r32, ...)")
    show.add_argument("targets", nargs="*", metavar="TARGET", help="target names (default: all)")
    show.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="as for `dbdrift run`")
    show.add_argument("--variants", metavar="GLOBS", help="as for `dbdrift run`")
    show.add_argument("--version", metavar="[ENGINE:]VERSION",
                      help="a named config: the server version to show it for (default: each engine it is written "
                           "for, at the lowest version it covers)")
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
    elif not args.campaign.exists() and use_case.resolve(str(args.campaign)) is not None:
        configs = use_case.show_named(str(args.campaign), args.version)
    else:
        configs = use_case.show(args.campaign, options.campaign_sets(args), args.targets)
    if args.action == "show":
        sys.stdout.write(render_show(configs, args.written))
    return 0
