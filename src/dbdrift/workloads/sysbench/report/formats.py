"""A campaign's report data in one of the formats `dbdrift report --format` names."""
from __future__ import annotations

from dbdrift.workloads.sysbench.report.csv import render_csv
from dbdrift.workloads.sysbench.report.html import render_html
from dbdrift.workloads.sysbench.report.json import render_json
from dbdrift.workloads.sysbench.report.markdown import render_markdown
from dbdrift.workloads.sysbench.report.post import render_post
from dbdrift.workloads.sysbench.report.text import render_text
from dbdrift.workloads.sysbench.results.data import ReportData

FORMATS = ("text", "markdown", "csv", "json", "html", "post")


def render(data: ReportData, fmt: str, color: bool = False) -> str:
    if fmt == "markdown":
        return render_markdown(data)
    if fmt == "csv":
        return render_csv(data)
    if fmt == "json":
        return render_json(data)
    if fmt == "html":
        return render_html(data)
    if fmt == "post":
        return render_post(data)
    return render_text(data, color=color)
