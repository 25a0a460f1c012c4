"""The CH-benCHmark report of a stored campaign: per target NOPM with and without the analytical
streams, analytical queries per hour with and without the transactions, each query's latency in
both, each relative to the base with its interval over repeats (the verdicts), and the
interference (together ÷ alone) within each target. Computed once for every format to render;
reads the store, writes nothing.

    build(store, campaign_id, base) -> HtapReport
    htap_report(runs, targets, ...) -> HtapReport (from values)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from statistics import fmean

from dbdrift.analysis.defaults import DriftTable
from dbdrift.analysis.noise import JUDGING, Judging, Estimate, Verdict, relative_over_repeats, verdict
from dbdrift.analysis import foreign
from dbdrift.analysis.position import Turn, order_notes
from dbdrift.analysis.power import reported_change
from dbdrift.analysis.tpcc import Latency, hardware_per_new_order, latencies
from dbdrift.model import JsonObject, TpccResult, WorkloadRun
from dbdrift.results.findings import CAMPAIGN, Finding, nothing_measured, told, warned
from dbdrift.results.workload import WorkloadReport, detect_notes, explanations, stored_campaign
from dbdrift.store.store import Store
from dbdrift.workloads.htap.catalog import JUDGED, QUERY_NAMES, WINDOW_TITLES, WINDOWS, setup_text

MEASURES: dict[str, tuple[str, str]] = {  # a judged figure -> (window, what of it)
    "NOPM with analytics": ("together", "nopm"), "NOPM alone": ("transactions", "nopm"),
    "queries/h with transactions": ("together", "qph"), "queries/h alone": ("analytics", "qph")}
assert tuple(MEASURES) == JUDGED


def as_tpcc(run: WorkloadRun, window: str) -> TpccResult | None:
    """A window's transactional side as a TPROC-C run, for the TPROC-C analysis (hardware per new
    order, response times); None when the window did not run."""
    w = (run.record.get("windows") or {}).get(window)
    if not w:
        return None
    return TpccResult(target=run.target, status=str(w.get("status")), warehouses=0, clients=int(w.get("clients") or 0),
                      procedures=False, elapsed_s=float(w.get("elapsed_s") or 0.0),
                      new_orders=int(w.get("new_orders") or 0), transactions=int(w.get("transactions") or 0),
                      nopm=float(w.get("nopm") or 0.0), tpm=float(w.get("tpm") or 0.0), by_type=w.get("by_type") or {},
                      intervals=w.get("intervals") or [], hardware=w.get("hardware"), repeat=run.repeat,
                      events=w.get("events"))


def value(run: WorkloadRun, window: str, what: str) -> float | None:
    """One repeat's figure of a window: "nopm", "qph", or a query name (its mean latency in ms)."""
    w = (run.record.get("windows") or {}).get(window) or {}
    if w.get("status") != "ok":
        return None
    if what == "nopm":
        return float(w["nopm"]) if w.get("clients") and w.get("nopm") is not None else None
    analytics = w.get("analytics") or {}
    if what == "qph":
        return float(analytics["qph"]) if analytics.get("qph") is not None else None
    q = (analytics.get("by_query") or {}).get(what) or {}
    return float(q["mean_ms"]) if q.get("count") and q.get("mean_ms") else None


def _per_repeat(runs: list[WorkloadRun], target: str, window: str, what: str) -> dict[int, float]:
    out = {}
    for r in runs:
        if r.target == target and r.status == "ok" and (v := value(r, window, what)) is not None:
            out[r.repeat] = v
    return out


def _mean(values: dict[int, float]) -> float | None:
    return fmean(values.values()) if values else None


@dataclass(frozen=True)
class QueryLatency:
    """One query of one target: mean latency in ms over the repeats that completed it, per window."""

    name: str
    alone_ms: float | None
    together_ms: float | None
    completed: int  # executions completed in the windows together, over the repeats
    cancelled: int  # executions cut at a window's end


@dataclass(frozen=True)
class HtapSummary:
    target: str
    runs: int  # ok repeats
    failed: int
    figures: dict[str, float | None]  # each of MEASURES: the mean over ok repeats
    interference: dict[str, float | None]  # "NOPM", "queries/h": together ÷ alone, mean of per-repeat ratios
    queries: tuple[QueryLatency, ...]
    hardware: dict[str, dict[str, float | None]]  # window -> hardware per new order
    latency: dict[str, Latency]  # the transactions' response times in the window together
    consistency_ok: bool | None
    errors: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Relative:
    """A target's judged figure ÷ the base's (a latency: base ÷ target, so above 1 is faster)."""

    target: str
    what: str
    estimate: Estimate | None
    status: str = ""


@dataclass(frozen=True)
class HtapReport(WorkloadReport):
    """One campaign's CH-benCHmark results with everything the formats render."""

    judged = "NOPM, queries/h and query latency"
    workload = "htap"
    summaries: tuple[HtapSummary, ...]
    relatives: tuple[Relative, ...]
    runs: tuple[WorkloadRun, ...]
    queries: tuple[str, ...]

    def problems(self) -> list[str]:
        return [f"{self.label(r.target)}: repeat {r.repeat + 1}: {r.error}" for r in self.runs
                if r.status != "ok" and r.error]

    def summary(self, target: str) -> HtapSummary | None:
        return next((s for s in self.summaries if s.target == target), None)


def build(store: Store, campaign_id: int, base: str | None, judging: Judging = JUDGING) -> HtapReport:
    stored = stored_campaign(store, campaign_id, base, HtapReport.judged)
    runs = [r for r in store.workload_runs(campaign_id) if r.workload == "htap"]
    names = tuple((stored.spec.get("htap") or {}).get("queries") or QUERY_NAMES)
    return htap_report(runs, setup=setup_text(stored.spec), queries=names, judging=judging,
                       detect_plan=stored.spec.get("detect_plan"), **stored.fields)


def _latest(runs: list[WorkloadRun]) -> list[WorkloadRun]:
    last = {(r.target, r.repeat): r for r in runs}
    return [last[k] for k in sorted(last, key=lambda k: (k[1], k[0]))]


def summarize(runs: list[WorkloadRun], targets: list[str], queries: tuple[str, ...], ncpu: int) -> list[HtapSummary]:
    out = []
    for t in targets:
        mine = [r for r in runs if r.target == t]
        ok = [r for r in mine if r.status == "ok"]
        figures = {m: _mean(_per_repeat(ok, t, w, what)) for m, (w, what) in MEASURES.items()}
        interference: dict[str, float | None] = {}
        for name, what, alone in (("NOPM", "nopm", "transactions"), ("queries/h", "qph", "analytics")):
            a, b = _per_repeat(ok, t, "together", what), _per_repeat(ok, t, alone, what)
            ratios = [a[k] / b[k] for k in a.keys() & b.keys() if b[k] > 0]
            interference[name] = fmean(ratios) if ratios else None
        lat = []
        for q in queries:
            done = cut = 0
            for r in ok:
                for w in ("analytics", "together"):
                    by = (((r.record.get("windows") or {}).get(w) or {}).get("analytics") or {}).get("by_query") or {}
                    done += int((by.get(q) or {}).get("count") or 0)
                    cut += int((by.get(q) or {}).get("cancelled") or 0)
            lat.append(QueryLatency(q, _mean(_per_repeat(ok, t, "analytics", q)), _mean(_per_repeat(ok, t, "together", q)),
                                    done, cut))
        tx = {w: [x for r in ok if (x := as_tpcc(r, w)) is not None] for w in ("transactions", "together")}
        checks = [c for r in ok for c in r.record.get("consistency") or []]
        out.append(HtapSummary(
            target=t, runs=len(ok), failed=len(mine) - len(ok), figures=figures, interference=interference,
            queries=tuple(lat), hardware={w: hardware_per_new_order(rs, ncpu) for w, rs in tx.items()},
            latency=latencies(tx["together"]), consistency_ok=None if not checks else all(c.get("ok") for c in checks),
            errors=[r.error for r in mine if r.status != "ok" and r.error]))
    return out


def relatives(runs: list[WorkloadRun], targets: list[str], queries: tuple[str, ...]) -> list[Relative]:
    """Every target but the base against the base: each of MEASURES, then each query's latency
    together with the transactions (base ÷ target)."""
    base = targets[0]
    out = []
    wanted = [(m, w, what, False) for m, (w, what) in MEASURES.items()] + [
        (f"{q} latency", "together", q, True) for q in queries]
    for t in targets[1:]:
        for name, window, what, inverse in wanted:
            mine, theirs = _per_repeat(runs, t, window, what), _per_repeat(runs, base, window, what)
            shared = sorted(mine.keys() & theirs.keys())
            if not shared:
                missing = t if not mine else base
                out.append(Relative(t, name, None, f"never completed inside a window on {missing}" if inverse else
                                    f"no ok repeat of {missing}" if not mine or not theirs else
                                    "no repeat measured on both"))
                continue

            def rate(v: float) -> float:
                return 1000.0 / v if inverse else v  # a latency in ms as a rate: above 1 is faster
            out.append(Relative(t, name, relative_over_repeats([(k, rate(mine[k]), 1.0) for k in shared],
                                                               [(k, rate(theirs[k]), 1.0) for k in shared])))
    return out


def per_query_hardware(runs: list[WorkloadRun], target: str, window: str) -> dict[str, float | None]:
    """The server's CPU µs and KB read per completed analytical query in a window."""
    hw: list[tuple[int, JsonObject]] = []
    for r in runs:
        w = (r.record.get("windows") or {}).get(window) or {}
        done = int((w.get("analytics") or {}).get("completed") or 0)
        if r.target == target and r.status == "ok" and done and w.get("hardware"):
            hw.append((done, w["hardware"]))
    done = sum(n for n, _ in hw)
    if not done:
        return {"server/q": None, "rkb/q": None}
    reads = [h.get("read_kb") for _, h in hw]
    known = [float(v) for v in reads if v is not None]
    return {"server/q": sum(h.get("server_cpu_s") or 0.0 for _, h in hw) * 1e6 / done,
            "rkb/q": sum(known) / done if len(known) == len(reads) else None}


def htap_report(runs: list[WorkloadRun], targets: list[str] | tuple[str, ...], labels: dict[str, str] | None = None,
                ncpu: int = 1, campaign: str = "", setup: str = "", notes: tuple[str, ...] = (),
                queries: tuple[str, ...] = QUERY_NAMES, judging: Judging = JUDGING,
                host: JsonObject | None = None, run_on: str = "", detect_plan: JsonObject | None = None,
                drift: tuple[DriftTable, ...] = (), packagers: dict[str, str] | None = None,
                meta: JsonObject | None = None) -> HtapReport:
    targets = list(targets)
    runs = _latest([r for r in runs if r.target in targets])
    summaries = tuple(summarize(runs, targets, queries, ncpu))
    rel = tuple(relatives(runs, targets, queries))
    found: list[Finding] = [] if any(r.status == "ok" for r in runs) else [
        nothing_measured(campaign, "no repeat of any target succeeded")]
    for r in rel:
        if r.estimate is None or r.estimate.value is None:
            found.append(Finding("timed", r.what, None, r.target, targets[0], Verdict.NOT_MEASURED, None,
                                 status=r.status or "no estimate"))
        else:
            found.append(Finding("timed", r.what, None, r.target, targets[0], verdict(r.estimate, judging),
                                 r.estimate.value, r.estimate.lower, r.estimate.upper,
                                 detectable=reported_change(r.estimate, judging.min_effect)))
    ok_repeats = len({r.repeat for r in runs if r.status == "ok"})
    turns = [Turn(0, r.repeat, r.position, r.target, v) for r in runs
             if r.status == "ok" and r.position is not None and (v := value(r, "together", "nopm")) is not None]
    cut = [q for q in queries if any(x.name == q and x.completed == 0 for s in summaries for x in s.queries)]
    notes = (tuple(f.line() for f in found if f.measure == CAMPAIGN) + tuple(notes)
             + order_notes({"NOPM": turns}, unit="repeats")
             + ((f"queries some target never completed inside a window: {', '.join(cut)} "
                 "(a longer duration_s, or more streams, reaches them)",) if cut and ok_repeats else ())
             + detect_notes(tuple(found), detect_plan, ok_repeats, "comparisons")
             + foreign.workload_notes(((f"{WINDOW_TITLES.get(w, w)} window of {r.target}, repeat {r.repeat + 1}",
                                        (win or {}).get("hardware")) for r in runs
                                       for w, win in (r.record.get("windows") or {}).items()),
                                      1 + max((r.repeat for r in runs), default=0)))

    def moved(f: Finding) -> list[tuple[str, float | None, float | None]]:
        if f.test.startswith("NOPM"):
            window = "together" if "with" in f.test else "transactions"
            new, ref = (next(s for s in summaries if s.target == t).hardware[window] for t in (f.target, f.reference))
            return [(what, new.get(m), ref.get(m)) for m, what in MOVED_TX]
        if f.test.endswith(" latency"):  # one query: whether it moved alone too (the engine) or only together
            name = f.test.split()[0]
            mine, theirs = ([x for x in s.queries if x.name == name] for t in (f.target, f.reference)
                            for s in summaries if s.target == t)
            return [(f"{name} latency alone", mine[0].alone_ms if mine else None,
                     theirs[0].alone_ms if theirs else None)]
        window = "analytics" if f.test == "queries/h alone" else "together"
        new, ref = (per_query_hardware(runs, t, window) for t in (f.target, f.reference))
        return [(what, new.get(m), ref.get(m)) for m, what in MOVED_Q]
    why = explanations(tuple(found), moved)
    return HtapReport(summaries, rel, tuple(runs), tuple(queries), campaign=campaign, targets=tuple(targets),
                      labels=dict(labels or {}), ncpu=ncpu, setup=setup, notes=notes, findings=warned(told(tuple(found), packagers or {}), foreign.cell_flags(
                          ((r.target, None), f"{WINDOW_TITLES.get(w, w)} window, repeat {r.repeat + 1}",
                           (win or {}).get("hardware")) for r in runs
                          for w, win in (r.record.get("windows") or {}).items())),
                      explanations=why, judging=judging, host=dict(host or {}), run_on=run_on,
                      drift=drift, packagers=dict(packagers or {}), meta=dict(meta or {}))


MOVED_TX = (("server/no", "server CPU µs/new order"), ("client/no", "client CPU µs/new order"),
            ("wkb/no", "KB written/new order"))
MOVED_Q = (("server/q", "server CPU µs/analytical query"), ("rkb/q", "KB read/analytical query"))


def history_values(store: Store, campaign_id: int) -> dict[tuple[str, str], list[float]]:
    """Each judged throughput (NOPM and queries/h, alone and together) per target in each ok
    repeat, for `history --metric rate`."""
    runs = [r for r in store.workload_runs(campaign_id) if r.workload == "htap"]
    out: dict[tuple[str, str], list[float]] = {}
    for t in dict.fromkeys(r.target for r in runs):
        for name, (window, what) in MEASURES.items():
            found = _per_repeat(runs, t, window, what)
            if found:
                out[(t, name)] = [found[k] for k in sorted(found)]
    return out


CAPTIONS = {  # each of MEASURES as its chart on the published site says it
    "NOPM with analytics": "new orders per minute while the analytic queries run (CH-benCHmark)",
    "NOPM alone": "new orders per minute with no analytic queries (CH-benCHmark)",
    "queries/h with transactions": "analytic queries per hour while TPROC-C runs (CH-benCHmark)",
    "queries/h alone": "analytic queries per hour with no transactions (CH-benCHmark)",
}
assert tuple(CAPTIONS) == JUDGED


def history_measure(measure: str) -> tuple[str, str]:
    """What a history_values measure is, as a chart's caption and its y axis' unit."""
    return CAPTIONS.get(measure, f"{measure} (CH-benCHmark)"), "NOPM" if measure.startswith("NOPM") else "queries/h"


def estimates(store: Store, campaign_id: int) -> dict[str, list[Estimate]]:
    """Each judged figure of every target against the base, as the verdicts have it: what a
    campaign planned to detect plans from (its calibration) and follows as it runs."""
    stored = stored_campaign(store, campaign_id, None, HtapReport.judged)
    names = tuple((stored.spec.get("htap") or {}).get("queries") or QUERY_NAMES)
    runs = [r for r in store.workload_runs(campaign_id) if r.workload == "htap"]
    out: dict[str, list[Estimate]] = {}
    for r in relatives(runs, list(stored.fields["targets"]), names):
        if r.estimate is not None and r.estimate.value is not None:
            out.setdefault(r.what, []).append(r.estimate)
    return out


__all__ = ["HtapReport", "build", "htap_report", "estimates", "history_values", "history_measure", "stacks", "WINDOWS",
           "WINDOW_TITLES"]  # the report and the registry read them here


def stacks(store: Store, campaign_id: int) -> list[tuple[str, str, dict[str, int] | None]]:
    """CH-benCHmark records no stacks (its Capabilities.records_flamegraphs is false): `run --flamegraph`
    is refused for it, so a campaign of it has none for `report --flamegraphs`."""
    return []
