"""The vector search report of a stored campaign: each target's recall-against-QPS curve per
family of index builds, QPS at equal recall relative to the base (with its interval over
repeats: the verdicts), and the index build time and size relative to the base. Computed once
for every format to render; reads the store, writes nothing.

    build(store, campaign_id, base) -> VectorReport
    vector_report(runs, targets, ...) -> VectorReport (from values)
"""
from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean

from dbdrift.analysis.defaults import DriftTable
from dbdrift.analysis.noise import JUDGING, Judging, Estimate, Verdict, relative_over_repeats, verdict
from dbdrift.analysis import foreign
from dbdrift.analysis.position import Turn, order_notes
from dbdrift.analysis.power import reported_change
from dbdrift.model import JsonObject, WorkloadRun
from dbdrift.results.findings import CAMPAIGN, Finding, nothing_measured, told, warned
from dbdrift.results.workload import WorkloadReport, detect_notes, explanations, stored_campaign
from dbdrift.store.store import Store
from dbdrift.workloads.vector.catalog import RECALLS, setup_text
from dbdrift.workloads.vector.curve import Point, best_recall, qps_at, relative_at

HARDWARE = ("cpu/q", "server/q", "client/q", "cs/q")
"""Per query in the measured window of a search setting: host CPU µs (user + system over every
CPU), the server's and the driver's process CPU µs, context switches."""


@dataclass(frozen=True)
class Curve:
    """One target's family: each search setting's recall and QPS, the means over its ok repeats."""

    target: str
    family: int
    label: str
    points: tuple[Point, ...]
    repeats: int
    build_s: float | None
    index_bytes: float | None
    table_bytes: float | None
    load_s: float | None


@dataclass(frozen=True)
class Relative:
    """A target's figure ÷ the base's for one family: QPS at a recall, build time or index size."""

    target: str
    family: int
    label: str  # the base's family label
    what: str  # "QPS @ recall 0.95", "build time", "index size"
    estimate: Estimate | None
    status: str = ""  # why there is none


@dataclass(frozen=True)
class VectorReport(WorkloadReport):
    """One campaign's vector search results with everything the formats render."""

    judged = "QPS at equal recall"
    workload = "vector"
    curves: tuple[Curve, ...]
    relatives: tuple[Relative, ...]
    runs: tuple[WorkloadRun, ...]
    dataset: JsonObject

    def problems(self) -> list[str]:
        return [f"{self.label(r.target)}: repeat {r.repeat + 1}: {r.error}" for r in self.runs
                if r.status != "ok" and r.error]

    def curve(self, target: str, family: int) -> Curve | None:
        return next((c for c in self.curves if c.target == target and c.family == family), None)


def build(store: Store, campaign_id: int, base: str | None, judging: Judging = JUDGING) -> VectorReport:
    stored = stored_campaign(store, campaign_id, base, VectorReport.judged)
    runs = [r for r in store.workload_runs(campaign_id) if r.workload == "vector"]
    return vector_report(runs, setup=setup_text(stored.spec), judging=judging,
                         detect_plan=stored.spec.get("detect_plan"), **stored.fields)


def curves_by_repeat(runs: list[WorkloadRun], target: str) -> dict[int, dict[int, list[Point]]]:
    """family -> repeat -> its points, over the target's ok repeats."""
    out: dict[int, dict[int, list[Point]]] = {}
    for r in runs:
        if r.target != target or r.status != "ok":
            continue
        for fam in r.record.get("families", []):
            points = [Point(p["setting"], float(p["recall"]), float(p["qps"])) for p in fam.get("points", [])
                      if p.get("recall") is not None and p.get("qps")]
            out.setdefault(int(fam["number"]), {})[r.repeat] = points
    return out


def _families(runs: list[WorkloadRun], target: str) -> dict[int, list[JsonObject]]:
    out: dict[int, list[JsonObject]] = {}
    for r in runs:
        if r.target == target and r.status == "ok":
            for fam in r.record.get("families", []):
                out.setdefault(int(fam["number"]), []).append({**fam, "repeat": r.repeat, "load_s": _load_s(r, fam)})
    return out


def _load_s(run: WorkloadRun, fam: JsonObject) -> float | None:
    return next((ld.get("elapsed_s") for ld in run.record.get("loads", []) if ld.get("type") == fam.get("type")), None)


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return fmean(known) if known else None


def summarize(runs: list[WorkloadRun], targets: list[str]) -> list[Curve]:
    out = []
    for t in targets:
        for number, entries in sorted(_families(runs, t).items()):
            settings: dict[str, list[JsonObject]] = {}
            for e in entries:
                for p in e.get("points", []):
                    if p.get("recall") is not None and p.get("qps"):
                        settings.setdefault(p["setting"], []).append(p)
            points = tuple(Point(s, fmean(float(p["recall"]) for p in ps), fmean(float(p["qps"]) for p in ps))
                           for s, ps in settings.items())
            out.append(Curve(t, number, entries[0]["label"], points, len(entries),
                             _mean([e.get("build_s") for e in entries]), _mean([e.get("index_bytes") for e in entries]),
                             _mean([e.get("table_bytes") for e in entries]), _mean([e.get("load_s") for e in entries])))
    return out


def relatives(runs: list[WorkloadRun], targets: list[str]) -> list[Relative]:
    """Every target but the base against the base, per family the base has: QPS at each recall
    of RECALLS (skipped where the base never reaches it), build time and index size."""
    base = targets[0]
    base_curves, base_fams = curves_by_repeat(runs, base), _families(runs, base)
    out = []
    for t in targets[1:]:
        curves, fams = curves_by_repeat(runs, t), _families(runs, t)
        for number, base_reps in sorted(base_curves.items()):
            label = base_fams[number][0]["label"]
            new_reps = curves.get(number, {})
            for r in RECALLS:
                if all(qps_at(ps, r) is None for ps in base_reps.values()):
                    continue  # the base never reaches it: nothing to compare at this recall
                what = f"QPS @ recall {r:.2f}"
                estimate = relative_at(new_reps, base_reps, r)
                if not new_reps:
                    out.append(Relative(t, number, label, what, None, f"no ok repeat of {t}"))
                elif estimate is None:
                    best = max((b for ps in new_reps.values() if (b := best_recall(ps)) is not None), default=None)
                    out.append(Relative(t, number, label, what, None, f"{t} does not reach recall {r:.2f}" + (
                        f" (best {best:.3f})" if best is not None else "")))
                else:
                    out.append(Relative(t, number, label, what, estimate))
            for what, key in (("build time", "build_s"), ("index size", "index_bytes")):
                mine = {e["repeat"]: float(e[key]) for e in fams.get(number, []) if e.get(key)}
                theirs = {e["repeat"]: float(e[key]) for e in base_fams[number] if e.get(key)}
                shared = sorted(set(mine) & set(theirs))
                out.append(Relative(t, number, label, what, relative_over_repeats(
                    [(rep, mine[rep], 1.0) for rep in shared],
                    [(rep, theirs[rep], 1.0) for rep in shared]) if shared else None,
                    "" if shared else "not measured on both"))
    return out


def hardware_per_query(runs: list[WorkloadRun], target: str, family: int, setting: str,
                       ncpu: int) -> dict[str, float | None]:
    """HARDWARE over the windows of one search setting in the target's ok repeats (sums over sums)."""
    windows = [(p.get("queries") or 0, p["hardware"]) for r in runs if r.target == target and r.status == "ok"
               for fam in r.record.get("families", []) if int(fam["number"]) == family
               for p in fam.get("points", []) if p.get("setting") == setting and p.get("hardware")]
    out: dict[str, float | None] = dict.fromkeys(HARDWARE)
    queries = sum(q for q, _ in windows)
    if not windows or queries <= 0:
        return out
    out["cpu/q"] = sum((w["cpu_user_pct"] + w["cpu_sys_pct"]) / 100 * ncpu * w["elapsed_s"]
                       for _, w in windows) * 1e6 / queries
    out["server/q"] = sum(w.get("server_cpu_s") or 0.0 for _, w in windows) * 1e6 / queries
    out["client/q"] = sum(w.get("client_cpu_s") or 0.0 for _, w in windows) * 1e6 / queries
    out["cs/q"] = sum(w.get("cs") or 0 for _, w in windows) / queries
    return out


def _nearest_setting(curve: Curve | None, recall: float) -> str | None:
    """The search setting whose recall is the first at or above `recall` (else the best)."""
    if curve is None or not curve.points:
        return None
    above = sorted((p for p in curve.points if p.recall >= recall), key=lambda p: p.recall)
    return (above[0] if above else max(curve.points, key=lambda p: p.recall)).setting


def vector_report(runs: list[WorkloadRun], targets: list[str] | tuple[str, ...], labels: dict[str, str] | None = None,
                  ncpu: int = 1, campaign: str = "", setup: str = "", notes: tuple[str, ...] = (),
                  judging: Judging = JUDGING, host: JsonObject | None = None, run_on: str = "",
                  detect_plan: JsonObject | None = None,
                  drift: tuple[DriftTable, ...] = (), packagers: dict[str, str] | None = None,
                  meta: JsonObject | None = None) -> VectorReport:
    targets = list(targets)
    runs = [r for r in runs if r.target in targets]
    curves = tuple(summarize(runs, targets))
    rel = tuple(relatives(runs, targets))
    found: list[Finding] = [] if any(r.status == "ok" for r in runs) else [
        nothing_measured(campaign, "no repeat of any target succeeded")]
    for r in rel:
        if not r.what.startswith("QPS"):
            continue  # build time and size are shown, not judged
        test = f"{r.label} {r.what}"
        if r.estimate is None or r.estimate.value is None:
            found.append(Finding("timed", test, None, r.target, targets[0], Verdict.NOT_MEASURED, None,
                                 status=r.status or "no estimate"))
        else:
            found.append(Finding("timed", test, None, r.target, targets[0], verdict(r.estimate, judging),
                                 r.estimate.value, r.estimate.lower, r.estimate.upper,
                                 detectable=reported_change(r.estimate, judging.min_effect)))
    ok_repeats = len({r.repeat for r in runs if r.status == "ok"})
    qps_turns = [Turn(0, r.repeat, r.position, r.target, fmean(
        [float(p["qps"]) for fam in r.record.get("families", []) for p in fam.get("points", []) if p.get("qps")] or [0.0]))
        for r in runs if r.status == "ok" and r.position is not None]
    notes = (tuple(f.line() for f in found if f.measure == CAMPAIGN) + tuple(notes)
             + order_notes({"QPS": qps_turns}, unit="repeats")
             + detect_notes(tuple(found), detect_plan, ok_repeats, "comparisons")
             + foreign.workload_notes(((f"{fam.get('label')} {p.get('setting')} of {r.target}, repeat {r.repeat + 1}",
                                        p.get("hardware")) for r in runs for fam in r.record.get("families", [])
                                       for p in fam.get("points", [])), 1 + max((r.repeat for r in runs), default=0)))

    def moved(f: Finding) -> list[tuple[str, float | None, float | None]]:
        rel_ = next(r for r in rel if r.target == f.target and f"{r.label} {r.what}" == f.test)
        recall = float(rel_.what.rsplit(" ", 1)[1])
        mine, theirs = curve_of(curves, f.target, rel_.family), curve_of(curves, f.reference, rel_.family)
        s_new, s_ref = _nearest_setting(mine, recall), _nearest_setting(theirs, recall)
        if s_new is None or s_ref is None:
            return []
        new = hardware_per_query(runs, f.target, rel_.family, s_new, ncpu)
        ref = hardware_per_query(runs, f.reference, rel_.family, s_ref, ncpu)
        return [(what, new[m], ref[m]) for m, what in MOVED]
    why = explanations(tuple(found), moved)
    dataset: JsonObject = next((r.record["dataset"] for r in runs if r.record.get("dataset")), {})
    return VectorReport(curves, rel, tuple(runs), dataset, campaign=campaign, targets=tuple(targets),
                        labels=dict(labels or {}), ncpu=ncpu, setup=setup, notes=notes, findings=warned(told(tuple(found), packagers or {}), foreign.cell_flags(
                            ((r.target, None), f"{p.get('setting')}, repeat {r.repeat + 1}", p.get("hardware"))
                            for r in runs for fam in r.record.get("families", []) for p in fam.get("points", []))),
                        explanations=why, judging=judging, host=dict(host or {}), run_on=run_on,
                      drift=drift, packagers=dict(packagers or {}), meta=dict(meta or {}))


def curve_of(curves: tuple[Curve, ...], target: str, family: int) -> Curve | None:
    return next((c for c in curves if c.target == target and c.family == family), None)


MOVED = (("server/q", "server CPU µs/query"), ("client/q", "client CPU µs/query"), ("cs/q", "cs/query"))


def qps_estimates(store: Store, campaign_id: int) -> dict[str, list[Estimate]]:
    """QPS at each compared recall of every target against the base, as the verdicts have them:
    what a campaign planned to detect plans from (its calibration) and follows as it runs."""
    targets = list(stored_campaign(store, campaign_id, None, VectorReport.judged).fields["targets"])
    runs = [r for r in store.workload_runs(campaign_id) if r.workload == "vector"]
    out: dict[str, list[Estimate]] = {}
    for r in relatives(runs, targets):
        if r.what.startswith("QPS") and r.estimate is not None and r.estimate.value is not None:
            out.setdefault(f"{r.label} @ {r.what.split('@ ')[1]}", []).append(r.estimate)
    return out


def history_measure(measure: str) -> tuple[str, str]:
    """What a history_values measure (`hnsw m=16 ef_construction=64 vector QPS @ recall 0.95`) is,
    as a chart's caption and its y axis' unit."""
    recall = measure.rsplit("@ recall ", 1)[-1]
    return f"queries per second at recall {recall}: each repeat's recall–QPS curve read there (vector search)", "QPS"


def history_values(store: Store, campaign_id: int) -> dict[tuple[str, str], list[float]]:
    """Each target's QPS at each compared recall (RECALLS) per family of index builds, in each ok
    repeat that reaches it: the figure its verdicts judge, as one number per version for
    `history --metric rate` ("hnsw m=16 ef_construction=64 vector QPS @ recall 0.95")."""
    runs = [r for r in store.workload_runs(campaign_id) if r.workload == "vector"]
    out: dict[tuple[str, str], list[float]] = {}
    for t in dict.fromkeys(r.target for r in runs):
        labels = {number: entries[0]["label"] for number, entries in _families(runs, t).items()}
        for number, reps in sorted(curves_by_repeat(runs, t).items()):
            for recall in RECALLS:
                values = [q for _, points in sorted(reps.items()) if (q := qps_at(points, recall)) is not None]
                if values:
                    out[(t, f"{labels[number]} QPS @ recall {recall:.2f}")] = values
    return out


def stacks(store: Store, campaign_id: int) -> list[tuple[str, str, dict[str, int] | None]]:
    """Vector search records no stacks (its Capabilities.records_flamegraphs is false): `run --flamegraph`
    is refused for it, so a campaign of it has none for `report --flamegraphs`."""
    return []
