"""Plain-text report (terminal): rQPS table per group, coloured by verdict, and group stats."""
from __future__ import annotations

from dbdrift.analysis.noise import Verdict
from dbdrift.report.drift import DRIFT_LEGEND, DRIFT_TITLE, drift_blocks
from dbdrift.report.numbers import fmt_abs, fmt_ratio
from dbdrift.report.page import verdict_class
from dbdrift.workloads.sysbench.report.hardware import (LAYER_TITLE, layer_legend, layer_table, instruction_legend,
                                                        metrics_legend, aligned, delta_lines, instruction_table,
                                                        metrics_blocks, simulated_blocks)
from dbdrift.workloads.sysbench.report.table import (BURST_TITLE, column_names, plan_lines, fmt_cell, legend_lines,
                                                     verdict_counts, verdict_legend)
from dbdrift.workloads.sysbench.report.words import comparison_lines
from dbdrift.workloads.sysbench.results.data import ReportData

_RED, _GREEN, _BOLD, _DIM, _RESET = "\x1b[31m", "\x1b[32m", "\x1b[1m", "\x1b[2m", "\x1b[0m"


def _paint(cell: str, verdict: Verdict | None, value: float | None, color: bool) -> str:
    """The cell in its verdict's colour (page.verdict_class, as the HTML and the site colour it):
    red a regression, green an improvement, bold from SHADE_AT[0] on; dim when it tells nothing."""
    if not color or verdict is None:
        return cell
    if verdict.unclear:
        return f"{_DIM}{cell}{_RESET}"  # dim: not to be trusted either way
    shade = verdict_class(verdict, value)
    if not shade:
        return cell
    return f"{_BOLD if shade[-1] != '1' else ''}{_RED if shade.startswith('red') else _GREEN}{cell}{_RESET}"


def render_text(data: ReportData, color: bool = False) -> str:
    """rQPS rows are `values... name`; with `color`, a regression red, an improvement green."""
    comp = data.comparison
    width = 7
    cell_width = max([20] + [len(fmt_cell(r, t)) for r in comp.rows for t in comp.compared])
    out = [f"campaign: {data.campaign}", *legend_lines(data), verdict_legend(data), ""]
    words = comparison_lines(data)
    out += ["in words:", *(f"  {line}" for line in words), ""] if words else []
    if not comp.compared:
        out.append("(only one target: nothing to compare; absolute values follow)")
    for threads in data.thread_counts():
        sections = data.sections(threads)
        out.append(f"== {threads} client thread{'s' if threads != 1 else ''} ==")
        if comp.compared:
            out.append(" ".join(c.ljust(cell_width) for c in column_names(data)) + "  test")
        for section in sections:
            out.append(f"-- {section.title}")
            for row in section.rows:
                cells = [_paint(fmt_cell(row, t).ljust(cell_width), cell.verdict, cell.ratio, color)
                         for t, cell in ((t, row.cells[t]) for t in comp.compared)]
                out.append(" ".join(cells) + f"  {row.test}")
            if comp.compared:
                for stat in ("min", "max", "mean", "median"):
                    vals = [fmt_ratio(getattr(section.summaries[t], stat)).ljust(cell_width) for t in comp.compared]
                    out.append(" ".join(vals) + f"  ({stat})")
                counts = [verdict_counts(section.summaries[t]).ljust(cell_width) for t in comp.compared]
                out.append(" ".join(counts) + "  (verdicts)")
        out.append("")
        out.append(f"absolute throughput ({threads} client thread{'s' if threads != 1 else ''}; "
                   "QPS, scan: thousand rows/s)")
        widths = {t: max(width * 2, len(t)) for t in comp.targets}  # variant names are long: never cut them
        out.append(" ".join(t.rjust(widths[t]) for t in comp.targets) + "  test")
        for section in sections:
            for row in section.rows:
                out.append(" ".join(fmt_abs(row.cells[t].absolute.value, row.cells[t].absolute.status).rjust(widths[t])
                                    for t in comp.targets)
                           + f"  {row.test}")
        out.append("")
    if data.explanations:
        out += ["why: what moved with each regression (-) and improvement (+)", *data.why_lines(), ""]
    if data.plan_changes:
        out += ["query plans that differ from the reference's (P)", *plan_lines(data), ""]
    if bursts := data.burst_lines():
        out += [BURST_TITLE, *(f"  {line}" for line in bursts), ""]
    out += _hardware_lines(data)
    out += _warning_lines(data)
    return "\n".join(out).rstrip() + "\n"


def _hardware_lines(data: ReportData) -> list[str]:
    out = []
    if data.instructions:
        out.append("instructions per event (server backend, valgrind callgrind; deterministic, steal-proof)")
        out.append(instruction_legend(data))
        out += aligned(*instruction_table(data))
        out += ["", *delta_lines(data), ""]
        for title, header, rows in simulated_blocks(data):
            out += [f"-- {title}", *aligned(header, rows), ""]
    if data.layers:
        out += [LAYER_TITLE, layer_legend(), *aligned(*layer_table(data)), ""]
    blocks = drift_blocks(data.drift)
    if blocks:
        out += [DRIFT_TITLE, DRIFT_LEGEND]
        for title, header, rows, tail in blocks:
            out += [f"-- {title}", *(aligned(header, rows) if rows else []), *([tail] if tail else []), ""]
    if data.show_metrics:
        out += ["hardware per operation", metrics_legend(data)]
        if not data.metrics:
            out.append("(no samples stored: the runs predate the samplers or all failed)")
        for title, header, rows in metrics_blocks(data):
            out += [f"-- {title}", *aligned(header, rows)]
        out.append("")
    return out


def _warning_lines(data: ReportData) -> list[str]:
    lines = []
    for row in data.comparison.rows:
        for cell in row.cells.values():
            for warning in cell.warnings:
                lines.append(f"  {row.test} x{row.threads} {cell.target}: {warning}")
    return ["warnings (!):", *lines] if lines else []
