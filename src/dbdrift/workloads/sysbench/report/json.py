"""JSON report: `meta` (dbdrift and format version, date, host, campaign settings), then rows
(test, group, threads, measure, target, reference, value, rqps with their intervals, verdict,
bp, detectable_change, ..., in_words) named as the CSV columns are, plus group summaries and
`words`, the "in words" lines with their figures (report/words.py; bp: the change in basis
points, 0.01 of rQPS each, as the posts count them; in_words: the cell's place in the words,
`largest regression` ..., null when they do not name it). `measure` is "timed"
for a timed cell and "instructions" for an instruction count (value: instructions per event,
instr_rel: new / reference, its own verdict; no interval, so detectable_change null). `packager`
and `reference_packager` name both packagers of a row or column whose target and reference were
built by different ones (the other formats' B), null otherwise."""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dbdrift.analysis.hardware import MetricsRow
from dbdrift.analysis.instructions import InstructionRow
from dbdrift.analysis.layers import LayerRow
from dbdrift.analysis.perfcost import perf_changes
from dbdrift.report.caveats import packagers_json
from dbdrift.report.drift import drift_json
from dbdrift.report.envelope import envelope
from dbdrift.results.targets import packager_change
from dbdrift.workloads.sysbench.report.words import cell_bp, cell_ranks, words_json
from dbdrift.workloads.sysbench.results.data import ReportData
from dbdrift.workloads.sysbench.results.findings import instruction_cells, instruction_why


def render_json(data: ReportData) -> str:
    comp = data.comparison
    rows = []
    ranks = cell_ranks(data)
    for row, cell in data.cells():
        tput, est = cell.throughput, cell.estimate
        rows.append({
            "test": row.test, "group": row.group, "threads": row.threads, "measure": "timed", "target": cell.target,
            "reference": cell.reference, "metric": row.metric,
            "value": _round(cell.absolute.value, 3),
            "value_lower": _round(tput.lower, 3), "value_upper": _round(tput.upper, 3),
            "rqps": _round(cell.ratio, 4),
            "rqps_lower": _round(est.lower if est else None, 4),
            "rqps_upper": _round(est.upper if est else None, 4), "bp": cell_bp(cell),
            "verdict": cell.verdict, "detectable_change": _round(cell.detectable, 4),
            "method": est.method if est else None,
            "samples": est.n if est else None,
            "campaign_sd": _round(est.campaign_sd if est else None, 5),
            "runs": cell.absolute.runs, "failed": cell.absolute.failed, "skipped": cell.absolute.skipped,
            "status": row.status(cell.target) or "ok", "warnings": list(cell.warnings),
            "plan_changed": cell.plan_changed,
            "rqps_typical": _round(est.typical if est else None, 4), "bursty": bool(est and est.bursty),
            "excluded_intervals": tput.dropped_intervals, **packagers_json(cell.packagers),
            "explanation": data.why(row.test, row.threads, cell.target),
            "in_words": ranks.get((row.test, row.threads, cell.target)),
            **_stop(data, row.test, row.threads, cell.target),
        })
    for irow, target, verdict in instruction_cells(data):
        assert isinstance(irow, InstructionRow)  # instruction_cells yields the data's rows, typed as object
        cost = irow.costs.get(target)
        rows.append({
            "test": irow.test, "group": data.group_of(irow.test), "threads": None,
            "measure": "instructions", "target": target, "reference": irow.references.get(target),
            "metric": "instr/event", "value": _round(cost.ir_per_event if cost else None, 1),
            "instr_rel": _round(irow.relative.get(target), 5), "verdict": verdict,
            "detectable_change": None,  # a count has no interval, so no detectable change
            "method": "callgrind",
            "spread_pct": _round(irow.spread_pct.get(target), 4), "status": "ok" if cost else "not measured",
            **packagers_json(packager_change(data.packagers, target, irow.references.get(target))),
            "explanation": instruction_why(irow, target) or None,
        })
    summaries = [
        {"group": s.group, "threads": s.threads, "target": s.target, "count": s.count, "missing": s.missing,
         "min": _round(s.min, 4), "max": _round(s.max, 4), "mean": _round(s.mean, 4), "median": _round(s.median, 4),
         "regressions": s.regressions, "improvements": s.improvements, "noisy": s.noisy,
         "not_measured": s.unmeasured}
        for s in data.summaries
    ]
    doc = {
        **envelope("sysbench", data.campaign, data.meta, comp.base, comp.judging.min_effect, comp.judging.noisy_width,
                   data.notes),
        "chain": comp.chain, **({"against": comp.against} if comp.against else {}),
        "targets": [{"name": t, "label": data.target_labels.get(t, "")} for t in comp.targets],
        "columns": [{"column": f"col-{i}", "target": t, "reference": comp.references.get(t),
                     **packagers_json(packager_change(data.packagers, t, comp.references.get(t)))}
                    for i, t in enumerate(comp.compared, start=1)],
        "words": words_json(data), "rows": rows, "group_summaries": summaries,
        "instructions": [_instruction_json(r) for r in data.instructions],
        "layers": [_layer_json(r) for r in data.layers],
        "default_drift": drift_json(data.drift),
        "plan_changes": [{"test": c.test, "target": c.target, "reference": c.reference,
                          "statements": list(c.statements)} for c in data.plan_changes],
    }
    if data.show_metrics:
        doc["metrics"] = [{"test": m.test, "threads": m.threads, "target": t, "reference": m.references.get(t),
                           "absolute": _clean(m.absolute[t]), "relative": _clean(m.relative.get(t, {})),
                           "perf_per_query": _clean(m.perf.get(t, {})),
                           "perf_changes": _perf_changes(m, t, comp.judging.min_effect)}
                          for m in data.metrics for t in m.absolute]
    return json.dumps(doc, indent=2) + "\n"


def _perf_changes(mrow: MetricsRow, target: str, min_effect: float) -> dict[str, dict[str, Any]]:
    """counter -> its ratio to the reference, the time it adds per operation and whether that
    matters (analysis/perfcost.py); empty for a reference or a target without counters."""
    changes = perf_changes(mrow, min_effect).get(target, {})
    return {n: {"ratio": _round(c.ratio, 6), "delta_ns": _round(c.delta_ns, 3), "share": _round(c.share, 6),
                "matters": c.matters, "note": c.note()} for n, c in changes.items()}


def _clean(values: Mapping[str, float | None]) -> dict[str, float | None]:
    """JSON has no infinity: a ratio against a zero base (spec: `inf`) is written as null."""
    return {k: (None if v == float("inf") else _round(v, 6)) for k, v in values.items()}


def _instruction_json(row: InstructionRow) -> dict[str, Any]:
    return {
        "test": row.test,
        "targets": {t: {"per_event": round(c.ir_per_event, 1), "spread_pct": _round(row.spread_pct.get(t), 4)}
                    for t, c in row.costs.items()},
        "relative": {t: _round(v, 5) for t, v in row.relative.items()},
        "verdicts": {t: str(v) for t, v in row.verdicts.items()},
        "references": row.references,
        "functions": dict(row.deltas),
        "simulated": {t: {k: round(v, 3) for k, v in s.items()} for t, s in row.simulated.items()},
    }


def _layer_json(row: LayerRow) -> dict[str, Any]:
    """A family's split for one target: each part's reference and target cost (instructions,
    or seconds, per statement or per row), their ratio with its bounds, and its verdict."""
    return {"family": row.family, "measure": row.measure, "target": row.target, "reference": row.reference,
            "misfit": _round(row.misfit, 5),
            "parts": {name: {"reference": _round(p.base, 9), "target": _round(p.new, 9), "ratio": _round(p.ratio, 5),
                             "lower": _round(p.lower, 5), "upper": _round(p.upper, 5), "verdict": str(p.verdict),
                             "status": p.status or None} for name, p in row.parts.items()}}


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _stop(data: ReportData, test: str, threads: int, target: str) -> dict[str, object]:
    """Where a sequential campaign planned to detect stopped a compared cell (`stopped`: decided,
    cap or budget, `stop_outcome`, `stop_starts`); nothing for any other campaign."""
    if not data.stops:
        return {}
    stop = data.stops.get((test, threads)) if target in data.comparison.references else None
    return {"stopped": stop["why"] if stop else None, "stop_outcome": stop["outcome"] if stop else None,
            "stop_starts": stop["starts"] if stop else None}
