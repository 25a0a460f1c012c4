"""A configuration matrix's absolute table, as the posts print it: one line per target and
variant, the chosen tests as columns (`ins upd-ix upd-nix dbms`), optionally grouped by the
levels of one axis ("without fsync" / "with fsync"). Text, Markdown, CSV, JSON and HTML.

The relative views (every variant against its base variant, the same variant across versions,
one engine against the other) are ordinary reports with their own references
(`report --against`); this is the one layout they do not have.
"""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from dbdrift.report.numbers import fmt_abs
from dbdrift.report.page import page
from dbdrift.report.post import compared_lines, md_lines
from dbdrift.workloads.sysbench.report.post import sysbench_setup
from dbdrift.workloads.sysbench.results.data import ReportData

SHORT = {"insert": "ins", "update-index": "upd-ix", "update-nonindex": "upd-nix", "update-one": "upd-one",
         "update-zipf": "upd-zipf", "update-inlist": "upd-inl", "delete": "del", "write-only": "wo",
         "read-write_range=10": "rw10", "read-write_range=100": "rw100", "point-query": "pq",
         "hot-points": "hot", "scan": "scan", "read-only_range=10": "ro10", "read-only_range=100": "ro100",
         "read-only_range=10000": "ro10k", "points-covered-pk": "pt-cpk", "points-covered-si": "pt-csi",
         "points-notcovered-pk": "pt-npk", "points-notcovered-si": "pt-nsi", "range-covered-pk": "rg-cpk",
         "range-covered-si": "rg-csi", "range-notcovered-pk": "rg-npk", "range-notcovered-si": "rg-nsi",
         "random-points_range=10": "rp10", "random-points_range=100": "rp100", "random-points_range=1000": "rp1k"}


@dataclass(frozen=True)
class MatrixLine:
    target: str
    engine: str
    version: str
    variant: str | None
    levels: dict[str, str]
    values: dict[str, float | None]  # test -> QPS (scan: thousand rows/s), None when not measured
    statuses: dict[str, str]


@dataclass(frozen=True)
class MatrixBlock:
    threads: int
    title: str  # "" without grouping, else "sync0" (the axis level)
    lines: tuple[MatrixLine, ...]


def short(test: str) -> str:
    return SHORT.get(test, test)


def measured_tests(data: ReportData) -> list[str]:
    return list(dict.fromkeys(r.test for r in data.comparison.rows))


def axis_names(data: ReportData) -> list[str]:
    return [a["name"] for a in data.meta.get("campaign", {}).get("settings", {}).get("axes", [])]


def blocks(data: ReportData, tests: list[str] | None, group_by: str | None) -> tuple[list[str], list[MatrixBlock]]:
    """(the tests as columns, the blocks per client count and group-by level); `tests` and
    `group_by` name measured tests and an axis of the campaign (the caller checks)."""
    rows = data.comparison.rows
    columns = [t for t in measured_tests(data) if not tests or t in tests]
    meta = {t["name"]: t for t in data.meta.get("targets", [])}
    out = []
    for threads in data.thread_counts():
        lines = []
        for target in data.comparison.targets:
            info = meta.get(target, {})
            cells = {r.test: r.cells[target] for r in rows if r.threads == threads and target in r.cells}
            lines.append(MatrixLine(target, info.get("engine", ""), info.get("version") or "", info.get("variant"),
                                    info.get("levels") or {},
                                    {t: cells[t].absolute.value if t in cells else None for t in columns},
                                    {t: cells[t].absolute.status if t in cells else "not run" for t in columns}))
        if group_by is None:
            out.append(MatrixBlock(threads, "", tuple(lines)))
            continue
        levels = list(dict.fromkeys(ln.levels[group_by] for ln in lines if group_by in ln.levels))
        for level in levels:
            out.append(MatrixBlock(threads, f"{group_by}{level}",
                                   tuple(ln for ln in lines if ln.levels.get(group_by) == level)))
        rest = tuple(ln for ln in lines if group_by not in ln.levels)
        if rest:
            out.append(MatrixBlock(threads, f"no {group_by} axis", rest))
    return columns, out


def _title(block: MatrixBlock) -> str:
    head = f"{block.threads} client thread{'s' if block.threads != 1 else ''}"
    return f"{head}, {block.title}" if block.title else head


def render_matrix(data: ReportData, fmt: str, tests: list[str] | None = None, group_by: str | None = None) -> str:
    columns, found = blocks(data, tests, group_by)
    if fmt == "post":
        return render_matrix_post(data, columns, found)
    return {"text": _text, "markdown": _markdown, "csv": _csv, "json": _json, "html": _html}[fmt](data, columns, found)


_UNIT = "QPS; scan: thousand rows/s"


def _cells(line: MatrixLine, columns: list[str]) -> list[str]:
    return [fmt_abs(line.values[t], line.statuses[t]) for t in columns]


def _text(data: ReportData, columns: list[str], found: list[MatrixBlock]) -> str:
    out = [f"campaign: {data.campaign}", f"absolute throughput per target and variant ({_UNIT})",
           "columns: " + ", ".join(f"{short(t)} = {t}" for t in columns if short(t) != t), ""]
    for block in found:
        table = [[short(t) for t in columns] + ["dbms"]] + [_cells(ln, columns) + [ln.target] for ln in block.lines]
        widths = [max(len(r[i]) for r in table) for i in range(len(columns))]
        out.append(f"-- {_title(block)}")
        out += ["  ".join(c.rjust(w) for c, w in zip(r[:-1], widths)) + "  " + r[-1] for r in table]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _markdown(data: ReportData, columns: list[str], found: list[MatrixBlock]) -> str:
    out = [f"# dbdrift matrix: {data.campaign}", "", f"Absolute throughput per target and variant ({_UNIT}).", ""]
    for block in found:
        out += [f"## {_title(block)}", "", "| " + " | ".join([short(t) for t in columns] + ["dbms"]) + " |",
                "|" + "---:|" * len(columns) + "---|"]
        out += ["| " + " | ".join(_cells(ln, columns) + [ln.target]) + " |" for ln in block.lines]
        out.append("")
    return "\n".join(out)


def _csv(data: ReportData, columns: list[str], found: list[MatrixBlock]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    axes = list(dict.fromkeys(a for b in found for ln in b.lines for a in ln.levels))
    writer.writerow(["threads", "group", "target", "engine", "version", "variant", *axes, *columns])
    for block in found:
        for ln in block.lines:
            writer.writerow([block.threads, block.title, ln.target, ln.engine, ln.version, ln.variant or "",
                             *(ln.levels.get(a, "") for a in axes),
                             *("" if ln.values[t] is None else f"{ln.values[t]:.3f}" for t in columns)])
    return buf.getvalue()


def _json(data: ReportData, columns: list[str], found: list[MatrixBlock]) -> str:
    doc = {"meta": data.meta, "campaign": data.campaign, "unit": _UNIT,
           "tests": [{"test": t, "short": short(t)} for t in columns],
           "blocks": [{"threads": b.threads, "group": b.title,
                       "rows": [{"target": ln.target, "engine": ln.engine, "version": ln.version,
                                 "variant": ln.variant, "levels": ln.levels, "values": ln.values,
                                 "statuses": {t: s for t, s in ln.statuses.items() if s}} for ln in b.lines]}
                      for b in found]}
    return json.dumps(doc, indent=2) + "\n"


def _html(data: ReportData, columns: list[str], found: list[MatrixBlock]) -> str:
    parts = [f"<h1>{escape(data.campaign)}: absolute throughput per variant</h1>",
             f"<p>{escape(_UNIT)}; the best value of each column is in bold.</p>"]
    for block in found:
        best = {t: max((v for ln in block.lines if (v := ln.values[t]) is not None), default=None) for t in columns}
        head = "".join(f'<th title="{escape(t)}">{escape(short(t))}</th>' for t in columns)
        rows = []
        for ln in block.lines:
            cells = "".join(
                f'<td class="num">{"<b>" if ln.values[t] is not None and ln.values[t] == best[t] else ""}'
                f'{escape(fmt_abs(ln.values[t], ln.statuses[t]))}'
                f'{"</b>" if ln.values[t] is not None and ln.values[t] == best[t] else ""}</td>' for t in columns)
            rows.append(f"<tr>{cells}<td>{escape(ln.target)}</td></tr>")
        parts.append(f"<h2>{escape(_title(block))}</h2>\n<table class=\"abs\"><thead><tr>{head}<th>dbms</th></tr>"
                     f"</thead><tbody>{''.join(rows)}</tbody></table>")
    return page(f"dbdrift matrix: {data.campaign}", parts)


def render_matrix_post(data: ReportData, columns: list[str], blocks: Sequence[MatrixBlock]) -> str:
    """A matrix's absolute table as the posts print it, after what was compared (report/post.py's
    parts)."""
    out = [f"# {data.campaign}: a configuration matrix", "", "## What was compared", "",
           *compared_lines(data.meta, data.target_labels, data.comparison.base, data.comparison.targets),
           *sysbench_setup(data),
           *(f"- note: {n}" for n in data.notes), "",
           "This has the absolute QPS (scan: thousand rows/s) of each target and variant; `report --against "
           "variant|version|engine` writes each variant against its reference in basis points.", ""]
    for block in blocks:
        head = (f"{block.threads} client thread{'s' if block.threads != 1 else ''}"
                + (f", {block.title}" if block.title else ""))
        rows = [[fmt_abs(ln.values[t], ln.statuses[t]) for t in columns] + [ln.target] for ln in block.lines]
        out += [f"## {head}", "", *md_lines([*columns, "dbms"], rows), ""]
    return "\n".join(out).rstrip() + "\n"
