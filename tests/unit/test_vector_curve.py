"""Recall-vs-QPS curves: the frontier, QPS at a recall, and the ratio at equal recall."""
from __future__ import annotations

import math

import pytest

from dbdrift.workloads.vector.curve import Point, frontier, qps_at, relative_at


def pts(*pairs: tuple[float, float]) -> list[Point]:
    return [Point(f"ef_search={i}", r, q) for i, (r, q) in enumerate(pairs)]


def test_frontier_drops_points_beaten_on_both_axes():
    points = pts((0.80, 1000), (0.85, 900), (0.84, 700), (0.95, 400), (0.93, 300), (0.99, 100))
    assert [(p.recall, p.qps) for p in frontier(points)] == [(0.80, 1000), (0.85, 900), (0.95, 400), (0.99, 100)]


def test_qps_at_interpolates_in_log_qps_between_the_bracketing_points():
    points = pts((0.90, 1000), (1.00, 10))
    assert qps_at(points, 0.95) == pytest.approx(100.0)  # halfway in log: sqrt(1000 * 10)
    assert qps_at(points, 0.90) == pytest.approx(1000.0)


def test_qps_at_takes_the_fastest_point_when_it_already_reaches_the_recall_and_none_above_the_curve():
    points = pts((0.97, 500), (0.98, 300))
    assert qps_at(points, 0.90) == 500  # no extrapolation beyond the fastest point
    assert qps_at(points, 0.99) is None
    assert qps_at([], 0.9) is None


def test_relative_at_pairs_repeats_and_skips_those_that_do_not_reach_the_recall():
    base = {0: pts((0.9, 100), (0.99, 50)), 1: pts((0.9, 110), (0.99, 55)), 2: pts((0.9, 90), (0.99, 45)),
            3: pts((0.9, 100), (0.95, 60))}  # repeat 3 never reaches 0.99
    new = {r: [Point(p.setting, p.recall, p.qps * 0.8) for p in ps] for r, ps in base.items()}
    est = relative_at(new, base, 0.99)
    assert est is not None and est.value == pytest.approx(0.8)
    assert est.n == 3
    assert est.lower is not None and est.lower <= 0.8 <= est.upper
    assert relative_at(new, base, 0.999) is None
    assert math.isclose(relative_at(new, base, 0.90).value, 0.8)
