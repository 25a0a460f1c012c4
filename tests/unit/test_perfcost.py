"""A measured perf counter's ratio to the reference and whether its change matters to the time
per operation (analysis/perfcost.py, report/hardware.perf_block), on the perf-stat fixtures of
tests/data/host/perf (this VM has no PMU)."""
from pathlib import Path

import pytest

from dbdrift.analysis.hardware import MetricsRow, per_query
from dbdrift.analysis.perfcost import counter_change, perf_changes, time_per_op_ns
from dbdrift.metrics import perf
from dbdrift.workloads.sysbench.report.hardware import perf_block

PERF = Path(__file__).resolve().parents[1] / "data" / "host" / "perf"
QUERIES = 50_000  # the fixture's 10 s of perf stat cover this many queries


def counted(name: str, **scaled: float) -> dict[str, float]:
    """The fixture's counters per query, some multiplied (`LLC_load_misses=1.5`)."""
    counters = perf.parse_perf_stat_csv((PERF / name).read_text())
    for key, factor in scaled.items():
        event = key.replace("_", "-")
        counters[event] = counters[event] * factor  # type: ignore[operator]
    return {k: v for k, v in per_query(counters, QUERIES).items() if v is not None}


def metrics_row(base: dict[str, float], new: dict[str, float], srv_us: float | None = None) -> MetricsRow:
    absolute = {"old": {"srv_us/o": srv_us}, "new": {"srv_us/o": srv_us}}
    return MetricsRow("point-query", 1, absolute, {"new": {}}, {"new": "old"}, {"old": base, "new": new})


def test_a_counter_forty_times_the_references_that_costs_little_per_query_is_too_small_to_matter():
    row = metrics_row(counted("baremetal-all-groups.csv"), counted("baremetal-all-groups.csv", migrations=40))
    change = perf_changes(row, 0.02)["new"]["migrations"]
    assert change.ratio == pytest.approx(40.0)
    assert change.matters is False and change.note().startswith("too small to matter: +0.0% of the time per op")


def test_half_again_as_many_llc_misses_per_query_matter_at_their_cost():
    row = metrics_row(counted("baremetal-all-groups.csv"), counted("baremetal-all-groups.csv", LLC_load_misses=1.5))
    change = perf_changes(row, 0.02)["new"]["LLC-load-misses"]
    # 219.5 misses/query more by half: +109.8 x 80 ns = 8.8 µs of the 197.5 µs of cpu-clock per query
    assert change.delta_ns == pytest.approx(10975421 / QUERIES * 0.5 * 80)
    assert change.share == pytest.approx(change.delta_ns / (9876.54 / QUERIES * 1e6))
    assert change.matters is True and change.note() == "matters: +4.4% of the time per op (+8.78 µs)"


def test_the_time_per_op_is_the_servers_cpu_per_op_before_perfs_cpu_clock():
    base = counted("baremetal-all-groups.csv")
    assert time_per_op_ns({"srv_us/o": 50.0}, base) == 50_000.0
    assert time_per_op_ns({}, base) == pytest.approx(9876.54 / QUERIES * 1e6)
    assert time_per_op_ns({}, {}) is None


def test_a_counter_without_a_cost_estimate_gets_a_ratio_and_says_so():
    change = counter_change("L1-dcache-loads", 100.0, 150.0, 1e5, 0.02)
    assert change.ratio == 1.5 and change.matters is None and change.note() == "no cost estimate"
    assert counter_change("ipc", 1.5, 1.2, 1e5, 0.02).note() == "-"  # a derived ratio, not an event count


def test_the_perf_table_puts_the_ratio_and_the_note_beside_the_counts_per_query():
    row = metrics_row(counted("baremetal-all-groups.csv"), counted("baremetal-all-groups.csv", context_switches=40),
                      srv_us=200.0)
    title, header, rows = perf_block(row, 0.02)
    assert header == ["old", "new", "new/old", "new: matters?", "counter"]
    switches = next(r for r in rows if r[-1] == "context-switches")
    assert switches[2] == "40.000" and switches[3].startswith("matters: +")  # 1 switch per query x 40 at 3 µs
    unsupported = next(r for r in rows if r[-1] == "ghz")
    assert unsupported[2] == "1.000" and unsupported[3] == "-"
