"""The smallest change a measurement could have detected: the minimum detectable effect (MDE)
of an rQPS (or rNOPM, Insert Benchmark rate, instruction) ratio, from its interval.

A "no significant change" verdict alone does not say what could have been missed: 0.99
[0.98, 1.01] and 0.99 [0.90, 1.09] read alike. The MDE says it: the change that a campaign
with this much noise finds with 80% probability (power) at the interval's 95% confidence.
Pure functions on an `Estimate`; docs/noise.md explains them to users.
"""
from __future__ import annotations

import math

from dbdrift.analysis.noise import Estimate, standard_error, t975, t_from_z

POWER = 0.80
Z80 = 0.841621  # the standard normal's 0.80 quantile

# One-sided Student t quantiles t(0.80, df) for df = 1..30.
_T80 = (1.376, 1.061, 0.978, 0.941, 0.920, 0.906, 0.896, 0.889, 0.883, 0.879, 0.876, 0.873, 0.870,
        0.868, 0.866, 0.865, 0.863, 0.862, 0.861, 0.860, 0.859, 0.858, 0.858, 0.857, 0.856, 0.856,
        0.855, 0.855, 0.854, 0.854)


def t80(df: int) -> float:
    """t(0.80, df): exact table to 30, then the Cornish-Fisher expansion around z = 0.84."""
    if df < 1:
        raise ValueError("df must be >= 1")
    return _T80[df - 1] if df <= 30 else t_from_z(Z80, df)


def detectable_change(est: Estimate) -> float | None:
    """The minimum detectable effect of a ratio estimate, as a fraction (0.031: 3.1%).

    Method: the interval is a Student t interval on ln(ratio) with standard error se and df
    degrees of freedom (noise.standard_error recovers both from its ends). A true change
    of ln size d is detected (its 95% interval excludes 1) with probability 0.80 when
    d = (t(0.975, df) + t(0.80, df)) * se, the usual approximation to the noncentral t. It
    is returned as exp(d) - 1, the larger of the rise and the fall it stands for, so it holds
    in both directions. Assumes what the interval assumes (independent, roughly normal
    logarithms), and that the next campaign is as noisy as this one. The verdict's minimum
    effect comes on top: a change smaller than it is never called, however tight the
    interval (`reported_change`).
    Degenerate cases: no interval (None).
    """
    se = standard_error(est)
    if se is None:
        return None
    s, df = se
    return math.expm1((t975(df) + t80(df)) * s)


def reported_change(est: Estimate, min_effect: float) -> float | None:
    """The smallest change the verdict could report for this cell: its MDE, or the user's
    minimum effect when that is larger (a smaller change is never a regression). A "no
    significant change" reads as "no change of this size or more"."""
    mde = detectable_change(est)
    return None if mde is None else max(mde, min_effect)
