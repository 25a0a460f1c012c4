"""sysbench's results (layer results): the report of a stored campaign at the thresholds given, as
every verb without the comparison's views reads it (publish, history, run), and the hooks of the
workloads judged over repeats that sysbench answers with nothing, each saying why."""
from __future__ import annotations

from dbdrift.analysis.noise import JUDGING, Estimate, Judging
from dbdrift.results.build import build_report
from dbdrift.results.data import ReportData
from dbdrift.results.targets import merged_stacks
from dbdrift.store.store import Store


def build(store: Store, campaign_id: int, base: str | None, judging: Judging = JUDGING) -> ReportData:
    """The comparison of the campaign's cells against the base (`base`, else the campaign's),
    without the chain, with the verdicts' minimum effect raised to this host's noise floors
    (noise_floor = "auto"): the report `dbdrift report` prints without a view."""
    return build_report(store, str(campaign_id), base, False, judging, noise_floor="auto")


def estimates(store: Store, campaign_id: int) -> dict[str, list[Estimate]]:
    """None of sysbench's tests is judged over repeats: each cell (test x threads) is judged over
    the turns of its runs, and `detect` plans and follows it per cell from a calibration's turns
    (app/detect.py's cell estimates), so no test has estimates over repeats."""
    return {}


def stacks(store: Store, campaign_id: int) -> list[tuple[str, str, dict[str, int] | None]]:
    """(`test xN`, target, stacks) of each measured cell recorded with --flamegraph, its runs'
    stacks merged; `report --flamegraphs` writes a campaign's per cell itself, with a
    differential graph against each cell's own reference (app/report.py's write_flamegraphs)."""
    return [(f"{test} x{threads}", target, folded)
            for (test, threads, target), folded in merged_stacks(store, campaign_id).items()]


def history_values(store: Store, campaign_id: int) -> dict[tuple[str, str], list[float]]:
    """sysbench has no values per repeat: `history` and `publish` follow its tests' runs and
    counts (metrics qps, instructions), not `rate`."""
    return {}


def history_measure(measure: str) -> tuple[str, str]:
    """A measure of history_values, which gives none for sysbench: so nothing asks; a test's
    throughput is its queries per second."""
    return f"{measure}: queries per second (sysbench)", "queries/s"
