"""Insert Benchmark report (its three summary tables, then per-step details) in every format:
text, Markdown, CSV, JSON and one self-contained HTML page. Pure serializers of one
`IBenchReport` (workloads/ibench/results.py), which holds everything computed once. No I/O.

    render(data, fmt) -> str; render_text, render_markdown, render_csv, render_json, render_html
    to_json(data) -> dict (JSON-ready; render_json dumps it)

Text has no colors: each summary cell carries a one-character mark explained in a legend. The
page colours the summary cells as chart_all.sh does, then per step charts each operation's
per-second rate and its max response time per interval (one line per target, client 1's report,
as the posts chart them: PostgreSQL's vacuum shows as a sine wave in l.i1/l.i2), then the
response-time histograms and the step metrics.
"""
from __future__ import annotations

import io
import json
from dataclasses import dataclass
from html import escape

from dbdrift.analysis import flame_areas as areas
from dbdrift.report.flamegraph import AREAS_LEGEND, AREAS_TITLE, areas_json
from dbdrift.report.events import (DIPS_HEADER, DIPS_TITLE, EPISODES_HEADER, EPISODES_TITLE, dip_cells, dip_text,
                                   dips_json, engine_charts, episode_rows, flat_note)
from dbdrift.analysis.ibench import (BUCKET_LABELS, COLORS, METRICS, OPS, StepDetail, SummaryCell, SummaryTable,
                                     per_second_series, sla_met)
from dbdrift.model import IBENCH_STEPS, InsertStepResult, JsonObject
from dbdrift.report.caveats import (PACKAGER_LEGEND, detectable_text, findings_html, notes_html, packager_html,
                                   packager_mark, verdict_counts, verdict_lines, warned_html)
from dbdrift.report.numbers import fmt_abs, fmt_fixed, fmt_ratio
from dbdrift.report.page import data_table, page, page_header, split_table
from dbdrift.report.charts import Line, all_zero, time_chart
from dbdrift.report.drift import drift_json
from dbdrift.report.post import render_workload_post
from dbdrift.report.workload import (campaign_csv, json_envelope, drift_html, drift_lines, aligned, color_of, findings_json, host_fact, md_table, rounded, run_on_facts,
                                     packagers_line, target_facts, VERDICT_COLUMNS, verdict_cells, verdicts_legend,
                                     why_html, why_lines)
from dbdrift.version import __version__
from dbdrift.workloads.ibench.results import IBenchReport

STEP_CAPTIONS = {
    "l.i0": "load without secondary indexes",
    "l.x": "create secondary indexes",
    "l.i1": "continue load with secondary indexes, 50 inserts per transaction",
    "l.i2": "continue load with secondary indexes, 5 inserts per transaction",
    **{f"{kind}{rate}": f"{what} queries with {rate} insert/s per client"
       for rate in (100, 500, 1000) for kind, what in (("qr", "range"), ("qp", "point"))},
}

@dataclass(frozen=True)
class TableView:
    """How one summary table shows: its title ({base}: the base's label), the text mark of a
    cell by its color (text and Markdown have no colors) and the legend that explains them."""

    title: str
    marks: dict[str, str]
    legend: str


TABLES = {  # the summary tables in the report's order, by their IBenchSummary attribute
    "throughput": TableView(
        "absolute throughput (l.i0, l.i1, l.i2: inserts/s; l.x: indexed rows/s; qr/qp: queries/s)",
        {"green": "+", "red": "-", "gray": "."},
        "marks: + top quarter of the column's range, - bottom quarter (none when min >= 80% of max), "
        ". insert-rate SLA missed (left out of the column's max)"),
    "relative": TableView(
        "relative throughput (each value ÷ the base's: {base})", {"blue": "^", "yellow": "v"},
        "marks: ^ above 105% of the base, v below 95%"),
    "background": TableView(
        "background insert rate during the qr/qp steps (inserts/s; last row: the target rate)", {"red": "-"},
        "marks: - below 95% of the target rate (SLA missed)"),
    "writes": TableView(
        "KB written per insert and database size in GiB (then each target ÷ the base: {base})",
        {"blue": "^", "yellow": "v"},
        "wkbpi: KB written to storage per inserted row in the step; dbgb1: the benchmark database, dbgb2: "
        "the data directory, after the step; marks on the ÷ rows: ^ above 105% of the base (more written, "
        "bigger), v below 95%"),
}
INTERVAL_LEGEND = " [95% interval over the repeats]"
METRIC_DIGITS = {"ips": 0, "qps": 0, "rps": 0, "rmbps": 1, "wps": 1, "wmbps": 1, "rpq": 3, "rkbpq": 3, "wpi": 3,
                 "wkbpi": 3, "csps": 0, "cpups": 1, "cspq": 3, "cpupq": 0, "dbgb1": 3, "dbgb2": 3, "rss": 1, "maxop": 3, "p50": 0, "p99": 0,
                 "bgpq": 0, "bg%": 1, "flps": 1, "flpi": 4, "rawait": 2, "wawait": 2, "aqu": 2, "us": 1, "sy": 1,
                 "r": 2, "uspq": 0, "sypq": 0}
"""Decimals per metric, as `etl.sh` prints its line."""
STEP_LEGEND = ("per step: response-time tables give the % of that operation's responses per bucket, their count and "
               "the max in seconds; metrics: rps/wps the data directory's device's reads/writes per s, rmbps/wmbps "
               "MB/s (device-wide: every process's I/O; notes marked ! name foreign I/O), "
               "rpq/rkbpq reads and KB read per op, wpi/wkbpi writes and KB written per insert, csps/cspq context "
               "switches per s and per op, cpups host CPU %, cpupq host CPU µs per op, dbgb1 the benchmark database "
               "and dbgb2 the whole data directory after the step in GiB, rss server GB, maxop worst "
               "response in s, p50/p99 client 1's per-second rate sorted fastest first (p99: a near-worst second); "
               "bgpq the server's background CPU µs per op (vacuum, checkpoints, flushing, purge), bg% its share of the "
               "server's CPU; flps/flpi cache flushes (fsyncs) per s and per insert, rawait/wawait ms per read/write, "
               "aqu the device's average queue depth; us/sy vmstat's user and system CPU %, r its runnable count "
               "(running or waiting for a CPU), uspq/sypq the user and system parts of cpupq; op = insert for l.* "
               "steps, query for qr/qp; flamegraph areas (campaigns with flamegraphs = true): "
               + AREAS_LEGEND + ", the base's column first")


# --- blocks shared by text and Markdown: titled tables of formatted cells -------------------


def summary_blocks(data: IBenchReport) -> list[tuple[str, str, list[str], list[list[str]]]]:
    """The summary tables with marked cells (the gray `target` row of the background table has none)."""
    blocks = []
    for name in TABLES:
        table: SummaryTable | None = getattr(data.summary, name)
        if table is None or not table.columns:
            continue
        rows = []
        for row, cells in table.rows.items():
            told = packager_mark(_compared(data, name, row))
            rows.append([data.label(row) if row in data.targets else row,
                         *(_marked(_cell_text(name, row in data.targets, header, c), TABLES[name].marks.get(c.color or ""))
                           + _warned(data, name, row, header) + (told if c.value is not None else "")
                           for header, c in zip(table.columns, cells))])
        title = TABLES[name].title.format(base=data.label(data.summary.base))
        blocks.append((title, table_legend(name, table, _packaged(data)), ["target", *table.columns], rows))
    return blocks


def _warned(data: IBenchReport, table: str, row: str, step: str) -> str:
    """`!` on a relative cell whose step saw foreign load in the target's or the base's repeats
    (its figures are in the verdict line and the notes)."""
    found = data.verdict(row, step) if table == "relative" and row in data.targets else None
    return "!" if found and found.warned else ""


def table_legend(name: str, table: SummaryTable, packaged: bool = False) -> str:
    """The legend of summary table `name`; the relative one says when its cells carry intervals,
    and (`packaged`) when a target's B says it was built by another packager than the base."""
    legend = TABLES[name].legend
    if name == "relative" and any(c.lower is not None for cells in table.rows.values() for c in cells):
        legend += INTERVAL_LEGEND
    return legend + (f"; {PACKAGER_LEGEND}" if packaged and name in ("relative", "writes") else "")


def _packaged(data: IBenchReport) -> bool:
    return any(data.packager_change(t) for t in data.targets)


def _compared(data: IBenchReport, table: str, row: str) -> tuple[str, str] | None:
    """The packagers of a summary row of ratios to the base (a target's relative throughput, its
    `<target> ÷ <base>` writes) built by another packager than the base; None for the other rows."""
    if table == "relative" and row in data.targets:
        return data.packager_change(row)
    target, _, base = row.partition(" ÷ ")
    return data.packager_change(target) if table == "writes" and base == data.base else None


def _cell_text(table: str, is_target: bool, header: str, cell: SummaryCell) -> str:
    if table == "relative":
        text = fmt_ratio(cell.value)
        return text + (f" [{cell.lower:.2f},{cell.upper:.2f}]" if cell.lower is not None and cell.upper is not None
                       else "")
    if table == "writes":
        return fmt_metric(header.split()[0], cell.value) if is_target else fmt_ratio(cell.value)
    return fmt_abs(cell.value)


def _marked(text: str, mark: str | None) -> str:
    return f"{text} {mark or ' '}"


def missing_lines(data: IBenchReport) -> list[str]:
    """`pg18: l.i2 failed: <error>; not run: qr100 qp100 ...` per target with steps lacking a value."""
    lines = []
    for target, gaps in data.summary.missing.items():
        not_run = [step for step, why in gaps if why == "not run"]
        parts = [f"{step} {why}" for step, why in gaps if why != "not run"]
        parts += [f"not run: {' '.join(not_run)}"] if not_run else []
        lines.append(f"{data.label(target)}: {'; '.join(parts)}")
    return lines


def step_blocks(data: IBenchReport, step: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """Per operation type a response-time table (% of responses per bucket), then the metrics."""
    present = [t for t in data.targets if (t, step) in data.details]
    blocks = []
    for op in OPS:
        rows = []
        for t in present:
            hist = next((h for h in data.details[(t, step)].histograms if h.op == op), None)
            if hist is not None:
                rows.append([_status_label(data, t, step), *(f"{p:.1f}" for p in hist.percents), str(hist.responses),
                             "-" if hist.max_s is None else f"{hist.max_s:.3f}"])
        if rows:
            blocks.append((f"{op} response time (%)", ["target", *BUCKET_LABELS, "responses", "max"], rows))
    rows = [[_status_label(data, t, step), *(fmt_metric(m, data.details[(t, step)].metrics[m]) for m in METRICS)]
            for t in present]
    blocks.append((f"metrics (host CPUs: {data.ncpu})", ["target", *METRICS], rows))
    flames = [(t, a) for t in present if (a := step_areas(data, t, step)) is not None]
    if flames:
        blocks.append((AREAS_TITLE, ["area", *(data.label(t) for t, _ in flames)], areas.table(flames)))
    dips = [[_status_label(data, t, step), *dip_cells(d)] for t in present for d in data.details[(t, step)].dips]
    if dips:
        blocks.append((DIPS_TITLE, DIPS_HEADER, dips))
        blocks.append((EPISODES_TITLE, EPISODES_HEADER,
                       [row for t in present for d in data.details[(t, step)].dips
                        for row in episode_rows(_status_label(data, t, step), d)]))
    return blocks


def step_areas(data: IBenchReport, target: str, step: str) -> areas.AreaShares | None:
    """The flamegraph areas of the step's result the report shows; None without stacks."""
    result = data.results.get((target, step))
    return areas.shares(result.folded) if result is not None and result.folded else None


def _status_label(data: IBenchReport, target: str, step: str) -> str:
    status = data.details[(target, step)].status
    return data.label(target) + ("" if status == "ok" else f" [{status}]")


def fmt_metric(name: str, value: float | None) -> str:
    return fmt_fixed(value, METRIC_DIGITS[name])


# --- text ---------------------------------------------------------------------------------


def render_text(data: IBenchReport) -> str:
    out = [f"campaign: {data.campaign}"] if data.campaign else []
    out += [f"Insert Benchmark; relative to: {data.label(data.summary.base)}", *data.notes, "",
            *([packaged, ""] if (packaged := packagers_line(data)) else []), "== summary =="]
    for title, legend, header, rows in summary_blocks(data):
        out += [f"-- {title}", legend, *aligned(header, rows), ""]
    if data.findings:
        out += [f"-- verdicts: {verdict_counts(data.findings)}", verdicts_legend(data),
                *(f"  {line}" for line in verdict_lines(data.findings)), ""]
    out += why_lines(data)
    if data.summary.missing:
        out += ["steps without a value:", *(f"  {line}" for line in missing_lines(data)), ""]
    out += [STEP_LEGEND, ""]
    for step in data.steps():
        out.append(f"== {step}: {STEP_CAPTIONS[step]} ==")
        for title, header, rows in step_blocks(data, step):
            out += [f"-- {title}", *aligned(header, rows), ""]
    out += drift_lines(data)  # below the results: the settings explain them, they do not come first
    return "\n".join(out).rstrip() + "\n"


# --- Markdown -----------------------------------------------------------------------------


def render_markdown(data: IBenchReport) -> str:
    out = [f"# Insert Benchmark: {data.campaign}" if data.campaign else "# Insert Benchmark", "",
           f"Relative to: {data.label(data.summary.base)}", ""]
    if data.notes:
        out += [*(f"- {note}" for note in data.notes), ""]
    out += [f"*{packaged}*", ""] if (packaged := packagers_line(data)) else []
    out += ["## Summary", ""]
    for title, legend, header, rows in summary_blocks(data):
        out += [f"### {title}", "", f"*{legend}*", "", *md_table(header, rows), ""]
    if data.findings:
        out += [f"### Verdicts: {verdict_counts(data.findings)}", "", f"*{verdicts_legend(data)}*", "",
                *(f"- `{line}`" for line in verdict_lines(data.findings)), ""]
    out += why_lines(data, markdown="###")
    if data.summary.missing:
        out += ["Steps without a value:", "", *(f"- {line}" for line in missing_lines(data)), ""]
    out += [f"*{STEP_LEGEND}*", ""]
    for step in data.steps():
        out += [f"## {step}: {STEP_CAPTIONS[step]}", ""]
        for title, header, rows in step_blocks(data, step):
            out += [f"### {title}", "", *md_table(header, rows), ""]
    out += drift_lines(data, markdown=True)
    return "\n".join(out).rstrip() + "\n"


# --- CSV ----------------------------------------------------------------------------------

CSV_HEADER = ("target", "step", "status", "repeats", "elapsed_s", "ips", "dps", "qps", "target_ips", "sla_met",
              "relative", "relative_lower", "relative_upper",
              "p50", "p99", "maxop", *(m for m in METRICS if m not in ("ips", "qps", "maxop", "p50", "p99")),
              *(f"flame_{a}" for a in areas.ROWS), "dips", *VERDICT_COLUMNS, "notes")
FLAME_COLUMNS = len(areas.ROWS)


def render_csv(data: IBenchReport) -> str:
    """One row per (target, step) in report order; a step that never ran has status `not run`. The
    rates and metrics are of the repeat the details show; `relative` (and its interval) is over
    the repeats, `repeats` counts the ok ones; `verdict` is the step's against the base and
    `detectable_change` that verdict's detectable change (both empty for the base), `notes` the
    report's host and run warnings and interval notes, on every line."""
    buf = io.StringIO()
    writer = campaign_csv(buf, data)
    writer.header(CSV_HEADER)
    for target in data.targets:
        for i, step in enumerate(IBENCH_STEPS):
            writer.writerow(_csv_row(data, target, step, data.summary.relative.rows[target][i]))
    return buf.getvalue()


def _csv_row(data: IBenchReport, target: str, step: str, relative: SummaryCell) -> list[str]:
    result = data.results.get((target, step))
    detail = data.details.get((target, step))
    tail = [dip_text(detail.dips) if detail else "", *verdict_cells(data, target, step), " | ".join(data.notes)]
    if result is None:
        return [target, step, "not run", *[""] * (len(CSV_HEADER) - 3 - len(tail)), *tail]
    metrics = data.details[(target, step)].metrics
    met = sla_met(result)
    head = [target, step, result.status, str(data.summary.throughput.rows[target][IBENCH_STEPS.index(step)].repeats),
            _num(result.elapsed_s), _num(result.ips), _num(result.dps),
            _num(result.qps), _num(result.target_ips), "" if met is None else str(met).lower(), _num(relative.value),
            _num(relative.lower), _num(relative.upper)]
    flame = step_areas(data, target, step)
    shares = ["" if flame is None else _num(flame.share(a)) for a in areas.ROWS]
    return head + [_num(metrics[m]) for m in CSV_HEADER[len(head):-len(tail) - FLAME_COLUMNS]] + shares + tail


def _num(value: float | None) -> str:
    return "" if value is None else str(round(value, 6))


# --- JSON ---------------------------------------------------------------------------------


def to_json(data: IBenchReport) -> JsonObject:
    """The summary tables (values, color names, COLORS for their hex codes), the steps lacking a
    value, and per step and target: rates, SLA, histograms, metrics, client 1's per-second series
    and its 10 slice averages of i_ips, i_dps and i_qps — what charts need, nothing to recompute."""
    summary = data.summary
    return {
        **json_envelope(data), "ncpu": data.ncpu, "default_drift": drift_json(data.drift),
        "verdicts": findings_json(data),
        "targets": [{"name": t, "label": data.labels.get(t, "")} for t in data.targets],
        "colors": COLORS, "buckets": list(BUCKET_LABELS),
        "tables": {name: _table_json(getattr(summary, name)) for name in TABLES if getattr(summary, name) is not None},
        "missing": {t: [{"step": s, "why": why} for s, why in gaps] for t, gaps in summary.missing.items()},
        "steps": [{"step": step, "caption": STEP_CAPTIONS[step],
                   "targets": {t: _detail_json(data.results[(t, step)], data.details[(t, step)])
                               for t in data.targets if (t, step) in data.results}}
                  for step in data.steps()],
    }


def render_json(data: IBenchReport) -> str:
    return json.dumps(to_json(data), indent=2, ensure_ascii=False) + "\n"


def _table_json(table: SummaryTable) -> JsonObject:
    return {"columns": list(table.columns),
            "rows": [{"name": name, "cells": [_cell_json(c) for c in cells]} for name, cells in table.rows.items()]}


def _cell_json(c: SummaryCell) -> JsonObject:
    out: JsonObject = {"value": rounded(c.value, 4), "color": c.color}
    if c.lower is not None:
        out.update(lower=rounded(c.lower, 4), upper=rounded(c.upper, 4))
    if c.repeats > 1:
        out["repeats"] = c.repeats
    return out


def _detail_json(result: InsertStepResult, detail: StepDetail) -> JsonObject:
    return {
        "status": result.status, "error": result.error, "clients": result.clients, "elapsed_s": result.elapsed_s,
        "ips": result.ips, "dps": result.dps, "qps": result.qps, "target_ips": result.target_ips,
        "sla_met": sla_met(result),
        "histograms": {h.op: {"counts": list(h.counts), "percents": [round(p, 3) for p in h.percents],
                              "responses": h.responses, "max_s": h.max_s} for h in detail.histograms},
        "metrics": {m: rounded(v, 6) for m, v in detail.metrics.items()},
        "per_second": per_second_series(result),
        "slices": {key: [rounded(v, 3) for v in values] for key, values in detail.slices.items()},
        "engine_events": result.events,
        "dips": [dips_json(d) for d in detail.dips],
        "flame_areas": areas_json(a) if (a := areas.shares(result.folded) if result.folded else None) else None,
    }


# --- HTML ---------------------------------------------------------------------------------

IBENCH_CSS = "".join(f"td.c-{name}{{background:{hex_}}}" for name, hex_ in COLORS.items()) + """
.charts{display:flex;flex-wrap:wrap;gap:.6rem 1.2rem}.charts figure{margin:0}
tbody th{max-width:14rem}
"""  # a long target label wraps in its row header, so that ten step columns keep within the page
# per operation: the per-second rate and max response time columns of client 1's report, and their titles
OP_SERIES = {"insert": ("i_ips", "max_i_us", "inserts/s"), "delete": ("i_dps", "max_d_us", "deletes/s"),
             "query": ("i_qps", "max_q_us", "queries/s")}


def render_html(data: IBenchReport) -> str:
    """The whole page; every string from the store passes through html.escape."""
    title = f"Insert Benchmark: {data.campaign}" if data.campaign else "Insert Benchmark"
    parts = [page_header(title, _facts(data), notes_html(data.notes)), _nav(data),
             findings_html(data.findings, verdicts_legend(data), data.judging.min_effect), why_html(data), _summary(data)]
    parts += [_step_section(data, step) for step in data.steps()]
    parts.append(drift_html(data))  # below the results, as in every format
    return page(f"dbdrift report: {title}", parts, IBENCH_CSS)


def _facts(data: IBenchReport) -> list[tuple[str, str]]:
    """What ran where, as (name, HTML value): the targets with their colours, host, date, sizes."""
    sizes = [("sizes", escape(data.setup))] if data.setup else []
    return [*target_facts(data), host_fact(data), *run_on_facts(data), *sizes,
            ("report", escape(f"dbdrift {__version__}"))]


def _nav(data: IBenchReport) -> str:
    links = ['<a href="#findings">findings</a>'] if data.findings else []
    links += ['<a href="#summary">summary</a>', *(f'<a href="#step-{escape(s)}">{escape(s)}</a>' for s in data.steps())]
    return f"<nav>{' '.join(links)}</nav>"


def _summary(data: IBenchReport) -> str:
    out = ['<h2 id="summary">Summary</h2>']
    for name in TABLES:
        table = getattr(data.summary, name)
        if table is None or not table.columns:
            continue
        legend = table_legend(name, table, _packaged(data))
        head = "".join(f"<th>{escape(c)}</th>" for c in table.columns)
        body = []
        for row, cells in table.rows.items():
            is_target = row in data.targets
            label = data.label(row) if is_target else row
            tds = []
            for header, cell in zip(table.columns, cells):
                css = f' class="c-{cell.color}"' if cell.color else ""
                tip = f' title="{cell.repeats} repeats, mean"' if cell.repeats > 1 and name != "relative" else ""
                found = data.verdict(row, header) if name == "relative" and is_target else None
                if found and found.detectable is not None:
                    said = f"{found.verdict}; {detectable_text(found.verdict, found.detectable)}"
                    tip = f' title="{escape(said)}"'
                pair = _compared(data, name, row) if cell.value is not None else None
                told = packager_html(row.partition(" ÷ ")[0], data.base, pair)
                warn = warned_html(found.warned) if found else ""
                tds.append(f"<td{css}{tip}>{_cell_html(name, is_target, header, cell)}{warn}{told}</td>")
            body.append(f'<tr><th scope="row">{escape(label)}</th>{"".join(tds)}</tr>')
        out.append(f"<h3>{escape(TABLES[name].title.format(base=data.label(data.summary.base)))}</h3>"
                   f'<p class="sub">{escape(legend)}</p>'
                   f'<div class="scroll"><table class="ibench"><thead><tr><th>target</th>{head}</tr></thead>'
                   f"<tbody>{''.join(body)}</tbody></table></div>")
    if data.summary.missing:
        out.append("<p>Steps without a value:</p><ul>" + "".join(f"<li>{escape(line)}</li>"
                                                                 for line in missing_lines(data)) + "</ul>")
    out.append(f'<p class="sub">{escape(STEP_LEGEND)}</p>')
    return "\n".join(out)


def _cell_html(table: str, is_target: bool, header: str, cell: SummaryCell) -> str:
    """A summary cell as HTML: a ratio's interval on a line of its own under it, so ten steps of
    `1.20 [1.18,1.22]` fit the page's width (on one line they ran past it at 1,400 px)."""
    text = _cell_text(table, is_target, header, cell)
    value, found, interval = text.partition(" [")
    if table != "relative" or not found:
        return escape(text)
    return f'{escape(value)}<br><span class="sub">[{escape(interval)}</span>'


def step_charts(data: IBenchReport, step: str) -> list[str]:
    """Per operation with per-second values in this step: its rate chart and its max response
    time chart, one line per target (client 1's report of the repeat the details show)."""
    present = [t for t in data.targets if (t, step) in data.results and data.results[(t, step)].per_second]
    series = {t: per_second_series(data.results[(t, step)]) for t in present}
    charts = []
    for op in OPS:
        rate_key, max_key, unit = OP_SERIES[op]
        rate_lines, max_lines = [], []
        for t in present:
            s = series[t]
            if not any(v for v in s[rate_key] if v):
                continue
            xs = tuple(s["t_sec"])
            rate_lines.append(Line(t, xs, tuple(s[rate_key]), color_of(data, t)))
            max_lines.append(Line(t, xs, tuple(None if v is None else v / 1000 for v in s[max_key]),
                                  color_of(data, t)))
        if rate_lines:
            charts.append(time_chart(rate_lines, f"{step}: {unit} per interval", unit))
            charts.append(flat_note([f"{step}: max {op} response time per interval (ms)"],
                                    "the driver reported no per-second response time") if all_zero(max_lines) else
                          time_chart(max_lines, f"{step}: max {op} response time per interval (ms)",
                                     f"max {op} response (ms)"))
    if charts:  # the engine's own counters under the rates, on the same seconds
        charts += engine_charts({t: data.results[(t, step)].events for t in present},
                                {t: color_of(data, t) for t in present}, step)
    return charts


def _step_section(data: IBenchReport, step: str) -> str:
    out = [f'<h2 id="step-{escape(step)}">{escape(step)}: {escape(STEP_CAPTIONS[step])}</h2>']
    charts = step_charts(data, step)
    if charts:
        out.append('<div class="charts">' + "".join(f"<figure>{c}</figure>" for c in charts) + "</div>")
    elif step == "l.x":
        out.append('<p class="sub">l.x creates the secondary indexes, one statement per table: it has no '
                   "per-second rates</p>")
    else:
        out.append('<p class="sub">no per-second report in this step (it ended within one interval)</p>')
    for title, header, rows in step_blocks(data, step):
        out.append(f"<h3>{escape(title)}</h3>" + "".join(data_table(h, r, scroll=True) for h, r in split_table(header, rows)))
    return "\n".join(out)


def render_post(data: IBenchReport) -> str:
    """The write-up in the posts' shape (report/post.py)."""
    return render_workload_post(data, "the step's rate", "relative rate", summary_blocks(data), "step")


RENDERERS = {"text": render_text, "markdown": render_markdown, "csv": render_csv, "json": render_json,
             "html": render_html, "post": render_post}


def render(data: IBenchReport, fmt: str) -> str:
    """The report in `fmt` (text, markdown, csv, json, html or post: report/post.py)."""
    return RENDERERS[fmt](data)
