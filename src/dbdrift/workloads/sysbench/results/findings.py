"""The verdicts of sysbench's comparison as findings (results/findings.py's Finding): every
timed cell (rQPS with its interval) and every instruction count compared with its reference
(instructions per event, new / reference), each with the measure it comes from. `report
--fail-on`, the HTML findings and the CSV and JSON rows read them from here, so an instruction
regression gates a CI job as a timed one does."""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from dbdrift.analysis.instructions import InstructionRow
from dbdrift.analysis.noise import Verdict
from dbdrift.results.findings import MEASURES, Finding, nothing_measured, select
from dbdrift.results.targets import packager_change
from dbdrift.workloads.sysbench.results.data import ReportData


def all_findings(data: ReportData) -> Iterator[Finding]:
    """Every compared cell: timed cells in the report's order, then every instruction comparison;
    first of all, a campaign that measured nothing says so."""
    measured = any(c.absolute.value is not None for row in data.comparison.rows for c in row.cells.values()) or \
        any(c.ir_per_event is not None for irow in data.instructions for c in irow.costs.values())
    if not measured:
        yield nothing_measured(data.campaign)
    for row in data.comparison.rows:
        for target in data.comparison.compared:
            cell = row.cells[target]
            if cell.verdict is None:
                continue
            est = cell.estimate
            yield Finding("timed", row.test, row.threads, target, cell.reference or "", cell.verdict, cell.ratio,
                          est.lower if est else None, est.upper if est else None,
                          row.status(target) or "", cell.detectable, cell.packagers)
    for irow, target, said in instruction_cells(data):
        if said is None:
            continue
        reference = irow.references[target]
        status = "" if said is not Verdict.NOT_MEASURED else \
            f"no count of {target if reference in irow.costs else reference}"
        yield Finding("instructions", irow.test, None, target, reference, said, irow.relative.get(target),
                      status=status, packagers=packager_change(data.packagers, target, reference))


def findings(data: ReportData, kinds: list[str] | tuple[str, ...],
             measures: tuple[str, ...] = MEASURES) -> list[Finding]:
    """The findings `report --fail-on KINDS` names, from the measures chosen (--fail-by)."""
    return select(list(all_findings(data)), kinds, measures)


def instruction_cells(data: ReportData) -> Iterator[tuple[InstructionRow, str, Verdict | None]]:
    """(instruction row, target, verdict) for every target counted or compared on each counted
    test, targets in the report's order; the reference's own line has no verdict."""
    order = list(data.comparison.targets)
    for irow in data.instructions:
        names = set(irow.costs) | set(irow.references)
        for target in sorted(names, key=lambda t: (order.index(t) if t in order else len(order), t)):
            yield irow, target, _count_verdict(irow, target)


def _count_verdict(irow: InstructionRow, target: str) -> Verdict | None:
    reference = irow.references.get(target)
    if reference is None or (target not in irow.costs and reference not in irow.costs):
        return None
    return irow.verdicts.get(target) or Verdict.NOT_MEASURED


def instruction_why(irow: InstructionRow, target: str) -> str:
    """`+1,500 instructions/event (+3.3%); 92% of it in: f +345, g +305` for a compared count."""
    delta = irow.deltas.get(target)
    if not delta:
        return ""
    ref = irow.references[target]
    total = delta["total_delta"]
    base_ir = irow.costs[ref].ir_per_event if ref in irow.costs else 0
    text = f"{total:+,.0f} instructions/event" + (f" ({100 * total / base_ir:+.1f}%)" if base_ir else "")
    same_way = delta["self"]["grew" if total > 0 else "shrank"]
    if delta["explained"] is not None and same_way:
        text += f"; {where_it_went(total, same_way[:3])}"
    return f"{text}; {irow.rechecked[target]}" if target in irow.rechecked else text


def where_it_went(total: float, shown: Sequence[Mapping[str, Any]]) -> str:
    """`85% of it in: f +440, g +345`: the functions shown (self cost, which never overlaps) and
    their share of the net change `total`, computed over exactly those shown. Their sum passes
    the net when other functions moved the other way (a change is gross ups minus gross downs):
    then it says so with the rest's net, instead of an unexplained share above 100%."""
    listed = sum(r["delta"] for r in shown)
    funcs = ", ".join(f"{r['function']} {r['delta']:+,.0f}" for r in shown)
    share = listed / total
    if round(100 * share) <= 100:
        return f"{share:.0%} of it in: {funcs}"
    return (f"in: {funcs}, together {listed:+,.0f}, more than the net change ({share:.0%} of it): the other "
            f"functions moved the other way by {total - listed:+,.0f}")
