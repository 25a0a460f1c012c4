"""CSV report: one line per (test, threads, target) with absolute value and rQPS."""
from __future__ import annotations

import csv
import io

from dbdrift.report.table import ReportData


def render_csv(data: ReportData) -> str:
    """Name first, then values (spec §4.1 CSV variants); long format so any tool can pivot it."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["test", "group", "threads", "target", "reference", "metric", "value", "value_lower",
                     "value_upper", "rqps", "rqps_lower", "rqps_upper", "verdict", "runs", "failed"])
    comp = data.comparison
    for threads in data.thread_counts():
        for group in data.group_order:
            for row in data.rows_in(group, threads):
                for target in comp.targets:
                    cell = row.values[target]
                    tput = row.throughputs.get(target)
                    est = row.estimates.get(target)
                    writer.writerow([
                        row.test, row.group, row.threads, target, row.references.get(target, ""), row.metric,
                        _num(cell.value, 2), _num(tput and tput.lower, 2), _num(tput and tput.upper, 2),
                        _num(row.ratios.get(target), 4), _num(est and est.lower, 4), _num(est and est.upper, 4),
                        row.verdicts.get(target, ""), cell.runs, cell.failed,
                    ])
    return buf.getvalue()


def _num(value: float | None, digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"
