"""`dbdrift demo`: PostgreSQL 17.10 (base) vs 18.4 on the default suite, small and short."""
from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

from dbdrift.cli import run as run_cli
from dbdrift.plan.campaign import parse_campaign

DEMO_CAMPAIGN = """\
# dbdrift demo: is PostgreSQL 18.4 faster or slower than 17.10 on the 32 default microbenchmarks?
# Small and short so it finishes in minutes; real campaigns use 10M+ rows and 300-900 s runs.
# Both servers stay up; each test runs as 3 interleaved rounds of 1.5 s slices (17 18, 18 17,
# 17 18), so every rQPS gets a 95% interval paired by round and a verdict.
name = "demo-pg17-vs-pg18"
tables = 1
rows = 200000
threads = [1]
warmup_s = 1
read_s = 4.5
write_s = 4.5
order = "interleaved"
slice_s = 1.5
slice_warmup_s = 0.5
interval_s = 0.5
scan_warm_s = 2
settle_s = 0
tests = ["default32"]

[[targets]]
name = "pg17.10"
engine = "postgres"
version = "17.10"
base = true

[[targets]]
name = "pg18.4"
engine = "postgres"
version = "18.4"
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--print-campaign", action="store_true", help="print the demo campaign file and exit")
    run_cli.add_common(parser)


def main(args: argparse.Namespace) -> int:
    if args.print_campaign:
        sys.stdout.write(DEMO_CAMPAIGN)
        return 0
    spec = parse_campaign(tomllib.loads(DEMO_CAMPAIGN), "<demo>", Path.cwd(), "demo")
    return run_cli.execute(run_cli.apply_overrides(spec, args), args)
