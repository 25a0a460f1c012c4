"""Insert Benchmark HTML report: one self-contained page (inline CSS and SVG, no scripts).

The summary tables with chart_all.sh's cell colours, the write and size table, then per step a
chart of each operation's per-second rate and one of its max response time per interval (one
line per target, client 1's report, as the posts chart them: PostgreSQL's vacuum shows as a
sine wave in l.i1/l.i2), the response-time histograms and the step metrics.
"""
from __future__ import annotations

from html import escape

from dbdrift.analysis.ibench import COLORS, OPS, per_second_series
from dbdrift.report.caveats import findings_html, notes_html
from dbdrift.report.ibench import (STEP_CAPTIONS, STEP_LEGEND, TABLES, TITLES, IBenchReport, _cell_text, missing_lines,
                                   step_blocks, table_legend)
from dbdrift.report.page import data_table, page, page_header, swatch, target_color
from dbdrift.report.svgchart import Line, time_chart

IBENCH_CSS = "".join(f"td.c-{name}{{background:{hex_}}}" for name, hex_ in COLORS.items()) + """
.charts{display:flex;flex-wrap:wrap;gap:.6rem 1.2rem}.charts figure{margin:0}
tbody th{white-space:nowrap}
"""
# per operation: the per-second rate and max response time columns of client 1's report, and their titles
OP_SERIES = {"insert": ("i_ips", "max_i_us", "inserts/s"), "delete": ("i_dps", "max_d_us", "deletes/s"),
             "query": ("i_qps", "max_q_us", "queries/s")}


def render_html(data: IBenchReport, meta: dict | None = None) -> str:
    """The whole page; every string from the store passes through html.escape."""
    meta = meta or {}
    title = f"Insert Benchmark: {data.campaign}" if data.campaign else "Insert Benchmark"
    parts = [page_header(title, _facts(data, meta), notes_html(data.notes)), _nav(data),
             findings_html(data.findings, data.verdict_legend()), _summary(data)]
    parts += [_step_section(data, step) for step in data.steps()]
    return page(f"dbdrift report: {title}", parts, IBENCH_CSS)


def color_of(data: IBenchReport, target: str) -> str:
    return target_color(data.targets, target)


def _facts(data: IBenchReport, meta: dict) -> list[tuple[str, str]]:
    """What ran where, as (name, HTML value): the targets with their colours, host, date, sizes."""
    facts = []
    for t in data.targets:
        role = "base" if t == data.summary.base else "target"
        facts.append((role, f"{swatch(color_of(data, t))}{escape(data.label(t))}"))
    host = meta.get("host") or {}
    facts.append(("host", escape(f"{host.get('hostname') or '?'}: {host.get('cpu_model') or 'CPU ?'}, "
                                 f"{data.ncpu} CPUs")))
    if meta.get("run_on"):
        facts.append(("run on", escape(meta["run_on"].replace("T", " "))))
    if meta.get("sizes"):
        facts.append(("sizes", escape(meta["sizes"])))
    if meta.get("dbdrift_version"):
        facts.append(("report", escape(f"dbdrift {meta['dbdrift_version']}")))
    return facts


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
        legend = table_legend(name, table)
        head = "".join(f"<th>{escape(c)}</th>" for c in table.columns)
        body = []
        for row, cells in table.rows.items():
            is_target = row in data.targets
            label = data.label(row) if is_target else row
            tds = []
            for header, cell in zip(table.columns, cells):
                css = f' class="c-{cell.color}"' if cell.color else ""
                tip = f' title="{cell.repeats} repeats, mean"' if cell.repeats > 1 and name != "relative" else ""
                tds.append(f"<td{css}{tip}>{escape(_cell_text(name, is_target, header, cell))}</td>")
            body.append(f'<tr><th scope="row">{escape(label)}</th>{"".join(tds)}</tr>')
        out.append(f"<h3>{escape(TITLES[name].format(base=data.label(data.summary.base)))}</h3>"
                   f'<p class="sub">{escape(legend)}</p>'
                   f'<div class="scroll"><table class="ibench"><thead><tr><th>target</th>{head}</tr></thead>'
                   f"<tbody>{''.join(body)}</tbody></table></div>")
    if data.summary.missing:
        out.append("<p>Steps without a value:</p><ul>" + "".join(f"<li>{escape(line)}</li>"
                                                                 for line in missing_lines(data)) + "</ul>")
    out.append(f'<p class="sub">{escape(STEP_LEGEND)}</p>')
    return "\n".join(out)


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
            charts.append(time_chart(max_lines, f"{step}: max {op} response time per interval (ms)",
                                     f"max {op} response (ms)"))
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
        out.append(f"<h3>{escape(title)}</h3>{data_table(header, rows, scroll=True)}")
    return "\n".join(out)
