"""Relative throughput: rQPS = value(target) / value(base) per microbenchmark (spec §4.1).

Pure functions over Measurement values; imports only model/units. Ratios are new/base, >1 faster.
"""
from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean


@dataclass(frozen=True)
class Measurement:
    """Throughput of one target on one microbenchmark at one client count (one repeat)."""

    test: str
    group: str
    target: str
    threads: int
    value: float | None  # QPS, or Krps for scan; None when the run failed
    metric: str = "qps"
    status: str = "ok"


@dataclass(frozen=True)
class CellSummary:
    """Throughput of a target on a test: mean over the repeats that succeeded."""

    value: float | None
    runs: int
    failed: int


@dataclass(frozen=True)
class RelativeRow:
    test: str
    group: str
    threads: int
    metric: str
    values: dict[str, CellSummary]  # target -> absolute
    ratios: dict[str, float | None]  # compared target -> rQPS against its reference
    references: dict[str, str]  # compared target -> the target it is divided by


@dataclass(frozen=True)
class Comparison:
    targets: tuple[str, ...]  # all targets in display order, base first
    base: str
    compared: tuple[str, ...]  # the targets that get an rQPS column (col-1, col-2, ...)
    chain: bool
    rows: tuple[RelativeRow, ...]


def summarize_cell(values: list[Measurement]) -> CellSummary:
    """Mean of successful repeats; no successful repeat gives value None."""
    ok = [m.value for m in values if m.status == "ok" and m.value is not None]
    return CellSummary(fmean(ok) if ok else None, len(ok), len(values) - len(ok))


def ratio(new: float | None, base: float | None) -> float | None:
    """new/base; None when either side is missing or the base is zero."""
    if new is None or base is None or base == 0:
        return None
    return new / base


def compare(measurements: list[Measurement], targets: list[str], base: str, test_order: list[str],
            chain: bool = False) -> Comparison:
    """Build relative rows in `test_order`, one per (test, threads) that any target ran.

    Default: every non-base target against `base`. `chain`: each target against the one
    before it in `targets` (5.6 -> 5.7 -> 8.0 style), base first.
    """
    ordered = [base] + [t for t in targets if t != base]
    compared = tuple(ordered[1:])
    references = {t: (ordered[i] if chain else base) for i, t in enumerate(compared)}
    by_cell: dict[tuple[str, int], dict[str, list[Measurement]]] = {}
    groups: dict[str, tuple[str, str]] = {}
    for m in measurements:
        by_cell.setdefault((m.test, m.threads), {}).setdefault(m.target, []).append(m)
        groups[m.test] = (m.group, m.metric)
    position = {name: i for i, name in enumerate(test_order)}
    keys = sorted(by_cell, key=lambda k: (k[1], position.get(k[0], len(position)), k[0]))
    rows = []
    for test, threads in keys:
        values = {t: summarize_cell(by_cell[(test, threads)].get(t, [])) for t in ordered}
        ratios = {t: ratio(values[t].value, values[references[t]].value) for t in compared}
        group, metric = groups[test]
        rows.append(RelativeRow(test, group, threads, metric, values, ratios, references))
    return Comparison(tuple(ordered), base, compared, chain, tuple(rows))
