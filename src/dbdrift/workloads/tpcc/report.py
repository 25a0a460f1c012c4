"""TPROC-C report as text, Markdown, CSV, JSON and HTML: NOPM per target and relative to the
base, TPM, the hardware per new order, response times per transaction and the consistency
checks. Pure serializers of one `TpccReport` (workloads/tpcc/results.py); no I/O.

    render(data, fmt) -> str; render_text, render_csv, render_json, render_html (the formats' shape: report/skeleton.py)
"""
from __future__ import annotations

import io
import json

from dbdrift.analysis import flame_areas as areas
from dbdrift.analysis.tpcc import (HARDWARE, HOST, TargetSummary, flame_areas, hardware_per_new_order, host_cpu,
                                   nopm_series, procedures_table, run_dips)
from dbdrift.report.flamegraph import AREAS_LEGEND, AREAS_TITLE, areas_json
from dbdrift.report.events import DIPS_HEADER, DIPS_TITLE, dip_cells, dip_text, dips_json, engine_charts
from dbdrift.model import JsonObject, TPCC_TRANSACTIONS as TRANSACTIONS
from dbdrift.report.caveats import finding_mark
from dbdrift.report.numbers import fmt_fixed, fmt_ms
from dbdrift.report.charts import Line, time_chart
from dbdrift.report.drift import drift_json
from dbdrift.report.skeleton import ReportSkeleton
from dbdrift.report.workload import (campaign_csv, color_of, findings_json, json_envelope, VERDICT_COLUMNS, verdict_cells,
                                     verdicts_legend)
from dbdrift.workloads.tpcc.results import TpccReport

HARDWARE_LEGEND = ("per new order in the measured window: cpu/no host CPU µs (user + system, every CPU), "
                   "server/no and client/no the server's and the driver's process CPU µs, client% the driver's "
                   "share of those two, bg/no the server's background CPU µs (vacuum, checkpoints, flushing, purge) "
                   "and bg% its share of the server's CPU, cs/no context switches, wkb/no KB written to the data "
                   "directory's device (device-wide: every process's writes; notes marked ! name foreign I/O), "
                   "fl/no and fl/s cache flushes (fsyncs) per new order and per second, w_ms ms per write, aqu "
                   "the device's average queue depth")
DIPS_LEGEND = ("per run (#repeat): the seconds NOPM fell below 80% of its median, and the engine events (a vacuum "
               "of a table, a checkpoint, a burst of WAL or redo, a fall of purge lag or dirty pages) that started "
               "within each dip (widened by 1 s either side) and within the peak before it (the last seconds at or "
               "above the median), against how many would by chance")
HOST_LEGEND = ("the host's CPU as vmstat shows it: cpu/no host CPU µs per new order (user + system, every CPU) and "
               "us/no, sy/no its user and system parts; cpuPer = ((us + sy) / NOPM) * 1000 as the posts compute it; "
               "us and sy the mean user and system CPU % of all CPUs, r the mean runnable count (running or waiting "
               "for a CPU, the sampler included, as vmstat's r), cs/s context switches per second")
HOST_DIGITS = {"cpu/no": 0, "us/no": 0, "sy/no": 0, "cpuPer": 3, "us": 1, "sy": 1, "r": 2, "cs/s": 0}
PROCEDURES_TITLE = "NOPM and cpuPer without and with stored procedures"
PROCEDURES_LEGEND = ("per DBMS, the transactions sent as statements by the driver (sp0) and run as stored procedures "
                     "(sp1), as the posts' table: NOPM, sp1's NOPM over sp0's, and cpuPer = ((us + sy) / NOPM) * 1000")
PROCEDURES_HEADER = ["DBMS", "NOPM sp0", "NOPM sp1", "sp1/sp0", "cpuPer sp0", "cpuPer sp1"]
HARDWARE_DIGITS = {"cpu/no": 0, "server/no": 0, "client/no": 0, "client%": 1, "bg/no": 0, "bg%": 1, "cs/no": 2,
                   "wkb/no": 2, "fl/no": 3, "fl/s": 1, "w_ms": 2, "aqu": 2}


def blocks(data: TpccReport) -> list[tuple[str, str, list[str], list[list[str]]]]:
    """(title, legend, header, rows) of the tables every text format shows."""
    base = data.targets[0]
    rows = []
    for s in data.summaries:
        rel = "1.00" if s.target == base and s.nopm is not None else "-"
        if s.relative is not None and s.relative.value is not None:
            rel = f"{s.relative.value:.2f}"
            if s.relative.lower is not None and s.relative.upper is not None:
                rel += f" [{s.relative.lower:.2f},{s.relative.upper:.2f}]"
        checks = {True: "passed", False: "FAILED", None: "-"}[s.consistency_ok]
        found = data.verdict(s.target)
        rel += f" {finding_mark(found)}" if found else ""
        rows.append([data.label(s.target), fmt_fixed(s.nopm, 0, thousands=True), rel, fmt_fixed(s.tpm, 0, thousands=True), f"{s.runs}" + (
            f" ({s.failed} failed)" if s.failed else ""), checks])
    out = [("NOPM and TPM", f"NOPM: new orders per minute; TPM: transactions per minute (all five types); "
            f"rNOPM: NOPM ÷ the base's ({data.label(base)}), with a 95% interval over repeats when there are some; "
            + verdicts_legend(data),
            ["target", "NOPM", "rNOPM", "TPM", "runs", "consistency"], rows)]
    hw = [[data.label(s.target), *(fmt_fixed(s.hardware.get(m), HARDWARE_DIGITS[m], thousands=True) for m in HARDWARE)]
          for s in data.summaries]
    out.append((f"hardware per new order (host CPUs: {data.ncpu})", HARDWARE_LEGEND, ["target", *HARDWARE], hw))
    host = [[data.label(s.target), *(fmt_fixed(s.host.get(m), HOST_DIGITS[m], thousands=True) for m in HOST)]
            for s in data.summaries]
    out.append(("host CPU (vmstat)", HOST_LEGEND, ["target", *HOST], host))
    sp = procedures_table(data.summaries)
    if sp:
        out.insert(1, (PROCEDURES_TITLE, PROCEDURES_LEGEND, PROCEDURES_HEADER, [
            [r.name, fmt_fixed(r.nopm[False], 0, thousands=True), fmt_fixed(r.nopm[True], 0, thousands=True),
             fmt_fixed(r.ratio, 2), fmt_fixed(r.cpu_per[False], 3), fmt_fixed(r.cpu_per[True], 3)] for r in sp]))
    for tx in TRANSACTIONS:
        lat = [[data.label(s.target), str(s.latency[tx].count), fmt_ms(s.latency[tx].p50_us), fmt_ms(s.latency[tx].p95_us),
                fmt_ms(s.latency[tx].p99_us), fmt_ms(s.latency[tx].max_us), str(s.latency[tx].errors),
                str(s.latency[tx].rollbacks)] for s in data.summaries if tx in s.latency]
        if lat:
            out.append((f"{tx} response time (ms)", "", ["target", "count", "p50", "p95", "p99", "max", "errors",
                                                          "rollbacks"], lat))
    flames = flame_areas(data.results, data.targets)
    if flames:
        unread = areas.shallow(flames)
        note = (f"; {', '.join(data.label(t) for t in unread)}: most samples reach no known frame, as perf's stacks "
                "of a build without frame pointers stop at the function sampled, so their areas cannot be told"
                if unread else "")
        out.append((AREAS_TITLE, AREAS_LEGEND + "; each target's repeats merged, the base's column first" + note,
                    ["area", *(data.label(t) for t, _ in flames)], areas.table(flames)))
    dips = [[f"{data.label(r.target)} #{r.repeat + 1}", *dip_cells(d)] for r in data.results for d in run_dips(r)]
    if dips:
        out.append((DIPS_TITLE, DIPS_LEGEND, DIPS_HEADER, dips))
    return out


HOST_ONLY = tuple(m for m in HOST if m not in HARDWARE)  # cpu/no is a hardware column already
CSV_HEADER = ("target", "repeat", "status", "warehouses", "clients", "procedures", "elapsed_s", "new_orders",
              "transactions", "nopm", "tpm", "load_s", "consistency_ok", *HARDWARE, *HOST_ONLY, *(f"flame_{a}" for a in areas.ROWS), "error", "dips", *VERDICT_COLUMNS,
              "notes")


def render_csv(data: TpccReport) -> str:
    """One row per stored run; the hardware columns are that run's own, `verdict` and
    `detectable_change` are its target's NOPM verdict against the base and that verdict's
    detectable change (empty for the base), `notes` the report's, on every line."""
    buf = io.StringIO()
    writer = campaign_csv(buf, data)
    writer.header(CSV_HEADER)
    for r in data.results:
        hw = hardware_per_new_order([r], data.ncpu)
        host = host_cpu([r], data.ncpu)
        flame = areas.shares(r.folded) if r.folded else None
        writer.writerow([r.target, r.repeat, r.status, r.warehouses, r.clients, str(r.procedures).lower(),
                         round(r.elapsed_s, 3), r.new_orders, r.transactions, round(r.nopm, 3), round(r.tpm, 3),
                         "" if r.load_s is None else round(r.load_s, 3),
                         str(all(c.get("ok") for c in r.consistency)).lower() if r.consistency else "",
                         *("" if (v := hw[m]) is None else round(v, 4) for m in HARDWARE),
                         *("" if (v := host[m]) is None else round(v, 4) for m in HOST_ONLY),
                         *("" if flame is None else round(flame.share(a), 4) for a in areas.ROWS), r.error or "",
                         dip_text(run_dips(r)), *verdict_cells(data, r.target), " | ".join(data.notes)])
    for target in data.targets:  # a target without a stored run (never started, interrupted) still has its line
        if not any(r.target == target for r in data.results):
            writer.writerow([target, "", "not run", *[""] * (len(CSV_HEADER) - 4 - len(VERDICT_COLUMNS)),
                             *verdict_cells(data, target),
                             " | ".join(data.notes)])
    return buf.getvalue()


def to_json(data: TpccReport) -> JsonObject:
    def est(s: TargetSummary) -> JsonObject | None:
        if s.relative is None:
            return None
        return {"value": s.relative.value, "lower": s.relative.lower, "upper": s.relative.upper,
                "method": str(s.relative.method), "n": s.relative.n}
    return {
        **json_envelope(data), "setup": data.setup, "ncpu": data.ncpu, "default_drift": drift_json(data.drift),
        "verdicts": findings_json(data),
        "targets": [{
            "name": s.target, "label": data.labels.get(s.target, ""), "runs": s.runs, "failed": s.failed,
            "nopm": s.nopm, "tpm": s.tpm, "relative_nopm": est(s), "hardware": s.hardware, "host": s.host,
            "procedures": s.procedures,
            "latency_us": {tx: vars(lat) for tx, lat in s.latency.items()}, "consistency_ok": s.consistency_ok,
            "errors": s.errors} for s in data.summaries],
        "flame_areas": {t: areas_json(a) for t, a in flame_areas(data.results, data.targets)},
        "procedures_table": [{"dbms": r.name, "nopm_sp0": r.nopm[False], "nopm_sp1": r.nopm[True],
                              "sp1_over_sp0": r.ratio, "cpu_per_sp0": r.cpu_per[False], "cpu_per_sp1": r.cpu_per[True]}
                             for r in procedures_table(data.summaries)],
        "runs": [{"target": r.target, "repeat": r.repeat, "status": r.status, "nopm": r.nopm, "tpm": r.tpm,
                  "new_orders": r.new_orders, "transactions": r.transactions, "elapsed_s": r.elapsed_s,
                  "load_s": r.load_s, "consistency": r.consistency, "error": r.error, "hardware": r.hardware,
                  "by_type": r.by_type, "intervals": r.intervals, "engine_events": r.events,
                  "dips": [dips_json(d) for d in run_dips(r)]} for r in data.results],
    }


def render_json(data: TpccReport) -> str:
    return json.dumps(to_json(data), indent=2, ensure_ascii=False) + "\n"


def charts(data: TpccReport) -> list[str]:
    """NOPM per interval of each target's last repeat, the engine's counters under it."""
    lines, shown = [], {}
    for t in data.targets:
        run = next((r for r in reversed(data.results) if r.target == t and r.intervals), None)
        if run is not None:
            xs, ys = nopm_series(run)
            lines.append(Line(t, xs, ys, color_of(data, t)))
            shown[t] = run.events
    if not lines:
        return []
    engine = engine_charts(shown, {t: color_of(data, t) for t in shown}, "TPROC-C")
    return ["<h2>NOPM per interval</h2><p class=\"sub\">ramp-up included; one repeat per target (the last); under "
            "it, the engine's own counters on the same seconds</p><figure>"
            + time_chart(lines, "NOPM per interval", "NOPM", width=760, height=240) + "</figure>"
            + ('<div class="charts">' + "".join(f"<figure>{c}</figure>" for c in engine) + "</div>" if engine else "")]


REPORT = ReportSkeleton("TPROC-C", "TPROC-C", blocks, render_csv, render_json, ("NOPM", "rNOPM", "comparison"), charts)
render_text, render_html = REPORT.text, REPORT.html


def render(data: TpccReport, fmt: str) -> str:
    """The report in `fmt` (the Workload's render_report): a module-level function, so that the
    Workload pickles equal to itself for a cluster unit (a bound method of REPORT would not)."""
    return REPORT.render(data, fmt)
