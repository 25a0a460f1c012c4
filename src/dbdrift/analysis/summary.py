"""Per-group summary statistics of rQPS columns: min, max, mean, median, and the count of each
kind of verdict (docs/methodology.md, report layouts).

Method: plain order statistics over the rQPS values of a group's rows for one compared target;
rows with no ratio (failed run) are left out and counted. A group without any ratio has no
statistics (None), only its counts.
"""
from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean, median

from dbdrift.analysis.noise import Verdict
from dbdrift.analysis.relative import Comparison


@dataclass(frozen=True)
class GroupSummary:
    group: str
    threads: int
    target: str
    count: int
    missing: int
    min: float | None
    max: float | None
    mean: float | None
    median: float | None
    regressions: int = 0
    improvements: int = 0
    noisy: int = 0  # "too noisy" or "no interval"
    unmeasured: int = 0  # "not measured": a run of the cell failed or was skipped


def summarize_groups(comparison: Comparison, group_order: list[str]) -> list[GroupSummary]:
    """One GroupSummary per (threads, group, compared target), in display order."""
    out = []
    thread_counts = sorted({row.threads for row in comparison.rows})
    for threads in thread_counts:
        for group in group_order:
            rows = [r for r in comparison.rows if r.group == group and r.threads == threads]
            if not rows:
                continue
            for target in comparison.compared:
                cells = [r.cells[target] for r in rows]
                values = [c.ratio for c in cells if c.ratio is not None]
                missing = len(rows) - len(values)
                verdicts = [c.verdict for c in cells]
                counts = (verdicts.count(Verdict.REGRESSION), verdicts.count(Verdict.IMPROVEMENT),
                          verdicts.count(Verdict.TOO_NOISY) + verdicts.count(Verdict.NO_INTERVAL),
                          verdicts.count(Verdict.NOT_MEASURED))
                if values:
                    out.append(GroupSummary(group, threads, target, len(values), missing, min(values),
                                            max(values), fmean(values), median(values), *counts))
                else:
                    out.append(GroupSummary(group, threads, target, 0, missing, None, None, None, None, *counts))
    return out
