"""Options several verbs share, so they read and mean the same everywhere."""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from dbdrift.app import check as check_case
from dbdrift.app import report as report_case
from dbdrift.app import run as run_case
from dbdrift.cli.progress import ConsoleProgress
from dbdrift.errors import UserError
from dbdrift.report.check import check_lines
from dbdrift.app import inputs
from dbdrift.app.inputs import PercentRange, format_percent, parse_duration_s, parse_percent
from dbdrift.app.process import open_read_only

# The exit status of every verb that measures, at the end of its --help.
MEASURING_EXIT_STATUS = """\
exit status: 0 all measured, 1 some run or target failed (the rest is stored) or an error, 2 input
refused before anything ran (a target, version, test or campaign key; a malformed value), 130
interrupted by Ctrl-C or SIGTERM (finished runs are stored; rerun with --resume)
"""

# The formats of `dbdrift report`, and of the report a measuring verb prints when it ends.
REPORT_FORMATS = ("text", "markdown", "csv", "json", "html", "post")


def add_tests(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("-t", "--tests", action="append", metavar="LIST",
                        help=f"{what}: microbenchmark names or groups, comma-separated or repeated "
                             "(e.g. --tests point,update-index; default32, all42; `dbdrift catalog` lists them)")


split_list = inputs.split_list  # --tests read as every verb reads it (a campaign's overrides read it too)


def add_store(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", type=Path, default=Path("dbdrift.db"), help="results store (default ./dbdrift.db)")


def add_switches(parser: argparse.ArgumentParser, helps: dict[str, str]) -> None:
    """On/off flags, off unless given: flag -> its help, in the order the help lists them."""
    for flag, text in helps.items():
        parser.add_argument(flag, action="store_true", help=text)


def add_format(parser: argparse.ArgumentParser, choices: tuple[str, ...], what: str) -> None:
    """--format with its choices and what each gives in the help; text is the default."""
    parser.add_argument("--format", choices=choices, default="text", help=f"{what} (default text)")


def add_color(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="color a regression red and an improvement green in the text report, bold from a 5%% "
                             "change (auto: on a terminal, "
                             "unless NO_COLOR is set)")


def add_verbosity(parser: argparse.ArgumentParser) -> None:
    """-q/--quiet and -v/--verbose for the progress lines on stderr (the report on stdout stays)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=-1, default=0,
                       help="no progress: no bar, no line per step (failed steps, notes and errors still show)")
    group.add_argument("-v", "--verbose", dest="verbosity", action="store_const", const=1,
                       help="a line as each step starts, with its expected time, also where stderr is no terminal")


def duration(flag: str, *, positive: bool = True) -> Callable[[str], float]:
    """An argparse type: `90`, `90s`, `2m`, `1.5h`, `500ms` -> seconds, read as a campaign file
    reads its durations (units.parse_duration_s); `positive` refuses 0 (a measured time)."""
    def parse(text: str) -> float:
        try:
            return parse_duration_s(text, flag, positive=positive)
        except UserError as exc:
            raise argparse.ArgumentTypeError(f"{exc.message.removeprefix(flag + ': ')} ({exc.hint})") from None

    parse.__name__ = "duration"
    return parse


# What every percentage option's --help says of PCT: the one rule quantities.parse_percent reads by.
PERCENT_RULE = "PCT in percent: 0.5 or 0.5%% is half a percent (below 0.1, write the %%)"
ABOVE_ZERO = PercentRange(low_allowed=False)  # a percentage for which 0 is meaningless: more than 0%, less than 100%


def percent(flag: str, span: PercentRange = PercentRange(), example: str = "2%") -> Callable[[str], float]:
    """An argparse type: `0.5` or `0.5%` -> 0.005, as a campaign file reads its percentages
    (quantities.parse_percent), within `span` (by default 0% up to, not including, 100%)."""
    def parse(text: str) -> float:
        try:
            return parse_percent(text, flag, span, example)
        except UserError as exc:
            raise argparse.ArgumentTypeError(f"{exc.message.removeprefix(flag + ': ')} ({exc.hint})") from None

    parse.__name__ = "percent"
    return parse


def add_percent(parser: argparse.ArgumentParser, flag: str, default: float, what: str,
                span: PercentRange = PercentRange()) -> None:
    """A percentage option (metavar PCT): `what` it sets, then its default and the rule in its help."""
    shown = format_percent(default)
    parser.add_argument(flag, type=percent(flag, span, shown), default=default, metavar="PCT",
                        help=f"{what} (default {shown.replace('%', '%%')}); {PERCENT_RULE}")


def add_variants(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--variants", metavar="GLOBS",
                        help="run only these variants of the campaign's axes: comma-separated shell globs on "
                             "variant names, e.g. 'bl1_*' or 'sync0_*,sync1_fpi1' (the campaign key variants)")


def add_common(parser: argparse.ArgumentParser, *, base: bool = True, instructions: bool = True) -> None:
    """The options of every verb that measures; `base` and `instructions` leave out what a verb
    decides itself (calibrate runs one target against itself, demo has --instructions)."""
    add_store(parser)
    parser.add_argument("--resume", action="store_true", help="run only what the store does not have yet")
    add_tests(parser, "override the campaign's tests")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a campaign key before validation, e.g. --set rows=100000, "
                             "--set insert_benchmark.query_s=60, --set targets.pg18.settings.jit=false "
                             "(repeatable; `dbdrift docs campaign` lists the keys)")
    if base:
        parser.add_argument("--base", help="override which target is the base")
    parser.add_argument("--no-report", action="store_true", help="do not print the report at the end")
    add_format(parser, REPORT_FORMATS, "the report printed at the end, as `dbdrift report --format` "
                                                   "prints it: text, markdown, csv, json, html or post (the write-up in the posts' shape)")
    add_color(parser)
    add_verbosity(parser)
    parser.add_argument("--flamegraph", action="store_true",
                        help="perf record the server's backends during each timed run (cpu-clock, works without "
                             "hardware counters); `dbdrift report --flamegraphs DIR` draws them")
    if instructions:
        add_switches(parser, {
            "--count-instructions": "after the timed runs, count instructions per event of each test under valgrind "
                                    "callgrind (deterministic; a fresh server per target)",
            "--simulate-cache": "with instruction counts, also callgrind's cache and branch simulation: I1, D1 and "
                                "LL misses and branch mispredicts per event (simulated; slower counting)",
            "--instructions-only": "count instructions per event and skip the timed runs"})
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help="run the campaign's units on a Dask cluster: the scheduler's address, e.g. "
                             "tcp://sched:8786 (overrides [cluster] address; needs the extra cluster: `dbdrift docs cluster`)")
    parser.add_argument("--check", action="store_true",
                        help="validate the campaign, find every target's binaries (cache, registry, basedir) "
                             "and print the plan with its ETA; start nothing, store nothing")


def add_detect(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--detect", metavar="PCT",
                        help="plan the campaign to see a change of this size, e.g. 2%%: run lengths and server starts "
                             "from this host's history of campaigns in the store, or its calibration (the campaign "
                             "key detect, read as the file "
                             f"reads it; --check prints the plan and its cost); {PERCENT_RULE}")
    parser.add_argument("--budget", metavar="DURATION",
                        help="with --detect: the most the campaign may take, e.g. 30m (the campaign key budget)")
    add_aa_twin(parser)


def add_aa_twin(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--aa-twin", action="store_true", default=None,
                        help="add an A/A twin of the base (<base>-aa, the same build and config): the report counts "
                             "its false verdicts, history and the site follow their rate (the campaign key aa_twin)")


def campaign_sets(args: argparse.Namespace) -> list[str]:
    """--set, with --variants, --detect, --budget and --aa-twin as the keys they stand for."""
    sets = list(args.set) + [f"{key} = {json.dumps(value)}" for key in ("detect", "budget", "aa_twin")
                             if (value := getattr(args, key, None)) is not None]
    variants = getattr(args, "variants", None)
    if not variants:
        return sets
    patterns = [p.strip() for p in variants.split(",")]
    if not all(patterns):
        raise UserError(f"--variants {variants!r} has an empty pattern",
                        "separate shell globs with single commas, e.g. --variants 'bl1_*,bl0_sync1_*'", exit_code=2)
    return [*sets, "variants = [" + ", ".join(json.dumps(p) for p in patterns) + "]"]


def open_store(path: Path) -> report_case.Store:
    """The store at `path` opened read-only (app/process.py), its notes shown on stderr."""
    store = open_read_only(path)
    for note in store.notes:
        sys.stderr.write(note + "\n")
    return store


def use_color(choice: str) -> bool:
    """always, never, or auto: on a terminal unless NO_COLOR is set (no-color.org)."""
    return choice == "always" or (choice == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR"))


def overrides(args: argparse.Namespace) -> run_case.Overrides:
    """What the measuring options (add_common) change in a campaign."""
    return run_case.Overrides(
        tests=tuple(args.tests or ()),
        count_instructions=getattr(args, "count_instructions", False),
        instructions_only=getattr(args, "instructions_only", False),
        simulate_cache=getattr(args, "simulate_cache", False), flamegraph=getattr(args, "flamegraph", False),
        base=getattr(args, "base", None), cluster=getattr(args, "cluster", None))


def execute(spec: run_case.CampaignSpec, args: argparse.Namespace) -> int:
    """Run a campaign as `run` runs a file's, with the measuring options (add_common) applied:
    with --check print the plan and start nothing; else run it, then print each stored
    campaign's report (unless --no-report). Every verb that measures ends here."""
    spec = run_case.apply_overrides(spec, overrides(args))
    cluster = getattr(args, "cluster", None)
    spec, order_note = run_case.fitted(spec, cluster)
    if getattr(args, "check", False):
        plan = check_case.plan(spec, args.store, cluster, note=order_note,
                               resume=getattr(args, "resume", False))
        sys.stdout.write("".join(line + "\n" for line in check_lines(plan)))
        return 0
    progress = ConsoleProgress(verbosity=args.verbosity)
    color = use_color(args.color)
    chain_view = getattr(args, "chain_view", False)

    def report(store: report_case.Store, campaign_id: int, kind: str | None) -> None:
        if args.no_report:
            return
        if kind is not None and args.format in ("text", "markdown"):
            sys.stdout.write(f"\n## host kind {kind} (campaign {spec.name}@{kind})\n\n")
        sys.stdout.write(report_case.campaign_report(spec, store, campaign_id, args.format, color, chain_view))

    return run_case.execute(spec, args.store, progress, resume=args.resume, cluster_flag=cluster,
                            order_note=order_note, report=report).exit_code
