"""`dbdrift report`: read a stored campaign, compute rQPS and summaries, render a format."""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from pathlib import Path

from dbdrift.workloads.sysbench.catalog import select_tests
from dbdrift.cli import options
from dbdrift.errors import UserError
from dbdrift.report.csv import render_csv
from dbdrift.report.flamegraph import folded_text, render_diff_svg, render_svg
from dbdrift.report.html import render_html
from dbdrift.report.json import render_json
from dbdrift.report.markdown import render_markdown
from dbdrift.report.matrix import axis_names, measured_tests, render_matrix
from dbdrift.report.text import render_text
from dbdrift.results.build import build_report, no_campaign
from dbdrift.results.findings import CAMPAIGN, FINDING_KINDS, MEASURES, all_findings, select
from dbdrift.results.data import ReportData
from dbdrift.results.targets import AGAINST, merged_stacks, server_configs
from dbdrift.results.workload import workload_of
from dbdrift.workload import Workload
from dbdrift.workloads.registry import WORKLOADS
from dbdrift.store.store import Store

FORMATS = ("text", "markdown", "csv", "json", "html")
EXAMPLES = """\
examples:
  dbdrift report                                  the latest campaign comparing two or more targets
  dbdrift report --campaign demo-pg17-vs-pg18 --chain   each target against the one before it
  dbdrift report --format html -o report.html     a page to share
  dbdrift report --format json | jq '.rows[] | select(.verdict == "regression")'
  dbdrift report --fail-on regression             for CI: exit 3 when any cell is a regression
                                                  (timed, or in instructions per event)
  dbdrift report --fail-on regression --fail-by instructions   gate on the deterministic counts only
  dbdrift report --matrix --tests insert,update-index,update-nonindex --group-by sync
                                                  a configuration matrix's absolute table
  dbdrift report --against variant                every variant against its base variant

exit status: 0 printed (and, with --fail-on, nothing found), 1 error (a store that cannot be read),
2 input refused (no such store, campaign, test or target; a malformed option), 3 --fail-on found
what it names (listed on stderr)
"""
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", type=Path, default=Path("dbdrift.db"), help="results store (default ./dbdrift.db)")
    parser.add_argument("--campaign", help="campaign name or id (default: the latest that compares two or more targets; "
                             "newer one-target campaigns, such as a bisect's probes, are passed over and named "
                             "on stderr)")
    parser.add_argument("--base", help="target every other target is divided by (default: the campaign's base)")
    parser.add_argument("--chain", action="store_true", help="each target relative to the previous one")
    options.add_format(parser, FORMATS, "text (a terminal table), markdown, csv or json (one row per cell, with "
                                        "the campaign's metadata) or html (a self-contained page with charts)")
    options.add_color(parser)
    parser.add_argument("-o", "--output", type=Path, metavar="FILE",
                        help="write the report to FILE instead of stdout, once it is complete (colored only with "
                             "--color always)")
    parser.add_argument("--min-effect", type=options.percent, default=0.02, metavar="PCT",
                        help="smallest change called a regression or improvement (default 2%%)")
    parser.add_argument("--noise-floor", default="auto", metavar="auto|none|CAMPAIGN",
                        help="raise each test's minimum effect to the A/A noise measured by `dbdrift calibrate`, "
                             "and widen each interval by the between-campaign spread the calibrations measured "
                             "(auto: the newest calibration's floors and the spread over all calibrations in the "
                             "store, if any; CAMPAIGN: that one calibration for both)")
    parser.add_argument("--metrics", action="store_true",
                        help="hardware per operation (cpu/o, cs/o, r/o, rKB/o, wKB/o, o/s, CPU µs server/client) "
                             "per test, absolute and relative to the base")
    parser.add_argument("--flamegraphs", type=Path, metavar="DIR",
                        help="write a flamegraph SVG (and folded stacks) per test and target recorded with "
                             "`run --flamegraph`, and a differential one against the base, into DIR")
    parser.add_argument("--config", action="store_true",
                        help="print the configuration each target's server ran with, as stored with the campaign "
                             "(the whole my.cnf; for PostgreSQL what dbdrift added to postgresql.conf), instead "
                             "of the rQPS report")
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
    parser.add_argument("--group-by", metavar="AXIS", help="with --matrix: one block per level of this axis")
    parser.add_argument("--noisy", type=options.percent, default=0.05, metavar="PCT",
                        help="a cell whose 95%% interval is wider than ±PCT is 'too noisy' (default 5%%)")
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


def write_flamegraphs(store: Store, campaign: str | None, data: ReportData, directory: Path) -> list[Path]:
    """Per (test, threads, target): the stacks of all its runs merged, as SVG and folded text;
    per compared target also a differential SVG against its reference."""
    merged = merged_stacks(store, store.latest_campaign_id(campaign))
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {directory}: {exc.strerror}", "pass --flamegraphs a writable directory") from None
    references = data.comparison.references
    written = []
    for (test, threads, target), stacks in sorted(merged.items()):
        stem = f"{_file_safe(test)}.x{threads}.{_file_safe(target)}"
        written += [_write(directory / f"{stem}.svg", render_svg(stacks, f"{test} x{threads}: {target}")),
                    _write(directory / f"{stem}.folded", folded_text(stacks))]
        ref = references.get(target)
        if (test, threads, ref) in merged:
            title = f"{test} x{threads}: {target} vs {ref} (red: more samples, blue: fewer)"
            written.append(_write(directory / f"{stem}-vs-{_file_safe(ref)}.diff.svg",
                                  render_diff_svg(merged[(test, threads, ref)], stacks, title)))
    return written


def _file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


SYSBENCH_VIEWS = ("chain", "matrix", "metrics", "tests", "flamegraphs", "against", "group_by")
"""Options of views only the sysbench report has: refused on another workload's campaign rather
than ignored, so a script learns its report is not the view it asked for."""


def _refuse_sysbench_views(args: argparse.Namespace, workload: str, campaign: str) -> None:
    used = [name for name in SYSBENCH_VIEWS if getattr(args, name)]
    if used:
        raise UserError(f"--{used[0].replace('_', '-')}: campaign {campaign} ran the {workload} workload, whose "
                        "report has no such view",
                        "drop it: that report shows every target with its verdicts and hardware figures; "
                        + ", ".join(f"--{n.replace('_', '-')}" for n in SYSBENCH_VIEWS) + " shape sysbench reports",
                        exit_code=2)


def workload_report(store: Store, campaign_id: int, workload: Workload, fmt: str) -> str:
    """The report of a stored campaign of a workload with a report of its own, in `fmt`, at the
    default thresholds."""
    assert workload.build_report is not None and workload.render_report is not None
    return workload.render_report(workload.build_report(store, campaign_id, None), fmt)


def stored_workload(store: Store, campaign_id: int) -> Workload:
    """The workload a stored campaign ran, refused when this dbdrift does not know it (a newer one's)."""
    name = workload_of(store, campaign_id)
    if name not in WORKLOADS:
        raise UserError(f"campaign {store.campaign(campaign_id)['name']} ran the workload {name!r}, which this "
                        "dbdrift does not know", "report it with the dbdrift that ran it (a newer version)",
                        exit_code=2)
    return WORKLOADS[name]


def render(data: ReportData, fmt: str, color: bool = False) -> str:
    if fmt == "markdown":
        return render_markdown(data)
    if fmt == "csv":
        return render_csv(data)
    if fmt == "json":
        return render_json(data)
    if fmt == "html":
        return render_html(data)
    return render_text(data, color=color)


def use_color(choice: str) -> bool:
    """always, never, or auto: on a terminal unless NO_COLOR is set (no-color.org)."""
    return choice == "always" or (choice == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR"))


FINDING_EXIT = 3  # `--fail-on`: the report found what it was told to fail on


def _fail_on(text: str) -> list[str]:
    kinds = [k.strip() for k in text.split(",")]
    bad = [k for k in kinds if k not in FINDING_KINDS]
    if bad:
        raise argparse.ArgumentTypeError(f"{bad[0]!r}: choose from {', '.join(FINDING_KINDS)} (comma-separated)")
    return kinds


def _measures(fail_by: str) -> tuple[str, ...]:
    return MEASURES if fail_by == "both" else (fail_by,)


def _matrix_shape(data, args: argparse.Namespace) -> tuple[list[str] | None, str | None]:
    """--tests and --group-by, checked against what the campaign measured and its axes."""
    tests = [t.strip() for t in args.tests.split(",")] if args.tests else None
    measured = measured_tests(data)
    unknown = [t for t in tests or () if t not in measured]
    if unknown:
        raise UserError(f"--tests: {unknown[0]!r} was not measured in campaign {data.campaign}",
                        f"measured: {', '.join(measured)}", exit_code=2)
    axes = axis_names(data)
    if args.group_by is not None and args.group_by not in axes:
        raise UserError(f"--group-by {args.group_by}: campaign {data.campaign} has no such axis",
                        f"axes: {', '.join(axes)}" if axes else "the campaign has no [axes.NAME] tables", exit_code=2)
    return tests, args.group_by


def main(args: argparse.Namespace) -> int:
    """The report on stdout, or with -o in FILE: rendered in full first, so an error leaves no
    half-written file behind."""
    if args.output is None:
        return _report(args)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        code = _report(args)
    try:
        args.output.write_text(text.getvalue(), encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write the report to {args.output}: {exc.strerror}",
                        "pass -o a path in a writable directory") from None
    return code


def _report(args: argparse.Namespace) -> int:
    store = options.open_store(args.store)
    try:
        if args.campaign is None:
            args.campaign = _latest_comparison(store)
        campaign_id = store.latest_campaign_id(args.campaign)
        if args.config:
            if campaign_id is None:
                raise no_campaign(store, args.campaign)
            sys.stdout.write(server_configs(store, campaign_id))
            return 0
        workload = stored_workload(store, campaign_id) if campaign_id is not None else None
        if workload is not None and workload.build_report is not None and workload.render_report is not None:
            _refuse_sysbench_views(args, workload.name, store.campaign(campaign_id)["name"])
            data = workload.build_report(store, campaign_id, args.base, args.min_effect, args.noisy)
            sys.stdout.write(workload.render_report(data, args.format))
            return _fail_on_exit(list(data.findings), args)
        if args.group_by and not args.matrix:
            raise UserError("--group-by shapes the --matrix table", "add --matrix", exit_code=2)
        only = None
        if args.tests and not args.matrix:
            only = frozenset(t.name for t in select_tests(options.split_list([args.tests])))
        data = build_report(store, args.campaign, args.base, args.chain, args.min_effect, args.noisy,
                            args.noise_floor, args.metrics, against=args.against, tests=only)
        if args.matrix:
            sys.stdout.write(render_matrix(data, args.format, *_matrix_shape(data, args)))
            return 0
        if args.flamegraphs:
            written = write_flamegraphs(store, args.campaign, data, args.flamegraphs)
            sys.stderr.write(f"wrote {len(written)} flamegraph files to {args.flamegraphs}\n" if written else
                             "no flamegraphs stored: run the campaign with `dbdrift run --flamegraph`\n")
    finally:
        store.close()
    sys.stdout.write(render(data, args.format, use_color(args.color)))
    return _fail_on_exit(list(all_findings(data)), args)


def _latest_comparison(store: Store) -> str | None:
    """The id of the campaign `report` without --campaign means: the newest that compares two
    or more targets; when newer one-target campaigns were passed over, stderr says which."""
    chosen, skipped = store.latest_comparison()
    if chosen is not None and skipped:
        row = store.campaign(chosen)
        names = ", ".join(f"{store.campaign(i)['name']} (#{i})" for i in skipped[:3]) + (
            f" and {len(skipped) - 3} more" if len(skipped) > 3 else "")
        sys.stderr.write(f"report: campaign {row['name']} (#{chosen}), the newest comparing two or more targets; "
                         f"passed over {len(skipped)} newer one-target campaign(s): {names} "
                         f"(--campaign NAME|ID chooses one)\n")
    return None if chosen is None else str(chosen)


def _fail_on_exit(every: list, args: argparse.Namespace) -> int:
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
