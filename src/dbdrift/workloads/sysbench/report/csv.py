"""CSV report: one line per (test, threads, target) with absolute value, rQPS and its detectable
change, its change in basis points (`bp`, 0.01 of rQPS each, as the posts count them) and its
place in the "in words" lines (`in_words`: `largest regression` ..., empty when they do not name
it); an instruction count's line has no detectable change (a count has no interval). A line
whose target and reference were built by different packagers names both (`packager`,
`reference_packager`; the other formats' B). A default that differs between a target and its
reference (measure `setting`) fills only its own columns (`setting`, `setting_category`,
`setting_kind`, `setting_reference`, `setting_target`), which every other line leaves empty. With
--metrics, a measured perf counter (measure `perf`) has a line per counter and target: its count
per query in `value`, a compared target's ratio to its reference in `rqps` and whether the change
matters to the time per operation in `explanation` (analysis/perfcost.py). A campaign planned to
detect with the sequential rule adds where each compared cell stopped (`stopped`: decided, cap or
budget; `stop_outcome`: different, same or unknown; `stop_starts`). Every
line ends with the campaign columns (report/envelope.py), as every workload's CSV does."""
from __future__ import annotations

import io

from dbdrift.analysis.hardware import DERIVED, METRIC_DIGITS, SYSBENCH_METRICS, MetricsRow
from dbdrift.analysis.instructions import InstructionRow
from dbdrift.analysis.perfcost import CounterChange, perf_changes
from dbdrift.analysis.relative import RelativeRow
from dbdrift.report.drift import setting_value
from dbdrift.report.envelope import CampaignCsv
from dbdrift.report.numbers import fmt_fixed
from dbdrift.results.targets import packager_change
from dbdrift.workloads.sysbench.report.words import cell_bp, cell_ranks
from dbdrift.workloads.sysbench.results.data import ReportData
from dbdrift.workloads.sysbench.results.findings import instruction_cells, instruction_why


def render_csv(data: ReportData) -> str:
    """Name first, then values; long format so any tool can pivot it. Columns are named as the
    JSON report's row fields are; the report's context closes every line."""
    buf = io.StringIO()
    writer = CampaignCsv(buf, "sysbench", data.campaign, data.meta)
    extra = _extra_header(data)
    blank = [""] * len(SETTING_COLUMNS)  # a line that is no setting's
    columns = ["test", "group", "threads", "measure", "target", "reference", "metric", "value", "value_lower",
               "value_upper", "rqps", "rqps_lower", "rqps_upper", "verdict", "detectable_change", "method",
               "samples", "runs", "failed", "skipped", "status", "plan_changed", "rqps_typical", "bursty",
               "excluded_intervals", "packager", "reference_packager", "explanation", "bp", "in_words", *extra,
               *SETTING_COLUMNS]
    writer.header(columns)
    ranks = cell_ranks(data)
    for row, cell in data.cells():
        tput, est = cell.throughput, cell.estimate
        writer.writerow([
            row.test, row.group, row.threads, "timed", cell.target, cell.reference or "", row.metric,
            _num(cell.absolute.value, 2), _num(tput.lower, 2), _num(tput.upper, 2),
            _num(cell.ratio, 4), _num(est.lower if est else None, 4), _num(est.upper if est else None, 4),
            cell.verdict or "", _num(cell.detectable, 4), est.method if est else "", est.n if est else "",
            cell.absolute.runs, cell.absolute.failed, cell.absolute.skipped, row.status(cell.target) or "ok",
            int(cell.plan_changed), _num(est.typical if est else None, 4), int(bool(est and est.bursty)),
            tput.dropped_intervals, *_packagers(cell.packagers), data.why(row.test, row.threads, cell.target) or "",
            _num(cell_bp(cell), 2), ranks.get((row.test, row.threads, cell.target), ""),
            *(_extra(data, row, cell.target) if extra else ()), *blank,
        ])
    for irow, target, verdict in instruction_cells(data):
        assert isinstance(irow, InstructionRow)  # instruction_cells yields the data's rows, typed as object
        cost = irow.costs.get(target)
        reference = irow.references.get(target, "")
        writer.writerow([
            irow.test, data.group_of(irow.test) or "", "", "instructions", target, reference, "instr/event",
            _num(cost.ir_per_event if cost else None, 1), "", "", "", "", "", verdict or "", "", "callgrind", "",
            "", "", "", "ok" if cost else "not measured", "", "", "", "",
            *_packagers(packager_change(data.packagers, target, reference)), instruction_why(irow, target), "", "",
            *(_instruction_extra(data, irow, target) if extra else ()), *blank,
        ])
    for lrow in data.layers:  # a family's split: one line per part, its test "<family> per statement"
        for name, part in lrow.parts.items():
            unit = ("instr" if lrow.measure == "instructions" else "s") + f"/{name.split()[1]}"
            writer.writerow([
                f"{lrow.family} {name}", data.group_of(lrow.tests[0]) if lrow.tests else "", "",
                "instructions" if lrow.measure == "instructions" else "timed", lrow.target, lrow.reference, unit,
                _num(part.new, 9), "", "", _num(part.ratio, 5), _num(part.lower, 5), _num(part.upper, 5),
                part.verdict, "", "least squares over " + ", ".join(lrow.tests), "", "", "", "",
                "ok" if part.ratio is not None else "not measured", "", "", "", "",
                *_packagers(packager_change(data.packagers, lrow.target, lrow.reference)), part.status, "", "",
                *([""] * len(extra)), *blank,
            ])
    for mrow, target, change in _perf_lines(data):  # a measured perf counter: one line per counter per target
        writer.writerow([
            mrow.test, data.group_of(mrow.test) or "", mrow.threads, "perf", target, mrow.references.get(target, ""),
            change.counter if change.counter in DERIVED else f"{change.counter}/query", _num(change.new, 6), "", "", _num(change.ratio, 4), "", "", "", "", "perf stat",
            "", "", "", "", "ok" if change.new is not None else "not measured", "", "", "", "", "", "",
            change.note() if target in mrow.references else "", *([""] * len(extra)), *blank,
        ])
    width = len(columns) - len(SETTING_COLUMNS)  # the columns before the setting's own, empty on its line
    for table in data.drift:  # a default that differs: one line per setting, measure "setting"
        for d in table.rows:
            shared = {3: "setting", 4: table.target, 5: table.reference}
            writer.writerow([*(shared.get(i, "") for i in range(width)), d.name, d.category, d.kind,
                             setting_value(d.reference), setting_value(d.target)])
    return buf.getvalue()


def _perf_lines(data: ReportData) -> list[tuple[MetricsRow, str, CounterChange]]:
    """With --metrics: each target's measured counters per query; a compared target's carry its
    ratio to the reference (in `rqps`, as a layer's line does) and the note whether it matters
    (in `explanation`)."""
    if not data.show_metrics:
        return []
    out = []
    for mrow in data.metrics:
        changes = perf_changes(mrow, data.comparison.judging.min_effect)
        for target, counters in mrow.perf.items():
            for name in sorted(counters):
                out.append((mrow, target, changes.get(target, {}).get(name)
                            or CounterChange(name, None, counters[name], None, None, None, None)))
    return out


def _packagers(packagers: tuple[str, str] | None) -> tuple[str, str]:
    """The `packager` and `reference_packager` of a line whose two sides were built by different
    packagers (the reports' B); empty otherwise."""
    return (packagers[1], packagers[0]) if packagers else ("", "")


def _instruction_extra(data: ReportData, irow: InstructionRow, target: str) -> list[str]:
    """A count's line: instructions per event and its ratio; the hardware columns stay empty."""
    cost = irow.costs.get(target)
    out = [_num(cost.ir_per_event if cost else None, 1), _num(irow.relative.get(target), 5)]
    return out + [""] * ((2 * len(SYSBENCH_METRICS) if data.show_metrics else 0) + (len(STOP_COLUMNS) if data.stops else 0))


SETTING_COLUMNS = ("setting", "setting_category", "setting_kind", "setting_reference", "setting_target")
"""A default that differs (report/drift.py): its name, category, how it differs, and its value on
each side (`(none)` where that server has no such setting)."""


def _extra_header(data: ReportData) -> list[str]:
    """Instruction counts when any were stored; hardware per operation with --metrics."""
    cols = ["instr_per_event", "instr_rel"] if data.instructions else []
    if data.show_metrics:
        cols += list(SYSBENCH_METRICS) + [f"{m}_rel" for m in SYSBENCH_METRICS]
    if data.stops:
        cols += list(STOP_COLUMNS)
    return cols


STOP_COLUMNS = ("stopped", "stop_outcome", "stop_starts")  # a sequential detect campaign: where each cell stopped


def _extra(data: ReportData, row: RelativeRow, target: str) -> list[str]:
    out = []
    if data.instructions:
        irow = data.instruction_row(row.test)
        cost = irow.costs.get(target) if irow else None
        out += [_num(cost.ir_per_event if cost else None, 1), _num(irow.relative.get(target) if irow else None, 5)]
    if data.show_metrics:
        mrow = next((m for m in data.metrics if m.test == row.test and m.threads == row.threads), None)
        absolute = mrow.absolute.get(target, {}) if mrow else {}
        relative = mrow.relative.get(target, {}) if mrow else {}
        out += [_num(absolute.get(m), METRIC_DIGITS[m]) for m in SYSBENCH_METRICS]
        out += ["inf" if relative.get(m) == float("inf") else _num(relative.get(m), 4) for m in SYSBENCH_METRICS]
    if data.stops:
        stop = data.stops.get((row.test, row.threads)) if target in data.comparison.references else None
        out += [str(stop["why"]), str(stop["outcome"]), str(stop["starts"])] if stop else ["", "", ""]
    return out


def _num(value: float | None, digits: int) -> str:
    return fmt_fixed(value, digits, missing="")  # an empty CSV field, not "-", for a missing value
