"""HTML report: one self-contained page (inline CSS, inline SVG charts, the charts' inline hover and zoom
script; nothing fetched).

Findings come first (each regression and improvement with its interval), under a header that
says what ran where (date, host, versions, durations, dbdrift version). Then per client count and
group the rQPS table, columns named by target, and a bar chart whose rQPS axis is the same on the
whole page (0.8 to 1.2, widened only when a value falls outside), one colour per target; verdicts
are marks, not colours. Absolute throughput, instructions, hardware metrics and warnings follow."""
from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from html import escape
from itertools import count
from typing import Any

from dbdrift.analysis.noise import Verdict
from dbdrift.analysis.relative import Cell, RelativeRow
from dbdrift.quantities import format_percent
from dbdrift.report.caveats import detectable_mark, detectable_text, notes_html, packager_html, undetected_html
from dbdrift.report.charts import Bar, BarGroup, label_columns, ratio_chart
from dbdrift.report.drift import DRIFT_LEGEND, DRIFT_TITLE, drift_blocks
from dbdrift.report.numbers import fmt_abs, fmt_mb, fmt_ratio, fmt_rel
from dbdrift.report.page import SHADE_AT, attr, data_table, page, page_header, swatch, verdict_class
from dbdrift.report.page import target_color as color_in
from dbdrift.results.findings import Finding
from dbdrift.results.targets import packager_change
from dbdrift.workloads.sysbench.report.hardware import (LAYER_TITLE, layer_legend, layer_table, instruction_legend,
                                                        metrics_legend, delta_lines, instruction_table,
                                                        metrics_blocks, simulated_blocks)
from dbdrift.workloads.sysbench.report.table import BURST_TITLE, packager_legend, verdict_counts, verdict_legend
from dbdrift.workloads.sysbench.report.words import comparison_words
from dbdrift.workloads.sysbench.results.data import ReportData, Section
from dbdrift.workloads.sysbench.results.findings import all_findings, instruction_why

ChartAxes = tuple[tuple[float, float], tuple[float, float]]  # (rQPS range, label columns) shared by a page's charts
AXIS = (0.8, 1.2)  # the posts' rQPS axis; widened on whole 0.05 steps when a value falls outside


def render_html(data: ReportData) -> str:
    """The whole page; every string from the store or the catalog passes through html.escape."""
    charts = count(1)  # a unique id per SVG chart, for its hatch pattern
    axis = (page_axis(data), page_columns(data))  # one x scale and plot offset for every chart of the page
    parts = [_header(data), _words(data), _findings(data), _intro(data)]
    for threads in data.thread_counts():
        parts.append(_threads_section(data, threads, charts, axis))
    parts += [_instructions_section(data, charts, axis), _layers_section(data), _drift_section(data),
              _metrics_section(data), _binary_section(data), _warnings_section(data)]
    return page(f"dbdrift report: {data.campaign}", parts)


def _words(data: ReportData) -> str:
    words = comparison_words(data)
    if not words:
        return ""
    items = "".join(f"<li>{escape(w.head)}<ul>" + "".join(f"<li>{escape(g.line())}</li>" for g in w.groups)
                    + "</ul></li>" for w in words)
    return f'<section id="words"><h2>In words</h2><ul>{items}</ul></section>'



def target_color(data: ReportData, target: str) -> str:
    return color_in(data.comparison.compared, target)


WHISKER_ROOM = 0.05  # how far past the page's values an interval end still widens the axis


def page_axis(data: ReportData) -> tuple[float, float]:
    """AXIS, widened to whole 0.05 steps that hold every rQPS (and instruction ratio) of the page,
    and every interval end within WHISKER_ROOM of them. A wider interval (one noisy cell) does not
    stretch every chart of the page: its whisker is clipped at the axis and marked (charts.py)."""
    values = [c.ratio for row in data.comparison.rows for t in data.comparison.compared
              if (c := row.cells[t]).ratio is not None and math.isfinite(c.ratio)]
    values += [v for irow in data.instructions for v in irow.relative.values() if v is not None and math.isfinite(v)]
    lo, hi = min([AXIS[0], *values]), max([AXIS[1], *values])
    ends = [v for row in data.comparison.rows for t in data.comparison.compared
            for v in _cell_numbers(row.cells[t])[1:] if v is not None and math.isfinite(v)]
    lo = min([lo, *(e for e in ends if e >= lo - WHISKER_ROOM)])
    hi = max([hi, *(e for e in ends if e <= hi + WHISKER_ROOM)])
    return max(0.0, math.floor(lo * 20 + 1e-9) / 20), math.ceil(hi * 20 - 1e-9) / 20


def page_columns(data: ReportData) -> tuple[float, float]:
    """The label columns of every chart of the page: the longest test name and target name."""
    names = {row.test for row in data.comparison.rows} | {irow.test for irow in data.instructions}
    return label_columns([BarGroup(name, tuple(Bar(t, None) for t in data.comparison.compared)) for name in names])


def _cell_numbers(cell: Cell) -> tuple[float | None, ...]:
    est = cell.estimate
    return (cell.ratio, est.lower if est else None, est.upper if est else None)


def _header(data: ReportData) -> str:
    """What ran where: the campaign, its date, host, targets with versions, durations, tool versions."""
    comp, meta = data.comparison, data.meta
    campaign, host = meta.get("campaign", {}), meta.get("host", {})
    settings = campaign.get("settings", {})
    compared = ", ".join(comp.compared) or comp.base
    title = f"{compared} against {comp.base}" if comp.compared and not comp.chain else (
        f"{' → '.join(comp.targets)}, each against the one before" if comp.chain else comp.base)
    if comp.against:
        title = ", ".join(f"{t} / {comp.references[t]}" for t in comp.compared)
    facts = [("campaign", escape(f"{data.campaign} (#{campaign['id']})" if "id" in campaign else data.campaign))]
    if campaign.get("created_at"):
        facts.append(("run on", escape(campaign["created_at"].replace("T", " "))))
    if host:
        memory = f", {host['memory_bytes'] / 2**30:.0f} GiB" if host.get("memory_bytes") else ""
        facts.append(("host", escape(f"{host.get('hostname') or '?'}: {host.get('cpu_model') or 'CPU ?'}, "
                                     f"{host.get('cpus') or '?'} CPUs{memory}; {host.get('os') or ''} "
                                     f"{host.get('kernel') or ''}".strip())))
    targets = {t["name"]: t for t in meta.get("targets", [])}
    for name in comp.targets:
        info = targets.get(name, {})
        what = " ".join(str(x) for x in (info.get("engine"), info.get("version")) if x) or data.target_labels.get(name, "")
        source = f" ({info['source']})" if info.get("source") else ""
        role = "base" if name == comp.base else "target"
        facts.append((role, f"{swatch(target_color(data, name))}{escape(name)}: {escape(what + source)}"))
    if settings:
        facts.append(("runs", escape(_runs_text(settings) if data.timed or not data.instructions else
                                     _counts_text(settings))))
    versions = f"dbdrift {meta['dbdrift_version']}" if meta.get("dbdrift_version") else ""
    if campaign.get("dbdrift_version") and campaign["dbdrift_version"] != meta.get("dbdrift_version"):
        versions += f" (the campaign ran with {campaign['dbdrift_version']})"
    if versions:
        facts.append(("report", escape(f"{versions}, made {meta.get('generated_at', '').replace('T', ' ')}")))
    return page_header(title, facts)


def _runs_text(s: dict[str, Any]) -> str:
    threads = ", ".join(str(n) for n in s.get("threads", [1]))
    parts = [f"{s.get('tables', 1)} table(s) of {s.get('rows', 0):,} rows", f"threads {threads}",
             f"reads {s.get('read_s', 0):g} s, writes {s.get('write_s', 0):g} s after {s.get('warmup_s', 0):g} s warmup",
             f"{s.get('repeats', 1)} repeat(s)", f"order {s.get('order', '?')}"]
    return "; ".join(parts)


def _counts_text(s: dict[str, Any]) -> str:
    """A campaign of counts only: what was counted, and that nothing was timed (no durations)."""
    return (f"{s.get('tables', 1)} table(s) of {s.get('rows', 0):,} rows; instruction counts only (callgrind, "
            "timed = false): no timed run")


def _findings(data: ReportData) -> str:
    """Every regression and improvement, the largest first, with its interval; then what could not
    be told. Timed cells and instruction counts alike (results/findings.py)."""
    comp = data.comparison
    if not comp.compared:
        return ""
    every = list(all_findings(data))
    timed = [f for f in every if f.measure == "timed"]
    counted = [f for f in every if f.measure == "instructions"]
    out = ['<section id="findings">', "<h2>Findings</h2>"]
    sentences = []
    effect = format_percent(comp.judging.min_effect)
    if timed or not counted:
        sentences.append(_findings_summary(timed, f"of at least {effect} whose 95% interval "
                                                  "excludes 1",
                                           "cells"))
    if counted:
        sentences.append("Instructions per event: " + _findings_summary(
            counted, f"of at least {effect} (deterministic counts)", "counted comparisons"))
    out.append(f"<p>{escape('. '.join(sentences))}.</p>")
    if undetected := undetected_html(timed, comp.judging.min_effect):
        out.append(undetected)
    bursts = data.burst_lines()
    if bursts:
        out.append(f'<p class="bursts">{escape(BURST_TITLE)}:</p><ul class="bursts">'
                   + "".join(f"<li>{escape(line)}</li>" for line in bursts) + "</ul>")
    found = _sorted_findings(timed)
    if found:
        body = []
        for f in found:
            interval = f"[{f.lower:.3f}, {f.upper:.3f}]" if f.lower is not None else "-"
            irow = data.instruction_row(f.test)
            instr = f"<td>{fmt_ratio(irow.relative.get(f.target) if irow else None, 3)}</td>" if data.instructions else ""
            body.append(_finding_row(data, f, f"<td>{f.threads}</td>", f"<td>{f.ratio:.3f}</td><td>{interval}</td>{instr}",
                                     _why(data, f)))
        out.append('<table class="findings"><thead><tr><th></th><th>test</th><th>threads</th><th>target / reference'
                   "</th><th>rQPS</th><th>95% interval</th>"
                   + ("<th>instructions/event ratio</th>" if data.instructions else "") + "<th>why</th></tr></thead><tbody>"
                   + "".join(body) + "</tbody></table>")
    found = _sorted_findings(counted)
    if found:
        body = [_finding_row(data, f, "", f"<td>{f.ratio:.3f}</td>",
                             instruction_why(irow, f.target) if (irow := data.instruction_row(f.test)) else "")
                for f in found]
        out.append('<table class="findings"><thead><tr><th></th><th>test</th><th>target / reference</th>'
                   "<th>instructions/event, new / reference</th><th>why</th></tr></thead><tbody>"
                   + "".join(body) + "</tbody></table>")
    return "\n".join(out + ["</section>"])


def _findings_summary(found: list[Finding], rule: str, what: str) -> str:
    regressions = sum(f.verdict is Verdict.REGRESSION for f in found)
    improvements = sum(f.verdict is Verdict.IMPROVEMENT for f in found)
    unclear = sum(f.verdict in (Verdict.TOO_NOISY, Verdict.NO_INTERVAL) for f in found)
    missing = sum(f.verdict is Verdict.NOT_MEASURED for f in found)
    text = f"{regressions} regression(s) and {improvements} improvement(s) {rule}, among {len(found)} {what}"
    text += f"; {unclear} too noisy or without an interval" if unclear else ""
    return text + (f"; {missing} not measured" if missing else "")


def _sorted_findings(found: list[Finding]) -> list[Finding]:
    """Regressions first, the largest first, then improvements; a count's ratio is read inverted
    (more instructions per event is worse)."""
    shown = [f for f in found if f.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT) and f.ratio is not None]

    def worse(f: Finding) -> float:
        ratio = f.ratio or 0.0  # shown findings all have a ratio
        return -ratio if f.measure == "instructions" else ratio
    return sorted(shown, key=lambda f: (f.verdict is not Verdict.REGRESSION,
                                        worse(f) if f.verdict is Verdict.REGRESSION else -worse(f)))


def _finding_row(data: ReportData, f: Finding, threads_cell: str, values: str, why: str) -> str:
    kind = "regression" if f.verdict is Verdict.REGRESSION else "improvement"
    return (f'<tr class="{kind}"><td class="mark">{escape(f.verdict.mark)}'
            f"{packager_html(f.target, f.reference, f.packagers)}</td>"
            f'<th scope="row">{escape(f.test)}</th>{threads_cell}'
            f"<td>{swatch(target_color(data, f.target))}"
            f"{escape(f.target)} / {escape(f.reference)}</td>{values}"
            f'<td class="why">{escape(why)}</td></tr>')


def _why(data: ReportData, f: Finding) -> str:
    """What moved with a timed cell (analysis/explain.py), without the rQPS the row already shows."""
    parts = data.explanations.get((f.test, f.threads, f.target)) if f.threads is not None else None
    return parts[1] if parts else ""


def _intro(data: ReportData) -> str:
    colours = (f". Table cells are red with a regression verdict and green with an improvement, whatever the size, "
               f"darker at a change of {SHADE_AT[0]:.0%} or more and darkest at {SHADE_AT[1]:.0%} or more; hatched "
               "when too noisy or without an interval; hover a cell for its interval, method and detectable change. "
               "Charts: one colour per target, the verdict's mark after each value" if data.timed else "")
    out = ['<section id="how-to-read">', f'<p class="verdicts">{escape(verdict_legend(data) + colours)}.</p>']
    packaged = packager_legend(data)
    out += [f'<p class="packagers">{escape(packaged)}</p>'] if packaged else []
    out.append(notes_html(data.notes))
    if not data.comparison.compared:
        out.append("<p>Only one target: nothing to compare; absolute values follow.</p>")
    links = [("findings", "Findings")] if data.comparison.compared else []
    links += [(f"threads-{t}", _threads_title(t)) for t in data.thread_counts()]
    links += [("instructions", "Instructions per event")] if data.instructions else []
    links += [("metrics", "Hardware per operation")] if data.show_metrics else []
    links += [("binary", "Server binary")] if any(t.get("binary") for t in data.meta.get("targets", [])) else []
    links.append(("warnings", "Warnings"))
    out.append("<nav>Contents: " + "".join(f'<a href="#{i}">{escape(t)}</a>' for i, t in links) + "</nav>")
    return "\n".join([o for o in out if o] + ["</section>"])


def _threads_title(threads: int) -> str:
    return f"{threads} client thread{'s' if threads != 1 else ''}"


def _threads_section(data: ReportData, threads: int, charts: Iterator[int], axis: ChartAxes) -> str:
    out = [f'<section id="threads-{threads}">', f"<h2>{escape(_threads_title(threads))}</h2>"]
    if data.comparison.compared:
        for section in data.sections(threads):
            out.append(_group_section(data, section, f"chart-{next(charts)}", axis))
    out += [_absolute_table(data, threads), "</section>"]
    return "\n".join(out)


def _group_section(data: ReportData, section: Section, chart_id: str, axis: ChartAxes) -> str:
    comp = data.comparison
    refs = comp.references
    group, threads, rows, title = section.group, section.threads, section.rows, section.title
    head = "".join(f'<th title="{escape(data.label(t))} ÷ {escape(data.label(refs[t]))}">'
                   f'{swatch(target_color(data, t))}{escape(t)}<br>'
                   f'<span class="sub">/ {escape(refs[t])}</span>'
                   f"{packager_html(t, refs[t], packager_change(data.packagers, t, refs[t]))}</th>"
                   for t in comp.compared)
    body = [f'<tr><th scope="row">{escape(row.test)}</th>{"".join(_rel_cell(row, t) for t in comp.compared)}</tr>'
            for row in rows]
    out = [f'<section class="group" id="{escape(group)}-{threads}">', f"<h3>{escape(title)}</h3>",
           f'<table class="rel"><thead><tr><th>test</th>{head}</tr></thead>', "<tbody>", *body, "</tbody>",
           "<tfoot>", *_summary_rows(data, section), "</tfoot></table>", _plan_details(data, section),
           _group_chart(data, rows, chart_id, f"rQPS, {title}, {_threads_title(threads)}", axis), "</section>"]
    return "\n".join(out)


def _plan_details(data: ReportData, section: Section) -> str:
    """For each P cell of the section: both plans of every statement whose shape differs."""
    out = []
    for row in section.rows:
        for target in data.comparison.compared:
            change = data.plan_change(row.test, target) if row.cells[target].plan_changed else None
            if change is None:
                continue
            body = []
            for s in change.statements:
                body.append(f"<p><code>{escape(s['sql'])}</code></p><dl>"
                            f"<dt>{escape(change.reference)}</dt><dd><code>{escape(s['reference_shape'])}</code></dd>"
                            f"<dt>{escape(target)}</dt><dd><code>{escape(s['shape'])}</code></dd></dl>"
                            f"<details><summary>EXPLAIN of both</summary><pre>{escape(s['reference_plan'] or '')}"
                            f"</pre><pre>{escape(s['plan'] or '')}</pre></details>")
            out.append(f'<details class="plan"><summary>P {escape(row.test)}: {escape(target)} runs another plan '
                       f"than {escape(change.reference)}</summary>{''.join(body)}</details>")
    return "\n".join(out)


def _rel_cell(row: RelativeRow, target: str) -> str:
    cell = row.cells[target]
    value, est = cell.ratio, cell.estimate
    verdict = cell.verdict or Verdict.NO_INTERVAL
    text = row.status(target) or ("-" if value is None else f"{value:.2f}")
    if value is not None and est and est.lower is not None and est.upper is not None:
        text += f" [{est.lower:.2f}, {est.upper:.2f}]"
    css = "noisy" if verdict.unclear else verdict_class(verdict, value)
    cls = f' class="{css}"' if css else ""
    mark = f'<span class="mark">{escape(verdict.mark + detectable_mark(cell.verdict, cell.detectable))}</span>'
    plan = ('<span class="plan" title="the query plan differs from the reference\'s (its normalised shape: '
            'access method, index, join, sort, rows to a power of ten): see below the table">P</span>'
            if cell.plan_changed else "")
    burst = (f'<span class="burst" title="{attr(_burst_title(cell))}">s</span>'
             if est is not None and est.bursty else "")
    return (f'<td{cls} title="{attr(_cell_title(row, target, verdict))}">{escape(text)}{mark}{_warn(row, target)}'
            f"{plan}{packager_html(target, cell.reference, cell.packagers)}{burst}</td>")


def _burst_title(cell: Cell) -> str:
    est = cell.estimate
    assert est is not None and est.typical is not None
    return (f"stalls: the typical turn's ratio {est.typical:.3f} lies outside the interval of the throughput ratio "
            f"{fmt_ratio(cell.ratio, 3)}: the difference comes in bursts, and the throughput ratio counts the "
            "stalled time")


def _cell_title(row: RelativeRow, target: str, verdict: Verdict) -> str:
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
    detectable = detectable_text(verdict, cell.detectable)
    detectable = f"; {detectable}" if detectable else ""
    if verdict == "too noisy":
        return (f"too noisy: the 95% interval {interval} ({how}) is too wide to tell a change of the minimum "
                f"effect from none; rerun with longer runs or on a quieter host ({target} / {ref}){detectable}")
    return f"{verdict}: rQPS {fmt_ratio(cell.ratio, 3)}, 95% interval {interval} ({how}), {target} / {ref}{detectable}"


def _warn(row: RelativeRow, target: str) -> str:
    lines = [f"{t}: {w}" for t in dict.fromkeys((target, row.cells[target].reference)) if t
             for w in row.cells[t].warnings]
    return f'<span class="warn" title="{attr(chr(10).join(lines))}">!</span>' if lines else ""


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


def _group_chart(data: ReportData, rows: Sequence[RelativeRow], chart_id: str, caption: str, axis: ChartAxes) -> str:
    groups = []
    for row in rows:
        bars = []
        for t in data.comparison.compared:
            cell = row.cells[t]
            est, verdict = cell.estimate, cell.verdict or Verdict.NO_INTERVAL
            lower, upper = (est.lower, est.upper) if est else (None, None)
            bars.append(Bar(t, cell.ratio, lower, upper, title=f"{row.test}, {t} / {cell.reference}: {verdict}",
                            fill=target_color(data, t), mark=verdict.mark))
        groups.append(BarGroup(row.test, tuple(bars)))
    return (f"<figure>{ratio_chart(groups, chart_id, caption, axis=axis[0], columns=axis[1])}<figcaption>{escape(caption)}: bars from "
            "1.0 (right: faster than the reference), whiskers: 95% interval (an arrow where one runs past the axis, "
            "its end in the tooltip), colour: target, mark: verdict; the same axis on the whole page"
            "</figcaption></figure>")


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


def _abs_cell(row: RelativeRow, target: str) -> str:
    cell, tput = row.cells[target].absolute, row.cells[target].throughput
    if cell is None or cell.value is None:
        failed, skipped = (cell.failed, cell.skipped) if cell else (0, 0)
        text = cell.status if cell and cell.status else "-"
        return f'<td class="noisy" title="no successful run ({failed} failed, {skipped} skipped)">{escape(text)}</td>'
    title = f"{cell.runs} run(s) ok, {cell.failed} failed"
    if tput and tput.lower is not None and tput.upper is not None:
        title = f"95% interval [{fmt_abs(tput.lower)}, {fmt_abs(tput.upper)}] ({tput.method}, n={tput.n}); {title}"
    return f'<td title="{attr(title)}">{escape(fmt_abs(cell.value))}</td>'


def _table(header: list[str], rows: list[list[str]], css: str) -> str:
    """A report/hardware.py table (name last) with the name column moved first."""
    return data_table([header[-1], *header[:-1]], [[r[-1], *r[:-1]] for r in rows], css)


def _instructions_section(data: ReportData, charts: Iterator[int], axis: ChartAxes) -> str:
    if not data.instructions:
        return ""
    refs = data.comparison.references
    groups = [BarGroup(irow.test, tuple(
        Bar(t, irow.relative.get(t), kind=_direction(irow.relative.get(t)),
            title=f"{irow.test}: {t} / {refs[t]} instructions per event")
        for t in data.comparison.compared)) for irow in data.instructions]
    caption = "instructions per event relative to the reference"
    return "\n".join([
        '<section id="instructions">', "<h2>Instructions per event</h2>",
        "<p>Server backend under valgrind callgrind: deterministic, immune to CPU steal. "
        + ("Beside each ratio, the rQPS and verdict of the timed runs. " if data.timed else "")
        + f"{escape(instruction_legend(data))}.</p>",
        _table(*instruction_table(data), "instr"),
        *(f"<h3>{escape(title)}</h3>" + _table(header, rows, "simulated") for title, header, rows in simulated_blocks(data)),
        "<h3>Where the instructions went</h3>",
        "<ul>" + "".join(f"<li>{escape(line)}</li>" for line in delta_lines(data)) + "</ul>",
        f"<figure>{ratio_chart(groups, f'chart-{next(charts)}', caption, 3, axis[0], axis[1])}<figcaption>"
        f"{escape(caption)}: right of 1.0 is more work per event (orange), left is less (blue); the page's axis"
        "</figcaption></figure>", "</section>"])


def _layers_section(data: ReportData) -> str:
    if not data.layers:
        return ""
    return "\n".join(['<section id="layers">', f"<h2>{escape(LAYER_TITLE[0].upper() + LAYER_TITLE[1:])}</h2>",
                      f"<p>{escape(layer_legend())}.</p>", data_table(*layer_table(data), "layers"), "</section>"])


def _drift_section(data: ReportData) -> str:
    blocks = drift_blocks(data.drift)
    if not blocks:
        return ""
    parts = ['<section id="drift">', f"<h2>{escape(DRIFT_TITLE[0].upper() + DRIFT_TITLE[1:])}</h2>",
             f"<p>{escape(DRIFT_LEGEND)}.</p>"]
    for title, header, rows, tail in blocks:
        parts += [f"<h3>{escape(title)}</h3>", data_table(header, rows, "drift") if rows else "",
                  f"<p>{escape(tail)}</p>" if tail else ""]
    return "\n".join(parts + ["</section>"])


def _direction(ratio: float | None) -> str:
    if ratio is None or ratio == 1.0:
        return "same"
    return "more" if ratio > 1.0 else "fewer"


def _metrics_section(data: ReportData) -> str:
    if not data.show_metrics:
        return ""
    out = ['<section id="metrics">', "<h2>Hardware per operation</h2>", f"<p>{escape(metrics_legend(data))}</p>"]
    if not data.metrics:
        out.append("<p>(no samples stored: the runs predate the samplers or all failed)</p>")
    for title, header, rows in metrics_blocks(data):
        out += [f"<h3>{escape(title)}</h3>", _table(header, rows, "metrics")]
    return "\n".join(out + ["</section>"])


def _binary_section(data: ReportData) -> str:
    """Each target's server binary in MB, as-is and stripped, relative to the base (`dbdrift bloat`)."""
    sized = [t for t in data.meta.get("targets", []) if t.get("binary")]
    if not sized:
        return ""
    base = next((t["binary"] for t in sized if t["name"] == data.comparison.base), sized[0]["binary"])
    rows = [[t["name"], str(t.get("version") or ""), fmt_mb(b["bytes"]), fmt_mb(b["stripped_bytes"]),
             fmt_mb(b["text"]), fmt_mb(b["data"]), fmt_mb(b["bss"]), fmt_mb(b["libs_bytes"]),
             fmt_rel(b["bytes"], base["bytes"]), fmt_rel(b["stripped_bytes"], base["stripped_bytes"])]
            for t in sized for b in [t["binary"]]]
    header = ["target", "version", "as-is MB", "stripped MB", "text", "data", "bss", "own libraries MB",
              "as-is / base", "stripped / base"]
    return ('<section id="binary">\n<h2>Server binary</h2>\n<p>The server program of each target: the file '
            "as-is and stripped, its text, data and bss, and the libraries it loads from its own install "
            "(`dbdrift bloat` prints the same).</p>\n"
            f'{data_table(header, rows, "binary")}\n</section>')


def _warnings_section(data: ReportData) -> str:
    """The host's warnings (the orange notes under the header) and every run's, so this section
    never says there are none while the header shows some."""
    host = [f"<li>{escape(n)}</li>" for n in data.notes if n.startswith("host warning")]
    items = [f"<li><code>{escape(row.test)} x{row.threads} {escape(target)}</code>: {escape(warning)}</li>"
             for row in data.comparison.rows for target, c in row.cells.items() for warning in c.warnings]
    parts = [f'<h3>Host</h3><ul class="warnings host">{"".join(host)}</ul>' if host else "<p>No host warnings.</p>",
             f'<h3>Runs (!)</h3><ul class="warnings">{"".join(items)}</ul>' if items else
             "<p>No run warnings: no cell is marked !.</p>"]
    return f'<section id="warnings">\n<h2>Warnings</h2>\n{"".join(parts)}\n</section>'
