"""HTML report: one self-contained page (inline CSS, inline SVG charts, no scripts, nothing fetched)
with the rQPS tables of the text report, a bar chart per group, and the hardware sections."""
from __future__ import annotations

from html import escape
from itertools import count

from dbdrift.analysis.noise import Verdict
from dbdrift.report.hardware import METRICS_LEGEND, delta_lines, fmt_ratio3, instruction_table, metrics_blocks
from dbdrift.report.svgchart import Bar, BarGroup, ratio_chart
from dbdrift.report.table import (GREEN_AT, RED_AT, column_names, fmt_abs, fmt_ratio, legend_lines, verdict_counts,
                                  verdict_legend)
from dbdrift.results.data import ReportData, Section

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#222;max-width:80rem;margin:1.5rem auto;
padding:0 1rem;line-height:1.4}
h1{font-size:1.6rem}h2{border-bottom:2px solid #ddd;margin-top:2.5rem}h3{margin:1.5rem 0 .4rem}
pre,td,.num,tbody th,tfoot th{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem}
pre.legend{background:#f6f6f6;padding:.6rem .8rem;border-left:3px solid #bbb}
table{border-collapse:collapse;margin:.4rem 0 1rem}
th,td{border:1px solid #ccc;padding:.2rem .6rem}
thead th{background:#f0f0f0;text-align:center;vertical-align:bottom}
tbody th,tfoot th{text-align:left;font-weight:normal}
td{text-align:right;white-space:nowrap}
tfoot td,tfoot th{background:#fafafa;color:#444}
tr.grp th{background:#f6f6f6;font-family:inherit;font-style:italic}
td.red{background:#ff9a9a}td.green{background:#81ffa6}
td.noisy{color:#666;background:#e4e4e4 repeating-linear-gradient(45deg,#f2f2f2,#f2f2f2 5px,#d7d7d7 5px,#d7d7d7 10px)}
.sub{font-weight:normal;color:#666;font-size:.85em}
.mark{color:#555;margin-left:.3em}
.warn{color:#b45309;font-weight:bold;cursor:help;margin-left:.2em}
ul.notes li.host{color:#b45309}
figure{margin:.3rem 0 1.2rem}figcaption{color:#555;font-size:.9rem}
nav{margin:1rem 0}nav a{margin-right:1.2rem}
svg.chart{max-width:100%;height:auto}
"""


def render_html(data: ReportData) -> str:
    """The whole page; every string from the store or the catalog passes through html.escape."""
    charts = count(1)  # a unique id per SVG chart, for its hatch pattern
    parts = [_head(data), _intro(data)]
    for threads in data.thread_counts():
        parts.append(_threads_section(data, threads, charts))
    parts += [_instructions_section(data, charts), _metrics_section(data), _warnings_section(data)]
    return "\n".join(p for p in parts if p) + "\n</body>\n</html>\n"


def _head(data: ReportData) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>dbdrift report: {escape(data.campaign)}</title>\n<style>{CSS}</style>\n</head>\n<body>")


def _intro(data: ReportData) -> str:
    lines = legend_lines(data)
    legend = lines[:len(lines) - len(data.notes)]  # the notes get their own list below
    out = [f"<h1>dbdrift report: {escape(data.campaign)}</h1>",
           f'<pre class="legend">{escape(chr(10).join(legend))}</pre>',
           f'<p class="verdicts">{escape(verdict_legend(data))}. Cells are red at rQPS ≤ {RED_AT:.2f} with a '
           f"regression verdict, green at ≥ {GREEN_AT:.2f} with an improvement, hatched when too noisy or "
           "without an interval; hover a cell for its interval and method.</p>"]
    if data.notes:
        items = [(' class="host"' if n.startswith("host warning") else "", escape(n)) for n in data.notes]
        out.append('<ul class="notes">' + "".join(f"<li{css}>{note}</li>" for css, note in items) + "</ul>")
    if not data.comparison.compared:
        out.append("<p>Only one target: nothing to compare; absolute values follow.</p>")
    links = [(f"threads-{t}", _threads_title(t)) for t in data.thread_counts()]
    links += [("instructions", "Instructions per event")] if data.instructions else []
    links += [("metrics", "Hardware per operation")] if data.show_metrics else []
    links.append(("warnings", "Warnings"))
    out.append("<nav>Contents: " + "".join(f'<a href="#{i}">{escape(t)}</a>' for i, t in links) + "</nav>")
    return "\n".join(out)


def _threads_title(threads: int) -> str:
    return f"{threads} client thread{'s' if threads != 1 else ''}"


def _threads_section(data: ReportData, threads: int, charts) -> str:
    out = [f'<section id="threads-{threads}">', f"<h2>{escape(_threads_title(threads))}</h2>"]
    if data.comparison.compared:
        for section in data.sections(threads):
            out.append(_group_section(data, section, f"chart-{next(charts)}"))
    out += [_absolute_table(data, threads), "</section>"]
    return "\n".join(out)


def _references(data: ReportData) -> dict[str, str]:
    comp = data.comparison
    return {t: (comp.targets[i] if comp.chain else comp.base) for i, t in enumerate(comp.compared)}


def _group_section(data: ReportData, section: Section, chart_id: str) -> str:
    comp, refs = data.comparison, _references(data)
    group, threads, rows, title = section.group, section.threads, section.rows, section.title
    head = "".join(f'<th title="{escape(data.label(t))} ÷ {escape(data.label(refs[t]))}">{c}<br>'
                   f'<span class="sub">{escape(t)} / {escape(refs[t])}</span></th>'
                   for c, t in zip(column_names(data), comp.compared))
    body = [f'<tr><th scope="row">{escape(row.test)}</th>{"".join(_rel_cell(row, t) for t in comp.compared)}</tr>'
            for row in rows]
    out = [f'<section class="group" id="{escape(group)}-{threads}">', f"<h3>{escape(title)}</h3>",
           f'<table class="rel"><thead><tr><th>test</th>{head}</tr></thead>', "<tbody>", *body, "</tbody>",
           "<tfoot>", *_summary_rows(data, section), "</tfoot></table>",
           _group_chart(data, rows, chart_id, f"rQPS, {title}, {_threads_title(threads)}"), "</section>"]
    return "\n".join(out)


def _rel_cell(row, target: str) -> str:
    cell = row.cells[target]
    value, est = cell.ratio, cell.estimate
    verdict = cell.verdict or Verdict.NO_INTERVAL
    text = row.status(target) or ("-" if value is None else f"{value:.2f}")
    if value is not None and est and est.lower is not None and est.upper is not None:
        text += f" [{est.lower:.2f}, {est.upper:.2f}]"
    css = ""
    if verdict.unclear:
        css = "noisy"
    elif value is not None and verdict == "regression" and round(value, 2) <= RED_AT:
        css = "red"  # judge what is printed, as the text report does: a shown 0.95 is red
    elif value is not None and verdict == "improvement" and round(value, 2) >= GREEN_AT:
        css = "green"
    cls = f' class="{css}"' if css else ""
    mark = f'<span class="mark">{escape(verdict.mark)}</span>'
    return f'<td{cls} title="{_attr(_cell_title(row, target, verdict))}">{escape(text)}{mark}{_warn(row, target)}</td>'


def _cell_title(row, target: str, verdict: Verdict) -> str:
    cell = row.cells[target]
    est, ref = cell.estimate, cell.reference or ""
    if verdict == "not measured":
        return f"not measured ({row.status(target)}), {target} / {ref}: `dbdrift run --resume` runs it again"
    if verdict == "no interval":
        why = "no successful run on one side" if cell.ratio is None else "too few samples"
        return f"no interval: {why}, so no 95% interval and no verdict ({target} / {ref})"
    interval = f"[{est.lower:.3f}, {est.upper:.3f}]" if est and est.lower is not None else "[-]"
    how = (f"{est.method}, n={est.n}" + (f", + between-campaign sd {est.campaign_sd:.2%}" if est.campaign_sd else "")
           if est else "no estimate")
    if verdict == "too noisy":
        return (f"too noisy: the 95% interval {interval} ({how}) is too wide to tell a change of the minimum "
                f"effect from none; rerun with longer runs or on a quieter host ({target} / {ref})")
    return f"{verdict}: rQPS {fmt_ratio3(cell.ratio)}, 95% interval {interval} ({how}), {target} / {ref}"


def _warn(row, target: str) -> str:
    lines = [f"{t}: {w}" for t in dict.fromkeys((target, row.cells[target].reference)) if t
             for w in row.cells[t].warnings]
    return f'<span class="warn" title="{_attr(chr(10).join(lines))}">!</span>' if lines else ""


def _attr(text: str) -> str:
    return escape(text).replace("\n", "&#10;")


def _summary_rows(data: ReportData, section: Section) -> list[str]:
    summaries, compared = section.summaries, data.comparison.compared
    out = []
    for stat in ("min", "max", "mean", "median"):
        cells = "".join(f"<td>{fmt_ratio(getattr(summaries[t], stat)) if t in summaries else '-'}</td>"
                        for t in compared)
        out.append(f'<tr><th scope="row">{stat}</th>{cells}</tr>')
    counts = "".join(f"<td>{verdict_counts(s)}</td>" if (s := summaries.get(t)) else "<td>-</td>" for t in compared)
    out.append(f'<tr title="regressions, improvements, too noisy or no interval, not measured"><th scope="row">'
               f"verdicts</th>{counts}</tr>")
    return out


def _group_chart(data: ReportData, rows, chart_id: str, caption: str) -> str:
    groups = []
    for row in rows:
        bars = []
        for t in data.comparison.compared:
            cell = row.cells[t]
            est, verdict = cell.estimate, cell.verdict or Verdict.NO_INTERVAL
            lower, upper = (est.lower, est.upper) if est else (None, None)
            bars.append(Bar(t, cell.ratio, lower, upper, verdict, f"{row.test}, {t}: {verdict}"))
        groups.append(BarGroup(row.test, tuple(bars)))
    return (f"<figure>{ratio_chart(groups, chart_id, caption)}<figcaption>{escape(caption)}: bars from 1.0 "
            "(right: faster than the reference), whiskers: 95% interval, color: verdict</figcaption></figure>")


def _absolute_table(data: ReportData, threads: int) -> str:
    targets = data.comparison.targets
    head = "".join(f'<th title="{escape(data.label(t))}">{escape(t)}</th>' for t in targets)
    out = [f"<h3>Absolute throughput, {escape(_threads_title(threads))}</h3>",
           '<p class="sub">QPS; scan: thousand rows/s. Hover a cell for its 95% interval.</p>',
           f'<table class="abs"><thead><tr><th>test</th>{head}</tr></thead><tbody>']
    for section in data.sections(threads):
        out.append(f'<tr class="grp"><th colspan="{len(targets) + 1}">{escape(section.title)}</th></tr>')
        for row in section.rows:
            out.append(f'<tr><th scope="row">{escape(row.test)}</th>'
                       + "".join(_abs_cell(row, t) for t in targets) + "</tr>")
    return "\n".join(out + ["</tbody></table>"])


def _abs_cell(row, target: str) -> str:
    cell, tput = row.cells[target].absolute, row.cells[target].throughput
    if cell is None or cell.value is None:
        failed, skipped = (cell.failed, cell.skipped) if cell else (0, 0)
        text = cell.status if cell and cell.status else "-"
        return f'<td class="noisy" title="no successful run ({failed} failed, {skipped} skipped)">{escape(text)}</td>'
    title = f"{cell.runs} run(s) ok, {cell.failed} failed"
    if tput and tput.lower is not None and tput.upper is not None:
        title = f"95% interval [{fmt_abs(tput.lower)}, {fmt_abs(tput.upper)}] ({tput.method}, n={tput.n}); {title}"
    return f'<td title="{_attr(title)}">{escape(fmt_abs(cell.value))}</td>'


def _table(header: list[str], rows: list[list[str]], css: str) -> str:
    """A report/hardware.py table (name last) with the name column moved first."""
    head = "".join(f"<th>{escape(h)}</th>" for h in [header[-1], *header[:-1]])
    body = "".join(f'<tr><th scope="row">{escape(r[-1])}</th>' + "".join(f"<td>{escape(c)}</td>" for c in r[:-1])
                   + "</tr>" for r in rows)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _instructions_section(data: ReportData, charts) -> str:
    if not data.instructions:
        return ""
    refs = _references(data)
    groups = [BarGroup(irow.test, tuple(
        Bar(t, irow.relative.get(t), kind=_direction(irow.relative.get(t)),
            title=f"{irow.test}: {t} / {refs[t]} instructions per event")
        for t in data.comparison.compared)) for irow in data.instructions]
    caption = "instructions per event relative to the reference"
    return "\n".join([
        '<section id="instructions">', "<h2>Instructions per event</h2>",
        "<p>Server backend under valgrind callgrind: deterministic, immune to CPU steal. "
        "Beside each ratio, the rQPS and verdict of the timed runs.</p>",
        _table(*instruction_table(data), "instr"),
        "<h3>Where the instructions went</h3>",
        "<ul>" + "".join(f"<li>{escape(line)}</li>" for line in delta_lines(data)) + "</ul>",
        f"<figure>{ratio_chart(groups, f'chart-{next(charts)}', caption, digits=3)}<figcaption>"
        f"{escape(caption)}: right of 1.0 is more work per event (orange), left is less (blue)"
        "</figcaption></figure>", "</section>"])


def _direction(ratio: float | None) -> str:
    if ratio is None or ratio == 1.0:
        return "same"
    return "more" if ratio > 1.0 else "fewer"


def _metrics_section(data: ReportData) -> str:
    if not data.show_metrics:
        return ""
    out = ['<section id="metrics">', "<h2>Hardware per operation</h2>", f"<p>{escape(METRICS_LEGEND)}</p>"]
    if not data.metrics:
        out.append("<p>(no samples stored: the runs predate the samplers or all failed)</p>")
    for title, header, rows in metrics_blocks(data):
        out += [f"<h3>{escape(title)}</h3>", _table(header, rows, "metrics")]
    return "\n".join(out + ["</section>"])


def _warnings_section(data: ReportData) -> str:
    items = [f"<li><code>{escape(row.test)} x{row.threads} {escape(target)}</code>: {escape(warning)}</li>"
             for row in data.comparison.rows for target, c in row.cells.items() for warning in c.warnings]
    body = f'<ul class="warnings">{"".join(items)}</ul>' if items else "<p>No host or run warnings.</p>"
    return f'<section id="warnings">\n<h2>Warnings (!)</h2>\n{body}\n</section>'
