"""`dbdrift calibrate CAMPAIGN.toml`: run one target against a copy of itself (A/A).

The stored A/A campaign gives each microbenchmark's noise floor on this host; reports use
the newest one (`--noise-floor auto`) to raise the minimum effect of their verdicts.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from dbdrift.cli import run as run_cli
from dbdrift.plan.campaign import as_calibration, load_campaign


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("campaign", type=Path, help="campaign file (TOML); its tests and durations are used")
    parser.add_argument("--target", help="the target to run against itself (default: the base)")
    run_cli.add_common(parser, base=False)
    run_cli.add_variants(parser)


def main(args: argparse.Namespace) -> int:
    spec = run_cli.apply_overrides(load_campaign(args.campaign, run_cli.campaign_sets(args)), args)
    return run_cli.execute(as_calibration(spec, args.target), args)
