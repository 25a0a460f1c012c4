"""What every report format renders: one comparison, its labels and context. Pure data, no I/O.

Renderers walk it one way: `sections()` gives, per client count and group in display order,
the rows with their per-target cells and the group's summaries; `cells()` flattens that walk
for the long formats (JSON, CSV)."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from dbdrift.analysis.defaults import DriftTable
from dbdrift.analysis.hardware import MetricsRow
from dbdrift.analysis.instructions import InstructionRow
from dbdrift.analysis.layers import LayerRow
from dbdrift.analysis.relative import Cell, Comparison, RelativeRow
from dbdrift.analysis.summary import GroupSummary
from dbdrift.model import JsonObject


@dataclass(frozen=True)
class Section:
    """One group of tests at one client count: its rows and, per compared target, its summary."""

    threads: int
    group: str
    title: str
    rows: tuple[RelativeRow, ...]
    summaries: dict[str, GroupSummary]


@dataclass(frozen=True)
class PlanChange:
    """A cell whose test got another plan on its target than on the reference: per statement
    whose shape differs, its SQL and both shapes and plans (EXPLAIN JSON text)."""

    test: str
    target: str
    reference: str
    statements: tuple[JsonObject, ...]  # {statement, sql, shape, reference_shape, plan, reference_plan}


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
    layers: tuple[LayerRow, ...] = ()
    drift: tuple[DriftTable, ...] = ()  # per compared target: defaults that differ from its reference's (analysis/defaults.py)  # per-statement against per-row cost of the families measured (analysis/layers.py)
    show_metrics: bool = False
    meta: JsonObject = field(default_factory=dict)  # dbdrift and format version, date, host, campaign settings
    plan_changes: tuple[PlanChange, ...] = ()  # the cells marked P
    # (test, threads, target) -> (head, what moved) for each regression and improvement (analysis/explain.py)
    explanations: dict[tuple[str, int, str], tuple[str, str]] = field(default_factory=dict)
    packagers: dict[str, str] = field(default_factory=dict)  # target -> who built its server (results/targets.py)
    # test -> its group in this report, of each test of the catalogue the campaign ran, counted or
    # planned: the catalogue's, or the chosen grouping's where it moved the test (`report --groups five`)
    test_groups: dict[str, str] = field(default_factory=dict)
    # (test, threads) -> where a sequential campaign planned to detect stopped the cell (analysis/sequential.py)
    stops: dict[tuple[str, int], JsonObject] = field(default_factory=dict)

    @property
    def timed(self) -> bool:
        """The campaign has timed cells (run, failed or planned); False for instruction counts only
        (`timed = false`), whose reports say nothing of timed runs."""
        return bool(self.comparison.rows)

    def plan_change(self, test: str, target: str) -> PlanChange | None:
        return next((c for c in self.plan_changes if c.test == test and c.target == target), None)

    def why(self, test: str, threads: int, target: str) -> str | None:
        """The explanation line `head: what moved` of a cell, None when it has none."""
        parts = self.explanations.get((test, threads, target))
        return f"{parts[0]}: {parts[1]}" if parts else None

    def why_lines(self) -> list[str]:
        return [f"{head}: {body}" for head, body in self.explanations.values()]

    def group_of(self, test: str) -> str | None:
        """A test's group in this report (None for a name the catalogue does not hold)."""
        return self.test_groups.get(test)

    def instruction_row(self, test: str) -> InstructionRow | None:
        return next((r for r in self.instructions if r.test == test), None)

    def label(self, target: str) -> str:
        extra = self.target_labels.get(target)
        return f"{target} ({extra})" if extra else target

    def thread_counts(self) -> list[int]:
        return sorted({row.threads for row in self.comparison.rows})

    def sections(self, threads: int | None = None) -> list[Section]:
        """The report's sections in display order (only those of `threads` when given)."""
        out = []
        for count in self.thread_counts() if threads is None else [threads]:
            for group in self.group_order:
                rows = tuple(r for r in self.comparison.rows if r.group == group and r.threads == count)
                if rows:
                    summaries = {s.target: s for s in self.summaries if s.group == group and s.threads == count}
                    out.append(Section(count, group, self.group_titles.get(group, group), rows, summaries))
        return out

    def burst_lines(self) -> list[str]:
        """`s` cells: the throughput ratio with its interval, and the typical turn's ratio outside it."""
        out = []
        for row, cell in self.cells():
            est = cell.estimate
            if est is None or not est.bursty or cell.ratio is None or est.lower is None or est.upper is None:
                continue
            out.append(f"{row.test} x{row.threads} {cell.target}: throughput {cell.ratio:.2f} "
                       f"[{est.lower:.2f},{est.upper:.2f}], typical turn {est.typical:.2f}")
        return out

    def cells(self) -> Iterator[tuple[RelativeRow, Cell]]:
        """Every (row, cell) in section order, targets in display order: the long formats' lines."""
        for section in self.sections():
            for row in section.rows:
                for target in self.comparison.targets:
                    yield row, row.cells[target]
