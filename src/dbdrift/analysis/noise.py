"""Throughput and rQPS with 95% confidence intervals, and verdicts (regression/improvement/...).

Pure functions over literal samples; imports only the steal threshold from dbdrift.model. Every estimator states
its method, assumptions and degenerate cases in its docstring; docs/noise.md explains them to
users.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import StrEnum
from statistics import fmean, stdev

from dbdrift.model import STEAL_MAX_PCT  # intervals with more host CPU steal are left out (re-exported)

MIN_BATCHES = 3
MIN_REPEATS = MIN_BATCHES  # an interval over repeats needs this many (relative_over_repeats, D23)
TURN_BATCHES = 20  # paired turns are grouped into this many contiguous batches for the interval
TURN_TRIM = 0.2  # the typical turn (Estimate.typical): share of paired turns trimmed from each end



class Method(StrEnum):
    """How an estimate's interval was formed. Values are what reports print and the store's
    calibrations are keyed by, so they never change."""

    NONE = "none"  # nothing measured
    T_OVER_RUNS = "t over runs"
    SINGLE_SAMPLE = "single sample"
    BATCH_MEANS = "batch means"
    PAIRED_ROUNDS = "paired rounds"
    NO_INTERVAL = "no interval"
    UNPAIRED_DELTA = "unpaired delta"
    PAIRED_TURNS = "paired turns"
    PAIRED_TURNS_BATCHED = "paired turns, batch ratios"
    TURNS_OVER_REPEATS_NO_T = "paired turns over repeats"  # too few repeats for a t interval
    OVER_REPEATS = "paired turns, t over repeats"
    CROSSOVER = "paired turns, crossover over repeats"

    @property
    def within_one_start(self) -> bool:
        """Turns paired inside one start of each server: what a start draws is not in the interval."""
        return self in (Method.PAIRED_TURNS, Method.PAIRED_TURNS_BATCHED)

    @property
    def over_starts(self) -> bool:
        """An interval over the campaign's server starts (repeats): what a campaign draws is not in it."""
        return self in (Method.OVER_REPEATS, Method.CROSSOVER)


class Verdict(StrEnum):
    """What a cell's rQPS says (docs/noise.md); the value is the word reports print."""

    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    NO_CHANGE = "no significant change"
    TOO_NOISY = "too noisy"
    NO_INTERVAL = "no interval"
    NOT_MEASURED = "not measured"

    @property
    def unclear(self) -> bool:
        """Neither direction can be trusted: too noisy, no interval, or not measured."""
        return self in (Verdict.TOO_NOISY, Verdict.NO_INTERVAL, Verdict.NOT_MEASURED)

    @property
    def mark(self) -> str:
        """The one-character mark of the text and Markdown reports."""
        return {"regression": "-", "improvement": "+", "no significant change": "=", "too noisy": "~",
                "no interval": "?", "not measured": "x"}[self.value]


@dataclass(frozen=True)
class Judging:
    """How every verdict judges a ratio and its interval (docs/noise.md), passed down from the
    command line's --min-effect and --noisy to each workload's report: these defaults are the only
    place they are written. The level is the intervals' own; no other is formed, so none other is
    taken."""

    min_effect: float = 0.02  # the smallest change called a regression or improvement (or a change point)
    noisy_width: float = 0.05  # an interval that holds 1 and is wider than ±this is "too noisy"
    level: float = 0.95  # the confidence of every interval: t975 and Z975 are this level's quantiles alone

    def __post_init__(self) -> None:
        if self.level != Judging.level:
            raise ValueError(f"intervals are formed at {Judging.level:.0%} confidence only (noise.t975), "
                             f"not {self.level}")


JUDGING = Judging()  # the defaults: what a report judges by unless told otherwise


# Two-sided 95% Student t quantiles t(0.975, df) for df = 1..30.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
         2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
         2.052, 2.048, 2.045, 2.042)


Z975 = 1.959964  # the standard normal's 0.975 quantile


def t975(df: int) -> float:
    """t(0.975, df): exact table to 30, then the Cornish-Fisher expansion around z=1.96."""
    if df < 1:
        raise ValueError("df must be >= 1")
    if df <= 30:
        return _T975[df - 1]
    return t_from_z(Z975, df)


def t_from_z(z: float, df: int) -> float:
    """The t quantile of df degrees of freedom at the normal quantile z: the Cornish-Fisher
    expansion, within 0.001 of the exact value from df = 30 up."""
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


@dataclass(frozen=True)
class IntervalSample:
    """One driver interval: its throughput, length (weight) and host steal. In a run in turns
    run (targets taking turns) an interval is one turn and `round` pairs it with the other
    targets' turns of the same round."""

    value: float
    duration_s: float
    steal_pct: float | None = None
    round: int | None = None
    position: int | None = None  # the turn's place in its round (0 = first); None: not stored


@dataclass(frozen=True)
class RunSample:
    """One run (a repeat) of one target; `round` pairs it with others."""

    round: int
    intervals: tuple[IntervalSample, ...]


@dataclass(frozen=True)
class Estimate:
    """A throughput (or ratio) with a 95% interval; lower/upper are None when not estimable."""

    value: float | None
    lower: float | None
    upper: float | None
    n: int  # samples the interval is built from (rounds, or batches)
    method: Method
    dropped_intervals: int = 0
    campaign_sd: float | None = None  # between-campaign sd of ln rQPS added to the interval (with_campaign_sd)
    df: int | None = None  # degrees of freedom of the t interval when not n - 1 (crossover: n - 2)
    typical: float | None = None  # runs in turns: the typical turn's ratio (paired_turns), beside the estimate

    @property
    def bursty(self) -> bool:
        """The typical turn's ratio lies outside the interval: the difference (or the lack of one)
        comes in bursts, a stall of one target in some turns, not in every turn alike."""
        if self.typical is None or self.lower is None or self.upper is None:
            return False
        return not self.lower <= self.typical <= self.upper

    @property
    def half_width(self) -> float | None:
        """Relative half width of the interval, (upper - lower) / 2 / value."""
        if self.value is None or self.lower is None or self.upper is None or self.value == 0:
            return None
        return (self.upper - self.lower) / 2 / self.value


def kept_intervals(intervals: tuple[IntervalSample, ...],
                   steal_max_pct: float = STEAL_MAX_PCT) -> tuple[list[IntervalSample], int]:
    """Intervals whose steal is known and ≤ steal_max_pct, or unknown (kept: no evidence).

    Degenerate case: if every interval is over the limit, all are kept (and the caller sees
    the count of dropped ones as 0) rather than having no value at all.
    """
    kept = [iv for iv in intervals if _calm(iv, steal_max_pct)]
    return (kept, len(intervals) - len(kept)) if kept else (list(intervals), 0)


def run_value(run: RunSample, steal_max_pct: float = STEAL_MAX_PCT) -> tuple[float | None, int]:
    """Duration-weighted mean throughput over the run's kept intervals, and how many were dropped."""
    kept, dropped = kept_intervals(run.intervals, steal_max_pct)
    total = sum(iv.duration_s for iv in kept)
    if total <= 0:
        return None, dropped
    return sum(iv.value * iv.duration_s for iv in kept) / total, dropped


def mean_interval(values: list[float]) -> tuple[float, float, float] | None:
    """Mean and 95% t-interval of independent samples; None for fewer than 2 samples. The
    samples may be of either sign (logarithms); a positive quantity goes through log_interval."""
    return t_interval(values) if len(values) >= 2 else None


def t_interval(values: list[float]) -> tuple[float, float, float]:
    """mean_interval of two or more samples (a caller that has counted them)."""
    m = fmean(values)
    half = t975(len(values) - 1) * stdev(values) / math.sqrt(len(values))
    return m, m - half, m + half


def log_interval(values: list[float]) -> tuple[float, float, float] | None:
    """Geometric mean and 95% interval of positive samples: a Student t interval on the mean
    of their logarithms, exponentiated (n - 1 degrees of freedom).

    For a quantity that cannot be negative (a throughput, a latency) both ends stay above
    zero however few or spread the samples; a t interval on the raw values runs below zero as
    soon as sd > mean·√n / t, which two samples ten times apart do under t(1) = 12.7.
    Assumes the logarithms independent and roughly normal. Fewer than 2 samples, or a sample
    that is not positive (no logarithm): None.
    """
    if len(values) < 2 or any(not v > 0 for v in values):
        return None
    m, lo, hi = t_interval([math.log(v) for v in values])
    return math.exp(m), math.exp(lo), math.exp(hi)


def batch_means(intervals: list[IntervalSample], batches: int = 10) -> list[float]:
    """Cut a series into contiguous batches and return each batch's weighted mean.

    The batch-means method: consecutive intervals are autocorrelated (steal and drift come in
    bursts), means of long contiguous batches are close to independent. Fewer intervals than
    batches gives one batch per interval.
    """
    if not intervals:
        return []
    batches = min(batches, len(intervals))
    size = len(intervals) / batches
    out = []
    for b in range(batches):
        chunk = intervals[round(b * size):round((b + 1) * size)]
        total = sum(iv.duration_s for iv in chunk)
        if chunk and total > 0:
            out.append(sum(iv.value * iv.duration_s for iv in chunk) / total)
    return out


def throughput(runs: list[RunSample], steal_max_pct: float = STEAL_MAX_PCT) -> Estimate:
    """Throughput of one target on one microbenchmark, with a 95% interval.

    Method: the value is the mean of the runs' steal-filtered throughputs, each its events over
    its measured time (run_value), the figure of the absolute table and the one rQPS divides
    (runs in turns: repeats_mean, each parity of repeats weighing half from 2 of each).
    With 3 or more runs each run's value is one sample; with fewer, batch means over the pooled
    kept intervals (10 batches) stand in for runs. The interval is log_interval's over those
    samples (a t interval on their logarithms), scaled to sit around the value:
    value·exp(±half), so it is never below zero and always holds the value. Assumes samples
    independent and their logarithms roughly normal. Fewer than MIN_BATCHES samples (two runs of
    one value each: t(1) = 12.7 makes any interval absurd), or a sample of 0: value only, no
    interval.
    """
    dropped = 0
    values: list[float] = []
    numbers: list[int] = []
    for run in runs:
        value, d = run_value(run, steal_max_pct)
        dropped += d
        if value is not None:
            values.append(value)
            numbers.append(run.round)
    if not values:
        return Estimate(None, None, None, 0, Method.NONE, dropped)
    in_turns = all(iv.round is not None for run in runs for iv in run.intervals)
    value = repeats_mean(values, numbers) if in_turns else fmean(values)
    if len(values) >= MIN_BATCHES:
        return _around(value, values, Method.T_OVER_RUNS, dropped)
    pooled = [iv for run in runs for iv in kept_intervals(run.intervals, steal_max_pct)[0]]
    samples = batch_means(pooled)
    if len(samples) < MIN_BATCHES:
        return Estimate(value, None, None, len(samples), Method.SINGLE_SAMPLE, dropped)
    return _around(value, samples, Method.BATCH_MEANS, dropped)


def repeats_mean(values: list[float], repeats: list[int]) -> float:
    """The mean of per-repeat values of a target whose servers took turns: with 2 or more
    repeats of each parity, each parity weighs half (the mean of the even repeats' mean and the
    odd repeats' mean), since the servers swap memory placement at every restart and a parity
    carries an offset of its own (crossover, D12); otherwise the plain mean."""
    arms = [[v for v, rep in zip(values, repeats) if rep % 2 == parity] for parity in (0, 1)]
    if min(len(arm) for arm in arms) >= 2:
        return (fmean(arms[0]) + fmean(arms[1])) / 2
    return fmean(values)


def _around(value: float, samples: list[float], method: Method, dropped: int) -> Estimate:
    """`value` with the relative width of log_interval(samples) on either side."""
    found = log_interval(samples)
    if found is None:
        return Estimate(value, None, None, len(samples), method, dropped)
    center, lower, upper = found
    # lower / center first: a quotient ≤ 1 keeps the product ≤ value under rounding
    return Estimate(value, value * (lower / center), value * (upper / center), len(samples), method, dropped)


def relative(new: list[RunSample], base: list[RunSample], steal_max_pct: float = STEAL_MAX_PCT) -> Estimate:
    """rQPS = new/base: the ratio of the two targets' throughputs (`throughput`: events over
    measured time, the absolute table's figure), with a 95% interval from the design's pairing.

    The estimate never depends on the pairing: it is throughput(new) / throughput(base), so a
    report's rQPS is its absolute table's ratio, and a target that loses a fifth of its time in
    stalls (a checkpoint, a lock, a purge burst) is a fifth slower (docs/noise.md, D6).
    The interval is a t interval on the log scale around ln(estimate), its width from:
    - paired turns (runs in turns, intervals with a `round`): see paired_turns;
    - paired runs (3+ rounds that both targets ran, no turns): the per-round ln(new/base) of the
      runs' throughputs, t with rounds - 1 df ("paired rounds"); pairing cancels what both
      targets saw in the same round (drift, bursts of steal), assuming it multiplicative;
    - otherwise the two throughputs' log standard errors added ("unpaired delta"):
      var(ln r) = se_new^2 + se_base^2, where se = ln(upper / lower) / 2 / t.
    Either side without a throughput, or with 0: no estimate.
    """
    a, b = throughput(new, steal_max_pct), throughput(base, steal_max_pct)
    if a.value is None or b.value is None or b.value == 0 or a.value == 0:
        return Estimate(None, None, None, 0, Method.NONE)
    point = a.value / b.value
    turns = paired_turns(new, base, steal_max_pct, point)
    if turns is not None:
        return turns
    new_by_round = {r.round: run_value(r, steal_max_pct)[0] for r in new}
    base_by_round = {r.round: run_value(r, steal_max_pct)[0] for r in base}
    pairs = [(new_by_round[k], base_by_round[k]) for k in sorted(set(new_by_round) & set(base_by_round))]
    logs = [math.log(n / b) for n, b in pairs if n and b]
    if len(logs) >= MIN_BATCHES:
        return _around_log(point, logs, Method.PAIRED_ROUNDS)
    if a.lower is None or b.lower is None or a.upper is None or b.upper is None:
        return Estimate(point, None, None, 0, Method.NO_INTERVAL)
    t_a, t_b = t975(max(a.n - 1, 1)), t975(max(b.n - 1, 1))
    se = math.hypot(math.log(a.upper / a.lower) / 2 / t_a, math.log(b.upper / b.lower) / 2 / t_b)
    df = max(min(a.n, b.n) - 1, 1)
    half = t975(df) * se
    return Estimate(point, point * math.exp(-half), point * math.exp(half), min(a.n, b.n), Method.UNPAIRED_DELTA)


def relative_over_repeats(new: list[tuple[int, float, float]], base: list[tuple[int, float, float]]) -> Estimate:
    """new ÷ base when each repeat gives one value per target, (repeat, value, seconds): each
    repeat is one run of one interval and the repeat number pairs the two targets' runs. The
    estimate is the ratio of the two targets' mean values (their absolute table's ratio); from
    MIN_REPEATS repeats both ran, a t interval over the per-repeat log ratios around it ("paired
    rounds"). Fewer repeats give no interval (`NO_INTERVAL`): a t interval over 2 values has
    1 degree of freedom (t = 12.7) and reads like [0.02, 59.6], so none is formed
    (docs/noise.md, D23). The Insert Benchmark's steps, TPROC-C's runs, vector search and HTAP use it."""
    def samples(values: list[tuple[int, float, float]]) -> list[RunSample]:
        return [RunSample(rep, (IntervalSample(value, seconds or 1.0),)) for rep, value, seconds in values]
    return relative(samples(new), samples(base))


def paired_turns(new: list[RunSample], base: list[RunSample], steal_max_pct: float = STEAL_MAX_PCT,
                 point: float | None = None) -> Estimate | None:
    """rQPS from runs in which the targets took turns; None when the runs have no turn rounds.

    Estimate: `point`, the ratio of the targets' throughputs (relative computes it; computed
    here when not given): every turn counts with its length, so a turn that a lock or a
    checkpoint stretched from 10 ms to 300 ms counts as 300 ms with its few events.
    Interval (one start of the servers, 1 or 2 repeats): the batch-means method for a ratio
    estimator. The pairs of turns (the two targets' turns of one round), in time order, are cut
    into TURN_BATCHES contiguous batches; each batch's ratio of throughputs (its events over its
    time, for each target) is one sample, and a Student t interval over their logarithms
    (batches - 1 df), centred on ln(point), is exponentiated. Neighbouring pairs are not
    independent (a burst of steal, a checkpoint or a stall spans many rounds); batches of many
    rounds are close to independent, and a stall that hits some batches and not others widens
    the interval instead of being cut away. Assumes round effects hit both turns of a round
    alike (turns of 10 ms inside one burst), batch ratios roughly lognormal. With fewer than
    4 pairs per batch for MIN_BATCHES batches, the pairs themselves are the samples.
    Steal: a pair is left out of the interval when either turn lies in a second with more than
    `steal_max_pct` host steal (the estimate leaves out those turns too, each target's own, see
    throughput), unless that leaves none.
    Repeats: with pairs from MIN_BATCHES or more repeats, each on its own start of the servers
    (runner: `restart = "repeat"`), the interval is over the repeats (see over_repeats), since
    each start draws an offset that lasts the server's life and no interval inside one start
    can hold it.
    `typical` on the estimate: the robust figure of the typical turn (exp of the 20%-trimmed
    mean of the pairs' log ratios, per repeat then averaged as over_repeats does), kept beside
    the estimate so a cell whose throughput and typical turn disagree beyond the interval (a
    difference that comes in bursts) can be flagged.
    """
    a, b = _turns_by_key(new), _turns_by_key(base)
    if a is None or b is None:
        return None
    keys = [k for k in sorted(set(a) & set(b)) if a[k].duration_s > 0 and b[k].duration_s > 0]
    if not keys:
        return Estimate(None, None, None, 0, Method.NONE)
    if point is None:
        ta, tb = throughput(new, steal_max_pct).value, throughput(base, steal_max_pct).value
        if not ta or not tb:
            return Estimate(None, None, None, 0, Method.NONE)
        point = ta / tb
    repeats = sorted({k[0] for k in keys})
    if len(repeats) >= MIN_BATCHES:
        # steal is left out within each repeat, never a whole repeat: the repeats are the
        # design's samples, and a run short enough to sit in one stolen second would vanish
        per_repeat = {rep: _calm_pairs([k for k in keys if k[0] == rep], a, b, steal_max_pct) for rep in repeats}
        found_logs = {rep: _batch_log_ratio(pairs, a, b) for rep, (pairs, _) in per_repeat.items()}
        logs = {rep: x for rep, x in found_logs.items() if x is not None}
        numbers = [rep for rep in repeats if rep in logs]
        typical = _typical([_pair_logs(per_repeat[rep][0], a, b) for rep in numbers], numbers)
        est = over_repeats([logs[rep] for rep in numbers], numbers, center=math.log(point),
                           dropped=sum(d for _, d in per_repeat.values()))
        return replace(est, typical=typical)
    pairs, dropped = _calm_pairs(keys, a, b, steal_max_pct)
    typical = _typical([_pair_logs(pairs, a, b)], [0])
    batches = min(TURN_BATCHES, len(pairs) // 4)
    samples: list[float] = []
    method = Method.PAIRED_TURNS_BATCHED
    if batches >= MIN_BATCHES:
        size = len(pairs) / batches
        ratios = [_batch_log_ratio(pairs[round(i * size):round((i + 1) * size)], a, b) for i in range(batches)]
        samples = [x for x in ratios if x is not None]
    if len(samples) < MIN_BATCHES:
        samples, method = _pair_logs(pairs, a, b), Method.PAIRED_TURNS
    if len(samples) < MIN_BATCHES:
        return Estimate(point, None, None, len(samples), method, dropped, typical=typical)
    return replace(_around_log(point, samples, method, dropped), typical=typical)


def over_repeats(per_repeat: list[float], repeats: list[int] | None = None, center: float | None = None,
                 dropped: int = 0) -> Estimate:
    """rQPS from several repeats in turns, each repeat one start of every server, given each
    repeat's ln rQPS (`per_repeat`; `repeats` numbers them, list positions otherwise).

    Method: a Student t interval over the per-repeat values (repeats - 1 degrees of freedom)
    around `center` (ln of the campaign's estimate, the ratio of the targets' throughputs;
    the mean of the values when not given), exponentiated. This is the two-level
    (random-effects) interval of a balanced design: the spread of per-repeat values holds both
    the noise inside each start and the offset each start draws (what memory placement, code
    layout and the like give that server for its life; docs/noise.md), so the interval covers
    both, which no interval from one start can. Assumes the per-repeat values independent (the
    servers restarted between repeats) and roughly normal. What every repeat of a campaign
    shares, this interval cannot hold (docs/noise.md); calibrations add it (with_campaign_sd).
    With 2 or more repeats of each parity the interval's width is the crossover one instead,
    see crossover. Fewer than 2 values: no interval.
    """
    numbers = repeats if repeats is not None else list(range(len(per_repeat)))
    if len(per_repeat) < 2:
        value = math.exp(center if center is not None else per_repeat[0]) if per_repeat else None
        return Estimate(value, None, None, len(per_repeat), Method.TURNS_OVER_REPEATS_NO_T, dropped)
    arms = [[c for rep, c in zip(numbers, per_repeat) if rep % 2 == parity] for parity in (0, 1)]
    if min(len(arm) for arm in arms) >= 2:
        m, se, df = crossover(arms[0], arms[1])
        value = math.exp(m if center is None else center)
        half = t975(df) * se
        return Estimate(value, value * math.exp(-half), value * math.exp(half), len(per_repeat), Method.CROSSOVER,
                        dropped, df=df)
    est = _around_log(math.exp(center if center is not None else fmean(per_repeat)), per_repeat, Method.OVER_REPEATS,
                      dropped)
    return est


def crossover(even: list[float], odd: list[float]) -> tuple[float, float, int]:
    """The two-period crossover of per-repeat ln ratios of even- and odd-numbered repeats: the
    mean of the two arms' means, its standard error from the pooled within-arm variance, and
    its degrees of freedom (repeats - 2).

    Why: before each repeat after the first the runner stops every server, then starts every
    one, both in the same order: as listed before even repeats, reversed before odd ones
    (workloads/sysbench/run.py: Sequence._restart_all, Sequence._start_order). The kernel hands freed
    page frames out again last in, first out, so the first server to start gets the frames
    the last one to stop gave back and the servers swap their frames at every restart: the
    offset a placement gives (e.g. A on frames X, B on frames Y) is +p in one parity of
    repeats and -p in the other. The alternating order puts the place each server has in the
    order of starting, which carries an offset of its own, on the parity as well
    (docs/noise.md, D11 and D12, evidence E5 to E8). The t interval over all repeats counts the
    swing of +-p as noise; the within-arm variance leaves it out. Assumes the placement offset
    is the same in every repeat of an arm and the rest is independent and roughly normal, as
    over repeats. Where there is no swing it costs one degree of freedom.
    """
    means = [fmean(even), fmean(odd)]
    n = len(even) + len(odd)
    ss = sum((x - means[0]) ** 2 for x in even) + sum((x - means[1]) ** 2 for x in odd)
    se = math.sqrt(ss / (n - 2) / 4 * (1 / len(even) + 1 / len(odd)))
    return fmean(means), se, n - 2


def _around_log(point: float, logs: list[float], method: Method, dropped: int = 0) -> Estimate:
    """`point` with the t interval of the samples' mean on the log scale (n - 1 df) around
    ln(point): the design gives the width, the throughputs give the estimate."""
    _m, lo, hi = t_interval(logs)
    half = (hi - lo) / 2
    return Estimate(point, point * math.exp(-half), point * math.exp(half), len(logs), method, dropped)


def standard_error(est: Estimate) -> tuple[float, int] | None:
    """The standard error of ln(value) behind a t interval, and its degrees of freedom
    (est.df, else n - 1): (ln upper - ln lower) / 2 / t975(df). None without an interval."""
    df = est.df if est.df is not None else est.n - 1
    if est.value is None or est.lower is None or est.upper is None or df < 1 or est.lower <= 0:
        return None
    return (math.log(est.upper) - math.log(est.lower)) / 2 / t975(df), df


def between_campaign_sd(campaigns: list[list[Estimate]]) -> dict[str, tuple[float, int]]:
    """From A/A campaigns (each a list of estimates of a target against a copy of itself, true
    rQPS 1), per interval method: the standard deviation sd_b of ln rQPS from one campaign to
    the next that the campaigns' own intervals do not hold, and how many campaigns it rests on.

    Model: a cell's m = ln(rQPS) = the offset its campaign drew (variance sd_b^2, shared by all
    repeats and server starts of the campaign) + the error its own interval describes
    (variance se^2, from the interval: standard_error). Estimator: Paule-Mandel with the mean
    known to be 0, i.e. the sd_b^2 >= 0 at which sum(m^2 / (se^2 + sd_b^2)) equals the number
    of cells (0 when the offsets are no larger than their intervals explain); cells with tight
    intervals weigh more, as they should. Assumes one sd_b for every microbenchmark (one per
    test did no better: docs/noise.md, D17 and E12) and
    normal offsets. The offsets of one campaign tend to lean one way across its tests, so
    the cells are not independent: the campaigns, not the cells, count as its sample size.
    Cells are grouped by the estimator's method, as an interval from one start leaves out more
    than one over repeats: a calibration speaks for campaigns run the same way.
    """
    cells: dict[str, list[tuple[float, float]]] = {}
    counted: dict[str, set[int]] = {}
    for i, campaign in enumerate(campaigns):
        for est in campaign:
            se = standard_error(est)
            if se is not None and est.value is not None:
                cells.setdefault(est.method, []).append((math.log(est.value), se[0]))
                counted.setdefault(est.method, set()).add(i)
    return {method: (math.sqrt(_paule_mandel(xs)), len(counted[method])) for method, xs in cells.items()}


def _paule_mandel(cells: list[tuple[float, float]]) -> float:
    """The tau^2 >= 0 with sum(m^2 / (se^2 + tau^2)) = len(cells) (bisection: the sum falls as
    tau^2 grows, and at tau^2 = mean(m^2) it is at most len(cells))."""
    def excess(tau2: float) -> float:
        return sum(m * m / (se * se + tau2) for m, se in cells) - len(cells)

    if not cells or excess(0.0) <= 0:
        return 0.0
    lo, hi = 0.0, fmean(m * m for m, _ in cells)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
        if hi - lo <= 1e-15:
            break
    return (lo + hi) / 2


def with_campaign_sd(est: Estimate, sd: float, campaigns: int) -> Estimate:
    """`est` with a between-campaign component `sd` (of ln rQPS, measured on `campaigns` A/A
    campaigns, see between_campaign_sd) added to its interval.

    Method: the two errors are independent, so the standard error of ln rQPS becomes
    sqrt(se^2 + sd^2), and the 95% interval uses Student t with the Welch-Satterthwaite
    degrees of freedom (se^2 + sd^2)^2 / (se^4 / df + sd^4 / campaigns) (df: the estimate's own,
    n - 1 for a plain t, n - 2 for a crossover), exponentiated
    around the same estimate. An estimate without an interval, or sd = 0, is returned as is.
    """
    se = standard_error(est)
    if se is None or est.value is None or sd <= 0 or campaigns < 1:
        return est
    (s, df), var = se, se[0] ** 2 + sd ** 2
    nu = max(1, int(var ** 2 / (s ** 4 / df + sd ** 4 / campaigns)))
    half = t975(nu) * math.sqrt(var)
    m = math.log(est.value)
    return replace(est, lower=math.exp(m - half), upper=math.exp(m + half), campaign_sd=sd, df=nu)


def trimmed_mean(values: list[float], trim: float) -> float:
    """Mean of `values` without the floor(trim * n) smallest and largest (all of them if that
    would leave none)."""
    ordered = sorted(values)
    k = int(len(ordered) * trim)
    kept = ordered[k:len(ordered) - k] if len(ordered) > 2 * k else ordered
    return fmean(kept)


def _turns_by_key(runs: list[RunSample]) -> dict[tuple[int, int], IntervalSample] | None:
    out: dict[tuple[int, int], IntervalSample] = {}
    for run in runs:
        for iv in run.intervals:
            if iv.round is None:
                return None
            out[(run.round, iv.round)] = iv
    return out or None


def _calm_pairs(keys: list[tuple[int, int]], a: dict[tuple[int, int], IntervalSample],
                b: dict[tuple[int, int], IntervalSample], steal_max_pct: float) -> tuple[list[tuple[int, int]], int]:
    """The pairs `keys` whose turns both lie in calm seconds (all of them if none do), and how
    many were left out."""
    calm = [k for k in keys if _calm(a[k], steal_max_pct) and _calm(b[k], steal_max_pct)]
    return (calm, len(keys) - len(calm)) if calm else (keys, 0)


def _batch_log_ratio(pairs: list[tuple[int, int]], a: dict[tuple[int, int], IntervalSample],
                     b: dict[tuple[int, int], IntervalSample]) -> float | None:
    """ln of the ratio of a's and b's throughputs over `pairs` (each side's events over its
    time); None when a side ran no event in them."""
    events_a = sum(a[k].value * a[k].duration_s for k in pairs)
    events_b = sum(b[k].value * b[k].duration_s for k in pairs)
    seconds_a, seconds_b = sum(a[k].duration_s for k in pairs), sum(b[k].duration_s for k in pairs)
    if events_a <= 0 or events_b <= 0 or seconds_a <= 0 or seconds_b <= 0:
        return None
    return math.log(events_a / seconds_a) - math.log(events_b / seconds_b)


def _pair_logs(pairs: list[tuple[int, int]], a: dict[tuple[int, int], IntervalSample],
               b: dict[tuple[int, int], IntervalSample]) -> list[float]:
    """ln(a/b) of each pair in which both turns ran an event."""
    return [math.log(a[k].value / b[k].value) for k in pairs if a[k].value > 0 and b[k].value > 0]


def _typical(logs_by_repeat: list[list[float]], repeats: list[int]) -> float | None:
    """The typical turn's rQPS: exp of the TURN_TRIM-trimmed mean of the pairs' log ratios; over
    MIN_BATCHES or more repeats, the mean of the repeats' trimmed means (the crossover's mean
    of the arms' means from 2 repeats of each parity). None without a pair."""
    centers = [(rep, trimmed_mean(logs, TURN_TRIM)) for rep, logs in zip(repeats, logs_by_repeat) if logs]
    if not centers:
        return None
    if len(centers) < MIN_BATCHES:
        pooled = [x for logs in logs_by_repeat for x in logs]
        return math.exp(trimmed_mean(pooled, TURN_TRIM))
    arms = [[c for rep, c in centers if rep % 2 == parity] for parity in (0, 1)]
    if min(len(arm) for arm in arms) >= 2:
        return math.exp(crossover(arms[0], arms[1])[0])
    return math.exp(fmean(c for _, c in centers))


def _calm(iv: IntervalSample, steal_max_pct: float) -> bool:
    return iv.steal_pct is None or iv.steal_pct <= steal_max_pct


def verdict(est: Estimate, judging: Judging = JUDGING) -> Verdict:
    """Classify an rQPS estimate.

    - "no interval": no interval could be formed (too few samples);
    - "regression": the whole interval is below 1 and the estimate is at least the minimum effect
      (`judging.min_effect`) below 1 (however wide the interval: the direction is established);
    - "improvement": the mirror image above 1;
    - "too noisy": otherwise, when the interval's relative half width exceeds `judging.noisy_width`
      (it cannot tell a change of the size the user cares about from none);
    - otherwise "no significant change" (the interval holds 1, or the change is smaller than
      the minimum effect the user cares about).
    """
    if est.value is None or est.lower is None or est.upper is None:
        return Verdict.NO_INTERVAL
    if est.upper < 1.0 and est.value <= 1.0 - judging.min_effect:
        return Verdict.REGRESSION
    if est.lower > 1.0 and est.value >= 1.0 + judging.min_effect:
        return Verdict.IMPROVEMENT
    if est.half_width is not None and est.half_width > judging.noisy_width:
        return Verdict.TOO_NOISY
    return Verdict.NO_CHANGE
