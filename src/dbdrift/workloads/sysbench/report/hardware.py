"""Hardware sections shared by the text and Markdown reports: instructions per event (beside
each rQPS verdict, then where the instructions went) and per-operation metrics (docs/hardware.md)."""
from __future__ import annotations

from dbdrift.analysis.hardware import METRIC_DIGITS, SYSBENCH_METRICS, MetricsRow
from dbdrift.analysis.instructions import SIMULATED
from dbdrift.analysis.layers import pct
from dbdrift.analysis.noise import Verdict
from dbdrift.analysis.perfcost import perf_changes
from dbdrift.quantities import format_percent
from dbdrift.report.caveats import PACKAGER_LEGEND, detectable_mark, packager_mark
from dbdrift.report.numbers import fmt_fixed, fmt_ratio
from dbdrift.results.targets import packager_change
from dbdrift.workloads.sysbench.results.data import ReportData
from dbdrift.workloads.sysbench.results.findings import where_it_went

NO_VALUE = "n/a"  # an instruction table's empty cell: "-" there is the mark of a regression


def fmt_metric(name: str, value: float | None) -> str:
    if value is None:
        return "-"
    if value == float("inf"):
        return "inf"
    return fmt_fixed(value, METRIC_DIGITS.get(name, 3), thousands=True)


def instruction_table(data: ReportData) -> tuple[list[str], list[list[str]]]:
    """Header and rows: per test, each target's instructions/event, then for each compared
    target its instruction ratio with its verdict (instruction_verdict; a count has no interval,
    so no detectable change), beside the rQPS, verdict and detectable change of the timed runs."""
    comp = data.comparison
    timed_columns = comp.compared if data.timed else []  # counts only: no rQPS to put beside them
    header = [*comp.targets, *(f"{t} instr" for t in comp.compared), *(f"{t} rQPS" for t in timed_columns), "test"]
    rows = []
    for irow in data.instructions:
        timed = [r for r in comp.rows if r.test == irow.test]
        cells = [f"{irow.costs[t].ir_per_event:,.0f}" if t in irow.costs else NO_VALUE
                  for t in comp.targets]
        cells += [_with_mark(irow.relative.get(t), irow.verdicts.get(t))
                  + packager_mark(packager_change(data.packagers, t, irow.references.get(t))
                                  if irow.relative.get(t) is not None else None) for t in comp.compared]
        for t in timed_columns:
            cell = timed[0].cells[t] if timed else None
            if cell is not None and cell.ratio is not None:
                mark = cell.verdict.mark + detectable_mark(cell.verdict, cell.detectable) if cell.verdict else ""
                cells.append(f"{cell.ratio:.2f} {mark}{packager_mark(cell.packagers)}")
            else:
                cells.append(NO_VALUE)
        rows.append(cells + [irow.test])
    return header, rows


def instruction_legend(data: ReportData) -> str:
    """What the marks beside the instruction ratios say."""
    effect = format_percent(data.comparison.judging.min_effect)
    crossed = any(packager_change(data.packagers, t, r) for irow in data.instructions for t, r in irow.references.items())
    return (f"instr = new / reference instructions per event; - at least {effect} more (slower), + at least "
            f"{effect} fewer, = within {effect}, ~ a count whose two pairs differ by over half that; {NO_VALUE} no "
            "count" + (" or no timed result" if data.timed else "")
            + (f"; {PACKAGER_LEGEND} (a count moves with the compiler)" if crossed else ""))


def _with_mark(ratio: float | None, verdict: Verdict | None) -> str:
    return NO_VALUE if ratio is None else f"{ratio:.3f} {verdict.mark if verdict else ''}".rstrip()


def delta_lines(data: ReportData) -> list[str]:
    """`pg18 vs pg17, point-query: +1,500 instr/event (+3.3%), 92% of it in: f +345, g +305, ...`."""
    lines = []
    for irow in data.instructions:
        for target, delta in irow.deltas.items():
            ref = irow.references[target]
            total = delta["total_delta"]
            base_ir = irow.costs[ref].ir_per_event if ref in irow.costs else 0
            pct = f" ({100 * total / base_ir:+.1f}%)" if base_ir else ""
            head = f"{target} vs {ref}, {irow.test}: {total:+,.0f} instructions/event{pct}"
            same_way = delta["self"]["grew" if total > 0 else "shrank"]
            if delta["explained"] is not None and same_way:
                head += f"; {where_it_went(total, same_way)}"
            other = delta["self"]["shrank" if total > 0 else "grew"]
            if other:
                head += "; the other way: " + ", ".join(f"{r['function']} {r['delta']:+,.0f}" for r in other[:3])
            lines.append(head)
            inclusive = delta["inclusive"]["grew" if total > 0 else "shrank"]
            if inclusive:
                lines.append("  inclusive (with callees): "
                             + ", ".join(f"{r['function']} {r['delta']:+,.0f}" for r in inclusive))
            if target in irow.rechecked:
                lines.append(f"  {irow.rechecked[target]}")
    return lines


def metrics_blocks(data: ReportData) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) per test: absolute per target, then relative to the reference."""
    blocks = []
    header = [*SYSBENCH_METRICS, "target"]
    for mrow in data.metrics:
        rows = [[fmt_metric(m, values[m]) for m in SYSBENCH_METRICS] + [t] for t, values in mrow.absolute.items()]
        rows += [[fmt_ratio(values[m]) if values[m] != float("inf") else "inf" for m in SYSBENCH_METRICS]
                 + [f"{t} (relative)"] for t, values in mrow.relative.items()]
        blocks.append((f"{mrow.test} x{mrow.threads}", header, rows))
        if mrow.perf:
            blocks.append(perf_block(mrow, data.comparison.judging.min_effect))
    return blocks


def perf_block(mrow: MetricsRow, min_effect: float) -> tuple[str, list[str], list[list[str]]]:
    """The posts' perf-stat table: each measured counter per query per target, then each compared
    target's ratio to its reference ((value/query for new) / (value/query for base)) and whether
    that change, at the counter's cost, matters to the time per operation (analysis/perfcost.py)."""
    targets = list(mrow.perf)
    names = sorted({n for counters in mrow.perf.values() for n in counters})
    changes = perf_changes(mrow, min_effect)
    header = [*targets, *(f"{t}/{mrow.references[t]}" for t in changes), *(f"{t}: matters?" for t in changes),
              "counter"]
    rows = []
    for n in names:
        cells = [_perf_value(mrow.perf[t].get(n)) for t in targets]
        cells += [_ratio(changes[t][n].ratio) if n in changes[t] else "-" for t in changes]
        cells += [changes[t][n].note() if n in changes[t] else "-" for t in changes]
        rows.append(cells + [n])
    return f"{mrow.test} x{mrow.threads}: perf counters per query", header, rows


def _ratio(value: float | None) -> str:
    return "-" if value is None else fmt_ratio(value, 3)


PERF_LEGEND = ("perf counters per query: each counter's count over the runs that counted it ÷ their queries; "
               "new/reference: (value/query for new) / (value/query for reference); matters?: the change per "
               "query × what one event costs (an order-of-magnitude estimate: a context switch 3 µs, a major "
               "fault 100 µs, a minor fault 1 µs, an LLC miss 80 ns, a TLB miss 10 ns, a branch miss 5 ns, a "
               "cycle or instruction 0.33 ns) as a share of the reference's time per operation (server CPU µs "
               "per op, else perf's cpu-clock per query); it matters at the report's smallest effect or more, "
               "however large the ratio")


def simulated_blocks(data: ReportData) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) per test counted with cache simulation: each figure per event per
    target, then each compared target's ratio to its reference, as the posts' perf-stat tables."""
    blocks = []
    for irow in data.instructions:
        if not irow.simulated:
            continue
        targets = [t for t in data.comparison.targets if t in irow.simulated]
        compared = [t for t in targets if irow.references.get(t) in irow.simulated]
        header = [*targets, *(f"{t}/{irow.references[t]}" for t in compared), "per event"]
        rows = []
        for name, _ in SIMULATED:
            values = {t: irow.simulated[t].get(name) for t in targets}
            cells = [_perf_value(values[t]) for t in targets]
            for t in compared:
                base, value = values[irow.references[t]], values[t]
                cells.append(fmt_ratio(value / base, 3) if value is not None and base else "-")
            rows.append(cells + [name])
        blocks.append((f"{irow.test}: simulated by callgrind (cache and branch simulation, not measured)",
                       header, rows))
    return blocks


def _perf_value(value: float | None) -> str:
    return "-" if value is None else f"{value:,.3f}" if abs(value) < 100 else f"{value:,.0f}"


METRICS_LEGEND = ("cpu/o: host CPU busy % / ops; cs/o: context switches; r/o, rKB/o, wKB/o: storage "
                  "reads, KB read and written of the data directory's device, device-wide (every process's, "
                  "fio% of it not dbdrift's); o/s: ops per second (QPS, scan: Krps); "
                  "cpu_us/o: host CPU µs per op = cpu/o x ncpu x 10^4; srv_us/o, cli_us/o: CPU µs per op of the "
                  "server's processes and of the driver; bg_us/o: the server's background CPU µs per op (vacuum, "
                  "checkpoints, WAL and page flushing, purge) and bg%: its share of the server's CPU; fl/s, fl/o: "
                  "the device's cache flushes (fsyncs) per s and per op; r_ms, w_ms: ms per read and per write "
                  "(await); aqu: average queue depth; dsc/s: discards per s; fcpu%: the host's CPU time other "
                  "processes used (foreign load); fio%: the device's bytes no process of dbdrift's moved")


def metrics_legend(data: ReportData) -> str:
    """METRICS_LEGEND, and PERF_LEGEND when a test has perf counters."""
    return METRICS_LEGEND + (f". {PERF_LEGEND}" if any(m.perf for m in data.metrics) else "")


LAYER_TITLE = "per-statement and per-row cost (the layer that changed)"


def layer_legend() -> str:
    return ("tests that differ only in the rows each statement reads, fitted as cost per event = statements × "
            "per statement + rows × per row: per statement is what a statement costs whatever it reads (parse, plan, "
            "round trip, executor set-up), per row what each row adds (the storage engine, the executor per row). "
            "Instructions per event from callgrind (bounds: each count's repeatability carried through the fit); "
            "time: µs per event at the fewest clients, fitted per repeat (95% interval over repeats). Change: "
            "target ÷ reference - 1 (above 0: more work); misfit: the line's worst miss of a point")


def _cost(value: float | None, measure: str) -> str:
    if value is None:
        return "-"
    return fmt_fixed(value, 0 if abs(value) >= 100 else 2, thousands=True) if measure == "instructions" else \
        fmt_fixed(value * 1e6, 2)


def layer_table(data: ReportData) -> tuple[list[str], list[list[str]]]:
    """One line per family, target and measure: each part's reference and target values and the change."""
    header = ["family", "target", "measure", "per statement", "change", "per row", "change", "misfit"]
    rows = []
    for r in data.layers:
        cells = []
        for name in ("per statement", "per row"):
            p = r.parts[name]
            cells.append(f"{_cost(p.base, r.measure)} -> {_cost(p.new, r.measure)}")
            if p.ratio is None:
                cells.append(p.status or "-")
                continue
            change = pct(p.ratio)
            if p.lower is not None and p.upper is not None:
                change += f" [{pct(p.lower)[:-1]},{pct(p.upper)[:-1]}]"
            cells.append(f"{change} {p.verdict.mark}")
        rows.append([r.family, f"{r.target} vs {r.reference}", "instr" if r.measure == "instructions" else "µs",
                     *cells, "-" if r.misfit is None else f"{r.misfit * 100:.1f}%"])
    return header, rows


def aligned(header: list[str], rows: list[list[str]]) -> list[str]:
    """Right-aligned columns with the last (name) column left-aligned, for the text report."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    out = []
    for r in [header, *rows]:
        out.append("  ".join(c.rjust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    return out
