"""sysbench's comparison as the verbs shape it (the registry's Workload.views): built with the
options `report` was given (results/views.py's ViewOptions), rendered in a format (in colour on
a terminal) or as a matrix of the campaign's axes, its findings for `--fail-on`, its flamegraph
files per cell, and the tests each target regressed on for `recheck`."""
from __future__ import annotations

from dataclasses import dataclass

from dbdrift.analysis.noise import Verdict
from dbdrift.errors import UserError
from dbdrift.report.flamegraph import file_safe, part_files
from dbdrift.results.findings import Finding
from dbdrift.results.targets import merged_stacks
from dbdrift.results.views import ViewOptions
from dbdrift.store.store import Store
from dbdrift.workloads.sysbench.report.formats import FORMATS, render
from dbdrift.workloads.sysbench.report.matrix import axis_names, measured_tests, render_matrix
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.workloads.sysbench.results.data import ReportData
from dbdrift.workloads.sysbench.results.findings import all_findings


@dataclass(frozen=True)
class SysbenchViews:
    """The views of sysbench's comparison; a dataclass without fields, so that a Workload pickled
    for a cluster unit equals itself."""

    @property
    def formats(self) -> tuple[str, ...]:
        return FORMATS

    def build(self, store: Store, campaign: str | None, options: ViewOptions) -> ReportData:
        return build_report(store, MICROBENCHMARKS, campaign, options.base, options.chain, options.judging,
                            options.noise_floor, options.metrics, against=options.against, tests=options.tests,
                            groups=options.groups)

    def render(self, data: ReportData, fmt: str, color: bool = False) -> str:
        return render(data, fmt, color)

    def matrix(self, data: ReportData, fmt: str, tests: str | None, group_by: str | None) -> str:
        return render_matrix(data, fmt, *matrix_shape(data, tests, group_by))

    def findings(self, data: ReportData) -> list[Finding]:
        return list(all_findings(data))

    def flamegraphs(self, store: Store, data: ReportData) -> list[tuple[str, str]]:
        return flamegraph_files(store, data)

    def regressed(self, data: ReportData) -> dict[str, set[str]]:
        return regressed(data)


VIEWS = SysbenchViews()


def matrix_shape(data: ReportData, tests: str | None, group_by: str | None) -> tuple[list[str] | None, str | None]:
    """--tests and --group-by of --matrix, checked against what the campaign measured and its axes."""
    chosen = [t.strip() for t in tests.split(",")] if tests else None
    measured = measured_tests(data)
    unknown = [t for t in chosen or () if t not in measured]
    if unknown:
        raise UserError(f"--tests: {unknown[0]!r} was not measured in campaign {data.campaign}",
                        f"measured: {', '.join(measured)}", exit_code=2)
    axes = axis_names(data)
    if group_by is not None and group_by not in axes:
        raise UserError(f"--group-by {group_by}: campaign {data.campaign} has no such axis",
                        f"axes: {', '.join(axes)}" if axes else "the campaign has no [axes.NAME] tables", exit_code=2)
    return chosen, group_by


def flamegraph_files(store: Store, data: ReportData) -> list[tuple[str, str]]:
    """(file name, text) per (test, threads, target): the stacks of all its runs merged, as SVG
    and folded text; per compared target also a differential SVG against its reference."""
    merged = merged_stacks(store, int(data.meta["campaign"]["id"]))
    references = data.comparison.references
    files = []
    for (test, threads, target), stacks in sorted(merged.items()):
        ref = references.get(target)
        files += part_files(f"{test} x{threads}", f"{file_safe(test)}.x{threads}", target, stacks, ref,
                            merged.get((test, threads, ref)) if ref is not None else None)
    return files


def regressed(data: ReportData) -> dict[str, set[str]]:
    """target -> the tests on which it regressed: its timed cells, and its instruction counts
    (at least min_effect more instructions per event)."""
    out: dict[str, set[str]] = {}
    for row, cell in data.cells():
        if cell.verdict is Verdict.REGRESSION:
            out.setdefault(cell.target, set()).add(row.test)
    for irow in data.instructions:
        for target, verdict in irow.verdicts.items():
            if verdict is Verdict.REGRESSION:
                out.setdefault(target, set()).add(irow.test)
    return out
