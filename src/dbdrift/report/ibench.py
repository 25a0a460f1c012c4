"""Insert Benchmark report (its three summary tables, then per-step details) as text, Markdown,
CSV and JSON: pure serializers of one `IBenchReport`, which holds everything computed once by
analysis/ibench.py. No I/O.

    data = ibench_report(results, targets, labels, ncpu, campaign)
    render_text(data), render_markdown(data), render_csv(data), render_json(data) -> str
    to_json(data) -> dict (JSON-ready; render_json dumps it)

`targets` is the report order and its first entry the base of the relative table; `labels` maps
a target to what it is ("postgres 17.10"); `ncpu` is the DB host's CPU count (cpupq, §3.3).
Text has no colors: each summary cell carries a one-character mark explained in a legend.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass

from dbdrift.analysis.ibench import (BUCKET_LABELS, COLORS, METRICS, OPS, IBenchSummary, StepDetail, SummaryTable,
                                     index_results, per_second_series, sla_met, step_detail, summary_tables)
from dbdrift.model import IBENCH_STEPS, InsertStepResult
from dbdrift.report.caveats import verdict_counts, verdict_legend, verdict_lines
from dbdrift.report.numbers import fmt_abs, fmt_fixed, fmt_ratio
from dbdrift.results.findings import CAMPAIGN, Finding, ibench_findings

STEP_CAPTIONS = {
    "l.i0": "load without secondary indexes",
    "l.x": "create secondary indexes",
    "l.i1": "continue load with secondary indexes, 50 inserts per transaction",
    "l.i2": "continue load with secondary indexes, 5 inserts per transaction",
    **{f"{kind}{rate}": f"{what} queries with {rate} insert/s per client"
       for rate in (100, 500, 1000) for kind, what in (("qr", "range"), ("qp", "point"))},
}

TABLES = ("throughput", "relative", "background", "writes")
TITLES = {
    "throughput": "absolute throughput (l.i0, l.i1, l.i2: inserts/s; l.x: indexed rows/s; qr/qp: queries/s)",
    "relative": "relative throughput (each value ÷ the base's: {base})",
    "background": "background insert rate during the qr/qp steps (inserts/s; last row: the target rate)",
    "writes": "KB written per insert and database size in GiB (then each target ÷ the base: {base})",
}
MARKS = {"throughput": {"green": "+", "red": "-", "gray": "."}, "relative": {"blue": "^", "yellow": "v"},
         "background": {"red": "-"}, "writes": {"blue": "^", "yellow": "v"}}
LEGENDS = {
    "throughput": "marks: + top quarter of the column's range, - bottom quarter (none when min >= 80% of max), "
                  ". insert-rate SLA missed (left out of the column's max)",
    "relative": "marks: ^ above 105% of the base, v below 95%",
    "background": "marks: - below 95% of the target rate (SLA missed)",
    "writes": "wkbpi: KB written to storage per inserted row in the step; dbgb1: the benchmark database, dbgb2: "
              "the data directory, after the step; marks on the ÷ rows: ^ above 105% of the base (more written, "
              "bigger), v below 95%",
}
INTERVAL_LEGEND = " [95% interval over the repeats]"
METRIC_DIGITS = {"ips": 0, "qps": 0, "rps": 0, "rmbps": 1, "wps": 1, "wmbps": 1, "rpq": 3, "rkbpq": 3, "wpi": 3,
                 "wkbpi": 3, "csps": 0, "cpups": 1, "cspq": 3, "cpupq": 0, "dbgb1": 3, "dbgb2": 3, "rss": 1, "maxop": 3, "p50": 0, "p99": 0}
"""Decimals per metric, as `etl.sh` prints its line."""
STEP_LEGEND = ("per step: response-time tables give the % of that operation's responses per bucket, their count and "
               "the max in seconds; metrics: rps/wps storage reads/writes per s, rmbps/wmbps MB/s, "
               "rpq/rkbpq reads and KB read per op, wpi/wkbpi writes and KB written per insert, csps/cspq context "
               "switches per s and per op, cpups host CPU %, cpupq host CPU µs per op, dbgb1 the benchmark database "
               "and dbgb2 the whole data directory after the step in GiB, rss server GB, maxop worst "
               "response in s, p50/p99 client 1's per-second rate sorted fastest first (p99: a near-worst second); "
               "op = insert for l.* steps, query for qr/qp")


@dataclass(frozen=True)
class IBenchReport:
    """One campaign's Insert Benchmark results with everything the formats render."""

    campaign: str
    targets: tuple[str, ...]
    labels: dict[str, str]
    ncpu: int
    summary: IBenchSummary
    results: dict[tuple[str, str], InsertStepResult]  # (target, step) -> result, any status
    details: dict[tuple[str, str], StepDetail]
    notes: tuple[str, ...] = ()  # host and run warnings, the no-interval note (results/build.py)
    findings: tuple[Finding, ...] = ()  # per target but the base and step: its verdict (results/findings.py)
    min_effect: float = 0.02
    noisy: float = 0.05

    def verdict_legend(self) -> str:
        return verdict_legend("each step's rate", self.min_effect, self.noisy)

    def verdict(self, target: str, step: str) -> Finding | None:
        return next((f for f in self.findings if f.target == target and f.test == step), None)

    def label(self, target: str) -> str:
        extra = self.labels.get(target)
        return f"{target} ({extra})" if extra else target

    def steps(self) -> list[str]:
        """Steps at least one target has a result for, in run order."""
        return [s for s in IBENCH_STEPS if any((t, s) in self.results for t in self.targets)]


def ibench_report(results: list[InsertStepResult], targets: list[str], labels: dict[str, str] | None = None,
                  ncpu: int = 1, campaign: str = "", notes: tuple[str, ...] = (), min_effect: float = 0.02,
                  noisy: float = 0.05, planned: tuple[str, ...] = ()) -> IBenchReport:
    """Summary tables, verdicts and per-step details of `results` (any status; other targets are
    ignored); `planned`: the campaign's steps, each judged even when no target ran it."""
    indexed = index_results(results, targets)
    details = {key: step_detail(r, ncpu) for key, r in indexed.items()}
    summary = summary_tables(results, targets, ncpu)
    found = tuple(ibench_findings(summary, min_effect, noisy, planned, campaign))
    notes = tuple(f.line() for f in found if f.measure == CAMPAIGN) + tuple(notes)  # every format shows notes
    return IBenchReport(campaign, tuple(targets), dict(labels or {}), ncpu, summary, indexed, details, notes, found,
                        min_effect, noisy)


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
            rows.append([data.label(row) if row in data.targets else row,
                         *(_marked(_cell_text(name, row in data.targets, header, c), MARKS[name].get(c.color))
                           for header, c in zip(table.columns, cells))])
        title = TITLES[name].format(base=data.label(data.summary.base))
        blocks.append((title, table_legend(name, table), ["target", *table.columns], rows))
    return blocks


def table_legend(name: str, table: SummaryTable) -> str:
    """The legend of summary table `name`; the relative one says when its cells carry intervals."""
    if name == "relative" and any(c.lower is not None for cells in table.rows.values() for c in cells):
        return LEGENDS[name] + INTERVAL_LEGEND
    return LEGENDS[name]


def _cell_text(table: str, is_target: bool, header: str, cell) -> str:
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
    return blocks


def _status_label(data: IBenchReport, target: str, step: str) -> str:
    status = data.details[(target, step)].status
    return data.label(target) + ("" if status == "ok" else f" [{status}]")


def fmt_metric(name: str, value: float | None) -> str:
    return fmt_fixed(value, METRIC_DIGITS[name])


# --- text ---------------------------------------------------------------------------------


def render_text(data: IBenchReport) -> str:
    out = [f"campaign: {data.campaign}"] if data.campaign else []
    out += [f"Insert Benchmark; relative to: {data.label(data.summary.base)}", *data.notes, "", "== summary =="]
    for title, legend, header, rows in summary_blocks(data):
        out += [f"-- {title}", legend, *_aligned(header, rows), ""]
    if data.findings:
        out += [f"-- verdicts: {verdict_counts(data.findings)}", data.verdict_legend(),
                *(f"  {line}" for line in verdict_lines(data.findings)), ""]
    if data.summary.missing:
        out += ["steps without a value:", *(f"  {line}" for line in missing_lines(data)), ""]
    out += [STEP_LEGEND, ""]
    for step in data.steps():
        out.append(f"== {step}: {STEP_CAPTIONS[step]} ==")
        for title, header, rows in step_blocks(data, step):
            out += [f"-- {title}", *_aligned(header, rows), ""]
    return "\n".join(out).rstrip() + "\n"


def _aligned(header: list[str], rows: list[list[str]]) -> list[str]:
    """Name column left-aligned, value columns right-aligned."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return ["  ".join([r[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(r[1:], widths[1:]))]).rstrip()
            for r in [header, *rows]]


# --- Markdown -----------------------------------------------------------------------------


def render_markdown(data: IBenchReport) -> str:
    out = [f"# Insert Benchmark: {data.campaign}" if data.campaign else "# Insert Benchmark", "",
           f"Relative to: {data.label(data.summary.base)}", ""]
    if data.notes:
        out += [*(f"- {note}" for note in data.notes), ""]
    out += ["## Summary", ""]
    for title, legend, header, rows in summary_blocks(data):
        out += [f"### {title}", "", f"*{legend}*", "", *_md_table(header, rows), ""]
    if data.findings:
        out += [f"### Verdicts: {verdict_counts(data.findings)}", "", f"*{data.verdict_legend()}*", "",
                *(f"- `{line}`" for line in verdict_lines(data.findings)), ""]
    if data.summary.missing:
        out += ["Steps without a value:", "", *(f"- {line}" for line in missing_lines(data)), ""]
    out += [f"*{STEP_LEGEND}*", ""]
    for step in data.steps():
        out += [f"## {step}: {STEP_CAPTIONS[step]}", ""]
        for title, header, rows in step_blocks(data, step):
            out += [f"### {title}", "", *_md_table(header, rows), ""]
    return "\n".join(out).rstrip() + "\n"


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1),
            *("| " + " | ".join(c.strip() for c in r) + " |" for r in rows)]


# --- CSV ----------------------------------------------------------------------------------

CSV_HEADER = ("target", "step", "status", "repeats", "elapsed_s", "ips", "dps", "qps", "target_ips", "sla_met",
              "relative", "relative_lower", "relative_upper",
              "p50", "p99", "maxop", *(m for m in METRICS if m not in ("ips", "qps", "maxop", "p50", "p99")),
              "verdict", "notes")


def render_csv(data: IBenchReport) -> str:
    """One row per (target, step) in report order; a step that never ran has status `not run`. The
    rates and metrics are of the repeat the details show; `relative` (and its interval) is over
    the repeats, `repeats` counts the ok ones; `verdict` is the step's against the base (empty
    for the base), `notes` the report's host and run warnings and interval notes, on every line."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for target in data.targets:
        for i, step in enumerate(IBENCH_STEPS):
            writer.writerow(_csv_row(data, target, step, data.summary.relative.rows[target][i]))
    return buf.getvalue()


def _csv_row(data: IBenchReport, target: str, step: str, relative) -> list[str]:
    result = data.results.get((target, step))
    found = data.verdict(target, step)
    tail = [str(found.verdict) if found else "", " | ".join(data.notes)]
    if result is None:
        return [target, step, "not run", *[""] * (len(CSV_HEADER) - 5), *tail]
    metrics = data.details[(target, step)].metrics
    met = sla_met(result)
    head = [target, step, result.status, str(data.summary.throughput.rows[target][IBENCH_STEPS.index(step)].repeats),
            _num(result.elapsed_s), _num(result.ips), _num(result.dps),
            _num(result.qps), _num(result.target_ips), "" if met is None else str(met).lower(), _num(relative.value),
            _num(relative.lower), _num(relative.upper)]
    return head + [_num(metrics[m]) for m in CSV_HEADER[len(head):-2]] + tail


def _num(value: float | None) -> str:
    return "" if value is None else str(round(value, 6))


# --- JSON ---------------------------------------------------------------------------------


def to_json(data: IBenchReport) -> dict:
    """The summary tables (values, color names, COLORS for their hex codes), the steps lacking a
    value, and per step and target: rates, SLA, histograms, metrics, client 1's per-second series
    and its 10 slice averages of i_ips, i_dps and i_qps — what charts need, nothing to recompute."""
    summary = data.summary
    return {
        "campaign": data.campaign, "base": summary.base, "ncpu": data.ncpu, "notes": list(data.notes),
        "min_effect": data.min_effect, "noisy_half_width": data.noisy, "verdicts": findings_json(data.findings),
        "targets": [{"name": t, "label": data.labels.get(t, "")} for t in data.targets],
        "colors": COLORS, "buckets": list(BUCKET_LABELS),
        "tables": {name: _table_json(getattr(summary, name)) for name in TABLES if getattr(summary, name) is not None},
        "missing": {t: [{"step": s, "why": why} for s, why in gaps] for t, gaps in summary.missing.items()},
        "steps": [{"step": step, "caption": STEP_CAPTIONS[step],
                   "targets": {t: _detail_json(data.results[(t, step)], data.details[(t, step)])
                               for t in data.targets if (t, step) in data.results}}
                  for step in data.steps()],
    }


def findings_json(found: tuple[Finding, ...]) -> list[dict]:
    """One object per verdict: where (step or NOPM), target, reference, verdict, ratio and interval."""
    return [{"measure": f.measure, "test": f.test, "target": f.target, "reference": f.reference, "verdict": str(f.verdict),
             "ratio": _round(f.ratio, 4), "lower": _round(f.lower, 4), "upper": _round(f.upper, 4),
             **({"status": f.status} if f.status else {})} for f in found]


def render_json(data: IBenchReport) -> str:
    return json.dumps(to_json(data), indent=2, ensure_ascii=False) + "\n"


def _table_json(table: SummaryTable) -> dict:
    return {"columns": list(table.columns),
            "rows": [{"name": name, "cells": [_cell_json(c) for c in cells]} for name, cells in table.rows.items()]}


def _cell_json(c) -> dict:
    out = {"value": _round(c.value, 4), "color": c.color}
    if c.lower is not None:
        out.update(lower=_round(c.lower, 4), upper=_round(c.upper, 4))
    if c.repeats > 1:
        out["repeats"] = c.repeats
    return out


def _detail_json(result: InsertStepResult, detail: StepDetail) -> dict:
    return {
        "status": result.status, "error": result.error, "clients": result.clients, "elapsed_s": result.elapsed_s,
        "ips": result.ips, "dps": result.dps, "qps": result.qps, "target_ips": result.target_ips,
        "sla_met": sla_met(result),
        "histograms": {h.op: {"counts": list(h.counts), "percents": [round(p, 3) for p in h.percents],
                              "responses": h.responses, "max_s": h.max_s} for h in detail.histograms},
        "metrics": {m: _round(v, 6) for m, v in detail.metrics.items()},
        "per_second": per_second_series(result),
        "slices": {key: [_round(v, 3) for v in values] for key, values in detail.slices.items()},
    }


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)
