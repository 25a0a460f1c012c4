"""sysbench's report (layer report): the comparison rendered in a format, as the verbs without the
comparison's views print it (no colour: a page or a file)."""
from __future__ import annotations

from dbdrift.workloads.sysbench.report.formats import render as render_comparison
from dbdrift.workloads.sysbench.results.data import ReportData


def render(data: ReportData, fmt: str) -> str:
    """The report in `fmt` (text, markdown, csv, json, html, post)."""
    return render_comparison(data, fmt)
