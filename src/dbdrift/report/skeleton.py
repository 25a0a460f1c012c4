"""The one shape of a workload report made of titled tables (TPROC-C, vector search, HTAP):
what a workload gives (its title, its tables, its CSV and JSON, its charts, the facts of its
setup) and how every format is made of it, so the formats of each workload say the same things
in the same order: the header with the targets, setup and host, the verdicts, the why, the
charts (HTML), the tables, the default drift and what failed. Pure; no I/O.

    REPORT = ReportSkeleton(...); REPORT.render(data, fmt) -> str
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from typing import Generic, TypeVar

from dbdrift.report.caveats import findings_html, notes_html
from dbdrift.report.page import data_table, page, page_header
from dbdrift.report.post import render_workload_post
from dbdrift.report.workload import (Table, drift_html, host_fact, run_on_facts, target_facts, text_page,
                                     verdicts_legend, why_html)
from dbdrift.results.workload import WorkloadReport

R = TypeVar("R", bound=WorkloadReport)


def _none(data: WorkloadReport) -> list:
    return []


@dataclass(frozen=True)
class ReportSkeleton(Generic[R]):
    """A workload's report: `title` heads the Markdown and HTML pages ("TPROC-C"), `label` names
    the setup line of the text page; `tables` are the (title, legend, header, rows) every text
    format shows; `csv` and `json` write those formats whole; `charts` are the HTML parts
    between the why and the tables; `facts` (name, plain value) follow the setup in every
    format's header; `post` is render_workload_post's (measure, unit, what); `failed` says what
    failed ("runs" or "repeats")."""

    title: str
    label: str
    tables: Callable[[R], list[Table]]
    csv: Callable[[R], str]
    json: Callable[[R], str]
    post: tuple[str, str, str]
    charts: Callable[[R], list[str]] = _none
    facts: Callable[[R], list[tuple[str, str]]] = _none
    failed: str = "runs"

    def text(self, data: R, markdown: bool = False) -> str:
        return text_page(data, self.title, self.label, self.tables(data), markdown, tuple(self.facts(data)),
                         self.failed)

    def markdown(self, data: R) -> str:
        return self.text(data, markdown=True)

    def html(self, data: R) -> str:
        title = f"{self.title}: {data.campaign}" if data.campaign else self.title
        facts = [*target_facts(data), ("setup", escape(data.setup)), *((n, escape(v)) for n, v in self.facts(data)),
                 host_fact(data), *run_on_facts(data)]
        parts = [page_header(title, facts, notes_html(data.notes)),
                 findings_html(data.findings, verdicts_legend(data), data.judging.min_effect), why_html(data),
                 *self.charts(data)]
        parts += [f"<h2>{escape(name)}</h2>" + (f'<p class="sub">{escape(legend)}</p>' if legend else "")
                  + data_table(header, rows, scroll=True) for name, legend, header, rows in self.tables(data)]
        parts.append(drift_html(data))  # below the results, as in every format
        if data.problems():
            parts.append(f"<h2>Failed {self.failed}</h2><ul>" + "".join(f"<li>{escape(p)}</li>" for p in data.problems())
                         + "</ul>")
        return page(f"dbdrift report: {title}", parts)

    def post_page(self, data: R) -> str:
        """The write-up in the posts' shape (report/post.py)."""
        measure, unit, what = self.post
        return render_workload_post(data, measure, unit, self.tables(data), what)

    def render(self, data: R, fmt: str) -> str:
        """The report in `fmt` (text, markdown, csv, json, html or post: report/post.py)."""
        formats: dict[str, Callable[[R], str]] = {"text": self.text, "markdown": self.markdown, "csv": self.csv,
                                                  "json": self.json, "html": self.html, "post": self.post_page}
        return formats[fmt](data)
