"""A bisect: the first released version between a good and a bad one (or, with a source tree,
the first commit, each built on demand) whose metric on one test moved past a threshold,
measuring as few as a binary search needs (analysis/bisect.py searches; this measures).

Each measurement is a campaign of its own in the store (`bisect-postgres-point-query-17.4`), so
`dbdrift history` shows every point afterwards, an interrupted bisect loses nothing, and a
rerun reuses what the store already holds for the same version, test, setup and host.
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from dbdrift import env
from dbdrift.app import check as check_case
from dbdrift.app import figures
from dbdrift.analysis.bisect import Outcome, bisect
from dbdrift.analysis.instructions import canonical
from dbdrift.metrics import callgrind
from dbdrift.runner.progress import NullProgress, ProgressSink
from dbdrift.errors import UserError
from dbdrift.model import JsonObject, version_key
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.workloads.registry import parse_campaign
from dbdrift.plan.overrides import apply_sets
from dbdrift.report.numbers import fmt_abs
from dbdrift.results.hosts import host_key
from dbdrift.results import history
from dbdrift.runner import sourcebuild
from dbdrift.runner.campaign import Runner, machine_facts
from dbdrift.server import engines, versions
from dbdrift.store.lock import campaign_lock
from dbdrift.store.store import Store
from dbdrift.workloads.registry import SYSBENCH, workload_of

PREFIX = {"postgres": "pg", "mysql": "my", "mariadb": "ma"}
METRICS = ("instructions", "qps")
TOP_FUNCTIONS = 8


@dataclass(frozen=True)
class BisectRequest:
    """What to bisect: `good` and `bad` are versions, or with `source` commits of that checkout,
    each built by the shell command `build`."""
    engine: str
    good: str
    bad: str
    test: str
    metric: str = "instructions"
    threshold: float = 0.02
    rows: int = 100_000
    duration_s: float = 30.0
    repeats: int = 3
    store: Path = Path("dbdrift.db")
    sets: tuple[str, ...] = ()
    source: Path | None = None
    build: str | None = None


@dataclass(frozen=True)
class BisectOutcome:
    """The search's answer with what each probe took: `campaigns` (label -> the campaign its
    value came from), `errors` (label -> why it was not measured), `commits` and `builds` (with a
    source tree), `moved` ((function, self delta per event, before, after) between the last good
    and the first bad, with --metric instructions)."""
    request: BisectRequest
    search: Outcome
    campaigns: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    commits: dict[str, sourcebuild.Commit] = field(default_factory=dict)
    builds: dict[str, sourcebuild.Build] = field(default_factory=dict)
    moved: list[tuple[str, float, float, float]] = field(default_factory=list)
    total_s: float = 0.0

    @property
    def noun(self) -> str:
        return "commit" if self.commits else "version"

    @property
    def failed(self) -> bool:
        """An end could not be measured, so there is no answer."""
        return self.search.verdict in ("good-failed", "bad-failed")


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


def campaign_data(request: BisectRequest, label: str, source: JsonObject | None = None,
                  build_source: str | None = None) -> JsonObject:
    """One measurement's campaign: one target, the version `label` (from `build_source` when
    the ends named one), or `source`: the target's basedir of a built commit."""
    test = re.sub(r"[^A-Za-z0-9._+-]", "_", request.test)  # a campaign name has no '=' (read-only_range=100)
    name = f"bisect-{request.engine}-{test}-{label}" + (f"-{build_source}" if build_source and source is None else "")
    where = source if source is not None else {"version": f"{build_source}:{label}" if build_source else label}
    target = f"{PREFIX[request.engine]}{label}" if source is None else f"{PREFIX[request.engine]}-{label}"
    data: JsonObject = {"name": name, "rows": request.rows, "tables": 1, "threads": [1], "tests": [request.test],
                  "targets": [{"name": target, "engine": request.engine, **where}]}
    if request.metric == "qps":
        data.update(read_s=request.duration_s, write_s=request.duration_s, repeats=request.repeats,
                    restart="repeat")
    return apply_sets(data, list(request.sets))


def this_host() -> str:
    """hosts.host_key of the machine dbdrift runs on now, from the facts a campaign stores."""
    return host_key(machine_facts(steal_window_s=0))


class BuildFailed(Exception):
    """A commit's build failed: the bisect skips it."""


class Measurer:
    """measure(index) for analysis.bisect: a value from the store when it has one for this
    version (or commit), test, setup and host, else a one-target campaign run now and stored.
    With a source tree, a commit is built (or taken from the build cache) before it is run."""

    def __init__(self, request: BisectRequest, chosen: Candidates, store: Store, progress: ProgressSink):
        self.request, self.chosen, self.store, self.progress = request, chosen, store, progress
        self.labels = chosen.labels
        self.build_source = chosen.build_source
        self.commits = {c.short: c for c in chosen.commits or []}
        self.host = this_host()
        self.campaigns: dict[str, int] = {}  # label -> the campaign its value came from
        self.measured = 0  # candidates run now (not read from the store)
        self.errors: dict[str, str] = {}
        self.builds: dict[str, sourcebuild.Build] = {}

    def _matches(self, point: history.Point, label: str) -> bool:
        if self.commits:
            return point.version.endswith("@" + label)
        return point.version == label

    def _data(self, label: str, source: JsonObject | None) -> JsonObject:
        return campaign_data(self.request, label, source, self.build_source)

    def _stored(self, label: str) -> history.Point | None:
        data = self._data(label, {} if self.commits else None)
        setup = history.setup_label(data, data["targets"][0])
        found = [p for p in history.points(self.store, SYSBENCH.catalog, self.request.metric, [self.request.test])
                 if p.engine == self.request.engine and self._matches(p, label) and p.setup == setup
                 and p.host == self.host and p.threads == 1]
        return found[-1] if found else None

    def _skip(self, label: str, error: str) -> None:
        self.errors[label] = error
        self.progress.message(f"{label}: not measured, skipped: {error}")

    def _where(self, label: str) -> JsonObject | None:
        """The target's install: a version to fetch, or the prefix of the commit's build."""
        if not self.commits:
            return None
        assert self.request.source is not None and self.request.build is not None
        built = sourcebuild.build(self.request.source, self.commits[label], self.request.build, self.request.engine,
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
        what = f"commit {label}" if self.commits else f"{self.request.engine} {label}"
        self.progress.message(f"measuring {what} (measurement {self.measured} of this bisect)")
        try:
            spec = probe_spec(self.request, self.chosen, label, self._where(label))
            with campaign_lock(self.request.store, spec.name):
                Runner(spec, self.store, progress=self.progress, workload=workload_of(spec)).run()
        except BuildFailed as exc:
            self._skip(label, str(exc))
            return None
        except UserError as exc:
            self._skip(label, exc.message)
            return None
        point = self._stored(label)
        if point is None:
            self._skip(label, f"the run stored no value (see `dbdrift report --campaign {spec.name}`)")
            return None
        self.progress.message(f"{label}: {fmt_abs(point.value, thousands=True)}")
        self.campaigns[label] = point.campaign_id
        return point.value


@dataclass(frozen=True)
class Candidates:
    """What a bisect searches: `labels` (versions, or short commits of `commits`), a line saying
    which, notes on adjacent candidates from different sources, the source both ends name."""
    labels: list[str]
    what: str
    notes: list[str] = field(default_factory=list)
    build_source: str | None = None
    commits: list[sourcebuild.Commit] | None = None


def choose(request: BisectRequest) -> Candidates:
    """The candidates, after every check a bisect makes before it measures (each a UserError):
    the test, --source with --build, both ends (fetchable, the same source, good before bad; or
    commits of the checkout), valgrind for --metric instructions, and the campaign each
    measurement runs, --set included (refused here, not skipped as each version fails)."""
    SYSBENCH.catalog.select([request.test])  # an unknown test is refused before anything is fetched or built
    if request.source:
        if not request.build:
            raise UserError("--source needs --build 'COMMAND'",
                            "the command builds the checked-out commit and installs it into $PREFIX, e.g. "
                            "--build './configure --prefix=$PREFIX && make -j2 install'", exit_code=2)
        commits = sourcebuild.commits(request.source, request.good, request.bad)
    elif request.build:
        raise UserError("--build applies to --source DIR", "released versions are fetched, not built", exit_code=2)
    if request.metric == "instructions":
        callgrind.require_valgrind()
    if request.source:
        chosen = Candidates([c.short for c in commits],
                            f"{len(commits)} commits from {request.good} to {request.bad} of {request.source}",
                            commits=commits)
        probe_spec(request, chosen, chosen.labels[0], _stand_in(request))  # the campaign each measurement runs
        return chosen
    good = versions.parse_request(request.engine, request.good)
    # the campaign each measurement runs (--set included), before any registry is asked
    probe_spec(request, Candidates([good.version], request.good, build_source=request.good.split(":", 1)[0]
                                   if good.source else None), good.version, None)
    labels, build_source, notes = candidates(request.engine, request.good, request.bad)
    return Candidates(labels, f"{len(labels)} versions from {request.good} to {request.bad}", notes, build_source)


def _stand_in(request: BisectRequest) -> JsonObject | None:
    """Where a commit's build would be, for checking its campaign before it is built: the
    checkout (a directory that exists); None for released versions."""
    return {"basedir": str(request.source)} if request.source else None


def probe_spec(request: BisectRequest, chosen: Candidates, label: str, where: JsonObject | None) -> CampaignSpec:
    """The campaign that measures `label` (at `where`, a built commit's prefix), as `run` parses a
    file's: a bad --set is an InputError here."""
    data = campaign_data(request, label, where, chosen.build_source)
    if request.metric == "instructions":  # counts only, whatever --set said
        data = {**data, "count_instructions": True}
    spec = parse_campaign(data, "dbdrift bisect", Path.cwd(), data["name"])
    return replace(spec, timed=False) if request.metric == "instructions" else spec


@dataclass(frozen=True)
class BisectCheck:
    """What `bisect --check` found: the candidates, where each end's build comes from, the
    candidates the store already holds a value for, the most measurements a binary search
    makes and the time of one, and what could not be checked."""
    request: BisectRequest
    chosen: Candidates
    ends: list[tuple[str, str]]
    stored: list[str]
    measurements: int
    measurement_s: float
    unchecked: list[str]
    warnings: list[str]


def check(request: BisectRequest) -> BisectCheck:
    """Every check the bisect makes before it measures, and for each end what `run --check`
    checks (its build located, its settings, the store); builds and measures nothing."""
    chosen = choose(request)
    ends, unchecked = [], []
    for label in dict.fromkeys((chosen.labels[0], chosen.labels[-1])):
        where = None
        if chosen.commits:
            assert request.source is not None and request.build is not None
            commit = next(c for c in chosen.commits if c.short == label)
            prefix = sourcebuild.cached_prefix(request.source, commit, request.build, env.cache_dir())
            if prefix is None:
                unchecked.append(f"commit {label}: not built yet; the bisect builds it with --build (a commit "
                                 "whose build fails is skipped)")
                continue
            where = {"basedir": str(prefix)}
        planned = check_case.plan(probe_spec(request, chosen, label, where), request.store, None)
        ends += [(label, line) for _, _, _, line in planned.located]
        unchecked += list(planned.unchecked)
    if not ends:
        check_case.check_store(request.store)
    spec = probe_spec(request, chosen, chosen.labels[0], _stand_in(request))
    return BisectCheck(request, chosen, ends, stored_labels(request, chosen), expected_measurements(len(chosen.labels)),
                       workload_of(spec).estimate(spec)[0], unchecked, figures.warnings(spec))


def stored_labels(request: BisectRequest, chosen: Candidates) -> list[str]:
    """The candidates whose value the store holds for this test, setup and host (read, not
    measured again); none when there is no store yet."""
    if not request.store.exists():
        return []
    store = Store(request.store, read_only=True)
    try:
        measurer = Measurer(request, chosen, store, NullProgress())
        return [label for label in chosen.labels if measurer._stored(label) is not None]
    finally:
        store.close()


def run(request: BisectRequest, progress: ProgressSink) -> BisectOutcome:
    """Choose the candidates, search them (measuring or reading each probe) and find the
    functions that moved; what happens is told through `progress` as it goes."""
    started = time.monotonic()
    chosen = choose(request)
    for note in chosen.notes:
        progress.message(f"note: {note}")
    for line in figures.warnings(probe_spec(request, chosen, chosen.labels[0], _stand_in(request))):
        progress.message(f"warning: {line}")
    progress.message(f"bisect {request.engine} {request.test} by {request.metric}: {chosen.what}; a binary search "
                     f"measures about {expected_measurements(len(chosen.labels))} of them")
    store = Store(request.store)
    try:
        measurer = Measurer(request, chosen, store, progress)
        search = bisect(chosen.labels, measurer, request.threshold)
        moved = moved_functions(store, request.test, measurer.campaigns, search) \
            if request.metric == "instructions" else []
    finally:
        store.close()
    return BisectOutcome(request, search, measurer.campaigns, measurer.errors, measurer.commits, measurer.builds,
                         moved, time.monotonic() - started)


def expected_measurements(n: int) -> int:
    """How many of `n` candidates a binary search with both ends measured needs at most."""
    steps = 2
    span = n - 1
    while span > 1:
        span = (span + 1) // 2
        steps += 1
    return min(steps, n)


def moved_functions(store: Store, test: str, campaigns: dict[str, int],
                    search: Outcome) -> list[tuple[str, float, float, float]]:
    """(function, self delta per event, before, after) between the last good and the first bad."""
    if search.verdict != "found":
        return []
    selfs = []
    for index in (search.last_good, search.first_bad):
        assert index is not None  # both are set when the verdict is "found"
        campaign_id = campaigns.get(search.labels[index])
        rows = [r for r in store.instructions(campaign_id) if r["test"] == test] if campaign_id else []
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
