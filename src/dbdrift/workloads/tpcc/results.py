"""The TPROC-C report of a stored campaign: NOPM, TPM, hardware per new order and response times
per target (analysis/tpcc.py), and the NOPM verdict of each target against the base, computed
once for every format to render. Reads the store, writes nothing.

    build(store, campaign_id, base) -> TpccReport
    tpcc_report(results, targets, labels, ncpu, campaign, setup) -> TpccReport (from values)
"""
from __future__ import annotations

from dataclasses import dataclass

from dbdrift.analysis.defaults import DriftTable
from dbdrift.analysis.noise import JUDGING, Judging, Estimate, Verdict, verdict
from dbdrift.analysis import foreign
from dbdrift.analysis.position import Turn, order_notes
from dbdrift.analysis.power import reported_change
from dbdrift.analysis.tpcc import TargetSummary, summarize
from dbdrift.model import JsonObject, TpccResult
from dbdrift.results.findings import CAMPAIGN, Finding, nothing_measured, told, warned
from dbdrift.results.workload import WorkloadReport, detect_notes, explanations, stored_campaign
from dbdrift.store.store import Store
from dbdrift.workloads.tpcc.catalog import setup_text


@dataclass(frozen=True)
class TpccReport(WorkloadReport):
    """One campaign's TPROC-C results with everything the formats render."""

    judged = "NOPM"
    workload = "tpcc"
    summaries: tuple[TargetSummary, ...]
    results: tuple[TpccResult, ...]  # every stored run of the report's targets, any status

    def problems(self) -> list[str]:
        """`pg18 (postgres 18.1): lost connection` per error of a failed run."""
        return [f"{self.label(s.target)}: {e}" for s in self.summaries for e in s.errors]


def build(store: Store, campaign_id: int, base: str | None, judging: Judging = JUDGING) -> TpccReport:
    """The TPROC-C report of a stored campaign, with its notes and verdicts."""
    stored = stored_campaign(store, campaign_id, base, TpccReport.judged)
    return tpcc_report(store.tpcc_runs(campaign_id), setup=setup_text(stored.spec), judging=judging,
                       detect_plan=stored.spec.get("detect_plan"), **stored.fields)


def tpcc_report(results: list[TpccResult], targets: list[str] | tuple[str, ...],
                labels: dict[str, str] | None = None, ncpu: int = 1, campaign: str = "", setup: str = "",
                notes: tuple[str, ...] = (), judging: Judging = JUDGING,
                host: JsonObject | None = None, run_on: str = "", detect_plan: JsonObject | None = None,
                drift: tuple[DriftTable, ...] = (), packagers: dict[str, str] | None = None,
                meta: JsonObject | None = None) -> TpccReport:
    """Per-target summaries and NOPM verdicts of `results` (runs of other targets are ignored);
    `host` and `run_on`: the stored host facts and the campaign's start (WorkloadReport's);
    `detect_plan`: the campaign's plan, when it was planned to detect (a note says if NOPM reached it)."""
    targets = list(targets)
    summaries = tuple(summarize(results, targets, ncpu))
    found = tuple(tpcc_findings(summaries, judging, campaign))
    notes = (tuple(f.line() for f in found if f.measure == CAMPAIGN) + tuple(notes)  # every format shows notes
             + order_notes({"NOPM": [Turn(0, r.repeat, r.position, r.target, r.nopm) for r in results
                                     if r.status == "ok" and r.position is not None and r.target in targets]},
                           unit="repeats")
             + detect_notes(found, detect_plan, len({r.repeat for r in results if r.status == "ok"}), "tests")
             + foreign.workload_notes(((f"TPROC-C of {r.target}, repeat {r.repeat + 1}", r.hardware)
                                       for r in results if r.target in targets), 1 + max((r.repeat for r in results),
                                                                                         default=0)))
    hardware = {s.target: s.hardware for s in summaries}
    why = explanations(found, lambda f: [(what, hardware[f.target].get(m), hardware[f.reference].get(m))
                                         for m, what in MOVED])
    return TpccReport(summaries, tuple(r for r in results if r.target in targets), campaign=campaign,
                      targets=tuple(targets), labels=dict(labels or {}), ncpu=ncpu, setup=setup, notes=notes,
                      findings=warned(told(tuple(found), packagers or {}), foreign.cell_flags(
                          ((r.target, None), f"repeat {r.repeat + 1}", r.hardware) for r in results)), explanations=why, judging=judging, host=dict(host or {}), run_on=run_on,
                      drift=drift, packagers=dict(packagers or {}), meta=dict(meta or {}))


def history_values(store: Store, campaign_id: int) -> dict[tuple[str, str], list[float]]:
    """Each target's NOPM in each ok repeat (its latest run of the repeat), for `history --metric rate`."""
    last = {(r.target, r.repeat): r for r in store.tpcc_runs(campaign_id)}
    out: dict[tuple[str, str], list[float]] = {}
    for (target, _repeat), r in sorted(last.items(), key=lambda kv: kv[0][1]):
        if r.status == "ok":
            out.setdefault((target, "NOPM"), []).append(r.nopm)
    return out


def history_measure(measure: str) -> tuple[str, str]:
    """What history_values' NOPM is, as a chart's caption and its y axis' unit."""
    return "new orders per minute (TPROC-C)", "NOPM"


def nopm_estimates(store: Store, campaign_id: int) -> dict[str, list[Estimate]]:
    """NOPM's estimate of every target against the campaign's base, as its verdict has it: what a
    campaign planned to detect plans from (its calibration) and follows as it runs."""
    targets = stored_campaign(store, campaign_id, None, TpccReport.judged).fields["targets"]
    summaries = summarize(store.tpcc_runs(campaign_id), list(targets), 1)
    return {"NOPM": [s.relative for s in summaries[1:] if s.relative is not None and s.relative.value is not None]}


MOVED = (("server/no", "server CPU µs/new order"), ("bg/no", "background CPU µs/new order"),
         ("client/no", "client CPU µs/new order"), ("cs/no", "cs/new order"), ("wkb/no", "KB written/new order"),
         ("fl/no", "flushes/new order"))
"""The hardware per new order a NOPM verdict's explanation compares: each target's mean over its
ok runs (analysis/tpcc.py)."""


def tpcc_findings(summaries: tuple[TargetSummary, ...] | list[TargetSummary], judging: Judging = JUDGING,
                  campaign: str = "") -> list[Finding]:
    """NOPM of every target but the base (the first) ÷ the base's, with its interval over
    repeats (one repeat: no interval) and its detectable change (analysis/power.py); a target or
    base without an ok run is not measured, and a campaign without any ok run gets its
    nothing-measured finding first. Response times have no verdict: they are shown, not judged."""
    out = [] if any(s.nopm is not None for s in summaries) else [nothing_measured(campaign,
                                                                                   "no run of any target succeeded")]
    if not summaries:
        return out
    base = summaries[0]
    for s in summaries[1:]:
        if s.nopm is None or base.nopm is None or s.relative is None:
            missing = s.target if s.nopm is None else base.target
            out.append(Finding("timed", "NOPM", None, s.target, base.target, Verdict.NOT_MEASURED, None,
                               status=f"no ok run of {missing}"))
            continue
        out.append(Finding("timed", "NOPM", None, s.target, base.target, verdict(s.relative, judging),
                           s.relative.value, s.relative.lower, s.relative.upper,
                           detectable=reported_change(s.relative, judging.min_effect)))
    return out


def stacks(store: Store, campaign_id: int) -> list[tuple[str, str, dict[str, int] | None]]:
    """("tpcc", target, its folded stacks) of every stored run (`report --flamegraphs`)."""
    return [("tpcc", r.target, r.folded) for r in store.tpcc_runs(campaign_id)]
