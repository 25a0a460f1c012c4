"""CSV report: one line per (test, threads, target) with absolute value and rQPS."""
from __future__ import annotations

import csv
import io

from dbdrift.report.table import ReportData


def render_csv(data: ReportData) -> str:
    """Name first, then values (spec §4.1 CSV variants); long format so any tool can pivot it."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["test", "group", "threads", "target", "reference", "metric", "value", "rqps", "runs", "failed"])
    comp = data.comparison
    for threads in data.thread_counts():
        for group in data.group_order:
            for row in data.rows_in(group, threads):
                for target in comp.targets:
                    cell = row.values[target]
                    ratio = row.ratios.get(target)
                    writer.writerow([
                        row.test, row.group, row.threads, target, row.references.get(target, ""), row.metric,
                        "" if cell.value is None else f"{cell.value:.2f}",
                        "" if ratio is None else f"{ratio:.4f}", cell.runs, cell.failed,
                    ])
    return buf.getvalue()
