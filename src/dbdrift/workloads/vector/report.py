"""Vector search report as text, Markdown, CSV, JSON and HTML: per target and family the
recall-against-QPS curve (a chart in HTML, as ann-benchmarks draws it: recall across, QPS up on
a log scale), QPS at equal recall relative to the base with its verdict, and the index build
time and size relative to the base. Pure serializers of one `VectorReport`; no I/O.

    render(data, fmt) -> str (the formats' shape: report/skeleton.py)
"""
from __future__ import annotations

import io
import json
import math

from dbdrift.analysis.noise import Estimate
from dbdrift.model import JsonObject
from dbdrift.report.charts import Axis, Point, Series, steps, xy_chart
from dbdrift.report.caveats import finding_mark
from dbdrift.report.numbers import fmt_fixed
from dbdrift.report.drift import drift_json
from dbdrift.report.skeleton import ReportSkeleton
from dbdrift.report.workload import (campaign_csv, json_envelope, color_of, findings_json, VERDICT_COLUMNS, verdict_cells,
                                     verdicts_legend)
from dbdrift.workloads.vector.curve import frontier
from dbdrift.workloads.vector.results import Relative, VectorReport


def _est(e: Estimate | None, status: str = "") -> str:
    if e is None or e.value is None:
        return status or "-"
    text = f"{e.value:.2f}"
    if e.lower is not None and e.upper is not None:
        text += f" [{e.lower:.2f},{e.upper:.2f}]"
    return text


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value / 1e6:,.1f}"


def blocks(data: VectorReport) -> list[tuple[str, str, list[str], list[list[str]]]]:
    """(title, legend, header, rows) of the tables every text format shows."""
    out = []
    compared = [r for r in data.relatives if r.what.startswith("QPS")]
    if compared:
        rows = []
        for r in compared:
            found = data.verdict(r.target, f"{r.label} {r.what}")
            mark = f" {finding_mark(found)}" if found else ""
            rows.append([r.label, r.what.split("@ ")[1], data.label(r.target), _est(r.estimate, r.status) + mark])
        out.append(("QPS at equal recall", "QPS ÷ the base's at the same recall@k, read on each curve's frontier "
                    f"between its search settings, with a 95% interval over repeats; {verdicts_legend(data)}",
                    ["family", "recall", "target", "rQPS"], rows))
    builds = [r for r in data.relatives if not r.what.startswith("QPS")]
    base_rows = [[data.label(c.target), c.label, fmt_fixed(c.load_s, 1), fmt_fixed(c.build_s, 1), _mb(c.index_bytes),
                  _mb(c.table_bytes)] for c in data.curves]
    out.append(("load, index build and size", "means over each target's ok repeats; seconds and MB",
                ["target", "family", "load s", "build s", "index MB", "table MB"], base_rows))
    if builds:
        out.append(("build time and index size relative to the base", "target ÷ base per family, with a 95% interval "
                    "over repeats; shown, not judged (lower is better for both)",
                    ["family", "target", "build time", "index size"],
                    [[r.label, data.label(r.target), _est(r.estimate, r.status), _est(s.estimate, s.status)]
                     for r, s in _pairs(builds)]))
    for c in data.curves:
        rows = [[p.setting, f"{p.recall:.4f}", fmt_fixed(p.qps, 0, thousands=True),
                 "yes" if p in frontier(list(c.points)) else ""] for p in c.points]
        out.append((f"{data.label(c.target)}: {c.label}", f"recall@k and QPS per search setting, means over "
                    f"{c.repeats} ok repeat(s); frontier: not beaten on both", ["setting", "recall", "QPS", "frontier"],
                    rows))
    return out


def _pairs(builds: list[Relative]) -> list[tuple[Relative, Relative]]:
    times = [r for r in builds if r.what == "build time"]
    return [(t, next(s for s in builds if s.what == "index size" and s.target == t.target and s.family == t.family))
            for t in times]


def facts(data: VectorReport) -> list[tuple[str, str]]:
    """Where the vectors came from, in every format's header."""
    source = str(data.dataset.get("source", ""))
    return [("data", source)] if source else []


CSV_HEADER = ("target", "repeat", "status", "family", "label", "setting", "recall", "qps", "queries", "p50_us",
              "p95_us", "p99_us", "build_s", "index_bytes", "table_bytes", "error", *VERDICT_COLUMNS, "notes")


def render_csv(data: VectorReport) -> str:
    """One row per search setting of every stored repeat (a repeat that measured none has one
    row); `verdict` and `detectable_change` are the target's verdict at recall 0.95 on that
    family (the first compared recall when 0.95 is not), `notes` the report's, on every line."""
    buf = io.StringIO()
    writer = campaign_csv(buf, data)
    writer.header(CSV_HEADER)
    notes = " | ".join(data.notes)

    def cells(target: str, label: str) -> list[str]:
        tests = [f.test for f in data.findings if f.target == target and f.test.startswith(label + " QPS")]
        test = next((t for t in tests if t.endswith("0.95")), tests[0] if tests else None)
        return verdict_cells(data, target, test) if test else verdict_cells(data, target)

    for r in data.runs:
        fams = r.record.get("families", [])
        if not fams:
            writer.writerow([r.target, r.repeat, r.status, *[""] * 12, r.error or "", *cells(r.target, "\0"), notes])
        for fam in fams:
            for p in fam.get("points", []) or [{}]:
                lat = p.get("latency_us") or {}
                writer.writerow([r.target, r.repeat, r.status, fam.get("number"), fam.get("label"), p.get("setting", ""),
                                 p.get("recall", ""), p.get("qps", ""), p.get("queries", ""), lat.get("p50", ""),
                                 lat.get("p95", ""), lat.get("p99", ""), fam.get("build_s", ""),
                                 fam.get("index_bytes", ""), fam.get("table_bytes", ""), r.error or "",
                                 *cells(r.target, fam.get("label", "")), notes])
    for target in data.targets:
        if not any(r.target == target for r in data.runs):
            writer.writerow([target, "", "not run", *[""] * 13, *verdict_cells(data, target), notes])
    return buf.getvalue()


def _est_json(e: Estimate | None) -> JsonObject | None:
    if e is None:
        return None
    return {"value": e.value, "lower": e.lower, "upper": e.upper, "method": str(e.method), "n": e.n}


def to_json(data: VectorReport) -> JsonObject:
    return {
        **json_envelope(data), "setup": data.setup, "ncpu": data.ncpu,
        "dataset": data.dataset, "default_drift": drift_json(data.drift), "verdicts": findings_json(data),
        "curves": [{"target": c.target, "family": c.family, "label": c.label, "repeats": c.repeats,
                    "build_s": c.build_s, "index_bytes": c.index_bytes, "table_bytes": c.table_bytes, "load_s": c.load_s,
                    "points": [{"setting": p.setting, "recall": p.recall, "qps": p.qps} for p in c.points]}
                   for c in data.curves],
        "relative": [{"target": r.target, "family": r.family, "label": r.label, "what": r.what,
                      "estimate": _est_json(r.estimate), "status": r.status} for r in data.relatives],
        "runs": [{"target": r.target, "repeat": r.repeat, "status": r.status, "elapsed_s": r.elapsed_s,
                  "error": r.error, "position": r.position, **r.record} for r in data.runs],
    }


def render_json(data: VectorReport) -> str:
    return json.dumps(to_json(data), indent=2, ensure_ascii=False) + "\n"


DASHES = ("", "6,3", "2,3", "8,3,2,3")  # one per family, the color per target


def recall_chart(data: VectorReport, width: int = 760, height: int = 320) -> str:
    """Recall@k across, QPS up (log scale), one line per target and family through its search
    settings' frontier, every setting a point, as ann-benchmarks plots; an SVG string ("" when
    nothing was measured)."""
    points = [p for c in data.curves for p in c.points if p.qps > 0]
    if not points:
        return ""
    x_lo = max(0.0, math.floor(min(p.recall for p in points) * 20) / 20)
    q_lo, q_hi = min(p.qps for p in points), max(p.qps for p in points)
    y_lo, y_hi = 10 ** math.floor(math.log10(q_lo)), 10 ** math.ceil(math.log10(q_hi) + 1e-9)
    families = sorted({c.family for c in data.curves})
    lines = []
    for c in data.curves:
        name = f"{c.target}: {c.label}"
        shown = [p for p in c.points if p.qps > 0]
        lines.append(Series(name, color_of(data, c.target), tuple(
            Point(p.recall, p.qps, f"{name} {p.setting}: recall {p.recall:.3f}, {p.qps:,.0f} QPS") for p in shown),
            line=tuple(Point(p.recall, p.qps) for p in frontier(shown)), width=1.6,
            dash=DASHES[families.index(c.family) % len(DASHES)], dot=2.6))
    decades = tuple((10.0 ** e, f"{10.0 ** e:,.0f}")
                    for e in range(round(math.log10(y_lo)), round(math.log10(y_hi)) + 1))
    recalls = tuple((x, f"{x:.2f}") for x in steps(x_lo, 1.0, 0.05))
    return xy_chart(lines, "recall@k against queries per second", Axis(x_lo, 1.0, recalls, "recall@k"),
                    Axis(y_lo, y_hi, decades, "QPS (log)", log=True), width, height, ("", "QPS"))


def charts(data: VectorReport) -> list[str]:
    chart = recall_chart(data)
    return [("<h2>Recall against QPS</h2><p class=\"sub\">each point one search setting (means over ok repeats); "
             "lines join each curve's frontier; up and to the right is better</p><figure>" + chart + "</figure>")
            ] if chart else []


REPORT = ReportSkeleton("Vector search", "vector search", blocks, render_csv, render_json,
                        ("QPS at the recall", "rQPS", "recall"), charts, facts, failed="repeats")
render_text, render_html = REPORT.text, REPORT.html


def render(data: VectorReport, fmt: str) -> str:
    """The report in `fmt` (the Workload's render_report): a module-level function, so that the
    Workload pickles equal to itself for a cluster unit (a bound method of REPORT would not)."""
    return REPORT.render(data, fmt)
