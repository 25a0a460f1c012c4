"""`dbdrift bisect`: find the first released version between a good and a bad one (or, with
`--source`, the first commit of the user's source tree, each built on demand) whose metric on
one test moved past a threshold, measuring as few as a binary search needs.

Each measurement is a campaign of its own in the store (`bisect-postgres-point-query-17.4`), so
`dbdrift history` shows every point afterwards, an interrupted bisect loses nothing, and a
rerun reuses what the store already holds for the same version, test, setup and host.
By default the metric is instructions per event under callgrind: deterministic, so one
measurement per version decides; `--metric qps` measures throughput with `--repeats`.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import replace
from pathlib import Path

from dbdrift.cli import options
from dbdrift.analysis.bisect import Outcome, bisect
from dbdrift.analysis.instructions import canonical
from dbdrift.workloads.sysbench.catalog import select_tests
from dbdrift import env
from dbdrift.cli.progress import ConsoleProgress
from dbdrift.errors import InputError, UserError
from dbdrift.model import ENGINES
from dbdrift.plan.campaign import parse_campaign
from dbdrift.plan.overrides import apply_sets
from dbdrift.report.numbers import fmt_abs
from dbdrift.results import history
from dbdrift.runner import sourcebuild
from dbdrift.runner.campaign import Runner, machine_facts
from dbdrift.store.lock import campaign_lock
from dbdrift.server import engines, versions
from dbdrift.model import version_key
from dbdrift.store.store import Store
from dbdrift.workloads.registry import workload_of

PREFIX = {"postgres": "pg", "mysql": "my", "mariadb": "ma"}
RERUN_HINT = "rerun the same bisect: what was measured (and built) is read back, not measured again"
METRICS = ("instructions", "qps")
TOP_FUNCTIONS = 8
EXAMPLES = """\
examples:
  dbdrift bisect --engine postgres --good 17.0 --bad 17.10 --test point-query
  dbdrift bisect --engine mysql --good 5.7.22 --bad 8.0.31 --test update-index --threshold 5%
  dbdrift bisect --engine postgres --good 16.1 --bad 16.14 --test scan --metric qps --repeats 3
  dbdrift bisect --source ~/postgres --good REL_15_17 --bad REL_15_18 --test point-query \\
      --build './configure --prefix=$PREFIX --without-icu && make -j2 install && make -C contrib/pg_prewarm install'
  dbdrift history --metric instructions --tests point-query     every version measured so far

exit status: 0 an answer (a first bad version, or no move past the threshold), 1 a measurement of an
end failed or an error, 2 input refused, 130 interrupted by Ctrl-C or SIGTERM (measured versions are stored; rerun to go on)
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
    parser.add_argument("--metric", choices=METRICS, default="instructions",
                        help="instructions: per event under callgrind, one deterministic measurement per version "
                             "(default); qps: timed runs, --repeats per version")
    parser.add_argument("--threshold", type=options.percent, default=0.02, metavar="PCT",
                        help="a version is bad when its metric moved this much from the good one's (default 2%%)")
    parser.add_argument("--rows", type=int, default=100_000, help="rows in the table (default 100000)")
    parser.add_argument("--duration", type=options.duration("--duration"), default=30.0, metavar="DURATION",
                        help="--metric qps: how long each run lasts, e.g. 30, 90s, 2m (default 30s)")
    parser.add_argument("--repeats", type=int, default=3, help="--metric qps: runs per version (default 3)")
    parser.add_argument("--store", type=Path, default=Path("dbdrift.db"), help="results store (default ./dbdrift.db)")
    options.add_verbosity(parser)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a campaign key for every measurement, e.g. --set targets.*.settings.jit=off")
    options.add_format(parser, ("text", "json"), "text: each measured version and the answer; json: the same "
                                                 "as one object")


def candidates(engine: str, good: str, bad: str) -> tuple[list[str], str | None, list[str]]:
    """The versions from good to bad (both included, version order) that the catalogue can
    fetch, the source both ends name (`maven:17.0`: that source only; else None), and notes
    on adjacent candidates that come from different sources (a different build, not only
    different code)."""
    good_request, bad_request = (versions.parse_request(engine, v) for v in (good, bad))
    if good_request.source != bad_request.source or good_request.suite != bad_request.suite:
        raise UserError(f"--good {good} and --bad {bad} name different sources",
                        "name the same source on both ends (e.g. maven:17.0 and maven:17.11), or none", exit_code=2)
    source = good.split(":", 1)[0] if good_request.source else None
    catalogue = engines.catalogue(engine, env.cache_dir())
    picked: dict[str, str] = {}  # version -> the source its build comes from
    carriers: dict[str, set[str]] = {}  # version -> every source that has it
    for build in catalogue.all_builds():
        carriers.setdefault(build.version, set()).add(build.source)
        if build.version not in picked and (source is None or _same_source(build, good_request)):
            picked[build.version] = catalogue.pick(versions.Request(build.version, build.version, good_request.source,
                                                                    good_request.suite)).source
    for end, request in (("--good", good_request), ("--bad", bad_request)):
        if request.version not in picked:
            near = versions.nearest(request.version, list(picked))
            raise UserError(f"{end} {request.text}: {engine} {request.text} is not fetchable here",
                            f"{engine} versions near it: {', '.join(near)} (`dbdrift versions --engine {engine}`)",
                            exit_code=2)
    if version_key(good_request.version) >= version_key(bad_request.version):
        raise UserError(f"--good {good} is not older than --bad {bad}",
                        "bisect looks for the first bad version after a good one: swap them", exit_code=2)
    labels = sorted((v for v in picked if version_key(good_request.version) <= version_key(v)
                     <= version_key(bad_request.version)), key=version_key)
    both = [s for s in versions.SOURCES[engine] if s in carriers[labels[0]] and s in carriers[labels[-1]]]
    keep = (f"--good {both[0]}:{labels[0]} --bad {both[0]}:{labels[-1]} keeps one source" if both
            else "no one source has both ends")
    notes = [f"{a} ({picked[a]}) -> {b} ({picked[b]}): another source's build, so a move there may be the build, "
             f"not the code; {keep}" for a, b in zip(labels, labels[1:]) if picked[a] != picked[b]]
    return labels, source, notes


def _same_source(build: versions.Build, request: versions.Request) -> bool:
    return build.source == request.source and (request.suite is None or build.suite == request.suite)


def campaign_data(args: argparse.Namespace, label: str, source: dict | None = None) -> dict:
    """One measurement's campaign: one target, the version `label` (or `source`: the target's
    basedir of a built commit)."""
    build_source = getattr(args, "build_source", None)
    test = re.sub(r"[^A-Za-z0-9._+-]", "_", args.test)  # a campaign name has no '=' (read-only_range=100)
    name = f"bisect-{args.engine}-{test}-{label}" + (f"-{build_source}" if build_source and source is None else "")
    where = source if source is not None else {"version": f"{build_source}:{label}" if build_source else label}
    target = f"{PREFIX[args.engine]}{label}" if source is None else f"{PREFIX[args.engine]}-{label}"
    data: dict = {"name": name, "rows": args.rows, "tables": 1, "threads": [1], "tests": [args.test],
                  "targets": [{"name": target, "engine": args.engine, **where}]}
    if args.metric == "qps":
        data.update(read_s=args.duration, write_s=args.duration, repeats=args.repeats, restart="repeat")
    return apply_sets(data, args.set)


def this_host() -> str:
    """history.host_key of the machine dbdrift runs on now, from the facts a campaign stores."""
    return history.host_key(machine_facts(steal_window_s=0))


class Measurer:
    """measure(index) for analysis.bisect: a value from the store when it has one for this
    version (or commit), test, setup and host, else a one-target campaign run now and stored.
    With a source tree, a commit is built (or taken from the build cache) before it is run."""

    def __init__(self, args: argparse.Namespace, labels: list[str], store: Store, progress: ConsoleProgress,
                 commits: list[sourcebuild.Commit] | None = None):
        self.args, self.labels, self.store, self.progress = args, labels, store, progress
        self.commits = {c.short: c for c in commits or []}
        self.host = this_host()
        self.campaigns: dict[str, int] = {}  # label -> the campaign its value came from
        self.measured = 0  # candidates run now (not read from the store)
        self.errors: dict[str, str] = {}
        self.builds: dict[str, sourcebuild.Build] = {}

    def _matches(self, point: history.Point, label: str) -> bool:
        if self.commits:
            return point.version.endswith("@" + label)
        return point.version == label

    def _stored(self, label: str) -> history.Point | None:
        data = campaign_data(self.args, label, {} if self.commits else None)
        setup = history.setup_label(data, data["targets"][0])
        found = [p for p in history.points(self.store, self.args.metric, [self.args.test])
                 if p.engine == self.args.engine and self._matches(p, label) and p.setup == setup
                 and p.host == self.host and p.threads == 1]
        return found[-1] if found else None

    def _skip(self, label: str, error: str) -> None:
        self.errors[label] = error
        self.progress.message(f"{label}: not measured, skipped: {error}")

    def _where(self, label: str) -> dict | None:
        """The target's install: a version to fetch, or the prefix of the commit's build."""
        if not self.commits:
            return None
        built = sourcebuild.build(Path(self.args.source), self.commits[label], self.args.build, self.args.engine,
                                  env.cache_dir(), self.progress.message)
        self.builds[label] = built
        if built.prefix is None:
            raise BuildFailed(built.error)
        self.progress.message(f"{label}: {'built before' if built.cached else 'built'} in {built.seconds:.0f}s "
                              f"({built.prefix})")
        return {"basedir": str(built.prefix)}

    def __call__(self, index: int) -> float | None:
        label = self.labels[index]
        point = self._stored(label)
        if point is not None:
            self.progress.message(f"{label}: {fmt_abs(point.value, thousands=True)} from the store "
                                  f"(campaign #{point.campaign_id} {point.campaign}, {point.created_at})")
            self.campaigns[label] = point.campaign_id
            return point.value
        self.measured += 1
        what = f"commit {label}" if self.commits else f"{self.args.engine} {label}"
        self.progress.message(f"measuring {what} (measurement {self.measured} of this bisect)")
        try:
            data = campaign_data(self.args, label, self._where(label))
            spec = parse_campaign(data, "dbdrift bisect", Path.cwd(), data["name"])
            if self.args.metric == "instructions":
                spec = replace(spec, count_instructions=True, timed=False)
            with campaign_lock(self.args.store, spec.name):
                Runner(spec, self.store, progress=self.progress, workload=workload_of(spec)).run()
        except BuildFailed as exc:
            self._skip(label, str(exc))
            return None
        except UserError as exc:
            self._skip(label, exc.message)
            return None
        point = self._stored(label)
        if point is None:
            self._skip(label, f"the run stored no value (see `dbdrift report --campaign {data['name']}`)")
            return None
        self.progress.message(f"{label}: {fmt_abs(point.value, thousands=True)}")
        self.campaigns[label] = point.campaign_id
        return point.value


class BuildFailed(Exception):
    """A commit's build failed: the bisect skips it."""


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


def main(args: argparse.Namespace) -> int:
    select_tests([args.test])  # an unknown test is refused before anything is fetched or built
    started = time.monotonic()
    commits = None
    if args.source:
        if not args.build:
            raise UserError("--source needs --build 'COMMAND'",
                            "the command builds the checked-out commit and installs it into $PREFIX, e.g. "
                            "--build './configure --prefix=$PREFIX && make -j2 install'", exit_code=2)
        commits = sourcebuild.commits(Path(args.source), args.good, args.bad)
        labels = [c.short for c in commits]
        what = f"{len(labels)} commits from {args.good} to {args.bad} of {args.source}"
    else:
        if args.build:
            raise UserError("--build applies to --source DIR", "released versions are fetched, not built",
                            exit_code=2)
        labels, args.build_source, notes = candidates(args.engine, args.good, args.bad)
        what = f"{len(labels)} versions from {args.good} to {args.bad}"
    progress = ConsoleProgress(verbosity=args.verbosity)
    for note in notes if not args.source else []:
        progress.message(f"note: {note}")
    progress.message(f"bisect {args.engine} {args.test} by {args.metric}: {what}; a binary search measures about "
                     f"{_expected(len(labels))}")
    store = Store(args.store)
    try:
        measurer = Measurer(args, labels, store, progress, commits)
        outcome = bisect(labels, measurer, args.threshold)
        moved = _moved_functions(store, measurer, outcome) if args.metric == "instructions" else []
    finally:
        store.close()
    total_s = time.monotonic() - started
    if args.format == "json":
        sys.stdout.write(json.dumps(_as_dict(args, outcome, measurer, moved, total_s), indent=2) + "\n")
    else:
        sys.stdout.write(render_text(args, outcome, measurer, moved, total_s))
    return 1 if outcome.verdict in ("good-failed", "bad-failed") else 0


def _expected(n: int) -> str:
    steps = 2
    span = n - 1
    while span > 1:
        span = (span + 1) // 2
        steps += 1
    return f"{min(steps, n)} of them"


UNIT = {"instructions": "instructions per event", "qps": "QPS"}


def _noun(measurer: Measurer) -> str:
    return "commit" if measurer.commits else "version"


def render_text(args, outcome: Outcome, measurer: Measurer, moved: list[tuple[str, float, float, float]],
                total_s: float = 0.0) -> str:
    noun = _noun(measurer)
    lines = [f"bisect {args.engine} {args.test}: {UNIT[args.metric]}, threshold {args.threshold:.0%}, "
             f"{len(outcome.labels)} {noun}s from {outcome.labels[0]} to {outcome.labels[-1]}"]
    probes = sorted(outcome.probes, key=lambda p: p.index)
    for p in probes:
        extra = _commit_note(measurer, p.label)
        if p.value is None:
            state = f"not measured: {measurer.errors.get(p.label, 'failed')}"
            lines.append(f"  {p.label:<10} {'-':>12}  {state}")
            continue
        state = "good (the good end)" if p.index == 0 else ("bad" if p.bad else "good")
        if p.index == len(outcome.labels) - 1:
            state += " (the bad end)" if p.bad else " (the bad end, but within the threshold)"
        lines.append(f"  {p.label:<10} {fmt_abs(p.value, thousands=True):>12}  {p.moved:+7.2%}  {state}{extra}")
    if len(outcome.labels) > len(probes):
        lines.append(f"  ({len(outcome.labels) - len(probes)} {noun}s not measured: the search did not need them)")
    lines.append(answer(args, outcome, noun))
    if measurer.commits and outcome.first_bad is not None:
        commit = measurer.commits[outcome.labels[outcome.first_bad]]
        lines.append(f"  {commit.sha} {commit.committed_at} {commit.subject}")
    if moved:
        lo, hi = outcome.labels[outcome.last_good], outcome.labels[outcome.first_bad]
        lines.append(f"functions that moved from {lo} to {hi} (self instructions per event):")
        lines += [f"  {delta:+10.1f}  {name}  ({before:.1f} -> {after:.1f})" for name, delta, before, after in moved]
    if measurer.builds:
        built = [b for b in measurer.builds.values() if not b.cached]
        lines.append(f"builds: {len(built)} built in {sum(b.seconds for b in built):.0f}s, "
                     f"{len(measurer.builds) - len(built)} from the build cache; total {total_s:.0f}s")
    elif total_s:
        lines.append(f"total {total_s:.0f}s")
    lines.append(f"every measurement is in {args.store}: `dbdrift history --store {args.store} --metric {args.metric} "
                 f"--tests {args.test}` shows them")
    return "\n".join(lines) + "\n"


def _commit_note(measurer: Measurer, label: str) -> str:
    commit = measurer.commits.get(label)
    if commit is None:
        return ""
    build = measurer.builds.get(label)
    took = f", build {build.seconds:.0f}s{' (cached)' if build.cached else ''}" if build and build.prefix else ""
    return f"  {commit.subject[:50]}{took}"


def answer(args, outcome: Outcome, noun: str = "version") -> str:
    labels = outcome.labels
    if outcome.verdict == "good-failed":
        return f"no answer: the good end {labels[0]} could not be measured"
    if outcome.verdict == "bad-failed":
        return f"no answer: the bad end {labels[-1]} could not be measured"
    if outcome.verdict == "no-move":
        bad = outcome.probe(len(labels) - 1)
        return (f"no {noun} moved past {args.threshold:.0%}: {labels[-1]} is {bad.moved:+.2%} from {labels[0]} "
                f"(lower --threshold, or choose other ends)")
    first, last = outcome.probe(outcome.first_bad), outcome.probe(outcome.last_good)
    step = first.value / last.value - 1
    text = (f"first bad {noun}: {labels[outcome.first_bad]} ({first.moved:+.2%} from {labels[0]}; "
            f"{labels[outcome.last_good]} -> {labels[outcome.first_bad]}: {step:+.2%})")
    if outcome.skipped_between:
        text += (f"; or one of {', '.join(labels[i] for i in outcome.skipped_between)}, which could not be measured")
    return text


def _moved_functions(store: Store, measurer: Measurer, outcome: Outcome) -> list[tuple[str, float, float, float]]:
    """(function, self delta per event, before, after) between the last good and the first bad."""
    if outcome.verdict != "found":
        return []
    selfs = []
    for index in (outcome.last_good, outcome.first_bad):
        campaign_id = measurer.campaigns.get(outcome.labels[index])
        rows = [r for r in store.instructions(campaign_id) if r["test"] == measurer.args.test] if campaign_id else []
        if not rows:
            return []
        merged: dict[str, float] = {}
        for name, value in json.loads(rows[-1]["self_json"]).items():  # clones (.constprop.N) as one
            merged[canonical(name)] = merged.get(canonical(name), 0.0) + value
        selfs.append(merged)
    before, after = selfs
    deltas = [(name, after.get(name, 0.0) - before.get(name, 0.0), before.get(name, 0.0), after.get(name, 0.0))
              for name in before.keys() | after.keys()]
    deltas = [d for d in deltas if abs(d[1]) >= 1.0]
    return sorted(deltas, key=lambda d: -abs(d[1]))[:TOP_FUNCTIONS]


def _as_dict(args, outcome: Outcome, measurer: Measurer, moved, total_s: float = 0.0) -> dict:
    commits = [{"commit": c.sha, "short": c.short, "committed_at": c.committed_at, "subject": c.subject,
                **({"build_s": measurer.builds[c.short].seconds, "build_cached": measurer.builds[c.short].cached,
                    "build_log": str(measurer.builds[c.short].log)} if c.short in measurer.builds else {})}
               for c in measurer.commits.values()]
    return {"engine": args.engine, "test": args.test, "metric": args.metric, "threshold": args.threshold,
            "candidates": outcome.labels, "verdict": outcome.verdict, "total_s": total_s,
            **({"source": str(args.source), "commits": commits} if commits else {}),
            "first_bad": outcome.labels[outcome.first_bad] if outcome.first_bad is not None else None,
            "last_good": outcome.labels[outcome.last_good] if outcome.last_good is not None else None,
            "skipped_between": [outcome.labels[i] for i in outcome.skipped_between],
            "answer": answer(args, outcome, _noun(measurer)),
            "probes": [{"version": p.label, "value": p.value, "moved": p.moved, "bad": p.bad,
                        "campaign_id": measurer.campaigns.get(p.label), "error": measurer.errors.get(p.label)}
                       for p in sorted(outcome.probes, key=lambda p: p.index)],
            "functions": [{"function": n, "delta": d, "before": b, "after": a} for n, d, b, a in moved]}
