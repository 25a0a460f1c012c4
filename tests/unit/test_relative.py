import pytest

from dbdrift.analysis.relative import Measurement, compare, ratio, summarize_cell
from dbdrift.analysis.summary import summarize_groups

ORDER = ["point-query", "scan", "insert"]


def m(test, target, value, group="point", status="ok", threads=1):
    return Measurement(test, group, target, threads, value, "qps", status)


def test_rqps_is_new_over_base():
    comp = compare([m("point-query", "a", 100.0), m("point-query", "b", 90.0)], ["a", "b"], "a", ORDER)
    assert comp.rows[0].cells["b"].ratio == pytest.approx(0.9) and comp.rows[0].cells["a"].ratio is None
    assert comp.compared == ("b",)


def test_base_can_be_any_target_and_is_listed_first():
    comp = compare([m("point-query", "a", 100.0), m("point-query", "b", 50.0)], ["a", "b"], "b", ORDER)
    assert comp.targets == ("b", "a") and comp.rows[0].cells["a"].ratio == pytest.approx(2.0)


def test_chain_divides_each_target_by_the_previous_one():
    data = [m("point-query", "5.6", 100.0), m("point-query", "5.7", 80.0), m("point-query", "8.0", 60.0)]
    comp = compare(data, ["5.6", "5.7", "8.0"], "5.6", ORDER, chain=True)
    cells = comp.rows[0].cells
    assert (cells["5.7"].ratio, cells["8.0"].ratio) == (pytest.approx(0.8), pytest.approx(0.75))
    assert (cells["5.6"].reference, cells["5.7"].reference, cells["8.0"].reference) == (None, "5.6", "5.7")


def test_repeats_are_averaged_and_failed_runs_excluded_and_counted():
    cell = summarize_cell([m("t", "a", 10.0), m("t", "a", 20.0), m("t", "a", None, status="failed")])
    assert (cell.value, cell.runs, cell.failed) == (15.0, 2, 1)


def test_a_missing_base_gives_no_ratio_rather_than_a_wrong_one():
    comp = compare([m("point-query", "a", None, status="failed"), m("point-query", "b", 90.0)], ["a", "b"], "a", ORDER)
    assert comp.rows[0].cells["b"].ratio is None
    assert ratio(1.0, 0.0) is None


def test_rows_follow_test_order_within_thread_count():
    data = [m("insert", "a", 1.0, "writes"), m("point-query", "a", 1.0), m("scan", "a", 1.0, "range-noagg"),
            m("point-query", "a", 1.0, threads=4)]
    comp = compare(data, ["a"], "a", ORDER)
    assert [(r.test, r.threads) for r in comp.rows] == [("point-query", 1), ("scan", 1), ("insert", 1),
                                                        ("point-query", 4)]


def test_group_summary_gives_min_max_mean_median_of_the_ratios():
    data = []
    for test, new in (("p1", 90.0), ("p2", 100.0), ("p3", 110.0), ("p4", 140.0)):
        data += [m(test, "a", 100.0), m(test, "b", new)]
    data += [m("p5", "a", None, status="failed"), m("p5", "b", 1.0)]
    comp = compare(data, ["a", "b"], "a", ["p1", "p2", "p3", "p4", "p5"])
    (s,) = summarize_groups(comp, ["point", "writes"])
    assert (s.count, s.missing) == (4, 1)
    assert (s.min, s.max) == pytest.approx((0.9, 1.4))
    assert s.mean == pytest.approx(1.1) and s.median == pytest.approx(1.05)
