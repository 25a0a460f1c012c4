"""History: every stored measurement of the chosen tests as series over versions (or over time),
with the change points Apache Otava finds in them and, for a nightly job, the regressions the
newest point of a series brought."""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from dbdrift.analysis.changepoints import EXTRA, Unavailable, change_points, detector, new_changes
from dbdrift.analysis.noise import JUDGING, Judging
from dbdrift.model import JsonObject
from dbdrift.quantities import format_percent
from dbdrift.errors import UserError
from dbdrift.origin import extra_hint
from dbdrift.report import history as render
from dbdrift.results.hosts import host_key
from dbdrift.results import history
from dbdrift.results.meta import no_campaign
from dbdrift.results.twins import HostTwins, TwinPoint, by_host, rate_of, twin_of
from dbdrift.results.workload import workload_of as stored_workload_name
from dbdrift.store.store import Store
from dbdrift.version import __version__
from dbdrift.workloads.registry import SYSBENCH, WORKLOADS

FALSE_VERDICTS = "false-verdicts"  # the A/A twins' false verdicts per host over time (results/twins.py)
METRICS = (*history.METRICS, FALSE_VERDICTS)
BY = history.BY


@dataclass(frozen=True)
class HistoryRequest:
    """Which series: `host` None for the newest campaign's host, "all" for every host; `tests` and
    `engines` None for all; `new_regressions` asks for the newest points' regressions."""
    store: Path
    metric: str = "qps"
    by: str = "version"
    host: str | None = None
    engines: tuple[str, ...] | None = None
    tests: tuple[str, ...] | None = None
    judging: Judging = JUDGING  # its minimum effect: the smallest step called a change point
    new_regressions: bool = False


@dataclass(frozen=True)
class HistoryOutcome:
    """The series with their change points, the notes a report shows above them, the report's
    metadata, and (when asked) one line per regression the newest point of a series brought."""
    series: list[history.Series]
    notes: list[str]
    meta: JsonObject
    new_regressions: list[str]
    twins: list[HostTwins] | None = None  # --metric false-verdicts: the twins' rates per host, instead of series


def run(request: HistoryRequest, store: Store) -> HistoryOutcome:
    if not store.campaigns():
        raise no_campaign(store, None)
    if request.metric == FALSE_VERDICTS:
        return _false_verdicts(request, store)
    if request.tests and request.metric == "rate":  # a workload's measures (l.i0, NOPM) are not the catalog's
        tests: list[str] | None = list(request.tests)
    else:
        tests = [t.name for t in SYSBENCH.catalog.select(list(request.tests))] if request.tests else None
    found = history.points(store, SYSBENCH.catalog, request.metric, tests, workload_values)
    host = request.host or history.newest_host(store) or "all"  # the store holds a campaign, so a host
    hosts = sorted({p.host for p in found})
    if host != "all":
        host = next((h for h in hosts if h == host or h.split(" ", 1)[0] == host), host)
        found = [p for p in found if p.host == host]
    if request.engines:
        found = [p for p in found if p.engine in request.engines]
    if not found:
        held = _other_metrics(store, request, tests, host)
        raise UserError(f"store {request.store} holds no {request.metric} measurement"
                        + (f" of {', '.join(tests)}" if tests else "") + (f" on {host}" if host != "all" else "")
                        + (f"; it holds {' and '.join(METRIC_NOUNS[m] for m in held)}" if held else ""),
                        (f"pass --metric {held[0]}" + (f" (or {', '.join(held[1:])})" if held[1:] else "") + "; or "
                         if held else "") + _empty_hint(request.metric, hosts, host), exit_code=2)
    series = history.build_series(found, SYSBENCH.catalog, request.by)
    notes = _with_changes(series, request.judging.min_effect, request.new_regressions)
    others = [h for h in hosts if h != host and host != "all"]
    if others:
        notes.append(f"campaigns of {len(others)} other host(s) left out: {'; '.join(others)} (--host all shows them)")
    meta = {"store": str(request.store), "metric": request.metric, "by": request.by, "host": host,
            "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "dbdrift_version": __version__}
    found_new = _new_regressions(series, request.judging.min_effect) if request.new_regressions else []
    return HistoryOutcome(series, notes, meta, found_new)


def _false_verdicts(request: HistoryRequest, store: Store) -> HistoryOutcome:
    """The A/A twins' false verdicts per host over time: every campaign with a twin, its report
    built as `report` builds it (noise floors from the host's calibration), its twin counted."""
    if request.new_regressions:
        raise UserError("--fail-on new-regression reads series of measurements, and --metric false-verdicts has none",
                        "leave out --fail-on, or choose another --metric", exit_code=2)
    found = twin_points(store)
    host = request.host or history.newest_host(store) or "all"
    hosts = sorted({f.point.host for f in found})
    if host != "all":
        host = next((h for h in hosts if h == host or h.split(" ", 1)[0] == host), host)
    chosen = [f for f in found if host == "all" or f.point.host == host]
    if request.engines:
        chosen = [p for p in chosen if p.engine in request.engines]
    if not chosen:
        where = f" on {host}" if host != "all" else ""
        raise UserError(f"store {request.store} holds no campaign with an A/A twin{where}",
                        (f"twins ran on {'; '.join(hosts)}: pass --host all or one of them" if hosts else
                         "run a campaign with one: `dbdrift run FILE --aa-twin` (the campaign key aa_twin)"),
                        exit_code=2)
    notes = [f"campaigns of {len(others)} other host(s) left out: {'; '.join(others)} (--host all shows them)"
             for others in [[h for h in hosts if h != host and host != "all"]] if others]
    meta = {"store": str(request.store), "metric": request.metric, "host": host,
            "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "dbdrift_version": __version__}
    return HistoryOutcome([], notes, meta, [], twins=by_host(p.point for p in chosen))


@dataclass(frozen=True)
class _Found:
    point: TwinPoint
    engine: str


def twin_points(store: Store) -> list[_Found]:
    """Every campaign of the store with an A/A twin, its twin's rate from its report."""
    found = []
    for c in store.campaigns():
        campaign_id = int(c["id"])
        targets = store.targets(campaign_id)
        if twin_of(targets) is None:
            continue
        workload = WORKLOADS.get(stored_workload_name(store, campaign_id))
        if workload is None:
            continue
        try:
            meta = workload.build_report(store, campaign_id, None).meta
        except UserError:
            continue  # a campaign its report refuses (nothing stored yet) has no rate
        rate = rate_of(meta)
        if rate is None:
            continue
        row = store.campaign(campaign_id)
        point = TwinPoint(host_key(row.host), campaign_id, row.name, row.created_at, workload.name, rate)
        found.append(_Found(point, str(targets[0].engine)))
    return found


# What a store holds of each metric, as `history` names it when another metric was asked for.
METRIC_NOUNS = {FALSE_VERDICTS: "A/A twins' false verdicts", "qps": "timed throughput (qps)", "instructions": "instruction counts (callgrind)",
                "cpu_us/o": "CPU per operation", "rate": "other workloads' rates (Insert Benchmark, TPROC-C, "
                "CH-benCHmark, vector search)"}


def _other_metrics(store: Store, request: HistoryRequest, tests: list[str] | None, host: str) -> list[str]:
    """The metrics other than the one asked for that have points of these tests, host and
    engines: what the user more likely meant."""
    held = []
    for metric in history.METRICS:
        if metric == request.metric or (metric == "rate") != (request.metric == "rate") and tests:
            continue  # a workload's measures (l.i0, NOPM) and the catalog's tests are different names
        found = [p for p in history.points(store, SYSBENCH.catalog, metric, tests, workload_values)
                 if (host == "all" or p.host == host) and (not request.engines or p.engine in request.engines)]
        if found:
            held.append(metric)
    return held


def workload_values(store: Store, campaign_id: int) -> history.RepeatValues | None:
    """The campaign's workload's values per repeat (history --metric rate; sysbench's give none);
    None for a workload this dbdrift does not know."""
    workload = WORKLOADS.get(stored_workload_name(store, campaign_id))
    return workload.history_values if workload else None


def _with_changes(series: list[history.Series], min_effect: float, required: bool) -> list[str]:
    """Fill each series' change points; without Otava, say how to get them (or fail when the
    caller needs them)."""
    try:
        detector()
    except Unavailable as exc:
        if required:
            raise UserError(str(exc), extra_hint(*EXTRA)) from None
        return [f"change points not computed: Apache Otava is not installed ({extra_hint(*EXTRA)})"]
    for i, s in enumerate(series):
        values = [p.value for p in s.points]
        series[i] = replace(s, changes=tuple(change_points(values, [(p.lower, p.upper) for p in s.points], min_effect)))
    return [f"change points: Apache Otava e-divisive, p < 0.001 and a step of at least {format_percent(min_effect)}; "
            "a change needs points on both sides (`dbdrift docs history`)"]


def _new_regressions(series: list[history.Series], min_effect: float) -> list[str]:
    found = []
    for s in series:
        values = [p.value for p in s.points]
        for c in new_changes(values, [(p.lower, p.upper) for p in s.points], min_effect, now=list(s.changes)):
            if (c.change > 0) != history.METRICS[s.metric][1]:
                found.append(f"{s.engine} {s.setup}, {s.threads} thread(s): {render.change_line(s, c)}")
    return found


def _empty_hint(metric: str, hosts: list[str], host: str) -> str:
    if hosts and host != "all" and host not in hosts:
        return f"measurements exist for {'; '.join(hosts)}: pass --host all or one of them"
    if metric == "instructions":
        return "count them with `dbdrift run FILE --count-instructions` or `dbdrift bisect`"
    return "run a campaign into this store first: `dbdrift compare 17.10 18.4 --store STORE`"
