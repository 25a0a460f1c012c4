"""Per-operation hardware metrics on literal windows with hand-computed answers."""
import math

import pytest

from dbdrift.analysis.hardware import (combine, disk_metrics, insert_benchmark_metrics, metrics_rows, perf_per_query,
                                       relative_value, sysbench_metrics)

# 10 s at 20,000 QPS on 2 CPUs: 50% busy, 300,000 context switches, 1,000 reads of 8,000 KB,
# 500 writes of 40,000 KB; the server used 6 s of CPU and the driver 2 s.
WINDOW = {"elapsed_s": 10.0, "cpu_user_pct": 40.0, "cpu_sys_pct": 10.0, "cpu_iowait_pct": 1.0,
          "cpu_steal_pct": 0.0, "cs": 300_000, "reads": 1_000, "read_kb": 8_000.0, "writes": 500,
          "write_kb": 40_000.0, "server_cpu_s": 6.0, "client_cpu_s": 2.0, "server_rss_bytes": 2_000_000_000}


def test_sysbench_metrics_follow_the_spec_formulas():
    m = sysbench_metrics(WINDOW, ops=20_000, ncpu=2)
    assert m["cpu/o"] == pytest.approx(50 / 20_000)          # (us+sy) / ops
    assert m["cpu_us/o"] == pytest.approx(50.0)              # 2 CPUs x 50% x 10 s / 200,000 ops = 50 µs
    assert m["srv_us/o"] == pytest.approx(30.0)              # 6 s / 200,000 ops
    assert m["cli_us/o"] == pytest.approx(10.0)              # 2 s / 200,000 ops
    assert m["cs/o"] == pytest.approx(1.5)                   # 30,000 cs/s / 20,000 ops/s
    assert m["r/o"] == pytest.approx(0.005)
    assert m["rKB/o"] == pytest.approx(0.04)
    assert m["wKB/o"] == pytest.approx(0.2)
    assert m["o/s"] == 20_000


def test_host_cpu_per_operation_is_at_least_server_plus_client_when_nothing_else_runs():
    m = sysbench_metrics(WINDOW, ops=20_000, ncpu=2)
    assert m["cpu_us/o"] >= m["srv_us/o"] + m["cli_us/o"]


def test_a_data_directory_without_a_block_device_has_no_io_metrics():
    window = dict(WINDOW, reads=None, read_kb=None, writes=None, write_kb=None)
    m = sysbench_metrics(window, ops=20_000, ncpu=2)
    assert m["r/o"] is None and m["rKB/o"] is None and m["wKB/o"] is None
    assert m["cpu_us/o"] == pytest.approx(50.0)


def test_zero_throughput_gives_no_per_operation_values():
    m = sysbench_metrics(WINDOW, ops=0, ncpu=2)
    assert m["o/s"] == 0 and m["cpu/o"] is None and m["cs/o"] is None


def test_combining_two_rounds_adds_counts_and_weights_percentages_by_time():
    a = dict(WINDOW)
    b = dict(WINDOW, elapsed_s=30.0, cpu_user_pct=80.0, cs=100_000, server_cpu_s=3.0)
    merged, ops = combine([(a, 20_000.0), (b, 10_000.0)])
    assert merged["elapsed_s"] == 40.0
    assert merged["cpu_user_pct"] == pytest.approx((40 * 10 + 80 * 30) / 40)
    assert merged["cs"] == 400_000 and merged["server_cpu_s"] == 9.0
    assert ops == pytest.approx((20_000 * 10 + 10_000 * 30) / 40)


def test_combining_skips_runs_without_a_window_and_gives_none_when_none_has_one():
    assert combine([(None, 100.0), ({}, 50.0)]) is None
    merged, ops = combine([(None, 100.0), (WINDOW, 20_000.0)])
    assert ops == 20_000.0 and merged["cs"] == 300_000


def test_relative_values_follow_sum_met_rules():
    assert relative_value(1.1, 1.0) == pytest.approx(1.1)
    assert relative_value(0.0, 0.0) == 1.0
    assert math.isinf(relative_value(3.0, 0.0))
    assert relative_value(None, 1.0) is None


def test_insert_benchmark_load_step_normalizes_by_inserts():
    m = insert_benchmark_metrics(WINDOW, ips=5_000, qps=0, ncpu=2)
    assert m["rps"] == 100 and m["wps"] == 50
    assert m["rpq"] == pytest.approx(0.02)                   # 100 reads/s / 5,000 inserts/s
    assert m["wpi"] == pytest.approx(0.01)
    assert m["wkbpi"] == pytest.approx(0.8)                  # 4,000 KB/s / 5,000
    assert m["cpupq"] == pytest.approx(0.5 * 2 * 1e6 / 5_000)  # 200 µs per insert
    assert m["cspq"] == pytest.approx(6.0)
    assert m["wmbps"] == pytest.approx(4_000 / 1024)
    assert m["rss"] == pytest.approx(2.0)


def test_insert_benchmark_query_step_normalizes_reads_by_queries_but_writes_by_inserts():
    m = insert_benchmark_metrics(WINDOW, ips=100, qps=10_000, ncpu=2)
    assert m["rpq"] == pytest.approx(0.01)                   # per query
    assert m["cpupq"] == pytest.approx(100.0)
    assert m["wpi"] == pytest.approx(0.5)                    # still per insert


def test_metrics_rows_compare_each_target_with_its_reference_in_test_order():
    cells = {
        ("update-index", 1): {"a": [(WINDOW, 20_000.0)], "b": [(dict(WINDOW, server_cpu_s=7.5), 20_000.0)]},
        ("point-query", 1): {"a": [(WINDOW, 20_000.0)], "b": [(WINDOW, 10_000.0)]},
    }
    rows = metrics_rows(cells, ["a", "b"], {"b": "a"}, ["point-query", "update-index"], ncpu=2)
    assert [r.test for r in rows] == ["point-query", "update-index"]
    assert rows[0].relative["b"]["cpu_us/o"] == pytest.approx(2.0)  # same CPU, half the ops
    assert rows[1].relative["b"]["srv_us/o"] == pytest.approx(1.25)


def test_perf_counters_per_query_sum_counts_over_the_runs_that_counted_them():
    runs = [({"group": 1, "counters": {"instructions": 4e9, "cycles": 2e9, "branches": None}}, 100_000),
            ({"group": 2, "counters": {"cache-misses": 3e6, "cache-references": 3e7}}, 50_000),
            ({"group": 1, "counters": {"instructions": 6e9, "cycles": 4e9}}, 100_000)]
    m = perf_per_query(runs)
    assert m["instructions"] == pytest.approx(50_000)      # 1e10 / 200,000 queries
    assert m["ipc"] == pytest.approx(10e9 / 6e9)
    assert m["cache-miss-pct"] == pytest.approx(10.0)
    assert "branches" not in m                              # never counted: not a zero


# The same window with what the kernel (5.5+) and the role split add: 200 flushes, 600 ms reading,
# 1,000 ms writing, 5,000 ms weighted in queue, 10 discards; 1.5 s of the server's 6 s in background.
DISK = dict(WINDOW, read_ms=600, write_ms=1_000, queue_ms=5_000, discards=10, flushes=200, flush_ms=300,
            server_bg_cpu_s=1.5, background={"autovacuum": 1.0, "checkpointer": 0.5})


def test_disk_figures_are_iostats_await_and_queue_depth_and_flushes_per_second_and_operation():
    m = disk_metrics(DISK, ops=20_000)
    assert m["fl/s"] == pytest.approx(20.0)                 # 200 flushes / 10 s
    assert m["fl/o"] == pytest.approx(0.001)                # 20/s / 20,000 ops/s
    assert m["r_ms"] == pytest.approx(0.6)                  # 600 ms / 1,000 reads
    assert m["w_ms"] == pytest.approx(2.0)                  # 1,000 ms / 500 writes
    assert m["aqu"] == pytest.approx(0.5)                   # 5,000 ms in queue / 10,000 ms
    assert m["dsc/s"] == pytest.approx(1.0)


def test_a_kernel_without_flush_counts_and_a_window_without_reads_give_no_such_figure():
    m = disk_metrics(dict(DISK, reads=0, flushes=None) | {"flushes": None}, ops=20_000)
    assert m["fl/s"] is None and m["fl/o"] is None and m["r_ms"] is None
    older = {k: v for k, v in DISK.items() if k not in ("flushes", "discards")}
    assert disk_metrics(older, ops=20_000)["dsc/s"] is None and disk_metrics(older, ops=20_000)["w_ms"] == 2.0


def test_background_cpu_per_operation_and_its_share_of_the_servers_cpu():
    m = sysbench_metrics(DISK, ops=20_000, ncpu=2)
    assert m["bg_us/o"] == pytest.approx(7.5)               # 1.5 s / 200,000 ops
    assert m["bg%"] == pytest.approx(25.0)                  # 1.5 of 6 s
    assert sysbench_metrics(WINDOW, ops=20_000, ncpu=2)["bg%"] is None  # not split: not zero


def test_combining_adds_disk_times_and_background_roles_only_where_every_window_has_them():
    merged, _ = combine([(DISK, 20_000.0), (dict(DISK, flushes=100, background={"autovacuum": 2.0}), 20_000.0)])
    assert merged["flushes"] == 300 and merged["server_bg_cpu_s"] == 3.0
    assert merged["background"] == {"autovacuum": 3.0, "checkpointer": 0.5}
    merged, _ = combine([(DISK, 20_000.0), (WINDOW, 20_000.0)])
    assert "flushes" not in merged and "background" not in merged


def test_a_why_line_names_background_cpu_only_where_it_is_a_tenth_of_the_servers_cpu_or_more():
    from dbdrift.analysis.explain import BACKGROUND_SHARE, explanation
    from dbdrift.analysis.hardware import MetricsRow
    from types import SimpleNamespace
    row = SimpleNamespace(test="insert", threads=1, cells={})
    cell = SimpleNamespace(estimate=None, verdict=None, target="b", reference="a", ratio=0.9, warnings=())

    def why(share_a: float, share_b: float) -> str:
        metrics = MetricsRow("insert", 1, {"a": {"bg%": share_a}, "b": {"bg%": share_b}},
                             {"b": {"srv_us/o": 1.1, "cli_us/o": 1.0, "bg_us/o": 3.0}}, {"b": "a"})
        return explanation(row, cell, metrics, None, None, False, False)[1]
    assert "background CPU/op +200.0%" in why(2.0, BACKGROUND_SHARE)
    assert "background" not in why(1.0, 3.0)  # a few milliseconds: its ratio says nothing


def test_a_regression_that_came_in_bursts_says_so_first_in_its_why_line():
    from types import SimpleNamespace

    from dbdrift.analysis.explain import explanation
    from dbdrift.analysis.noise import Estimate, Method
    row = SimpleNamespace(test="point-query", threads=1, cells={})
    stalled = Estimate(0.82, 0.78, 0.87, 20, Method.PAIRED_TURNS_BATCHED, typical=0.99)
    even = Estimate(0.82, 0.78, 0.87, 20, Method.PAIRED_TURNS_BATCHED, typical=0.83)
    for est, says in ((stalled, True), (even, False)):
        cell = SimpleNamespace(estimate=est, verdict=None, target="b", reference="a", ratio=0.82, warnings=())
        moved = explanation(row, cell, None, None, None, False, False)[1]
        assert moved.startswith("in bursts (stalls): the typical turn 0.99, the throughput 0.82") is says, moved
