"""Noise floor per microbenchmark from an A/A comparison (a target against a copy of itself).

Method: for each test, the A/A rQPS estimate should be 1; the floor is how far from 1 the
comparison could look on this host: max(|estimate - 1|, relative half width of its 95%
interval). Verdicts then require an effect of at least max(min_effect, floor). A test without
an A/A interval gets no floor (the user's minimum effect applies).

The same A/A campaigns also measure what a whole campaign draws (campaign_sd): reports add
it to every interval estimated the same way.
"""
from __future__ import annotations

from collections.abc import Iterable

from dbdrift.analysis.noise import between_campaign_sd
from dbdrift.analysis.relative import Comparison


def noise_floor(aa: Comparison) -> dict[str, float]:
    floors: dict[str, float] = {}
    for row in aa.rows:
        for target in aa.compared:
            est = row.cells[target].estimate
            if est is None or est.value is None or est.half_width is None:
                continue
            floor = max(abs(est.value - 1.0), est.half_width)
            floors[row.test] = max(floors.get(row.test, 0.0), floor)
    return floors


def campaign_sd(aa: Iterable[Comparison]) -> dict[str, tuple[float, int]]:
    """Per interval method, the between-campaign sd of ln rQPS (and how many A/A campaigns it
    rests on) from the A/A comparisons `aa` (analysis.noise.between_campaign_sd)."""
    return between_campaign_sd([[est for row in comp.rows for target in comp.compared
                                 if (est := row.cells[target].estimate) is not None] for comp in aa])
