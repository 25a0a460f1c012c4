"""`dbdrift bisect`: find the first released version between a good and a bad one (or, with
`--source`, the first commit of the user's source tree, each built on demand) whose metric on
one test moved past a threshold (app/bisect.py measures; report/bisect.py renders).

By default the metric is instructions per event under callgrind: deterministic, so one
measurement per version decides; `--metric qps` measures throughput with `--repeats`.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dbdrift.app import bisect as use_case
from dbdrift.app.inputs import ENGINES, select_tests
from dbdrift.cli import options
from dbdrift.cli.progress import ConsoleProgress
from dbdrift.errors import InputError
from dbdrift.report import bisect as render

RERUN_HINT = "rerun the same bisect: what was measured (and built) is read back, not measured again"
EXAMPLES = """\
examples:
  dbdrift bisect --engine postgres --good 17.0 --bad 17.10 --test point-query
  dbdrift bisect --engine mysql --good 5.7.22 --bad 8.0.31 --test update-index --threshold 5%
  dbdrift bisect --good 17.0 --bad 17.10 --test point-query --check   the candidates and the time; measure nothing
  dbdrift bisect --engine postgres --good 16.1 --bad 16.14 --test scan --metric qps --repeats 3
  dbdrift bisect --source ~/postgres --good REL_15_17 --bad REL_15_18 --test point-query \\
      --build './configure --prefix=$PREFIX --without-icu && make -j2 install && make -C contrib/pg_prewarm install'
  dbdrift history --metric instructions --tests point-query     every version measured so far

exit status: 0 an answer (a first bad version, or no move past the threshold; with --check: the plan),
1 a measurement of an end failed or an error, 2 input refused (also by --check), 130 interrupted by
Ctrl-C or SIGTERM (measured versions are stored; rerun to go on)
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("--engine", choices=ENGINES, default="postgres", help="default postgres")
    parser.add_argument("--good", required=True, metavar="VERSION|REV",
                        help="a version (or, with --source, a commit) without the change")
    parser.add_argument("--bad", required=True, metavar="VERSION|REV", help="a later one with it")
    parser.add_argument("--source", type=Path, metavar="DIR",
                        help="bisect the commits of this git checkout from --good to --bad (first-parent line) "
                             "instead of released versions; each is built with --build")
    parser.add_argument("--build", metavar="COMMAND",
                        help="with --source: a shell command run in a scratch worktree of each commit that builds "
                             "it and installs it into $PREFIX (cached per commit), e.g. "
                             "'./configure --prefix=$PREFIX --without-icu && make -j2 install'")
    parser.add_argument("--test", required=True, type=_one_test, metavar="TEST",
                        help="the one microbenchmark that moved, not a group (`dbdrift catalog` lists them)")
    parser.add_argument("--metric", choices=use_case.METRICS, default="instructions",
                        help="instructions: per event under callgrind, one deterministic measurement per version "
                             "(default); qps: timed runs, --repeats per version")
    options.add_percent(parser, "--threshold", 0.02, "a version is bad when its metric moved this much from the good "
                        "one's", options.ABOVE_ZERO)
    parser.add_argument("--rows", type=int, default=100_000, help="rows in the table (default 100000)")
    parser.add_argument("--duration", type=options.duration("--duration"), default=30.0, metavar="DURATION",
                        help="--metric qps: how long each run lasts, e.g. 30, 90s, 2m (default 30s)")
    parser.add_argument("--repeats", type=int, default=3, help="--metric qps: runs per version (default 3)")
    options.add_store(parser)
    options.add_verbosity(parser)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a campaign key for every measurement, e.g. --set targets.*.settings.jit=off")
    options.add_format(parser, ("text", "json"), "text: each measured version and the answer; json: the same "
                                                 "as one object")
    parser.add_argument("--check", action="store_true",
                        help="make every check the bisect makes before it measures (test, ends, --set, store, "
                             "valgrind; each end's build located and its settings checked as `run --check` does) "
                             "and print the plan: candidates, those already stored, measurements and time; "
                             "builds, fetches and measures nothing")


def _one_test(text: str) -> str:
    """The one test `--test` names: a group (or any name that stands for
    several tests) is refused, since a bisect follows one test's metric and a group has none.
    An unknown name passes here and is refused by `main` with its suggestions."""
    try:
        chosen = select_tests([text])
    except InputError:
        return text
    if len(chosen) != 1:
        names = [t.name for t in chosen]
        listed = ", ".join(names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")
        raise argparse.ArgumentTypeError(f"{text!r} is a group of {len(names)} tests ({listed}); bisect follows one "
                                         f"test: pick one, e.g. --test {names[0]}")
    return text


def request_of(args: argparse.Namespace) -> use_case.BisectRequest:
    return use_case.BisectRequest(args.engine, args.good, args.bad, args.test, args.metric, args.threshold, args.rows,
                                  args.duration, args.repeats, args.store, tuple(args.set), args.source, args.build)


def main(args: argparse.Namespace) -> int:
    if args.check:
        sys.stdout.write("".join(line + "\n" for line in render.check_lines(use_case.check(request_of(args)))))
        return 0
    outcome = use_case.run(request_of(args), ConsoleProgress(verbosity=args.verbosity))
    if args.format == "json":
        sys.stdout.write(json.dumps(render.as_dict(outcome), indent=2) + "\n")
    else:
        sys.stdout.write(render.render_text(outcome))
    return 1 if outcome.failed else 0
