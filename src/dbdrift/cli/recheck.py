"""`dbdrift recheck --pin-defaults`: run a stored campaign's regressions again (a sysbench
campaign's regressed cells; another workload whole) with each regressed target given its
reference's values of the defaults that differ, to see whether the regression followed them
(app/recheck.py builds the campaign; `run` executes it)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dbdrift.app import recheck as use_case
from dbdrift.cli import options
from dbdrift.errors import UserError
from dbdrift.report.campaign_file import to_toml

EXAMPLES = """\
examples:
  dbdrift recheck --pin-defaults                  the latest campaign's regressions, defaults pinned
  dbdrift recheck --pin-defaults --campaign pg18 --tests point-query
  dbdrift recheck --pin-defaults --print-campaign   the campaign it would run, as a file

The recheck is stored as campaign <name>-pinned; the original campaign's report then says in each
regression's why line whether it followed the defaults. A sysbench campaign reruns its regressed
cells; an Insert Benchmark, TPROC-C, vector or HTAP campaign runs its workload again with the
regressed targets and their references (--tests is for sysbench).

""" + options.MEASURING_EXIT_STATUS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("--pin-defaults", action="store_true",
                        help="give each regressed target its reference's values of the defaults that differ "
                             "(the report's default drift section); the one recheck there is")
    parser.add_argument("--campaign", help="the campaign to recheck (default: the latest in the store)")
    parser.add_argument("--print-campaign", action="store_true", help="print the campaign it builds and exit")
    options.add_common(parser)


def campaign(args: argparse.Namespace) -> use_case.CampaignSpec | None:
    if not args.pin_defaults:
        raise UserError("recheck needs --pin-defaults (the only recheck there is)", "dbdrift recheck --pin-defaults",
                        exit_code=2)
    recheck = use_case.campaign_data(use_case.RecheckRequest(
        Path(args.store), args.campaign, tuple(options.split_list(args.tests)) if args.tests else (),
        tuple(options.campaign_sets(args)), writing=not args.print_campaign))
    spec = use_case.campaign(recheck)  # --set checked as a campaign file's keys are
    if args.print_campaign:
        sys.stdout.write(to_toml(recheck.data, "recheck --pin-defaults"))
        return None
    return spec
