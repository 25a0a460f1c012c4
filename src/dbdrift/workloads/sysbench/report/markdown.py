"""Markdown report: the `col-N : <target>` legend of the posts and one table per group."""
from __future__ import annotations

from dbdrift.report.drift import DRIFT_LEGEND, DRIFT_TITLE, drift_blocks
from dbdrift.report.numbers import fmt_abs, fmt_ratio
from dbdrift.workloads.sysbench.report.hardware import (LAYER_TITLE, layer_legend, layer_table, instruction_legend,
                                                        metrics_legend, delta_lines, instruction_table,
                                                        metrics_blocks, simulated_blocks)
from dbdrift.workloads.sysbench.report.table import (BURST_TITLE, column_names, plan_lines, fmt_cell, legend_lines,
                                                     verdict_legend)
from dbdrift.workloads.sysbench.report.words import comparison_words
from dbdrift.workloads.sysbench.results.data import ReportData


def render_markdown(data: ReportData) -> str:
    comp = data.comparison
    out = [f"# dbdrift report: {data.campaign}", "", "```", *legend_lines(data), "```", "", verdict_legend(data), ""]
    words = comparison_words(data)
    out += ["## In words", "", *(f"{'  ' if i else ''}- {line}" for w in words for i, line in enumerate(w.lines())),
            ""] if words else []
    cols = column_names(data)
    for threads in data.thread_counts():
        sections = data.sections(threads)
        out += [f"## {threads} client thread{'s' if threads != 1 else ''}", ""]
        for section in sections:
            out += [f"### {section.title}", ""]
            out.append("| " + " | ".join(cols + ["test"]) + " |")
            out.append("|" + "---:|" * len(cols) + "---|")
            for row in section.rows:
                cells = [" ".join(fmt_cell(row, t).split()).replace("[", "\\[") for t in comp.compared]
                out.append("| " + " | ".join(cells + [row.test]) + " |")
            for stat in ("min", "max", "mean", "median"):
                cells = [fmt_ratio(getattr(section.summaries[t], stat)) for t in comp.compared]
                out.append("| " + " | ".join(cells + [f"*{stat}*"]) + " |")
            out.append("")
        out += ["### absolute throughput (QPS; scan: thousand rows/s)", ""]
        out.append("| " + " | ".join(list(comp.targets) + ["test"]) + " |")
        out.append("|" + "---:|" * len(comp.targets) + "---|")
        for section in sections:
            for row in section.rows:
                absolute = [fmt_abs(row.cells[t].absolute.value, row.cells[t].absolute.status) for t in comp.targets]
                out.append("| " + " | ".join(absolute + [row.test]) + " |")
        out.append("")
    if data.explanations:
        out += ["## Why: what moved with each regression and improvement", ""]
        out += [f"- {line}" for line in data.why_lines()] + [""]
    if data.plan_changes:
        out += ["## Query plans that differ from the reference's (P)", "", "```", *plan_lines(data), "```", ""]
    if bursts := data.burst_lines():
        title, _, rest = BURST_TITLE.partition(": ")
        out += [f"## {title[0].upper()}{title[1:]}", "", f"{rest[0].upper()}{rest[1:]}.", "",
                *(f"- {line}" for line in bursts), ""]
    out += _hardware(data)
    return "\n".join(out).rstrip() + "\n"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---:|" * (len(header) - 1) + "---|",
            *("| " + " | ".join(r) + " |" for r in rows)]


def _hardware(data: ReportData) -> list[str]:
    out = []
    if data.instructions:
        out += ["## Instructions per event (callgrind, server backend)", "", instruction_legend(data), ""]
        out += _table(*instruction_table(data)) + [""]
        out += [f"- {line}" for line in delta_lines(data)] + [""]
        for title, header, rows in simulated_blocks(data):
            out += [f"### {title}", "", *_table(header, rows), ""]
    if data.layers:
        out += [f"## {LAYER_TITLE[0].upper()}{LAYER_TITLE[1:]}", "", layer_legend(), "", *_table(*layer_table(data)), ""]
    blocks = drift_blocks(data.drift)
    if blocks:
        out += [f"## {DRIFT_TITLE[0].upper()}{DRIFT_TITLE[1:]}", "", DRIFT_LEGEND, ""]
        for title, header, rows, tail in blocks:
            out += [f"### {title}", "", *(_table(header, rows) if rows else []), "", *([tail, ""] if tail else [])]
    if data.show_metrics:
        out += ["## Hardware per operation", "", metrics_legend(data), ""]
        for title, header, rows in metrics_blocks(data):
            out += [f"### {title}", "", *_table(header, rows), ""]
    return out
