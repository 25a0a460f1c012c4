"""`dbdrift report`: read a stored campaign, compute rQPS and summaries, render a format."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dbdrift.app import report as use_case
from dbdrift.app.inputs import JUDGING, Judging
from dbdrift.app.report import AGAINST, CAMPAIGN, FINDING_KINDS, GROUPINGS, MEASURES, all_findings, select
from dbdrift.cli import options
from dbdrift.cli.options import use_color
from dbdrift.errors import UserError
from dbdrift.report.formats import FORMATS, render
from dbdrift.report.matrix import render_matrix
from dbdrift.report.words import BP_DEFINITION

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


SYSBENCH_VIEWS = ("chain", "matrix", "metrics", "tests", "flamegraphs", "against", "groups", "group_by")
"""Options of views only the sysbench report has: refused on another workload's campaign rather
than ignored, so a script learns its report is not the view it asked for."""


def _refuse_sysbench_views(args: argparse.Namespace, workload: str, campaign: str, flames: bool = False) -> None:
    used = [name for name in SYSBENCH_VIEWS if getattr(args, name) and not (name == "flamegraphs" and flames)]
    if used:
        raise UserError(f"--{used[0].replace('_', '-')}: campaign {campaign} ran the {workload} workload, whose "
                        "report has no such view",
                        "drop it: that report shows every target with its verdicts and hardware figures; "
                        + ", ".join(f"--{n.replace('_', '-')}" for n in SYSBENCH_VIEWS) + " shape sysbench reports",
                        exit_code=2)


def _said_flamegraphs(written: list[Path], directory: Path) -> None:
    sys.stderr.write(f"wrote {len(written)} flamegraph files to {directory}\n" if written else
                     "no flamegraphs stored: run the campaign with `dbdrift run --flamegraph`\n")


FINDING_EXIT = 3  # `--fail-on`: the report found what it was told to fail on


def _fail_on(text: str) -> list[str]:
    kinds = [k.strip() for k in text.split(",")]
    bad = [k for k in kinds if k not in FINDING_KINDS]
    if bad:
        raise argparse.ArgumentTypeError(f"{bad[0]!r}: choose from {', '.join(FINDING_KINDS)} (comma-separated)")
    return kinds


def _measures(fail_by: str) -> tuple[str, ...]:
    return MEASURES if fail_by == "both" else (fail_by,)


def main(args: argparse.Namespace) -> int:
    """The report on stdout (with -o in FILE: cli/output.py)."""
    judging = Judging(min_effect=args.min_effect, noisy_width=args.noisy)
    store = options.open_store(args.store)
    try:
        if args.campaign is None:
            args.campaign = _latest_comparison(use_case.latest_comparison(store))
        campaign_id = store.latest_campaign_id(args.campaign)
        if args.config:
            if campaign_id is None:
                raise use_case.no_campaign(store, args.campaign)
            sys.stdout.write(use_case.server_configs(store, campaign_id))
            return 0
        workload = use_case.stored_workload(store, campaign_id) if campaign_id is not None else None
        if campaign_id is not None and workload is not None and workload.caps.judged_over_repeats:
            _refuse_sysbench_views(args, workload.name, store.campaign(campaign_id).name,
                                   workload.plan.caps.records_flamegraphs)
            data = workload.build_report(store, campaign_id, args.base, judging)
            sys.stdout.write(workload.render_report(data, args.format))
            if args.flamegraphs:
                _said_flamegraphs(use_case.write_workload_flamegraphs(store, campaign_id, workload, args.base,
                                                                      args.flamegraphs), args.flamegraphs)
            return _fail_on_exit(use_case.gated(list(data.findings), data.meta), args)
        if args.group_by and not args.matrix:
            raise UserError("--group-by shapes the --matrix table", "add --matrix", exit_code=2)
        only = None
        if args.tests and not args.matrix:
            only = use_case.selected_tests(options.split_list([args.tests]))
        data = use_case.build_report(store, args.campaign, args.base, args.chain, judging,
                                     args.noise_floor, args.metrics, against=args.against, tests=only,
                                     groups=args.groups)
        if args.matrix:
            sys.stdout.write(render_matrix(data, args.format, *use_case.matrix_shape(data, args.tests, args.group_by)))
            return 0
        if args.flamegraphs:
            _said_flamegraphs(use_case.write_flamegraphs(store, args.campaign, data, args.flamegraphs),
                              args.flamegraphs)
    finally:
        store.close()
    sys.stdout.write(render(data, args.format, use_color(args.color)))
    return _fail_on_exit(use_case.gated(list(all_findings(data)), data.meta), args)


def _latest_comparison(latest: use_case.LatestComparison) -> str | None:
    """The id of the campaign `report` without --campaign means: the newest that compares two
    or more targets; when newer one-target campaigns were passed over, stderr says which."""
    skipped = latest.passed_over
    if latest.campaign_id is not None and skipped:
        names = ", ".join(f"{name} (#{i})" for name, i in skipped[:3]) + (
            f" and {len(skipped) - 3} more" if len(skipped) > 3 else "")
        sys.stderr.write(f"report: campaign {latest.name} (#{latest.campaign_id}), the newest comparing two or more "
                         f"targets; passed over {len(skipped)} newer one-target campaign(s): {names} "
                         f"(--campaign NAME|ID chooses one)\n")
    return None if latest.campaign_id is None else str(latest.campaign_id)


def _fail_on_exit(every: list[use_case.Finding], args: argparse.Namespace) -> int:
    """Of every finding of the report, those --fail-on names on stderr and FINDING_EXIT when
    there are any; 0 otherwise. Cells without a verdict that pass are counted on stderr, and a
    campaign that measured nothing is named there with or without --fail-on."""
    for f in every:
        if f.measure == CAMPAIGN:
            sys.stderr.write(f"report: {f.line()}: its report has no value to show; `--fail-on not-measured` "
                             "fails on it\n")
    kinds, measures = args.fail_on, _measures(args.fail_by)
    if not kinds:
        return 0
    found = select(every, kinds, measures)
    for f in found:
        sys.stderr.write(f"fail-on: {f.line()}\n")
    if "noisy" not in kinds and (unclear := select(every, ["noisy"], measures)):
        sys.stderr.write(f"fail-on: {len(unclear)} cell(s) had no verdict (too noisy or no interval) and pass; "
                         "add `noisy` to --fail-on to fail on them\n")
    if not found:
        return 0
    sys.stderr.write(f"fail-on: {len(found)} finding(s) of {','.join(kinds)}; exit {FINDING_EXIT}\n")
    return FINDING_EXIT
