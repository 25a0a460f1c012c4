"""`dbdrift calibrate CAMPAIGN.toml`: run one target against a copy of itself (A/A).

The stored A/A campaign gives each microbenchmark's noise floor on this host; reports use
the newest one (`--noise-floor auto`) to raise the minimum effect of their verdicts.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from dbdrift.app import calibrate as use_case
from dbdrift.cli import options


EXAMPLES = """\
examples:
  dbdrift calibrate pg18.toml                   the base against an identical copy of itself (A/A)
  dbdrift calibrate pg18.toml --target pg18.4 --set repeats=3   another target, three server starts
  dbdrift report --noise-floor auto             later reports: minimum effects raised to the noise measured

""" + options.MEASURING_EXIT_STATUS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("campaign", type=Path, help="campaign file (TOML); its tests and durations are used")
    parser.add_argument("--target", help="the target to run against itself (default: the base)")
    options.add_common(parser, base=False)
    options.add_variants(parser)


def campaign(args: argparse.Namespace) -> use_case.CampaignSpec:
    """The A/A campaign for `run` to execute."""
    return use_case.campaign(args.campaign, options.campaign_sets(args), args.target)
