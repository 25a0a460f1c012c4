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
TURN_BATCHES = 20  # paired turns are grouped into this many contiguous batches for the interval
TURN_TRIM = 0.2  # share of paired turns trimmed from each end before averaging



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
    PAIRED_TURNS_BATCHED = "paired turns, trimmed batch means"
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

    Method: the value is the mean of the runs' steal-filtered means. With 3 or more runs each
    run's mean is one sample; with fewer, batch means over the pooled kept intervals
    (10 batches) stand in for runs. The interval is log_interval's over those samples (a t
    interval on their logarithms), scaled to sit around the value: value·exp(±half), so it is
    never below zero and always holds the value. Assumes samples independent and their
    logarithms roughly normal. Fewer than 2 samples, or a sample of 0: value only, no interval.
    """
    dropped = 0
    values = []
    for run in runs:
        value, d = run_value(run, steal_max_pct)
        dropped += d
        if value is not None:
            values.append(value)
    if not values:
        return Estimate(None, None, None, 0, Method.NONE, dropped)
    if len(values) >= MIN_BATCHES:
        return _around(fmean(values), values, Method.T_OVER_RUNS, dropped)
    pooled = [iv for run in runs for iv in kept_intervals(run.intervals, steal_max_pct)[0]]
    samples = batch_means(pooled)
    if len(samples) < 2:
        return Estimate(fmean(values), None, None, len(samples), Method.SINGLE_SAMPLE, dropped)
    return _around(fmean(values), samples, Method.BATCH_MEANS, dropped)


def _around(value: float, samples: list[float], method: Method, dropped: int) -> Estimate:
    """`value` with the relative width of log_interval(samples) on either side."""
    found = log_interval(samples)
    if found is None:
        return Estimate(value, None, None, len(samples), method, dropped)
    center, lower, upper = found
    # lower / center first: a quotient ≤ 1 keeps the product ≤ value under rounding
    return Estimate(value, value * (lower / center), value * (upper / center), len(samples), method, dropped)


def relative(new: list[RunSample], base: list[RunSample], steal_max_pct: float = STEAL_MAX_PCT) -> Estimate:
    """rQPS = new/base with a 95% interval that uses pairing by round where it exists.

    Paired turns (runs in turns, intervals with a `round`): see paired_turns.
    Paired runs (3+ rounds that both targets ran): per round d = ln(new/base); the estimate is
    exp(mean d) (geometric mean of paired ratios) with a t interval on d, exponentiated. Pairing
    cancels what both targets saw in the same round (drift, bursts of steal); it assumes the
    round effects are multiplicative and the log ratios roughly normal.
    Unpaired fallback: ratio of the two throughput estimates, their log standard errors
    added: var(ln r) = se_new^2 + se_base^2, where se = ln(upper / lower) / 2 / t.
    """
    turns = paired_turns(new, base, steal_max_pct)
    if turns is not None:
        return turns
    new_by_round = {r.round: run_value(r, steal_max_pct)[0] for r in new}
    base_by_round = {r.round: run_value(r, steal_max_pct)[0] for r in base}
    pairs = [(new_by_round[k], base_by_round[k]) for k in sorted(set(new_by_round) & set(base_by_round))]
    logs = [math.log(n / b) for n, b in pairs if n and b]
    if len(logs) >= MIN_BATCHES:
        m, lo, hi = t_interval(logs)
        return Estimate(math.exp(m), math.exp(lo), math.exp(hi), len(logs), Method.PAIRED_ROUNDS)
    a, b = throughput(new, steal_max_pct), throughput(base, steal_max_pct)
    if a.value is None or b.value is None or b.value == 0 or a.value == 0:
        return Estimate(None, None, None, 0, Method.NONE)
    r = a.value / b.value
    if a.lower is None or b.lower is None or a.upper is None or b.upper is None:
        return Estimate(r, None, None, 0, Method.NO_INTERVAL)
    t_a, t_b = t975(max(a.n - 1, 1)), t975(max(b.n - 1, 1))
    se = math.hypot(math.log(a.upper / a.lower) / 2 / t_a, math.log(b.upper / b.lower) / 2 / t_b)
    df = max(min(a.n, b.n) - 1, 1)
    half = t975(df) * se
    return Estimate(r, r * math.exp(-half), r * math.exp(half), min(a.n, b.n), Method.UNPAIRED_DELTA)


def relative_over_repeats(new: list[tuple[int, float, float]], base: list[tuple[int, float, float]]) -> Estimate:
    """new ÷ base when each repeat gives one value per target, (repeat, value, seconds): each
    repeat is one run of one interval and the repeat number pairs the two targets' runs, so
    `relative` gives from 3 repeats both ran a t interval over the per-repeat log ratios
    ("paired rounds"), with 2 the ratio of the means with each mean's interval over its 2 runs
    (wide: t with 1 degree of freedom), with 1 no interval. The Insert Benchmark's steps and
    TPROC-C's runs use it."""
    def samples(values: list[tuple[int, float, float]]) -> list[RunSample]:
        return [RunSample(rep, (IntervalSample(value, seconds or 1.0),)) for rep, value, seconds in values]
    return relative(samples(new), samples(base))


def paired_turns(new: list[RunSample], base: list[RunSample], steal_max_pct: float = STEAL_MAX_PCT,
                 trim: float = TURN_TRIM) -> Estimate | None:
    """rQPS from runs in which the targets took turns; None when the runs have no turn rounds.

    Method: pair the two targets' turns of each round (and repeat), d = ln(new/base) per pair;
    the estimate is exp(trimmed mean of d), `trim` of the pairs cut from each end. Turns
    are short (10 ms by default) and a hiccup of the host (a stolen time slice, an interrupt
    storm) can halve one turn and not its partner: d has heavy tails on both sides, and the
    trimmed mean ignores them where the mean would be dragged about (docs/noise.md, D6
    and E1). Where A and B differ by a constant
    factor, every d is shifted alike, so the trimmed mean estimates that factor as the mean
    would; it assumes the noise on d is symmetric, which ABBA order gives (a hiccup is as
    likely in either turn of a round).
    Consecutive pairs are not independent (a burst of steal or a checkpoint spans several
    rounds), so the interval is a batch interval: the pairs, in time order, are cut into
    TURN_BATCHES contiguous batches (fewer with fewer than 4 pairs a batch), each batch's
    trimmed mean is one sample, and a Student t interval over them, moved to centre on the
    overall estimate, is exponentiated. Assumes batch statistics are close to independent and
    normal (each summarises many pairs) and that round effects hit both turns of a round alike.
    Steal: a pair is left out when either turn lies in a second with more than `steal_max_pct`
    host steal (unless that leaves none; with repeats, none of that repeat); turns without
    events (duration 0) are left out.
    Repeats: with pairs from MIN_BATCHES or more repeats, each on its own start of the servers
    (runner: `restart = "repeat"`), see over_repeats; the batch interval above describes one
    start only, and each start draws an offset that lasts the server's life.
    """
    a, b = _turns_by_key(new), _turns_by_key(base)
    if a is None or b is None:
        return None
    keys = [k for k in sorted(set(a) & set(b)) if a[k].value > 0 and b[k].value > 0
            and a[k].duration_s > 0 and b[k].duration_s > 0]
    if not keys:
        return Estimate(None, None, None, 0, Method.NONE)
    repeats = sorted({k[0] for k in keys})
    if len(repeats) >= MIN_BATCHES:
        # steal is left out within each repeat, never a whole repeat: the repeats are the
        # design's samples, and a run short enough to sit in one stolen second would vanish
        per_repeat = [_calm_logs([k for k in keys if k[0] == rep], a, b, steal_max_pct) for rep in repeats]
        return over_repeats([logs for logs, _ in per_repeat], trim, sum(d for _, d in per_repeat), repeats)
    logs, dropped = _calm_logs(keys, a, b, steal_max_pct)
    center = trimmed_mean(logs, trim)
    batches = min(TURN_BATCHES, len(logs) // 4)
    if batches < MIN_BATCHES:
        samples, method = logs, Method.PAIRED_TURNS
    else:
        size = len(logs) / batches
        samples = [trimmed_mean(logs[round(i * size):round((i + 1) * size)], trim) for i in range(batches)]
        method = Method.PAIRED_TURNS_BATCHED
    if len(samples) < 2:
        return Estimate(math.exp(center), None, None, len(samples), method, dropped)
    m, lo, hi = t_interval(samples)
    return Estimate(math.exp(center), math.exp(center + lo - m), math.exp(center + hi - m), len(samples), method,
                    dropped)


def over_repeats(logs_by_repeat: list[list[float]], trim: float = TURN_TRIM, dropped: int = 0,
                 repeats: list[int] | None = None) -> Estimate:
    """rQPS from paired turns of several repeats, each repeat one start of every server.

    Method: per repeat, the trimmed mean of its pairs' d = ln(new/base) (as in paired_turns);
    the estimate is exp of the mean of those per-repeat values, and the 95% interval a Student
    t interval over them (repeats - 1 degrees of freedom), exponentiated. This is the two-level
    (random-effects) interval of a balanced design: the spread of per-repeat values holds both
    the noise inside each start and the offset each start draws (what memory placement, code
    layout and the like give that server for its life; docs/noise.md), so the interval covers
    both, which no interval from one start can. Assumes the per-repeat values
    are independent (the servers restarted between repeats) and roughly normal (each
    summarises thousands of pairs). Each repeat weighs the same whatever its number of pairs.
    What every repeat of a campaign shares, this interval cannot hold (docs/noise.md);
    calibrations add it (with_campaign_sd).
    With 2 or more repeats of each parity (`repeats` numbers them; list positions otherwise)
    the estimate is the crossover one instead, see crossover.
    """
    numbers = repeats if repeats is not None else list(range(len(logs_by_repeat)))
    centers = [(rep, trimmed_mean(d, trim)) for rep, d in zip(numbers, logs_by_repeat) if d]
    if len(centers) < 2:
        value = math.exp(centers[0][1]) if centers else None
        return Estimate(value, None, None, len(centers), Method.TURNS_OVER_REPEATS_NO_T, dropped)  # no t, no interval
    arms = [[c for rep, c in centers if rep % 2 == parity] for parity in (0, 1)]
    if min(len(arm) for arm in arms) >= 2:
        return crossover(arms[0], arms[1], dropped)
    m, lo, hi = t_interval([c for _, c in centers])
    return Estimate(math.exp(m), math.exp(lo), math.exp(hi), len(centers), Method.OVER_REPEATS, dropped)


def crossover(even: list[float], odd: list[float], dropped: int = 0) -> Estimate:
    """rQPS from the per-repeat ln ratios of even- and odd-numbered repeats, as a two-period
    crossover: the estimate is exp of the mean of the two arms' means, and the 95% interval a
    Student t interval with the pooled within-arm variance (repeats - 2 degrees of freedom),
    exponentiated.

    Why: before each repeat after the first the runner stops every server, then starts every
    one, both in the same order: as listed before even repeats, reversed before odd ones
    (workloads/sysbench/run.py: Sequence._restart_all, Sequence._start_order). The kernel hands freed
    page frames out again last in, first out, so the first server to start gets the frames
    the last one to stop gave back and the servers swap their frames at every restart: the
    offset a placement gives (e.g. A on frames X, B on frames Y) is +p in one parity of
    repeats and -p in the other. The alternating order puts the place each server has in the
    order of starting, which carries an offset of its own, on the parity as well
    (docs/noise.md, D11 and D12, evidence E5 to E8). The plain mean over 5 repeats weighs one arm 3:2 and keeps p/5 of
    that offset, and the t interval counts the swing of +-p as noise; the mean of the arms'
    means cancels it, and the within-arm variance leaves it out. Assumes the placement offset
    is the same in every repeat of an arm and the rest is independent and roughly normal, as
    over repeats. Where there is no swing it estimates the same mean with one degree of
    freedom less, so its interval is somewhat wider than the plain t interval's.
    """
    means = [fmean(even), fmean(odd)]
    n = len(even) + len(odd)
    ss = sum((x - means[0]) ** 2 for x in even) + sum((x - means[1]) ** 2 for x in odd)
    se = math.sqrt(ss / (n - 2) / 4 * (1 / len(even) + 1 / len(odd)))
    m, half = fmean(means), t975(n - 2) * se
    return Estimate(math.exp(m), math.exp(m - half), math.exp(m + half), n, Method.CROSSOVER, dropped, df=n - 2)


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


def _calm_logs(keys: list[tuple[int, int]], a: dict[tuple[int, int], IntervalSample],
               b: dict[tuple[int, int], IntervalSample], steal_max_pct: float) -> tuple[list[float], int]:
    """d = ln(a/b) of the pairs `keys` whose turns both lie in calm seconds (all of them if
    none do), and how many were left out."""
    calm = [k for k in keys if _calm(a[k], steal_max_pct) and _calm(b[k], steal_max_pct)]
    return [math.log(a[k].value / b[k].value) for k in calm or keys], (len(keys) - len(calm) if calm else 0)


def _calm(iv: IntervalSample, steal_max_pct: float) -> bool:
    return iv.steal_pct is None or iv.steal_pct <= steal_max_pct


def verdict(est: Estimate, min_effect: float = 0.02, noisy_half_width: float = 0.05) -> Verdict:
    """Classify an rQPS estimate.

    - "no interval": no interval could be formed (too few samples);
    - "regression": the whole interval is below 1 and the estimate is at least `min_effect`
      below 1 (however wide the interval: the direction is established);
    - "improvement": the mirror image above 1;
    - "too noisy": otherwise, when the interval's relative half width exceeds `noisy_half_width`
      (it cannot tell a change of the size the user cares about from none);
    - otherwise "no significant change" (the interval holds 1, or the change is smaller than
      the minimum effect the user cares about).
    """
    if est.value is None or est.lower is None or est.upper is None:
        return Verdict.NO_INTERVAL
    if est.upper < 1.0 and est.value <= 1.0 - min_effect:
        return Verdict.REGRESSION
    if est.lower > 1.0 and est.value >= 1.0 + min_effect:
        return Verdict.IMPROVEMENT
    if est.half_width is not None and est.half_width > noisy_half_width:
        return Verdict.TOO_NOISY
    return Verdict.NO_CHANGE
