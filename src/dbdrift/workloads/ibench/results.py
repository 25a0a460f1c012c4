"""The Insert Benchmark report of a stored campaign: its three summary tables, the per-step details
and a verdict per step, computed once (analysis/ibench.py) for every format to render. Reads the
store, writes nothing.

    build(store, campaign_id, base) -> IBenchReport
    ibench_report(results, targets, labels, ncpu, campaign) -> IBenchReport (from values)
"""
from __future__ import annotations

from dataclasses import dataclass

from dbdrift.analysis.ibench import (IBenchSummary, StepDetail, SummaryCell, index_results, is_query_step, main_rate,
                                    ok_repeats,
                                     step_detail, summary_tables)
from dbdrift.analysis.defaults import DriftTable
from dbdrift.analysis.noise import JUDGING, Judging, Estimate, Method, Verdict, verdict
from dbdrift.analysis import foreign
from dbdrift.analysis.position import Turn, order_notes
from dbdrift.analysis.power import reported_change
from dbdrift.model import IBENCH_STEPS, InsertStepResult, JsonObject
from dbdrift.results.findings import CAMPAIGN, Finding, nothing_measured, told, warned
from dbdrift.results.workload import WorkloadReport, detect_notes, explanations, stored_campaign
from dbdrift.store.store import Store


@dataclass(frozen=True)
class IBenchReport(WorkloadReport):
    """One campaign's Insert Benchmark results with everything the formats render."""

    judged = "each step's rate"
    workload = "insert-benchmark"
    summary: IBenchSummary
    results: dict[tuple[str, str], InsertStepResult]  # (target, step) -> result, any status
    details: dict[tuple[str, str], StepDetail]

    def steps(self) -> list[str]:
        """Steps at least one target has a result for, in run order."""
        return [s for s in IBENCH_STEPS if any((t, s) in self.results for t in self.targets)]


def build(store: Store, campaign_id: int, base: str | None, judging: Judging = JUDGING) -> IBenchReport:
    """The Insert Benchmark report of a stored campaign, with its notes and verdicts."""
    stored = stored_campaign(store, campaign_id, base, IBenchReport.judged)
    planned = tuple((stored.spec.get("insert_benchmark") or {}).get("steps") or ())
    return ibench_report(store.ibench_steps(campaign_id), judging=judging, planned=planned,
                         setup=sizes_text(stored.spec), detect_plan=stored.spec.get("detect_plan"), **stored.fields)


def ibench_report(results: list[InsertStepResult], targets: list[str] | tuple[str, ...],
                  labels: dict[str, str] | None = None, ncpu: int = 1, campaign: str = "",
                  notes: tuple[str, ...] = (), judging: Judging = JUDGING,
                  planned: tuple[str, ...] = (), setup: str = "", host: JsonObject | None = None,
                  run_on: str = "", detect_plan: JsonObject | None = None,
                  drift: tuple[DriftTable, ...] = (), packagers: dict[str, str] | None = None,
                  meta: JsonObject | None = None) -> IBenchReport:
    """Summary tables, verdicts and per-step details of `results` (any status; other targets are
    ignored); `planned`: the campaign's steps, each judged even when no target ran it;
    `setup`, `host` and `run_on`: the campaign's sizes in a line, the stored host facts and the
    campaign's start (WorkloadReport's); `detect_plan`: the campaign's plan, when it was planned
    to detect (a note says which steps reached it)."""
    targets = list(targets)
    indexed = index_results(results, targets)
    details = {key: step_detail(r, ncpu) for key, r in indexed.items()}
    summary = summary_tables(results, targets, ncpu)
    found = tuple(ibench_findings(summary, judging, planned, campaign))
    notes = (tuple(f.line() for f in found if f.measure == CAMPAIGN) + tuple(notes)  # every format shows notes
             + order_notes(_repeat_turns(results, targets), unit="repeats")
             + detect_notes(found, detect_plan, len({r.repeat for r in results if r.status == "ok"}), "steps")
             + foreign.workload_notes(((f"{r.step} of {r.target}, repeat {r.repeat + 1}", r.hardware)
                                       for r in results if r.target in targets), 1 + max((r.repeat for r in results),
                                                                                         default=0)))
    why = explanations(found, lambda f: [(what, details[(f.target, f.test)].metrics.get(m),
                                          details[(f.reference, f.test)].metrics.get(m)) for m, what in MOVED])
    return IBenchReport(summary, indexed, details, campaign=campaign, targets=tuple(targets),
                        labels=dict(labels or {}), ncpu=ncpu, notes=notes,
                        findings=warned(told(tuple(found), packagers or {}), foreign.cell_flags(
                            ((r.target, r.step), f"repeat {r.repeat + 1}", r.hardware) for r in results)),
                        explanations=why,
                        judging=judging, setup=setup, host=dict(host or {}),
                        run_on=run_on,
                      drift=drift, packagers=dict(packagers or {}), meta=dict(meta or {}))


def _repeat_turns(results: list[InsertStepResult], targets: list[str]) -> dict[str, list[Turn]]:
    """Each step's ok results as places in their repeat's order (analysis/position.py): queries/s
    for qr/qp steps, indexed rows/s for the others."""
    cells: dict[str, list[Turn]] = {}
    for r in results:
        if r.status == "ok" and r.position is not None and r.target in targets:
            cells.setdefault(r.step, []).append(Turn(0, r.repeat, r.position, r.target, r.qps or r.ips))
    return cells


MOVED = (("cpupq", "host CPU µs/op"), ("bgpq", "background CPU µs/op"), ("cspq", "cs/op"), ("rkbpq", "KB read/op"),
         ("wkbpi", "KB written/insert"), ("flpi", "flushes/insert"))
"""The step metrics a verdict's explanation compares (op: an insert in l.* steps, a query in
qr/qp): those of the repeat the per-step details show, target and base."""


def ibench_findings(summary: IBenchSummary, judging: Judging = JUDGING,
                    planned: tuple[str, ...] = (), campaign: str = "") -> list[Finding]:
    """Every Insert Benchmark step of every target but the base, judged like a timed sysbench cell
    on its relative throughput (step rate ÷ the base's) and the 95% interval over repeats, with
    the detectable change of that interval (analysis/power.py): one
    repeat gives no interval; a step one side has no value for is not measured, and so is a step
    of `planned` (the campaign's steps) that no target ran. No value at all: the campaign's
    nothing-measured finding first."""
    base, out = summary.base, []
    if all(c.value is None for cells in summary.throughput.rows.values() for c in cells):
        out.append(nothing_measured(campaign, "no step of any target succeeded"))
    base_gaps = dict(summary.missing.get(base, ()))
    for target, cells in summary.relative.rows.items():
        if target == base:
            continue
        gaps = dict(summary.missing.get(target, ()))
        for step, rel in zip(summary.relative.columns, cells):
            if gaps.get(step) == "not run" and base_gaps.get(step) == "not run" and step not in planned:
                continue  # a step neither ran nor was planned: not part of this campaign
            if rel.value is None:
                why = f"{gaps[step]}" if step in gaps else f"{base}: {base_gaps.get(step, 'no value')}"
                out.append(Finding("timed", step, None, target, base, Verdict.NOT_MEASURED, None, status=why))
                continue
            est = _estimate(rel)
            out.append(Finding("timed", step, None, target, base, verdict(est, judging), rel.value,
                               rel.lower, rel.upper, detectable=reported_change(est, judging.min_effect)))
    return out


def _estimate(rel: SummaryCell) -> Estimate:
    """A relative cell's ratio and interval over repeats, as its verdict judges it."""
    return Estimate(rel.value, rel.lower, rel.upper, rel.repeats, Method.OVER_REPEATS)


def step_estimates(store: Store, campaign_id: int) -> dict[str, list[Estimate]]:
    """Each step's estimate of every target against the campaign's base, as its verdict has it:
    what a campaign planned to detect plans from (its calibration) and follows as it runs."""
    targets = stored_campaign(store, campaign_id, None, IBenchReport.judged).fields["targets"]
    summary = summary_tables(store.ibench_steps(campaign_id), list(targets))
    return {step: [_estimate(cells[i]) for target, cells in summary.relative.rows.items()
                   if target != summary.base and cells[i].value is not None]
            for i, step in enumerate(summary.relative.columns)}


def sizes_text(spec: JsonObject) -> str:
    """The campaign's Insert Benchmark sizes in a line: clients, rows per load step, query seconds, repeats."""
    ib = spec.get("insert_benchmark") or {}
    parts = [f"{ib.get('clients', '?')} client(s)",
             f"rows l.i0 {ib.get('rows_l_i0', '?'):,}" if isinstance(ib.get("rows_l_i0"), int) else "",
             f"l.i1 {ib.get('rows_l_i1'):,}" if isinstance(ib.get("rows_l_i1"), int) else "",
             f"l.i2 {ib.get('rows_l_i2'):,}" if isinstance(ib.get("rows_l_i2"), int) else "",
             f"{ib.get('query_s')} s per query step" if ib.get("query_s") is not None else ""]
    if (spec.get("repeats") or 1) > 1:
        parts.append(f"{'up to ' if spec.get('detect_plan') else ''}{spec['repeats']} repeats")  # detect: as needed
    if ib.get("io_bound"):
        parts.append("IO-bound (buffer pool well below the table)")
    return ", ".join(p for p in parts if p)


def history_values(store: Store, campaign_id: int) -> dict[tuple[str, str], list[float]]:
    """Each step's rate per target in each ok repeat (rows/s of a load step, queries/s of a query
    step: the throughput table's figure), in step order, for `history --metric rate`."""
    targets = [t.name for t in store.targets(campaign_id)]
    repeats = ok_repeats(store.ibench_steps(campaign_id), targets)
    return {(t, step): [main_rate(r) for r in repeats[(t, step)]]
            for step in IBENCH_STEPS for t in targets if repeats.get((t, step))}


def history_measure(step: str) -> tuple[str, str]:
    """What a step's history_values value is, as a chart's caption and its y axis' unit."""
    if step == "l.x":
        return "rows indexed per second: the secondary indexes created (Insert Benchmark)", "rows/s"
    if not is_query_step(step):
        return "rows inserted per second (Insert Benchmark)", "rows/s"
    kind, rate = {"qr": "range", "qp": "point"}.get(step[:2], "?"), step[2:]
    return f"{kind} queries per second, {rate} inserts/s per client beside them (Insert Benchmark)", "queries/s"


def stacks(store: Store, campaign_id: int) -> list[tuple[str, str, dict[str, int] | None]]:
    """(step, target, its folded stacks) of every stored step (`report --flamegraphs`)."""
    return [(r.step, r.target, r.folded) for r in store.ibench_steps(campaign_id)]
