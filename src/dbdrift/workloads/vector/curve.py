"""Recall against queries per second, the way ann-benchmarks reads it, and QPS at equal recall.

A curve is one target's points for one family of index settings (the build settings and the
column type: "hnsw m=16 ef_construction=64 vector"), one point per search setting (ef_search,
probes): the recall@k it reached and its QPS. Only the Pareto frontier counts: a point another
beats on both recall and QPS is never what a user would pick.

QPS at a recall r reads the frontier between the two points around r, linearly in (recall, log
QPS); when even the fastest point already reaches r, its QPS (no extrapolation); when no point
reaches r, nothing (the report says "not reached"). Two targets compare at equal recall, repeat
by repeat (analysis/noise.relative_over_repeats), so the interval spans the repeats' spread.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from dbdrift.analysis.noise import Estimate, relative_over_repeats

@dataclass(frozen=True)
class Point:
    setting: str  # the search setting: "ef_search=40"
    recall: float
    qps: float


def frontier(points: list[Point]) -> list[Point]:
    """The points no other point beats on both recall and QPS, by recall rising (QPS falling)."""
    best: list[Point] = []
    for p in sorted(points, key=lambda p: (-p.qps, -p.recall)):
        if p.qps > 0 and (not best or p.recall > best[-1].recall):
            best.append(p)
    return sorted(best, key=lambda p: p.recall)


def qps_at(points: list[Point], recall: float) -> float | None:
    """The frontier's QPS at `recall`; None when no point reaches it."""
    front = frontier(points)
    if not front or front[-1].recall < recall:
        return None
    if front[0].recall >= recall:
        return front[0].qps
    for lo, hi in zip(front, front[1:]):
        if lo.recall <= recall <= hi.recall:
            if hi.recall == lo.recall:
                return hi.qps
            share = (recall - lo.recall) / (hi.recall - lo.recall)
            return math.exp(math.log(lo.qps) + share * (math.log(hi.qps) - math.log(lo.qps)))
    return None  # pragma: no cover - the frontier spans recall, so a pair brackets it


def relative_at(new: dict[int, list[Point]], base: dict[int, list[Point]], recall: float,
                seconds: float = 1.0) -> Estimate | None:
    """new ÷ base QPS at equal `recall`, over the repeats (numbered keys) both curves reach it in;
    None when no repeat of either reaches it."""
    def values(curves: dict[int, list[Point]]) -> list[tuple[int, float, float]]:
        out = []
        for repeat, points in sorted(curves.items()):
            q = qps_at(points, recall)
            if q is not None:
                out.append((repeat, q, seconds))
        return out
    a, b = values(new), values(base)
    shared = {r for r, _, _ in a} & {r for r, _, _ in b}
    if not shared:
        return None
    return relative_over_repeats([v for v in a if v[0] in shared], [v for v in b if v[0] in shared])


def best_recall(points: list[Point]) -> float | None:
    return max((p.recall for p in points), default=None)
