"""The sequential stopping rule of a campaign planned to detect (`detect`, with `sequential` on,
the default): after each server start from the MIN_STARTS-th on, a cell's interval over its
starts says one of three things at that look's level, as Chromium's Pinpoint does:

- different: the interval excludes 1 (a change, of whatever size);
- same: the interval lies inside 1/(1+d) .. 1+d (no change of the threshold d or more);
- unknown: neither; the cell gets another start while its cap and the budget allow.

Every look is a chance of a false verdict, so each spends part of the error, not all of it
(group-sequential design): the error a look may spend is the Lan-DeMets spending function of
O'Brien-Fleming type for a one-sided level alpha, alpha(t) = 2 - 2 Phi(z(1 - alpha / 2) / sqrt(t))
(gsDesign's sfLDOF), at the information fraction t = starts / cap; the boundaries are those of the normal model with independent
increments (Armitage, McPherson and Rowe's recursion over a grid), applied as nominal levels
to the t interval of each look (its degrees of freedom: the crossover's n - 2 from 4 starts,
else n - 1), Jennison and Turnbull's approximation for an unknown variance. "different" is a
two-sided test spending 5% (2.5% a side), "same" a two one-sided tests (TOST) equivalence test
at the threshold spending 5% a side. Early looks get almost nothing (a verdict after 3 starts
needs an interval about five times narrower than the threshold), the last nearly the full 5%.
bench/detect.py measures the rule's error rates by simulation (docs/noise.md, E28).
Pure functions; the runner (runner/detect.py) asks them after each start.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from enum import StrEnum
from functools import lru_cache
from typing import Any
from statistics import NormalDist

from dbdrift.analysis.noise import Estimate, standard_error

ALPHA_DIFFERENT = 0.05  # two-sided: "different" where there is no change, at most this often
ALPHA_SAME = 0.05  # a side: "same" where the change is the threshold's size, at most this often
SAME_EARLY = True
_NORMAL = NormalDist()
_GRID = 0.04  # grid step of the recursion, in standard deviations of the whole campaign's sum
_REACH = 8.0
_ROOT_2PI = math.sqrt(2 * math.pi)  # the grid's lower end, in the same unit: the density below it is negligible


class Outcome(StrEnum):
    """What a look at a cell says; the value is what reports print."""

    DIFFERENT = "different"
    SAME = "same"
    UNKNOWN = "unknown"


def spending(t: float, alpha: float, early: bool = False) -> float:
    """The error spent by information fraction t (0..1) of a test at level alpha: Lan and
    DeMets' function of O'Brien-Fleming type, which spends almost nothing early; `early`: their
    function of Pocock type, alpha ln(1 + (e - 1) t), which spends it evenly over the looks."""
    if t <= 0.0:
        return 0.0
    if early:
        return alpha * math.log1p((math.e - 1) * min(t, 1.0))
    z = _NORMAL.inv_cdf(1.0 - alpha / 2)
    return 2.0 - 2.0 * _NORMAL.cdf(z / math.sqrt(min(t, 1.0)))


@lru_cache(maxsize=256)
def nominal_levels(first: int, cap: int, alpha: float, early: bool = False) -> tuple[float, ...]:
    """The one-sided nominal level of each look at starts first, first + 1, ..., cap of a
    one-sided test spending `alpha` in all: the normal tail beyond that look's boundary.
    Boundaries from the recursion on the sum's density over a grid: the first look's is the
    quantile of what it may spend; each next one is found by bisection so that the chance of
    first crossing there equals the spending function's increment. A cap at or below `first`
    is one look, at the full level."""
    if cap <= first:
        return (alpha,)
    fractions = [n / cap for n in range(first, cap + 1)]
    levels, previous = [], 0.0
    density: list[tuple[float, float]] = []  # (sum, density) on the continuation region
    last_t = 0.0
    for k, t in enumerate(fractions):
        spend = max(spending(t, alpha, early) - previous, 1e-12)
        previous += spend
        step = t - last_t
        if k == 0:
            boundary = _NORMAL.inv_cdf(1.0 - spend) * math.sqrt(t)
        else:
            boundary = _bisect(lambda b: _crossing(density, b, step) - spend)
        levels.append(1.0 - _NORMAL.cdf(boundary / math.sqrt(t)))
        density = _continue(density, boundary, t, step, first=k == 0)
        last_t = t
    return tuple(levels)


def _crossing(density: list[tuple[float, float]], boundary: float, step: float) -> float:
    """The chance that a path still inside goes above `boundary` in the next increment."""
    sd = math.sqrt(step)
    return sum(w * (1.0 - _NORMAL.cdf((boundary - s) / sd)) for s, w in density)


def _continue(density: list[tuple[float, float]], boundary: float, t: float, step: float,
              first: bool) -> list[tuple[float, float]]:
    """The (sub-)density of the sum at fraction t on the paths that stayed below every boundary
    so far, as weights of grid points (trapezoid rule)."""
    sd_t = math.sqrt(t)
    points = [boundary - i * _GRID for i in range(int((boundary + _REACH) / _GRID) + 1)]
    if first:
        raw = [_pdf(s / sd_t) / sd_t for s in points]
    else:
        sd = math.sqrt(step)
        raw = [sum(w * _pdf((s - u) / sd) for u, w in density) / sd for s in points]
    weights = [r * _GRID for r in raw]
    weights[0] /= 2  # the trapezoid's ends
    weights[-1] /= 2
    return [(s, w) for s, w in zip(points, weights) if w > 1e-14]


def _pdf(z: float) -> float:
    return math.exp(-0.5 * z * z) / _ROOT_2PI


def _bisect(f: Callable[[float], float], low: float = -2.0, high: float = 12.0) -> float:
    """The root of `f`, a decreasing function of the boundary."""
    for _ in range(60):
        mid = (low + high) / 2
        if f(mid) > 0:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile at p (0.5 < p < 1) with df degrees of freedom, by bisection of the
    distribution function (the regularized incomplete beta function)."""
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        high *= 2
        if high > 1e9:
            return high
    for _ in range(100):
        mid = (low + high) / 2
        if t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def t_cdf(x: float, df: int) -> float:
    """Student's t distribution function: 1 - I_{df/(df+x^2)}(df/2, 1/2) / 2 for x >= 0."""
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + x * x))
    return 1.0 - tail if x >= 0 else tail


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) by its continued fraction (Lentz)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1.0 - x)
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 300):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-14:
            break
    return front * f / a


def look(log_ratio: float, se: float, df: int, starts: int, first: int, cap: int, detect: float,
         floor: float = 0.0) -> Outcome:
    """What one look at a cell's interval says: its ln rQPS `log_ratio` with standard error `se`
    and `df` degrees of freedom after `starts` starts, of at most `cap` (looks from `first`).
    A noise floor at or above the threshold (the calibration's A/A offset: no verdict goes below
    it) rules "same" out."""
    k = min(max(starts, first), max(cap, first)) - first
    different = nominal_levels(first, max(cap, first), ALPHA_DIFFERENT / 2)
    same = nominal_levels(first, max(cap, first), ALPHA_SAME, SAME_EARLY)
    p, q = different[min(k, len(different) - 1)], same[min(k, len(same) - 1)]
    if se <= 0.0 or df < 1:
        return Outcome.UNKNOWN
    if abs(log_ratio) / se >= t_quantile(1.0 - p, df):
        return Outcome.DIFFERENT
    margin = math.log1p(detect)
    if floor < detect and abs(log_ratio) + t_quantile(1.0 - q, df) * se < margin:
        return Outcome.SAME
    return Outcome.UNKNOWN


def look_at(estimates: list[Estimate], starts: int, first: int, cap: int, detect: float,
            floor: float = 0.0) -> Outcome:
    """A cell's look over its compared targets' estimates (each a 95% t interval, as the report
    computes it). Decided once every comparison is: different when any is, else same; unknown
    while one is not (also when one has no interval yet)."""
    found = []
    for est in estimates:
        err = standard_error(est)
        if est.value is None or err is None:
            return Outcome.UNKNOWN
        found.append(look(math.log(est.value), err[0], err[1], starts, first, cap, detect, floor))
    if not found or Outcome.UNKNOWN in found:
        return Outcome.UNKNOWN
    return Outcome.DIFFERENT if Outcome.DIFFERENT in found else Outcome.SAME


DECIDED, CAP, BUDGET = "decided", "cap", "budget"  # why a cell stopped: decided, at its most, at the budget
_WHERE = {DECIDED: "decided", CAP: "at its most", BUDGET: "at the budget"}


def stop_text(outcome: str, starts: int, why: str, detect: float) -> str:
    """`same after 4 starts (no change of 2.0% or more; decided)`, `unknown after 3 starts (at the budget)`."""
    what = {Outcome.DIFFERENT.value: "a change", Outcome.SAME.value: f"no change of {detect:.1%} or more",
            Outcome.UNKNOWN.value: "undecided"}.get(outcome, outcome)
    return f"{outcome} after {starts} starts ({what}; {_WHERE.get(why, why)})"


def stops_note(stops: Mapping[tuple[str, int], Mapping[str, Any]], detect: float) -> tuple[str, ...]:
    """The report's note on where each cell of a sequential campaign stopped, cells grouped by
    outcome, reason and starts: `stops (sequential, detect 2.0%): 3 of 4 decided (2 different,
    1 same), 1 at the budget; different after 3 starts: a x1, b x1; ...`; budget-first cells
    marked `*`. Empty without stops."""
    if not stops:
        return ()
    count = {o.value: sum(1 for s in stops.values() if s["why"] == DECIDED and s["outcome"] == o.value)
             for o in Outcome}
    decided = count[Outcome.DIFFERENT.value] + count[Outcome.SAME.value]
    ended = [f"{n} {_WHERE[why]}" for why in (BUDGET, CAP)
             if (n := sum(1 for s in stops.values() if s["why"] == why))]
    head = (f"stops (sequential, detect {detect:.1%}): {decided} of {len(stops)} decided "
            f"({count[Outcome.DIFFERENT.value]} different, {count[Outcome.SAME.value]} same)"
            + "".join(f", {e}" for e in ended))
    groups: dict[tuple[str, str, int], list[str]] = {}
    for (test, threads), s in stops.items():
        name = (f"{test} x{threads}" if threads else test) + ("*" if s.get("first") else "")
        groups.setdefault((str(s["outcome"]), str(s["why"]), int(s["starts"])), []).append(name)
    parts = [f"{outcome} after {starts} starts{'' if why == DECIDED else f' ({_WHERE[why]})'}: {', '.join(names)}"
             for (outcome, why, starts), names in sorted(groups.items(), key=lambda g: (g[0][1] != DECIDED, g[0]))]
    first = "; * budget first (instruction counts moved, or cannot see the test)" \
        if any(s.get("first") for s in stops.values()) else ""
    return (head + "; " + "; ".join(parts) + first,)
