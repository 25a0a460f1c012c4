"""The verdicts of one report as findings: every timed cell (rQPS with its interval) and every
instruction count compared with its reference (instructions per event, new / reference), each
with the measure it comes from. `report --fail-on`, the HTML findings and the CSV and JSON rows
read them from here, so an instruction regression gates a CI job as a timed one does.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from dbdrift.analysis.instructions import InstructionRow
from dbdrift.analysis.noise import Verdict
from dbdrift.results.data import ReportData
from dbdrift.results.targets import PACKAGER_MARK, packager_change

MEASURES = ("timed", "instructions")
"""timed: rQPS from timed runs (higher is better); instructions: instructions per event counted
under callgrind, new / reference (lower is better; deterministic, so no interval and no
detectable change)."""

CAMPAIGN = "campaign"
"""The measure of the one finding about a whole campaign that measured nothing: it belongs to
no measure, so `--fail-by` of either reads it."""

FINDING_KINDS = ("regression", "not-measured", "noisy")
"""What `--fail-on` can name: a regression; a cell not measured (a failed run or count); a cell
whose verdict could not be told (too noisy, or no interval: one repeat)."""

_KIND_VERDICTS = {"regression": (Verdict.REGRESSION,), "not-measured": (Verdict.NOT_MEASURED,),
                  "noisy": (Verdict.TOO_NOISY, Verdict.NO_INTERVAL)}


@dataclass(frozen=True)
class Finding:
    """One compared cell's verdict, timed or counted."""

    measure: str  # one of MEASURES
    test: str
    threads: int | None  # client count of a timed cell; None for a count (one connection)
    target: str
    reference: str
    verdict: Verdict
    ratio: float | None  # rQPS (timed) or instructions per event new / reference
    lower: float | None = None  # the 95% interval of a timed ratio
    upper: float | None = None
    status: str = ""  # why a cell is not measured (failed, skipped: server died)
    detectable: float | None = None  # the detectable change of a timed ratio (Cell.detectable); None for a count
    packagers: tuple[str, str] | None = None  # (the reference's, the target's) when they differ (Cell.packagers)
    # a workload's cell whose measurements (or its reference's) saw foreign load: their figures,
    # `new: foreign CPU 34% (repeat 2)` (analysis/foreign.cell_flags); "" when quiet or not known
    warned: str = ""

    def line(self) -> str:
        """`point-query x1 pg18: regression 0.950 [0.940,0.960] vs pg17` (timed) or
        `point-query instructions pg18: regression 1.035 instructions/event vs pg17`, then
        `; B debian / npm` when the two were built by different packagers and `; ! new: foreign
        CPU 34% (repeat 2)` when its measurements saw foreign load."""
        built = f"; {PACKAGER_MARK} {self.packagers[1]} / {self.packagers[0]}" if self.packagers else ""
        return self._said() + built + (f"; ! {self.warned}" if self.warned else "")

    def _said(self) -> str:
        if self.measure == CAMPAIGN:
            return f"campaign {self.test}: nothing measured ({self.status})"
        where = (f"{self.test} instructions" if self.measure != "timed" else
                 f"{self.test} x{self.threads}" if self.threads is not None else self.test)
        if self.verdict is Verdict.NOT_MEASURED:
            return f"{where} {self.target}: not measured ({self.status or 'failed'})"
        ratio = "" if self.ratio is None else f" {self.ratio:.3f}"
        if self.measure == "timed":
            interval = f" [{self.lower:.3f},{self.upper:.3f}]" if self.lower is not None else ""
            return f"{where} {self.target}: {self.verdict}{ratio}{interval} vs {self.reference}"
        return f"{where} {self.target}: {self.verdict}{ratio} instructions/event vs {self.reference}"


def nothing_measured(campaign: str, why: str = "no run or count succeeded") -> Finding:
    """The finding of a campaign without a single measured value (interrupted before its first
    run, or no server started): a gate must not read an empty report as a pass."""
    return Finding(CAMPAIGN, campaign, None, "", "", Verdict.NOT_MEASURED, None, status=why)


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


def select(found: list[Finding], kinds: list[str] | tuple[str, ...], measures: tuple[str, ...] = MEASURES
           ) -> list[Finding]:
    """The findings of `kinds` (FINDING_KINDS) among `found`, from the measures chosen (--fail-by)."""
    wanted = {v for k in kinds for v in _KIND_VERDICTS[k]}
    return [f for f in found if (f.measure in measures or f.measure == CAMPAIGN) and f.verdict in wanted]


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


def warned(found: tuple[Finding, ...], flags: Mapping[tuple[str, str | None], str]) -> tuple[Finding, ...]:
    """`found` with each finding whose target's or reference's measurements of its test saw
    foreign load carrying their figures (flags: analysis/foreign.cell_flags, keyed by (target,
    test), or (target, None) for all of a target's tests)."""
    out = []
    for f in found:
        parts = [f"{t}: {figures}" for t in dict.fromkeys((f.target, f.reference)) if t
                 and (figures := flags.get((t, f.test)) or flags.get((t, None)))]
        out.append(replace(f, warned="; ".join(parts)) if parts else f)
    return tuple(out)


def told(found: tuple[Finding, ...], packagers: Mapping[str, str]) -> tuple[Finding, ...]:
    """`found` with each finding whose target and reference come from different packagers
    saying which (the workloads judged over repeats build their findings without them)."""
    return tuple(replace(f, packagers=packager_change(packagers, f.target, f.reference)) for f in found)
