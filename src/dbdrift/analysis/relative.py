"""Relative throughput: rQPS = value(target) / value(base) per microbenchmark, with intervals and
verdicts (docs/methodology.md for the report layout, docs/noise.md for intervals and verdicts).

Pure functions over Measurement values; imports only analysis/noise.py and analysis/power.py.
Ratios are new/base, >1 faster.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from statistics import fmean

from dbdrift.analysis.noise import (JUDGING, Estimate, IntervalSample, Judging, RunSample, Verdict, relative,
                                    throughput, verdict, with_campaign_sd)
from dbdrift.analysis.power import reported_change
from dbdrift.model import STEAL_MAX_PCT


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
    round: int = 0  # the repeat: pairs runs across targets (turns pair by interval round)
    intervals: tuple[IntervalSample, ...] = ()
    warnings: tuple[str, ...] = ()
    note: str = ""  # a run that is not ok says why in a few words: "failed", "skipped: server died"

    def sample(self) -> RunSample:
        """The run as the noise estimators see it; a run without intervals is one sample (it
        must then have a value: failed runs are left out before)."""
        if self.intervals:
            return RunSample(self.round, self.intervals)
        assert self.value is not None, "a run without a value has no sample"
        return RunSample(self.round, (IntervalSample(self.value, 1.0),))


@dataclass(frozen=True)
class CellSummary:
    """Throughput of a target on a test (compare: noise.throughput's value, the one its rQPS
    divides); `status` says why there is none ("failed", "skipped: server died", "not run"),
    "" when there is one."""

    value: float | None
    runs: int
    failed: int
    skipped: int = 0
    status: str = ""


@dataclass(frozen=True)
class Cell:
    """One target on one (test, threads) row: its absolute throughput, and for a compared target
    its rQPS against its reference with interval and verdict."""

    target: str
    absolute: CellSummary
    throughput: Estimate  # absolute throughput with its interval
    warnings: tuple[str, ...] = ()  # host and run warnings
    reference: str | None = None  # compared targets: the target it is divided by
    ratio: float | None = None  # rQPS
    estimate: Estimate | None = None  # rQPS with its interval
    verdict: Verdict | None = None
    plan_changed: bool = False  # a statement of the test got another plan shape than on the reference
    # (the reference's packager, the target's) when the two servers were built by different
    # packagers (results/targets.packager): the ratio measures their compilers as well as the code
    packagers: tuple[str, str] | None = None
    # the detectable change: the smallest change (a fraction, either way) the verdict could have
    # reported, the rQPS interval's minimum detectable effect at 80% power, never below the cell's
    # minimum effect (analysis/power.py); None without an interval or a measured cell
    detectable: float | None = None


@dataclass(frozen=True)
class RelativeRow:
    test: str
    group: str
    threads: int
    metric: str
    cells: dict[str, Cell]  # every target, in display order

    def status(self, target: str) -> str:
        """Why `target`'s cell has no rQPS: its own runs' status, else its reference's
        ("base failed"), "" when both were measured."""
        cell = self.cells.get(target)
        if cell is None:
            return "not run"
        if cell.absolute.status:
            return cell.absolute.status
        ref = self.cells.get(cell.reference) if cell.reference else None
        if ref and ref.absolute.status:
            return f"{ref.target}: {ref.absolute.status}"
        return ""


@dataclass(frozen=True)
class Comparison:
    targets: tuple[str, ...]  # all targets in display order, base first
    base: str
    compared: tuple[str, ...]  # the targets that get an rQPS column (col-1, col-2, ...)
    chain: bool
    rows: tuple[RelativeRow, ...]
    judging: Judging = JUDGING  # what its verdicts judged by, before each test's minimum effect is raised to its floor
    references: dict[str, str] = field(default_factory=dict)  # compared target -> the target it is divided by
    against: str = ""  # "" (the base, or the chain) | variant | version | engine: a matrix view's pairing


def summarize_cell(values: list[Measurement]) -> CellSummary:
    """Mean of successful repeats; no successful repeat gives value None and a status: the
    note of its last run that is not ok ("failed", "skipped: server died"), or "not run"."""
    ok = [m.value for m in values if m.status == "ok" and m.value is not None]
    skipped = sum(m.status == "skipped" for m in values)
    status = "" if ok else next((m.note or m.status for m in reversed(values) if m.status != "ok"), "not run")
    return CellSummary(fmean(ok) if ok else None, len(ok), len(values) - len(ok) - skipped, skipped, status)


def ratio(new: float | None, base: float | None) -> float | None:
    """new/base; None when either side is missing or the base is zero."""
    if new is None or base is None or base == 0:
        return None
    return new / base


def compare(measurements: list[Measurement], targets: list[str], base: str, test_order: list[str],
            chain: bool = False, judging: Judging = JUDGING,
            noise_floor: dict[str, float] | None = None,
            campaign_sd: dict[str, tuple[float, int]] | None = None,
            references: dict[str, str] | None = None, against: str = "",
            planned: dict[tuple[str, int], tuple[str, str]] | None = None) -> Comparison:
    """Build relative rows in `test_order`, one per (test, threads) that any target ran or that
    `planned` ((test, threads) -> (group, metric): what the campaign set out to measure) names,
    so a cell no target got to is a row of not-measured cells rather than left out.

    Default: every non-base target against `base`. `chain`: each target against the one
    before it in `targets` (5.6 -> 5.7 -> 8.0 style), base first. Each cell also gets an
    rQPS interval (analysis.noise.relative), a verdict, whose minimum effect is raised to
    the test's measured A/A noise floor where `noise_floor` gives one, and the detectable change
    of that interval at that minimum effect (analysis.power.reported_change). `campaign_sd` (per
    interval method, from A/A calibration: analysis.floor.campaign_sd) widens each interval
    estimated by a method it has by what a whole campaign draws (noise.with_campaign_sd).
    `references` (target -> the target it is divided by) replaces both: only the targets it
    names get an rQPS column, and `against` says what it pairs (a configuration matrix's views).
    """
    ordered = [base] + [t for t in targets if t != base]
    if references is None:
        compared = tuple(ordered[1:])
        references = {t: (ordered[i] if chain else base) for i, t in enumerate(compared)}
    else:
        compared = tuple(t for t in ordered if t in references)
    by_cell: dict[tuple[str, int], dict[str, list[Measurement]]] = {}
    groups: dict[str, tuple[str, str]] = {}
    for (test, threads), group_metric in (planned or {}).items():
        by_cell.setdefault((test, threads), {})
        groups[test] = group_metric
    for m in measurements:
        by_cell.setdefault((m.test, m.threads), {}).setdefault(m.target, []).append(m)
        groups[m.test] = (m.group, m.metric)
    position = {name: i for i, name in enumerate(test_order)}
    keys = sorted(by_cell, key=lambda k: (k[1], position.get(k[0], len(position)), k[0]))
    rows = []
    for test, threads in keys:
        cell = by_cell[(test, threads)]
        effect = max(judging.min_effect, (noise_floor or {}).get(test, 0.0))
        rows.append(_row(test, threads, groups[test], cell, ordered, compared, references,
                         replace(judging, min_effect=effect), campaign_sd or {}))
    return Comparison(tuple(ordered), base, compared, chain, tuple(rows), judging, references, against)


def _ok_samples(runs: list[Measurement]) -> list[RunSample]:
    return [m.sample() for m in runs if m.status == "ok" and m.value is not None]


def _row(test: str, threads: int, group_metric: tuple[str, str], cell: dict[str, list[Measurement]], ordered: list[str],
         compared: tuple[str, ...], references: dict[str, str], judging: Judging,
         campaign: dict[str, tuple[float, int]]) -> RelativeRow:
    samples = {t: _ok_samples(cell.get(t, [])) for t in ordered}
    estimates = {t: throughput(samples[t]) for t in ordered}
    values = {t: _measured(summarize_cell(cell.get(t, [])), estimates[t]) for t in ordered}
    cells = {}
    for t in ordered:
        throughput_est = estimates[t]
        warnings = tuple(dict.fromkeys(w for m in cell.get(t, []) for w in m.warnings)) + _dropped_note(throughput_est)
        if t not in references:
            cells[t] = Cell(t, values[t], throughput_est, warnings)
            continue
        ref = references[t]
        est = _widened(relative(samples[t], samples[ref]), campaign)
        value = est.value if est.value is not None else ratio(values[t].value, values[ref].value)
        unmeasured = bool(values[t].status or values[ref].status)
        cells[t] = Cell(t, values[t], throughput_est, warnings, ref, value, est,
                        Verdict.NOT_MEASURED if unmeasured else verdict(est, judging),
                        detectable=None if unmeasured else reported_change(est, judging.min_effect))
    return RelativeRow(test, group_metric[0], threads, group_metric[1], cells)


def _measured(summary: CellSummary, est: Estimate) -> CellSummary:
    """The cell's absolute throughput is the figure its rQPS divides: events over measured time,
    seconds of heavy steal left out (noise.throughput), not the runs' stored values."""
    return replace(summary, value=est.value) if summary.value is not None and est.value is not None else summary


def _widened(est: Estimate, campaign: dict[str, tuple[float, int]]) -> Estimate:
    sd = campaign.get(est.method)
    return with_campaign_sd(est, *sd) if sd else est


def _dropped_note(est: Estimate) -> tuple[str, ...]:
    if not est.dropped_intervals:
        return ()
    return (f"{est.dropped_intervals} interval(s) with host CPU steal > {STEAL_MAX_PCT:g}% left out of the estimates",)
