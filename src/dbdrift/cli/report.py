"""`dbdrift report`: its options read into a request, the report use case (app/report.py) run on
it, and its outcome printed: the report on stdout, notes and findings on stderr."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dbdrift.app import report as use_case
from dbdrift.app.inputs import JUDGING, Judging
from dbdrift.app.report import AGAINST, FINDING_EXIT, FINDING_KINDS, FORMATS, GROUPINGS, MEASURES, render
from dbdrift.cli import options
from dbdrift.cli.options import use_color
from dbdrift.report.basis_points import BP_DEFINITION

__all__ = ["FORMATS", "render", "use_color"]

EXAMPLES = """\
examples:
  dbdrift report                                  the latest campaign comparing two or more targets
  dbdrift report --campaign demo-pg17-vs-pg18 --chain   each target against the one before it
  dbdrift report --format html -o report.html     a page to share
  dbdrift report --chain --format post            a write-up in the posts' shape, one section per step
  dbdrift report --format json | jq '.rows[] | select(.verdict == "regression")'
  dbdrift report --fail-on regression             for CI: exit 3 when any cell is a regression
                                                  (timed, or in instructions per event)
  dbdrift report --fail-on regression --fail-by instructions   gate on the deterministic counts only
  dbdrift report --matrix --tests insert,update-index,update-nonindex --group-by sync
                                                  a configuration matrix's absolute table
  dbdrift report --against variant                every variant against its base variant
  dbdrift report --groups five                    an all42 campaign in the 2024 posts' five groups

the "in words" lines (and the JSON and CSV `bp` fields) count changes in basis points as the posts do:
{bp}

exit status: 0 printed (and, with --fail-on, nothing found), 1 error (a store that cannot be read),
2 input refused (no such store, campaign, test or target; a malformed option), 3 --fail-on found
what it names (listed on stderr)
""".format(bp=BP_DEFINITION)
def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_store(parser)
    parser.add_argument("--campaign", help="campaign name or id (default: the latest that compares two or more targets; "
                             "newer one-target campaigns, such as a bisect's probes, are passed over and named "
                             "on stderr)")
    parser.add_argument("--base", help="target every other target is divided by (default: the campaign's base)")
    parser.add_argument("--chain", action="store_true", help="each target relative to the previous one")
    options.add_format(parser, FORMATS, "text (a terminal table), markdown, csv or json (one row per cell, with "
                                        "the campaign's metadata), html (a self-contained page with charts) or "
                                        "post (a Markdown write-up in the posts' shape, changes in basis points, "
                                        "1 bp = 0.01 of rQPS: `dbdrift docs posts`)")
    options.add_color(parser)
    options.add_percent(parser, "--min-effect", JUDGING.min_effect, "smallest change called a regression or improvement")
    parser.add_argument("--noise-floor", default="auto", metavar="auto|none|CAMPAIGN",
                        help="raise each test's minimum effect to the A/A noise measured by `dbdrift calibrate`, "
                             "and widen each interval by the between-campaign spread the calibrations measured "
                             "(auto: the newest calibration's floors and the spread over all calibrations in the "
                             "store, if any; CAMPAIGN: that one calibration for both)")
    parser.add_argument("--flamegraphs", type=Path, metavar="DIR",
                        help="write a flamegraph SVG (and folded stacks) per test and target recorded with "
                             "`run --flamegraph`, and a differential one against the base, into DIR")
    options.add_switches(parser, {
        "--metrics": "hardware per operation (cpu/o, cs/o, r/o, rKB/o, wKB/o, o/s, CPU µs server/client) per test, "
                     "absolute and relative to the base",
        "--config": "print the configuration each target's server ran with, as stored with the campaign (the whole "
                    "my.cnf; for PostgreSQL what dbdrift added to postgresql.conf), instead of the rQPS report"})
    parser.add_argument("--against", choices=AGAINST,
                        help="a configuration matrix's relative view: every variant against its target's base "
                             "variant (variant), against the same variant of the base version (version), or each "
                             "target of another engine against the base engine's variant with the same shared "
                             "levels (engine)")
    parser.add_argument("--matrix", action="store_true",
                        help="the absolute table of a configuration matrix: one line per target and variant, "
                             "tests as columns (--tests chooses them, --group-by AXIS groups the lines)")
    parser.add_argument("-t", "--tests", metavar="TESTS",
                        help="only these tests or groups, comma-separated (e.g. point,update-index); the group "
                             "summaries cover them alone; with --matrix the tests shown as columns")
    parser.add_argument("--groups", choices=GROUPINGS,
                        help="how tests are grouped: four (default), the current posts' point queries, range "
                             "queries without and with aggregation, writes; five, the 2024 posts' point query "
                             "part 1 and 2 (part 2: random-points), range query part 1 and 2 (part 2: read-only, "
                             "with aggregation), writes, over the 42 tests of all42 (a campaign with a test "
                             "outside them is refused, naming it)")
    parser.add_argument("--group-by", metavar="AXIS", help="with --matrix: one block per level of this axis")
    options.add_percent(parser, "--noisy", JUDGING.noisy_width, "a cell whose 95%% interval is wider than ±PCT is 'too noisy'",
                        options.ABOVE_ZERO)
    parser.add_argument("--fail-on", type=_fail_on, default=[], metavar="KINDS",
                        help=f"exit with status {FINDING_EXIT} when the report finds one of KINDS "
                             f"({', '.join(FINDING_KINDS)}; comma-separated), after printing it; each finding is "
                             "listed on stderr. regression: a timed cell or an instruction count that regressed "
                             "(Insert Benchmark: a step's rate; TPROC-C: NOPM; both over repeats); "
                             "not-measured: a run or count that failed; noisy: a timed cell too noisy or without "
                             "an interval (one repeat of an Insert Benchmark or TPROC-C campaign), or an "
                             "instruction count whose repeats differ by more than half the minimum effect "
                             "(`dbdrift docs guide` has the table)")
    parser.add_argument("--fail-by", choices=("both", *MEASURES), default="both",
                        help="which verdicts --fail-on reads: timed (rQPS), instructions (instructions per "
                             "event counted under callgrind) or both (default)")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES


def _fail_on(text: str) -> list[str]:
    kinds = [k.strip() for k in text.split(",")]
    bad = [k for k in kinds if k not in FINDING_KINDS]
    if bad:
        raise argparse.ArgumentTypeError(f"{bad[0]!r}: choose from {', '.join(FINDING_KINDS)} (comma-separated)")
    return kinds


def main(args: argparse.Namespace) -> int:
    """The report on stdout (with -o in FILE: cli/output.py), its notes and findings on stderr."""
    request = use_case.ReportRequest(
        store=args.store, campaign=args.campaign, base=args.base, chain=args.chain, format=args.format,
        color=use_color(args.color), judging=Judging(min_effect=args.min_effect, noisy_width=args.noisy),
        noise_floor=args.noise_floor, metrics=args.metrics, config=args.config, against=args.against,
        matrix=args.matrix, tests=args.tests, groups=args.groups, group_by=args.group_by,
        flamegraphs=args.flamegraphs, fail_on=tuple(args.fail_on), fail_by=args.fail_by)
    outcome = use_case.report(request, _say)
    sys.stdout.write(outcome.text)
    for note in outcome.notes:
        _say(note)
    return outcome.status


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
