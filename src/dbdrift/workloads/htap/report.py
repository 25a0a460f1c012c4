"""CH-benCHmark report as text, Markdown, CSV, JSON and HTML: NOPM and analytical queries per hour
per target, alone and together, relative to the base; the interference within each target; each
query's latency alone and together; the hardware per new order and the transactions' response
times with the analytics running. Pure serializers of one `HtapReport`
(workloads/htap/results.py); no I/O.

    render(data, fmt) -> str (the formats' shape: report/skeleton.py)
"""
from __future__ import annotations

import io
import json
from html import escape

from dbdrift.analysis.events import Dips
from dbdrift.analysis.tpcc import HARDWARE, nopm_series, run_dips
from dbdrift.report.events import DIPS_HEADER, DIPS_TITLE, dip_cells, dip_text, dips_json, engine_charts
from dbdrift.model import JsonObject, WorkloadRun, TPCC_TRANSACTIONS as TRANSACTIONS
from dbdrift.report.caveats import finding_mark
from dbdrift.report.numbers import fmt_fixed, fmt_ms
from dbdrift.report.charts import Line, time_chart
from dbdrift.report.drift import drift_json
from dbdrift.report.skeleton import ReportSkeleton
from dbdrift.report.workload import (campaign_csv, json_envelope, color_of, findings_json, VERDICT_COLUMNS, verdict_cells,
                                     verdicts_legend)
from dbdrift.workloads.tpcc.report import DIPS_LEGEND, HARDWARE_DIGITS, HARDWARE_LEGEND
from dbdrift.workloads.htap.results import WINDOW_TITLES, WINDOWS, HtapReport, Relative, as_tpcc

WINDOW_TEST = {"transactions": "NOPM alone", "analytics": "queries/h alone", "together": "NOPM with analytics"}
"""The judged figure whose verdict a window's CSV row carries."""


def _rel(data: HtapReport, target: str, what: str) -> str:
    """`0.97 [0.95,0.99] -` of a target's judged figure; `1.00` for the base, `-` without one."""
    if target == data.targets[0]:
        return "1.00"
    r: Relative | None = next((r for r in data.relatives if r.target == target and r.what == what), None)
    if r is None or r.estimate is None or r.estimate.value is None:
        return "-"
    text = f"{r.estimate.value:.2f}"
    if r.estimate.lower is not None and r.estimate.upper is not None:
        text += f" [{r.estimate.lower:.2f},{r.estimate.upper:.2f}]"
    found = data.verdict(target, what)
    return text + (f" {finding_mark(found)}" if found else "")


def _ratio(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def slowest(data: HtapReport) -> list[str]:
    """The queries by the base's latency together with the transactions, slowest first (those
    it never completed last)."""
    base = data.summary(data.targets[0])
    together = {q.name: q.together_ms for q in base.queries} if base else {}
    return sorted(data.queries, key=lambda q: (together.get(q) is None, -(together.get(q) or 0.0)))


def blocks(data: HtapReport) -> list[tuple[str, str, list[str], list[list[str]]]]:
    """(title, legend, header, rows) of the tables every text format shows."""
    base = data.targets[0]
    rows = []
    for s in data.summaries:
        f = s.figures
        checks = {True: "passed", False: "FAILED", None: "-"}[s.consistency_ok]
        rows.append([data.label(s.target), fmt_fixed(f["NOPM alone"], 0, thousands=True),
                     fmt_fixed(f["NOPM with analytics"], 0, thousands=True), _rel(data, s.target, "NOPM with analytics"),
                     fmt_fixed(f["queries/h alone"], 0, thousands=True),
                     fmt_fixed(f["queries/h with transactions"], 0, thousands=True),
                     _rel(data, s.target, "queries/h with transactions"),
                     f"{s.runs}" + (f" ({s.failed} failed)" if s.failed else ""), checks])
    out = [("NOPM and analytical queries per hour",
            "NOPM: new orders per minute; q/h: analytical queries completed per hour; alone: the window with only "
            "that side running, together: both at once; r: together ÷ the base's "
            f"({data.label(base)}), with a 95% interval over repeats when there are some; " + verdicts_legend(data),
            ["target", "NOPM alone", "NOPM together", "rNOPM", "q/h alone", "q/h together", "rq/h", "repeats",
             "consistency"], rows)]
    out.append(("interference (together ÷ alone)",
                "each target against itself: NOPM with the analytical streams ÷ without them, queries per hour with "
                "the transactions ÷ without them (means of the per-repeat ratios; below 1: the other side slows it)",
                ["target", "NOPM", "queries/h"],
                [[data.label(s.target), _ratio(s.interference.get("NOPM")), _ratio(s.interference.get("queries/h"))]
                 for s in data.summaries]))
    header = ["query"]
    for t in data.targets:
        header += [f"{t} alone", f"{t} together", f"{t} slowdown"]
    header += [f"r {t}" for t in data.targets[1:]]
    qrows = []
    for q in slowest(data):
        row = [q]
        for t in data.targets:
            mine = data.summary(t)
            ql = next((x for x in mine.queries if x.name == q), None) if mine else None
            alone, together = (ql.alone_ms, ql.together_ms) if ql else (None, None)
            row += [fmt_ms(alone * 1000 if alone else None), fmt_ms(together * 1000 if together else None),
                    _ratio(together / alone if alone and together else None)]
        row += [_rel(data, t, f"{q} latency") for t in data.targets[1:]]
        qrows.append(row)
    out.append(("query latency (ms), slowest first",
                "mean over the repeats that completed the query inside a window; slowdown: together ÷ alone; r: the "
                "base's latency together ÷ the target's (above 1: faster), with its 95% interval and verdict; - : "
                "never completed inside a window", header, qrows))
    hw = [[data.label(s.target), WINDOW_TITLES[w], *(fmt_fixed(s.hardware[w].get(m), HARDWARE_DIGITS[m], thousands=True)
                                                     for m in HARDWARE)]
          for s in data.summaries for w in ("transactions", "together") if w in s.hardware]
    out.append((f"hardware per new order (host CPUs: {data.ncpu})",
                HARDWARE_LEGEND.replace("in the measured window", "in the window") +
                " (together: the analytical queries' work is in these too)",
                ["target", "window", *HARDWARE], hw))
    for tx in TRANSACTIONS:
        lat = [[data.label(s.target), str(s.latency[tx].count), fmt_ms(s.latency[tx].p50_us),
                fmt_ms(s.latency[tx].p95_us), fmt_ms(s.latency[tx].p99_us), fmt_ms(s.latency[tx].max_us)]
               for s in data.summaries if tx in s.latency]
        if lat:
            out.append((f"{tx} response time with analytics (ms)", "", ["target", "count", "p50", "p95", "p99", "max"],
                        lat))
    dips = [[f"{data.label(r.target)} #{r.repeat + 1} {WINDOW_TITLES[w]}", *dip_cells(d)]
            for r in data.runs for w in ("transactions", "together") for d in _window_dips(r, w)]
    if dips:
        out.append((DIPS_TITLE, DIPS_LEGEND, DIPS_HEADER, dips))
    return out


def _window_dips(run: WorkloadRun, window: str) -> tuple[Dips, ...]:
    tx = as_tpcc(run, window)
    return run_dips(tx) if tx is not None and tx.clients else ()


CSV_HEADER = ("target", "repeat", "status", "window", "query", "clients", "streams", "elapsed_s", "nopm", "tpm",
              "queries_per_h", "count", "mean_ms", "p95_ms", "cancelled", "error", "dips", "test", *VERDICT_COLUMNS, "notes")


def render_csv(data: HtapReport) -> str:
    """One row per window of each stored repeat (`query` empty), then one per query of that
    window; `test` names the judged figure the row's verdict columns are of (WINDOW_TEST's
    on window rows, the query's latency together on the rows of the window together), empty
    for the base; `notes` the report's, on every line."""
    buf = io.StringIO()
    writer = campaign_csv(buf, data)
    writer.header(CSV_HEADER)
    notes = " | ".join(data.notes)

    def verdict_of(target: str, test: str) -> list[str]:
        cells = verdict_cells(data, target, test)
        return [test if any(cells) else "", *cells]
    for r in data.runs:
        windows = r.record.get("windows") or {}
        if not windows:
            writer.writerow([r.target, r.repeat, r.status, "", "", "", "", round(r.elapsed_s, 3), "", "", "", "", "",
                             "", "", r.error or "", "", *verdict_of(r.target, "NOPM with analytics"), notes])
        for w in WINDOWS:
            if w not in windows:
                continue
            win = windows[w]
            a = win.get("analytics") or {}
            test = WINDOW_TEST[w]
            writer.writerow([r.target, r.repeat, win.get("status"), w, "", win.get("clients"), win.get("streams"),
                             round(float(win.get("elapsed_s") or 0.0), 3), round(float(win.get("nopm") or 0.0), 3),
                             round(float(win.get("tpm") or 0.0), 3), "" if a.get("qph") is None else round(a["qph"], 3),
                             a.get("completed", ""), "", "", a.get("cancelled", ""), win.get("error") or "",
                             dip_text(_window_dips(r, w)), *verdict_of(r.target, test), notes])
            for q, stats in (a.get("by_query") or {}).items():
                writer.writerow([r.target, r.repeat, win.get("status"), w, q, "", "", "", "", "", "",
                                 stats.get("count", ""), "" if stats.get("mean_ms") is None else stats["mean_ms"],
                                 "" if stats.get("p95_ms") is None else stats["p95_ms"], stats.get("cancelled", ""), "",
                                 "", *(verdict_of(r.target, f"{q} latency") if w == "together"
                                   else [""] * (1 + len(VERDICT_COLUMNS))), notes])
    for target in data.targets:  # a target without a stored repeat still has its line
        if not any(r.target == target for r in data.runs):
            writer.writerow([target, "", "not run", *[""] * (len(CSV_HEADER) - 5 - len(VERDICT_COLUMNS)),
                             *verdict_of(target, "NOPM with analytics"), notes])
    return buf.getvalue()


def to_json(data: HtapReport) -> JsonObject:
    def est(r: Relative) -> JsonObject:
        e = r.estimate
        return {"target": r.target, "what": r.what, "status": r.status, "value": e.value if e else None,
                "lower": e.lower if e else None, "upper": e.upper if e else None,
                "method": str(e.method) if e else None, "n": e.n if e else None}
    return {
        **json_envelope(data), "setup": data.setup, "ncpu": data.ncpu, "default_drift": drift_json(data.drift),
        "queries": list(data.queries), "verdicts": findings_json(data),
        "relatives": [est(r) for r in data.relatives],
        "targets": [{"name": s.target, "label": data.labels.get(s.target, ""), "runs": s.runs, "failed": s.failed,
                     "figures": s.figures, "interference": s.interference,
                     "queries": [vars(q) for q in s.queries], "hardware": s.hardware,
                     "latency_us": {tx: vars(lat) for tx, lat in s.latency.items()},
                     "consistency_ok": s.consistency_ok, "errors": s.errors} for s in data.summaries],
        "runs": [{"target": r.target, "repeat": r.repeat, "status": r.status, "elapsed_s": r.elapsed_s,
                  "error": r.error, "position": r.position, **r.record,
                  "dips": {w: [dips_json(d) for d in _window_dips(r, w)] for w in ("transactions", "together")}}
                 for r in data.runs],
    }


def render_json(data: HtapReport) -> str:
    return json.dumps(to_json(data), indent=2, ensure_ascii=False) + "\n"


def charts(data: HtapReport) -> list[str]:
    """Per window with transactions, NOPM per interval of each target's last repeat, the
    engine's counters under it."""
    out = []
    for window in ("transactions", "together"):
        lines, shown = [], {}
        for t in data.targets:
            run = next((x for r in reversed(data.runs) if r.target == t
                        and (x := as_tpcc(r, window)) is not None and x.intervals), None)
            if run is not None:
                xs, ys = nopm_series(run)
                lines.append(Line(t, xs, ys, color_of(data, t)))
                shown[t] = run.events
        if lines:
            engine = engine_charts(shown, {t: color_of(data, t) for t in shown}, WINDOW_TITLES[window])
            out.append(f"<h2>NOPM per interval, {escape(WINDOW_TITLES[window])}</h2><p class=\"sub\">ramp-up "
                       "included; one repeat per target (the last); under it, the engine's own counters</p><figure>"
                       + time_chart(lines, f"NOPM per interval, {WINDOW_TITLES[window]}", "NOPM", width=760,
                                    height=220) + "</figure>"
                       + "".join(f"<figure>{c}</figure>" for c in engine))
    return out


REPORT = ReportSkeleton("CH-benCHmark", "CH-benCHmark", blocks, render_csv, render_json, ("the figure", "ratio", "figure"),
                        charts)
render_text, render_html = REPORT.text, REPORT.html


def render(data: HtapReport, fmt: str) -> str:
    """The report in `fmt` (the Workload's render_report): a module-level function, so that the
    Workload pickles equal to itself for a cluster unit (a bound method of REPORT would not)."""
    return REPORT.render(data, fmt)
