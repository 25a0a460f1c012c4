"""Plain-text report (terminal): rQPS table per group with red/green marks and group stats."""
from __future__ import annotations

from dbdrift.report.table import (GREEN_AT, RED_AT, ReportData, column_names, fmt_abs, fmt_ratio,
                                  legend_lines)

_RED, _GREEN, _RESET = "\x1b[31m", "\x1b[32m", "\x1b[0m"


def _paint(cell: str, value: float | None, color: bool) -> str:
    if not color or value is None:
        return cell
    if value <= RED_AT:
        return f"{_RED}{cell}{_RESET}"
    if value >= GREEN_AT:
        return f"{_GREEN}{cell}{_RESET}"
    return cell


def render_text(data: ReportData, color: bool = False) -> str:
    """rQPS rows are `values... name` (spec §4.1); ≤0.95 red, ≥1.05 green when `color`."""
    comp = data.comparison
    width = 7
    out = [f"campaign: {data.campaign}", *legend_lines(data), ""]
    if not comp.compared:
        out.append("(only one target: nothing to compare; absolute values follow)")
    for threads in data.thread_counts():
        out.append(f"== {threads} client thread{'s' if threads != 1 else ''} ==")
        if comp.compared:
            out.append(" ".join(c.rjust(width) for c in column_names(data)) + "  test")
        for group in data.group_order:
            rows = data.rows_in(group, threads)
            if not rows:
                continue
            out.append(f"-- {data.group_titles.get(group, group)}")
            for row in rows:
                cells = [_paint(fmt_ratio(row.ratios[t]).rjust(width), row.ratios[t], color) for t in comp.compared]
                out.append(" ".join(cells) + f"  {row.test}")
            for stat in ("min", "max", "mean", "median"):
                summaries = data.summaries_in(group, threads)
                if comp.compared:
                    vals = [fmt_ratio(getattr(summaries[t], stat)).rjust(width) for t in comp.compared]
                    out.append(" ".join(vals) + f"  ({stat})")
        out.append("")
        out.append(f"absolute throughput ({threads} client thread{'s' if threads != 1 else ''}; "
                   "QPS, scan: thousand rows/s)")
        out.append(" ".join(t[:width * 2].rjust(width * 2) for t in comp.targets) + "  test")
        for group in data.group_order:
            for row in data.rows_in(group, threads):
                out.append(" ".join(fmt_abs(row.values[t].value).rjust(width * 2) for t in comp.targets)
                           + f"  {row.test}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
