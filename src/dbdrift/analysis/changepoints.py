"""Change points in a series of per-version (or per-night) estimates, found by Apache Otava's
e-divisive with its merge step (Fleming et al., "Hunter", ICPE 2023), and for each change the
relative shift between the segments on either side with a 95% interval.

Otava is an optional extra (dbdrift's `history`, EXTRA): its dependency pins (an exact
numpy, cloud clients) are too heavy for every user. It is imported only when asked for.

Detection is Otava's; dbdrift adds only the interval of each shift: a Welch t interval on the
logarithms of the two segments' points, where a one-point segment takes its variance from its
own 95% interval when it has one, else from the other segment.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import geometric_mean
from typing import Any

from dbdrift.analysis.noise import JUDGING, t975

MAX_PVALUE = 0.001  # Otava's default significance
WINDOW = 50  # Otava's default sliding window (points)
Interval = tuple[float | None, float | None]  # a 95% interval; None ends when not estimable
EXTRA = ("history", "Apache Otava, the change-point detector")  # the extra that installs Otava, and what it is


class Unavailable(RuntimeError):
    """Apache Otava is not installed; the message says how to install it."""


@dataclass(frozen=True)
class Change:
    """A shift between point `index - 1` and point `index`: after/before - 1 with its interval.
    before and after are the segments' geometric means, the centre the interval is built on,
    so the shift lies in its interval (arithmetic means can put it far outside: a segment of
    nine points at 1 and one at 1000 shifts up by 9,990% by them, by 100% by its logarithms)."""

    index: int
    before: float  # geometric mean of the segment before
    after: float  # geometric mean of the segment after
    change: float  # after / before - 1
    lower: float | None
    upper: float | None
    pvalue: float


def detector() -> Callable[..., Any]:
    """Otava's compute_change_points; Unavailable when it is not installed."""
    try:
        from otava.analysis import compute_change_points
    except ImportError as exc:
        raise Unavailable(f"change points need Apache Otava, which is not installed ({exc})") from None
    detect: Callable[..., Any] = compute_change_points  # Otava has no type information
    return detect


def change_points(values: list[float], intervals: list[tuple[float | None, float | None]] | None = None,
                  min_magnitude: float = JUDGING.min_effect, max_pvalue: float = MAX_PVALUE) -> list[Change]:
    """The changes in `values` (one aggregated point per version), each at least `min_magnitude`
    (relative) and significant at `max_pvalue`. intervals: each point's own 95% interval."""
    if len(values) < 3 or any(v is None or v <= 0 for v in values):
        return []
    found, _weak = detector()([float(v) for v in values], window_len=WINDOW, max_pvalue=max_pvalue,
                              min_magnitude=min_magnitude)
    indexes = sorted(int(cp.index) for cp in found)
    bounds = [0] + indexes + [len(values)]
    own = intervals or [(None, None)] * len(values)
    out = []
    for i, cp in enumerate(sorted(found, key=lambda c: int(c.index))):
        left = slice(bounds[i], bounds[i + 1])
        right = slice(bounds[i + 1], bounds[i + 2])
        before, after = values[left], values[right]
        lower, upper = shift_interval(before, own[left], after, own[right])
        b, a = geometric_mean(before), geometric_mean(after)
        out.append(Change(int(cp.index), b, a, a / b - 1, lower, upper, float(cp.stats.pvalue)))
    return out


def shift_interval(before: list[float], before_iv: Sequence[Interval], after: list[float],
                  after_iv: Sequence[Interval]) -> Interval:
    """95% interval of mean(after)/mean(before) - 1 on the log scale (Welch)."""
    def moments(values: list[float], ivs: Sequence[Interval]) -> tuple[float, float | None, int]:
        logs = [math.log(v) for v in values]
        n = len(logs)
        mean = sum(logs) / n
        if n >= 2:
            return mean, sum((x - mean) ** 2 for x in logs) / (n - 1), n
        lo, hi = ivs[0] if ivs else (None, None)
        if lo and hi and lo > 0:
            se = math.log(hi / lo) / (2 * 1.96)
            return mean, se * se, 1  # a single point's sampling variance, from its own interval
        return mean, None, 1

    mb, vb, nb = moments(before, before_iv)
    ma, va, na = moments(after, after_iv)
    fallback = vb if vb is not None else va  # a one-point side without an interval borrows the other's variance
    if fallback is None:
        return None, None
    var_b, var_a = (fallback if vb is None else vb), (fallback if va is None else va)
    terms = (var_b / nb if nb > 1 else var_b, var_a / na if na > 1 else var_a)
    se2 = terms[0] + terms[1]
    diff = ma - mb
    if se2 == 0:
        return math.exp(diff) - 1, math.exp(diff) - 1
    # Welch-Satterthwaite degrees of freedom; a one-point segment counts as one degree
    dfs = (max(nb - 1, 1), max(na - 1, 1))
    df = se2 ** 2 / sum(t * t / d for t, d in zip(terms, dfs) if t > 0)
    half = t975(max(1, int(df))) * math.sqrt(se2)
    return math.exp(diff - half) - 1, math.exp(diff + half) - 1


def new_changes(values: list[float], intervals: list[Interval] | None, min_magnitude: float = JUDGING.min_effect,
                max_pvalue: float = MAX_PVALUE, newest: int = 1, now: list[Change] | None = None) -> list[Change]:
    """The changes found with the newest `newest` points that were not found without them: what
    the latest measurement brought (`history --fail-on new-regression`). now: the changes of all
    `values` when the caller has them already."""
    if now is None:
        now = change_points(values, intervals, min_magnitude, max_pvalue)
    before = {c.index for c in change_points(values[:-newest], intervals[:-newest] if intervals else None,
                                             min_magnitude, max_pvalue)} if len(values) > newest else set()
    return [c for c in now if c.index not in before]
