"""The minimum detectable effect: what it returns, and that it is what its name says (a change
of that size is found about 80% of the time, by simulation of the same t interval)."""
from __future__ import annotations

import math
import random

import pytest

from dbdrift.analysis.noise import Estimate, Method, log_interval, t975
from dbdrift.analysis.power import detectable_change, reported_change, t80


def estimate(se: float, n: int, value: float = 1.0) -> Estimate:
    half = t975(n - 1) * se
    return Estimate(value, value * math.exp(-half), value * math.exp(half), n, Method.T_OVER_RUNS)


def test_the_t80_table_meets_its_expansion_at_30_and_falls_toward_z():
    assert t80(30) == pytest.approx(t80(31), abs=0.002)
    assert all(t80(df) >= t80(df + 1) for df in range(1, 60)) and t80(1) > t80(60)
    assert t80(10_000) == pytest.approx(0.8416, abs=0.001)


@pytest.mark.parametrize("n", [3, 5, 10])
def test_a_change_of_the_detectable_size_is_found_about_80_percent_of_the_time(n):
    sd = 0.03  # of ln throughput ratio per repeat
    mde = detectable_change(estimate(sd / math.sqrt(n), n))
    assert mde is not None
    rng = random.Random(n)
    trials, found = 4000, 0
    for _ in range(trials):
        samples = [math.exp(rng.gauss(-math.log1p(mde), sd)) for _ in range(n)]
        _, _, upper = log_interval(samples)
        found += upper < 1.0
    assert 0.74 <= found / trials <= 0.86, found / trials


def test_the_mde_grows_with_the_interval_and_holds_for_a_fall_as_for_a_rise():
    narrow, wide = detectable_change(estimate(0.005, 5)), detectable_change(estimate(0.04, 5))
    assert narrow is not None and wide is not None and 0 < narrow < wide
    assert math.log1p(wide) == pytest.approx((t975(4) + t80(4)) * 0.04)


def test_no_interval_has_no_mde():
    assert detectable_change(Estimate(0.98, None, None, 1, Method.SINGLE_SAMPLE)) is None
    assert reported_change(Estimate(0.98, None, None, 1, Method.SINGLE_SAMPLE), 0.02) is None


def test_the_reported_change_is_never_below_the_minimum_effect():
    tight = estimate(0.001, 10)
    assert detectable_change(tight) < 0.02
    assert reported_change(tight, 0.02) == 0.02
    loose = estimate(0.05, 3)
    assert reported_change(loose, 0.02) == detectable_change(loose)
