"""`dbdrift history` in every format: one block per series group (engine, setup, host, metric,
client count), tests as rows and versions (or campaigns, by time) as columns, as the posts'
per-version tables; then the change points found in each series.

Text and Markdown print each row's first value absolute and the others relative to it (`--absolute`:
all absolute); CSV and JSON carry both, with each point's interval and replicates; HTML draws
one line per test relative to the first column on an axis from 0.8."""
from __future__ import annotations

import csv
import io
import json
from html import escape
from typing import Any

from dbdrift.analysis.changepoints import Change
from dbdrift.report.page import TARGET_COLORS, page
from dbdrift.report import charts
from dbdrift.report.charts import axis_spacing, columns_chart
from dbdrift.report.numbers import fmt_abs
from dbdrift.report.caveats import PACKAGER_MARK, packagers_json
from dbdrift.results.history import (METRICS, RATE_THREADS, Series, SeriesPoint, packagers_crossed, time_order,
                                     version_order)

HISTORY_FORMAT_VERSION = 1
BlockKey = tuple[str, str, str, int, str]  # Series.key: engine, setup, host, threads, metric


def blocks(series: list[Series]) -> list[tuple[BlockKey, list[Series], list[str]]]:
    """(key, its series, the column labels in order) per block."""
    grouped: dict[BlockKey, list[Series]] = {}
    for s in series:
        grouped.setdefault(s.key, []).append(s)
    out = []
    for key, members in grouped.items():
        when = {p.label: p.replicates[0].commit_order for s in members for p in s.points}
        labels = list(when)
        if members[0].by == "version":  # commits of one version in commit order
            labels.sort(key=lambda v: version_order(v, when[v]))
        else:
            labels.sort(key=time_order)  # "YYYY-MM-DD HH:MM #id": by time
        out.append((key, members, labels))
    return out


def clients(threads: int) -> str:
    """`4 client threads`; "" for a workload's rate, whose clients are in its setup (RATE_THREADS)."""
    return "" if threads == RATE_THREADS else f"{threads} client thread{'s' if threads != 1 else ''}"


def title(key: BlockKey) -> str:
    engine, setup, host, threads, metric = key
    return f"{metric} ({METRICS[metric][0]}): {engine}, {setup}, " + (
        f"{clients(threads)}, " if clients(threads) else "") + f"on {host}"


def change_line(s: Series, c: Change) -> str:
    """`between 17.4 and 17.5: point-query -3.2% [-3.6, -2.8]`."""
    interval = f" [{c.lower:+.1%}, {c.upper:+.1%}]" if c.lower is not None else ""
    good = (c.change > 0) == METRICS[s.metric][1]
    kind = "improvement" if good else "regression"
    crossed = packagers_crossed(s.points[c.index - 1], s.points[c.index])
    return (f"between {s.points[c.index - 1].label} and {s.points[c.index].label}: {s.name} {c.change:+.1%}"
            f"{interval} ({kind}, p={c.pvalue:.1g})"
            + (f"; {PACKAGER_MARK} {crossed[1]} / {crossed[0]}: builds of two packagers" if crossed else ""))


def _cells(s: Series, labels: list[str], absolute: bool) -> list[str]:
    if not s.points:
        return [""] * len(labels)
    by_label = {p.label: p for p in s.points}
    first = s.points[0].value
    out = []
    for label in labels:
        p = by_label.get(label)
        if p is None:
            out.append("")
        elif absolute or p is s.points[0]:
            out.append(fmt_abs(p.value))
        else:
            out.append(f"{p.value / first:.{3 if s.metric == 'instructions' else 2}f}")
    return out


def render_text(series: list[Series], notes: list[str], absolute: bool = False, markdown: bool = False) -> str:
    lines: list[str] = []
    for key, members, labels in blocks(series):
        lines.append(("### " if markdown else "-- ") + title(key))
        header = ["test"] + labels
        rows = [[s.name] + _cells(s, labels, absolute) for s in members]
        if markdown:
            lines += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            lines += ["| " + " | ".join(r) + " |" for r in rows]
            lines.append("")
        else:
            widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
            lines.append("  ".join(h.ljust(widths[0]) if i == 0 else h.rjust(widths[i]) for i, h in enumerate(header)))
            lines += ["  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r))
                      for r in rows]
        if not absolute:
            lines.append("each row: its first value absolute, the others relative to it")
        changes = [change_line(s, c) for s in members for c in s.changes]
        if changes:
            lines.append("change points:")
            lines += [("- " if markdown else "  ") + c for c in changes]
        lines.append("")
    lines += [("- " if markdown else "note: ") + n for n in notes]
    return "\n".join(lines).rstrip() + "\n"


def _point_dict(p: SeriesPoint, first: float | None) -> dict[str, Any]:
    return {"label": p.label, "value": p.value, "lower": p.lower, "upper": p.upper,
            "relative": p.value / first if first else None, "packagers": p.packagers or None,
            "replicates": [{"campaign": r.campaign, "campaign_id": r.campaign_id, "created_at": r.created_at,
                            "target": r.target, "version": r.version, "value": r.value, "lower": r.lower,
                            "upper": r.upper, "packager": r.packager or None} for r in p.replicates]}


def series_dict(s: Series) -> dict[str, Any]:
    first = s.points[0].value if s.points else None
    return {"engine": s.engine, "setup": s.setup, "host": s.host, "test": s.test, "version": s.version or None,
            "threads": s.threads,
            "metric": s.metric, "points": [_point_dict(p, first) for p in s.points],
            "changes": [{"after": s.points[c.index - 1].label, "at": s.points[c.index].label, "change": c.change,
                         "change_lower": c.lower, "change_upper": c.upper, "before": c.before, "mean_after": c.after,
                         "pvalue": c.pvalue, **packagers_json(packagers_crossed(s.points[c.index - 1], s.points[c.index])),
                         "kind": "improvement" if (c.change > 0) == METRICS[s.metric][1] else "regression"}
                        for c in s.changes]}


def render_json(series: list[Series], notes: list[str], meta: dict[str, Any]) -> str:
    return json.dumps({"meta": {"format_version": HISTORY_FORMAT_VERSION, **meta}, "notes": notes,
                       "series": [series_dict(s) for s in series]}, indent=2) + "\n"


CSV_COLUMNS = ("engine", "setup", "host", "metric", "threads", "test", "version", "label", "value", "value_lower", "value_upper",
               "relative", "replicates", "campaigns")


def render_csv(series: list[Series]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for s in series:
        first = s.points[0].value if s.points else None
        for p in s.points:
            w.writerow([s.engine, s.setup, s.host, s.metric, s.threads, s.test, s.version, p.label, _num(p.value),
                        _num(p.lower), _num(p.upper), _num(p.value / first if first else None), len(p.replicates),
                        " ".join(str(r.campaign_id) for r in p.replicates)])
    return buf.getvalue()


def _num(v: float | None) -> str:
    return "" if v is None else f"{v:.6g}"


AXIS_FROM = 0.8  # the posts' relative axis starts here unless a value falls below
WIDTH, PLOT_H = 730, 260
X_TITLES = {"version": "version", "time": "campaign (date, time, #id), oldest first"}


def line_chart(members: list[Series], labels: list[str], caption: str) -> str:
    """One line per test: each point relative to the series' first, x = the columns in order,
    y from AXIS_FROM (lower when a value is), a darker line at 1.00; axis titles say what x and
    y are and which way is worse; the legend below the slanted labels. Points sharing a column
    are set side by side (by time, every one-point series sits at 1.00 of its own column and
    would hide the others)."""
    values = [p.value / s.points[0].value for s in members if s.points for p in s.points]
    lo = min([AXIS_FROM, *values])
    hi = max([1.2, *values])
    spacing = axis_spacing(lo, hi)
    lo = spacing * int(lo / spacing - 1e-9) if lo < AXIS_FROM else AXIS_FROM
    hi = spacing * (int(hi / spacing - 1e-9) + 1)
    at = {label: i for i, label in enumerate(labels)}
    shared: dict[int, list[str]] = {}  # column -> series with a point there, for the side-by-side offsets
    for s in members:
        for p in s.points:
            shared.setdefault(at[p.label], []).append(s.name)
    column_w = (WIDTH - 80) / max(len(labels), 1)  # about: the chart fits its plot to the labels
    dx = min(6.0 / column_w, 1 / (max(len(v) for v in shared.values()) + 1)) if shared else 0.0

    def offset(i: int, name: str) -> float:
        names = shared.get(i, [name])
        return (names.index(name) - (len(names) - 1) / 2) * dx if len(names) > 1 else 0.0

    lines = []
    for n, s in enumerate(members):
        first = s.points[0].value
        points = tuple(charts.Point(at[p.label] + offset(at[p.label], s.name), p.value / first,
                             f"{s.name} {p.label}: {p.value / first:.3f} ({fmt_abs(p.value)})") for p in s.points)
        rules = tuple(charts.Rule((at[s.points[c.index - 1].label] + at[s.points[c.index].label]) / 2,
                           TARGET_COLORS[n % len(TARGET_COLORS)], change_line(s, c)) for c in s.changes)
        lines.append(charts.Series(s.name, TARGET_COLORS[n % len(TARGET_COLORS)], points, width=2, dot=3, rules=rules))
    metric = members[0].metric
    return columns_chart(labels, lines, caption, f"{metric} ÷ the line's first point", METRICS[metric][1],
                         (lo, hi, spacing), lambda v: f"{v:.2f}", strong=1.0, width=WIDTH, plot_h=PLOT_H,
                         legend="below", x_title=X_TITLES.get(members[0].by, members[0].by))


def render_html(series: list[Series], notes: list[str], meta: dict[str, Any]) -> str:
    parts = [f"<h1>History of {escape(meta.get('metric', ''))}</h1>",
             f"<p>Store {escape(meta.get('store', ''))}, by {escape(meta.get('by', ''))}, generated "
             f"{escape(meta.get('generated_at', ''))} by dbdrift {escape(meta.get('dbdrift_version', ''))}. "
             "Lines are relative to each test's first point; dashed lines mark change points.</p>"]
    for key, members, labels in blocks(series):
        head = title(key)
        parts.append(f"<h2>{escape(head)}</h2><figure>{line_chart(members, labels, head)}</figure>")
        rows = "".join("<tr><th>" + escape(s.name) + "</th>"
                       + "".join(f'<td title="{escape(_tip(s, lab))}">{escape(c)}</td>'
                                 for lab, c in zip(labels, _cells(s, labels, False))) + "</tr>" for s in members)
        parts.append("<table><thead><tr><th>test</th>" + "".join(f"<th>{escape(lab)}</th>" for lab in labels)
                     + f"</tr></thead><tbody>{rows}</tbody></table>"
                     "<p class=\"sub\">each row: its first value absolute, the others relative to it</p>")
        changes = [change_line(s, c) for s in members for c in s.changes]
        if changes:
            parts.append("<h3>Change points</h3><ul>" + "".join(f"<li>{escape(c)}</li>" for c in changes) + "</ul>")
    if notes:
        parts.append("<h2>Notes</h2><ul class=\"notes\">" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>")
    return page(f"dbdrift history: {meta.get('store', '')}", parts)


def _tip(s: Series, label: str) -> str:
    p = next((p for p in s.points if p.label == label), None)
    if p is None:
        return "not measured"
    interval = f" [{fmt_abs(p.lower)}, {fmt_abs(p.upper)}]" if p.lower is not None and p.upper is not None else ""
    return f"{fmt_abs(p.value)}{interval}, {len(p.replicates)} campaign(s)"
