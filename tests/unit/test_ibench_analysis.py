"""Insert Benchmark analysis on literal step results with hand-computed answers."""
import math
import statistics

import pytest

from dbdrift.analysis.ibench import (BUCKET_LABELS, histogram_table, percentile_rate, range_colors, relative_color,
                                     slice_averages, sla_met, step_metrics, step_percentiles, summary_tables)
from dbdrift.model import IBENCH_BUCKETS_US, IBENCH_STEPS, InsertStepResult


def step(target: str, name: str, ips: float = 1000.0, qps: float = 0.0, target_ips: float | None = None,
         status: str = "ok", **extra) -> InsertStepResult:
    if target_ips is None and name.startswith("q"):
        target_ips = 200.0
    return InsertStepResult(target=target, step=name, status=status, clients=2, elapsed_s=10.0,
                            inserted=int(ips * 10), deleted=0, queries=int(qps * 10), ips=ips, dps=0.0, qps=qps,
                            target_ips=target_ips, **extra)


def lines(key: str, values: list[float], i_sec: float = 1.0) -> list[dict]:
    """Per-second lines of `key`, one every i_sec seconds."""
    return [{"i_sec": i_sec, "t_sec": (i + 1) * i_sec, key: v} for i, v in enumerate(values)]


def colors(table, column: str) -> dict[str, str | None]:
    i = table.columns.index(column)
    return {name: cells[i].color for name, cells in table.rows.items()}


# --- SLA -------------------------------------------------------------------------------------


def test_exactly_95_percent_of_the_target_insert_rate_meets_the_sla():
    assert sla_met(step("a", "qr100", ips=190.0, target_ips=200.0)) is True
    assert sla_met(step("a", "qp500", ips=285.0, target_ips=300.0)) is True


def test_just_under_95_percent_misses_the_sla():
    assert sla_met(step("a", "qr100", ips=189.99, target_ips=200.0)) is False


def test_load_steps_and_steps_without_a_target_have_no_sla():
    assert sla_met(step("a", "l.i1", ips=10.0)) is None
    assert sla_met(InsertStepResult("a", "qr100", "ok", 1, 1.0, 0, 0, 0, 0.0, 0.0, 0.0, target_ips=None)) is None


# --- percentiles (np.sh: sorted descending, position round(N/100 x lines)) -------------------


def test_percentiles_take_the_value_at_the_rounded_position_of_the_descending_order():
    values = [70, 10, 200, 40, 150, 90, 20, 180, 60, 130, 30, 110, 190, 50, 160, 80, 120, 100, 170, 140]
    # descending: 200, 190, ..., 10 (20 lines). p50: round(50 x 20 / 100) = 10th -> 110.
    # p99: round(99 x 20 / 100) = round(19.8) = 20th -> 10, the slowest second.
    assert percentile_rate(values, 50) == 110
    assert percentile_rate(values, 99) == 10


def test_a_half_position_rounds_to_even_like_printf():
    values = list(range(1, 151))  # descending 150..1
    # p99: 99 x 150 / 100 = 148.5 -> 148 (even) -> value 3; p50: 75th -> 76.
    assert percentile_rate(values, 99) == 3
    assert percentile_rate(values, 50) == 76
    # 99 x 250 / 100 = 247.5 exactly -> 248 (even) -> value 3 of 250..1
    assert percentile_rate(list(range(1, 251)), 99) == 3


def test_the_position_is_clamped_to_the_lines_and_no_values_give_none():
    assert percentile_rate([5.0, 9.0, 7.0], 1) == 9.0  # round(0.03) = 0 -> position 1
    assert percentile_rate([5.0], 99) == 5.0
    assert percentile_rate([], 50) is None


def test_step_percentiles_use_inserts_for_load_steps_and_queries_for_query_steps():
    per_second = [{"t_sec": float(i), "i_ips": 100.0 * i, "i_qps": float(i)} for i in range(1, 5)]
    # 4 lines: p50 position 2, p99 position round(3.96) = 4
    assert step_percentiles(step("a", "l.i0", per_second=per_second)) == (300.0, 100.0)
    assert step_percentiles(step("a", "qp100", per_second=per_second)) == (3.0, 1.0)


# --- slices --------------------------------------------------------------------------------------


def test_twenty_one_second_lines_make_ten_slices_of_two():
    averages = slice_averages(lines("i_ips", [float(v) for v in range(20)]), "i_ips")
    assert averages == [0.5, 2.5, 4.5, 6.5, 8.5, 10.5, 12.5, 14.5, 16.5, 18.5]


def test_slices_are_cut_by_time_so_a_stall_leaves_empty_slices():
    per_second = lines("i_ips", [10.0] * 9) + [{"i_sec": 11.0, "t_sec": 20.0, "i_ips": 1.0}]
    # T = 20 s, slices of 2 s: lines ending at 1..9 fill slices 0-4, the 11 s line ends in slice 9
    assert slice_averages(per_second, "i_ips") == [10.0] * 5 + [None] * 4 + [1.0]


def test_a_short_trailing_line_counts_by_its_length():
    per_second = lines("i_qps", [100.0] * 9) + [{"i_sec": 0.5, "t_sec": 9.5, "i_qps": 400.0}]
    # T = 9.5, slice 9 is (8.55, 9.5]: the line ending at 9 (1 s of 100) and the 0.5 s line of 400
    assert slice_averages(per_second, "i_qps")[9] == pytest.approx((100 * 1 + 400 * 0.5) / 1.5)


def test_no_lines_give_no_slice_values():
    assert slice_averages([], "i_ips") == [None] * 10


# --- histograms ---------------------------------------------------------------------------------


def test_histogram_percentages_are_of_that_operations_responses_and_max_is_in_seconds():
    result = step("a", "qr100", max_query_us=2_500_000, histograms={
        "insert": {"counts": [30, 60, 10, 0, 0, 0, 0, 0, 0, 0], "max_us": 3_900},
        "delete": {"counts": [0] * 10, "max_us": 0},
        "query": {"counts": [0, 0, 0, 0, 0, 0, 1, 0, 0, 3], "max_us": 17_000_000}})
    insert, query = histogram_table(result)
    assert insert.op == "insert" and insert.responses == 100
    assert insert.percents == pytest.approx((30, 60, 10, 0, 0, 0, 0, 0, 0, 0))
    assert insert.max_s == pytest.approx(0.0039)  # no max_insert_us on the step: the histogram's
    assert query.percents == pytest.approx((0, 0, 0, 0, 0, 0, 25, 0, 0, 75))
    assert query.max_s == 2.5  # the step's own max wins
    assert len(BUCKET_LABELS) == len(IBENCH_BUCKETS_US) + 1


# --- metrics --------------------------------------------------------------------------------------

WINDOW = {"elapsed_s": 10.0, "cpu_user_pct": 40.0, "cpu_sys_pct": 10.0, "cs": 100_000, "reads": 0, "read_kb": 0.0,
          "writes": 2_000, "write_kb": 40_000.0, "server_rss_bytes": 3_000_000_000}


def test_step_metrics_add_maxop_and_percentiles_to_the_sampler_figures():
    result = step("a", "qp100", ips=200.0, qps=1000.0, hardware=WINDOW, max_insert_us=9_000, max_query_us=1_500,
                  per_second=lines("i_qps", [900.0, 1100.0]))
    m = step_metrics(result, ncpu=4)
    assert m["cpupq"] == pytest.approx(0.5 * 4 * 1e6 / 1000)  # 50% of 4 CPUs / 1000 queries/s = 2000 µs
    assert m["wpi"] == pytest.approx(200 / 200)  # 200 writes/s per 200 inserts/s
    assert m["rss"] == pytest.approx(3.0)
    assert m["maxop"] == pytest.approx(0.0015)  # query step: the query max, in seconds
    assert (m["p50"], m["p99"]) == (1100.0, 900.0)


def test_a_step_without_sampler_data_still_has_rates_maxop_and_percentiles():
    m = step_metrics(step("a", "l.i0", ips=5000.0, max_insert_us=250_000, per_second=lines("i_ips", [5000.0])), 8)
    assert (m["ips"], m["qps"], m["maxop"], m["p50"]) == (5000.0, 0.0, 0.25, 5000.0)
    assert m["cpupq"] is None and m["rps"] is None


# --- table 1: absolute throughput ------------------------------------------------------------------


def test_load_columns_color_the_bottom_quarter_red_and_the_top_quarter_green():
    # min 100, max 200, gap 25: red <= 125, green >= 175
    results = [step("a", "l.i0", ips=100.0), step("b", "l.i0", ips=200.0), step("c", "l.i0", ips=160.0),
               step("d", "l.i0", ips=125.0)]
    summary = summary_tables(results, ["a", "b", "c", "d"])
    assert colors(summary.throughput, "l.i0") == {"a": "red", "b": "green", "c": None, "d": "red"}


def test_no_red_when_the_minimum_is_at_least_80_percent_of_the_maximum():
    assert range_colors([80.0, 100.0], [False, False]) == [None, "green"]  # top = 100 - 5
    assert range_colors([79.0, 100.0], [False, False]) == ["red", "green"]  # bottom = 79 + 5


def test_a_query_cell_that_missed_the_sla_is_gray_and_left_out_of_the_maximum():
    results = [step("a", "qr500", ips=1000.0, qps=1000.0, target_ips=1000.0),
               step("b", "qr500", ips=900.0, qps=2000.0, target_ips=1000.0),  # 90%: missed
               step("c", "qr500", ips=1000.0, qps=600.0, target_ips=1000.0)]
    summary = summary_tables(results, ["a", "b", "c"])
    # max over a and c = 1000, min 600, gap 100: a green (>= 900) though b is faster; c red (<= 700)
    assert colors(summary.throughput, "qr500") == {"a": "green", "b": "gray", "c": "red"}


def test_red_comes_before_gray_for_a_slow_cell_that_missed_the_sla():
    assert range_colors([1000.0, 500.0], [False, True]) == ["green", "red"]


def test_when_every_row_missed_the_sla_the_cells_are_only_gray():
    assert range_colors([1000.0, 500.0], [True, True]) == ["gray", "gray"]


def test_a_lone_target_is_its_own_maximum():
    summary = summary_tables([step("a", "l.x", ips=123.0)], ["a"])
    assert colors(summary.throughput, "l.x") == {"a": "green"}


def test_load_columns_hold_ips_and_query_columns_qps():
    summary = summary_tables([step("a", "l.i1", ips=5000.0), step("a", "qp1000", ips=2000.0, qps=777.0,
                                                                 target_ips=2000.0)], ["a"])
    values = [c.value for c in summary.throughput.rows["a"]]
    assert summary.throughput.columns == IBENCH_STEPS
    assert values[IBENCH_STEPS.index("l.i1")] == 5000.0 and values[IBENCH_STEPS.index("qp1000")] == 777.0


# --- missing steps ----------------------------------------------------------------------------------


def test_failed_and_absent_steps_are_uncolored_empty_cells_listed_as_missing():
    results = [step("a", "l.i0", ips=100.0), step("b", "l.i0", ips=300.0),
               step("c", "l.i0", ips=0.0, status="failed", error="server closed the connection\nlog: ...")]
    summary = summary_tables(results, ["a", "b", "c"])
    assert summary.throughput.rows["c"][0].value is None and summary.throughput.rows["c"][0].color is None
    assert colors(summary.throughput, "l.i0") == {"a": "red", "b": "green", "c": None}  # c's 0 is not the min
    assert summary.missing["c"][0] == ("l.i0", "failed: server closed the connection")
    assert summary.missing["c"][1] == ("l.x", "not run")
    assert summary.relative.rows["c"][0].value is None


def test_of_two_results_for_one_step_the_last_wins():
    summary = summary_tables([step("a", "l.i0", ips=1.0), step("a", "l.i0", ips=2.0)], ["a"])
    assert summary.throughput.rows["a"][0].value == 2.0


# --- table 2: relative throughput ---------------------------------------------------------------------


@pytest.mark.parametrize("value, color", [
    (106.0, "blue"), (105.6, "blue"),  # round(105.6) = 106 > 105
    (105.0, None), (105.4, None), (100.0, None), (95.0, None), (94.6, None),  # round(94.6) = 95
    (94.0, "yellow"), (94.4, "yellow"),
])
def test_relative_colors_at_the_105_and_95_percent_boundaries(value, color):
    summary = summary_tables([step("base", "l.i2", ips=100.0), step("new", "l.i2", ips=value)], ["base", "new"])
    cell = summary.relative.rows["new"][IBENCH_STEPS.index("l.i2")]
    assert cell.value == pytest.approx(value / 100) and cell.color == color


def test_the_base_row_is_all_ones_uncolored_and_a_zero_base_gives_no_ratio():
    summary = summary_tables([step("base", "l.i0", ips=100.0), step("base", "l.x", ips=0.0),
                              step("new", "l.x", ips=50.0)], ["base", "new"])
    assert summary.base == "base"
    assert summary.relative.rows["base"][0].value == 1.0 and summary.relative.rows["base"][0].color is None
    assert summary.relative.rows["new"][1].value is None
    assert relative_color(None) is None


# --- table 3: background insert rate ------------------------------------------------------------------


def test_background_inserts_below_95_percent_are_red_and_the_target_row_is_gray():
    results = [step("a", "qr100", ips=190.0, qps=1.0, target_ips=200.0),
               step("b", "qr100", ips=189.0, qps=1.0, target_ips=200.0),
               step("b", "qp100", ips=0.0, qps=0.0, target_ips=200.0, status="failed")]
    table = summary_tables(results, ["a", "b"]).background
    assert list(table.rows) == ["a", "b", "target"]
    assert colors(table, "qr100") == {"a": None, "b": "red", "target": "gray"}
    assert table.rows["b"][1].value is None and table.rows["b"][1].color is None  # failed step: no value
    assert table.rows["target"][0].value == 200.0
    assert table.rows["target"][1].value == 200.0  # planned, so a failed step still names it
    assert table.rows["target"][2].value is None and table.rows["target"][2].color is None  # qr500 not run


# --- repeats ---------------------------------------------------------------------------------


def test_repeats_give_the_mean_and_the_relative_table_a_paired_interval():
    base = [step("a", "l.i0", ips=v, repeat=r) for r, v in enumerate((1000.0, 1100.0, 900.0))]
    new = [step("b", "l.i0", ips=v, repeat=r) for r, v in enumerate((1100.0, 1200.0, 1000.0))]
    summary = summary_tables(base + new, ["a", "b"])
    assert summary.throughput.rows["a"][0].value == pytest.approx(1000.0)
    assert summary.throughput.rows["b"][0].repeats == 3
    cell = summary.relative.rows["b"][0]
    logs = [math.log(1.1), math.log(1200 / 1100), math.log(1000 / 900)]
    mean = sum(logs) / 3
    half = 4.303 * statistics.stdev(logs) / math.sqrt(3)  # t(0.975, 2)
    ratio = 1100.0 / 1000.0  # the ratio of the two rows of the absolute table, the interval around it
    assert cell.value == pytest.approx(ratio)
    assert (cell.lower, cell.upper) == (pytest.approx(ratio * math.exp(-half)), pytest.approx(ratio * math.exp(half)))
    assert mean != pytest.approx(math.log(ratio))  # not the geometric mean of the per-repeat ratios
    assert summary.relative.rows["a"][0].lower is None  # the base against itself: no interval


def test_one_repeat_has_no_interval_and_a_failed_repeat_is_left_out_of_the_mean():
    results = [step("a", "l.i0", ips=1000.0), step("b", "l.i0", ips=2000.0),
               step("b", "l.i0", ips=5.0, status="failed", repeat=1)]
    summary = summary_tables(results, ["a", "b"])
    assert summary.throughput.rows["b"][0].value == 2000.0
    assert summary.relative.rows["b"][0].value == 2.0 and summary.relative.rows["b"][0].lower is None


def test_of_one_repeat_stored_twice_the_last_counts():
    summary = summary_tables([step("a", "l.i0", ips=1.0, repeat=1), step("a", "l.i0", ips=3.0, repeat=1)], ["a"])
    assert summary.throughput.rows["a"][0].value == 3.0


# --- KB written per insert and database sizes -----------------------------------------------------

WRITE_WINDOW = {"elapsed_s": 10.0, "cpu_user_pct": 40.0, "cpu_sys_pct": 10.0, "cs": 100, "reads": 0, "read_kb": 0.0,
          "writes": 2_000, "write_kb": 40_000.0}


def test_the_write_table_has_kb_per_insert_and_sizes_with_a_relative_row():
    gib = 2 ** 30
    results = [step("a", "l.i0", ips=1000.0, hardware=WRITE_WINDOW, db_bytes=gib, datadir_bytes=2 * gib),
               step("a", "l.x", db_bytes=2 * gib), step("a", "l.i1", hardware=WRITE_WINDOW, db_bytes=3 * gib,
                                                         datadir_bytes=4 * gib),
               step("b", "l.i0", ips=2000.0, hardware=WRITE_WINDOW, db_bytes=gib, datadir_bytes=2 * gib),
               step("b", "l.x", db_bytes=3 * gib), step("b", "l.i1", ips=500.0, hardware=WRITE_WINDOW,
                                                         db_bytes=3 * gib, datadir_bytes=4 * gib)]
    table = summary_tables(results, ["a", "b"]).writes
    assert table.columns == ("wkbpi l.i0", "wkbpi l.i1", "dbgb1 l.i0", "dbgb1 l.x", "dbgb1 l.i1", "dbgb2 l.i1")
    # 40,000 KB written in 10 s = 4,000 KB/s over 1,000 inserts/s
    assert [c.value for c in table.rows["a"]] == pytest.approx([4.0, 4.0, 1.0, 2.0, 3.0, 4.0])
    ratios = [c.value for c in table.rows["b ÷ a"]]
    assert ratios == pytest.approx([0.5, 2.0, 1.0, 1.5, 1.0, 1.0])
    assert [c.color for c in table.rows["b ÷ a"]][:2] == ["yellow", "blue"]
