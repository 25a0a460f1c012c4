"""What every report format renders: one comparison plus its labels. Pure data, no I/O."""
from __future__ import annotations

from dataclasses import dataclass, field

from dbdrift.analysis.hardware import MetricsRow
from dbdrift.analysis.instructions import InstructionRow
from dbdrift.analysis.relative import Comparison
from dbdrift.analysis.summary import GroupSummary

FORMAT_VERSION = 2  # of the JSON and CSV layouts: raised when a field is renamed or removed
RED_AT = 0.95  # text/HTML: rQPS <= 0.95 is red (possible regression)
GREEN_AT = 1.05  # rQPS >= 1.05 is green


@dataclass(frozen=True)
class ReportData:
    campaign: str
    comparison: Comparison
    summaries: tuple[GroupSummary, ...]
    target_labels: dict[str, str]  # target -> "postgres 17.10" (what it is)
    group_order: tuple[str, ...]
    group_titles: dict[str, str]
    notes: tuple[str, ...] = ()  # e.g. where the noise floor came from
    metrics: tuple[MetricsRow, ...] = ()  # hardware per operation; rendered when show_metrics
    instructions: tuple[InstructionRow, ...] = ()  # callgrind counts, rendered whenever present
    show_metrics: bool = False
    meta: dict = field(default_factory=dict)  # dbdrift and format version, date, host, campaign settings

    def instruction_row(self, test: str) -> InstructionRow | None:
        return next((r for r in self.instructions if r.test == test), None)

    def label(self, target: str) -> str:
        extra = self.target_labels.get(target)
        return f"{target} ({extra})" if extra else target

    def thread_counts(self) -> list[int]:
        return sorted({row.threads for row in self.comparison.rows})

    def rows_in(self, group: str, threads: int):
        return [r for r in self.comparison.rows if r.group == group and r.threads == threads]

    def summaries_in(self, group: str, threads: int) -> dict[str, GroupSummary]:
        return {s.target: s for s in self.summaries if s.group == group and s.threads == threads}


VERDICT_MARKS = {
    "regression": "-", "improvement": "+", "no significant change": "=", "too noisy": "~", "no interval": "?",
    "not measured": "x",
}


def verdict_legend(data: ReportData) -> str:
    comp = data.comparison
    return (f"verdicts (95% interval, minimum effect {comp.min_effect:.0%}): - regression, + improvement, "
            f"= no significant change, ~ too noisy (holds 1 and wider than ±{comp.noisy_half_width:.0%}), "
            "? no interval (too few samples), x not measured (a run failed or was skipped); ! host or run warnings")


def fmt_cell(row, target: str) -> str:
    """`0.96 [0.94,0.98] -`: rQPS, its 95% interval and the verdict mark; `!` when warned."""
    value = row.ratios.get(target)
    est = row.estimates.get(target)
    mark = VERDICT_MARKS.get(row.verdicts.get(target, ""), " ")
    warned = "!" if row.warnings.get(target) or row.warnings.get(row.references.get(target, "")) else " "
    if value is None or row.status(target):
        status = row.status(target)
        return f"{status} {mark}{warned}" if status else f"{'-':>4}{'':13} {mark}{warned}"
    interval = f"[{est.lower:.2f},{est.upper:.2f}]" if est and est.lower is not None else ""
    return f"{value:4.2f} {interval:<12} {mark}{warned}"


def verdict_counts(summary) -> str:
    """`2- 1+ 3~?` (regressions, improvements, too noisy or no interval), `1x` added when
    cells were not measured."""
    text = f"{summary.regressions}- {summary.improvements}+ {summary.noisy}~?"
    return text + (f" {summary.unmeasured}x" if summary.unmeasured else "")


def fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def fmt_abs(value: float | None, status: str = "") -> str:
    if value is None:
        return status or "-"
    return f"{value:.0f}" if value >= 100 else f"{value:.2f}"


def legend_lines(data: ReportData) -> list[str]:
    """`Relative to:` / `col-N :` legend, as the posts write it."""
    comp = data.comparison
    if comp.chain:
        lines = [f"Relative to: the previous column (chain), starting at {data.label(comp.base)}"]
    else:
        lines = [f"Relative to: {data.label(comp.base)}"]
    lines += [f"col-{i} : {data.label(t)}" for i, t in enumerate(comp.compared, start=1)]
    return lines + list(data.notes)


def column_names(data: ReportData) -> list[str]:
    return [f"col-{i}" for i in range(1, len(data.comparison.compared) + 1)]
