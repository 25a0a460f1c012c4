"""`dbdrift run CAMPAIGN.toml`: validate, run every target, store, then print the report."""
from __future__ import annotations

import argparse
from pathlib import Path

from dbdrift.app import run as use_case
from dbdrift.cli.options import add_common, add_detect, add_variants, campaign_sets, execute


EXAMPLES = """\
examples:
  dbdrift run pg18.toml --check                 validate, locate binaries, print the plan and ETA; start nothing
  dbdrift run pg18.toml                         run it; the report follows
  dbdrift run pg18.toml --resume                after Ctrl-C or a crash: only what the store lacks
  dbdrift run pg18.toml --resume --check        what --resume would still run, and its time
  dbdrift run pg18.toml --tests point,writes --set rows=100000 --set repeats=3
  dbdrift run pg18.toml --instructions-only     instructions per event under valgrind, no timed runs
  dbdrift run examples/matrix.toml --variants 'bl1_*'   only some variants of the campaign's axes
  dbdrift run pg18.toml --detect 2% --budget 30m --check   the starts and run lengths that see 2%, and the cost
  dbdrift run pg18.toml --cluster tcp://sched:8786   its tests split over the hosts running `dbdrift worker`

exit status: 0 all measured, 1 some run or target failed (the rest is stored) or an error,
2 input refused before anything ran (a campaign key, test, target or version), 130 interrupted
by Ctrl-C or SIGTERM (rerun with --resume). `dbdrift docs campaign` lists the campaign keys.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("campaign", type=Path, help="campaign file (TOML)")
    add_common(parser)
    add_variants(parser)
    add_detect(parser)


def main(args: argparse.Namespace) -> int:
    return execute(use_case.load(args.campaign, campaign_sets(args)), args)
