"""Markdown report: the `col-N : <target>` legend of the posts and one table per group."""
from __future__ import annotations

from dbdrift.report.table import ReportData, column_names, fmt_abs, fmt_cell, fmt_ratio, legend_lines, verdict_legend


def render_markdown(data: ReportData) -> str:
    comp = data.comparison
    out = [f"# dbdrift report: {data.campaign}", "", "```", *legend_lines(data), "```", "", verdict_legend(data), ""]
    cols = column_names(data)
    for threads in data.thread_counts():
        out += [f"## {threads} client thread{'s' if threads != 1 else ''}", ""]
        for group in data.group_order:
            rows = data.rows_in(group, threads)
            if not rows:
                continue
            out += [f"### {data.group_titles.get(group, group)}", ""]
            out.append("| " + " | ".join(cols + ["test"]) + " |")
            out.append("|" + "---:|" * len(cols) + "---|")
            for row in rows:
                cells = [" ".join(fmt_cell(row, t).split()).replace("[", "\\[") for t in comp.compared]
                out.append("| " + " | ".join(cells + [row.test]) + " |")
            summaries = data.summaries_in(group, threads)
            for stat in ("min", "max", "mean", "median"):
                cells = [fmt_ratio(getattr(summaries[t], stat)) for t in comp.compared]
                out.append("| " + " | ".join(cells + [f"*{stat}*"]) + " |")
            out.append("")
        out += ["### absolute throughput (QPS; scan: thousand rows/s)", ""]
        out.append("| " + " | ".join(list(comp.targets) + ["test"]) + " |")
        out.append("|" + "---:|" * len(comp.targets) + "---|")
        for group in data.group_order:
            for row in data.rows_in(group, threads):
                out.append("| " + " | ".join([fmt_abs(row.values[t].value) for t in comp.targets] + [row.test]) + " |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
