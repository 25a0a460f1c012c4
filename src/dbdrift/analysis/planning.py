"""Campaigns planned to a detectable change (the campaign key `detect`): how many server starts
and how long a run each microbenchmark needs for its rQPS interval over starts to see a change
of that size with 80% power, from an A/A calibration of this host; and the one point at which a
running campaign may change that number.

The noise model. A test's ln rQPS over n starts of every server has the variance
(between + within * t0 / t) / n: `between` is the offset each start draws for the server's
life (memory placement, code layout: it does not shrink with a longer run), `within` the
variance of one start's turns at the calibration's run length t0, which falls as 1/t with the
run length t (the turns of one start are a long stationary series). An A/A calibration with 3
or more starts gives both: `within` from each start's own batch interval, `between` from the
spread of the starts' values beyond it (analysis.noise.paired_turns, over_repeats).

The stopping rule. Looking at the ratio after every start and stopping once it looks settled
is peeking: the chance of a false verdict grows with every look. The number of starts here is
fixed before the first start from the calibration, and raised at most once, after the first
MIN_STARTS starts, from their spread only (an internal pilot, restricted to adding starts:
Wittes and Brittain 1990): the estimate of the ratio never decides how many starts run, and
quiet first starts never end a test early, so the interval's 95% holds (bench/detect.py
measures it by simulation). Pure functions; docs/noise.md explains
them to users.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import product
from dataclasses import dataclass, field, replace
from statistics import fmean, variance
from typing import Any

from dbdrift.analysis.noise import Estimate, paired_turns, standard_error, t975
from dbdrift.analysis.power import t80
from dbdrift.analysis.relative import Comparison, Measurement

MIN_STARTS = 3  # the fewest starts an interval over starts has (noise.MIN_BATCHES)
MAX_STARTS = 30  # a plan needing more starts than this for a test calls that test out of reach
HEADROOM = 1.5  # a test may run this many times its planned starts when its first starts are noisier
LENGTHS = (10.0, 15.0, 20.0, 30.0, 45.0, 60.0, 90.0, 120.0, 180.0, 300.0, 600.0)  # run lengths tried, s


@dataclass(frozen=True)
class TestNoise:
    """One test's noise on this host as an A/A calibration measured it (variances of ln rQPS)."""

    test: str
    within: float  # one start's variance at `seconds` long runs
    between: float  # the variance of the offset each start draws
    seconds: float  # the calibration's run length
    starts: int  # how many starts the calibration had
    campaigns: int = 1  # how many campaigns it pools (pooled): each spends a degree of freedom on its own mean

    def variance(self, seconds: float) -> float:
        """The variance of one start's ln rQPS with runs `seconds` long."""
        return self.between + self.within * self.seconds / seconds

    @property
    def df(self) -> int:
        return max(self.starts - self.campaigns, 1)


def pooled(found: Sequence[TestNoise]) -> TestNoise:
    """One test's noise from several campaigns of a host (the store's history, app/detect.py),
    the newest first. `within` scales as 1/t with the run length, so each campaign's is taken
    per second of run (within * seconds) and averaged weighted by its starts, then given at the
    newest campaign's length; `between` is averaged weighted by each campaign's degrees of
    freedom (its starts less one), as a pooled variance is. A campaign's `between` was cut at
    0 where its starts spread less than their own intervals said (noise_of), so the pool leans
    high, never low. Assumes the host's noise did not change across them; one campaign is
    returned as it is."""
    if not found:
        raise ValueError("no noise to pool")
    if len(found) == 1:
        return found[0]
    newest = found[0]
    starts = sum(n.starts for n in found)
    per_second = sum(n.within * n.seconds * n.starts for n in found) / starts
    df = sum(max(n.starts - n.campaigns, 1) for n in found)
    between = sum(n.between * max(n.starts - n.campaigns, 1) for n in found) / df
    within = per_second / newest.seconds if newest.seconds > 0 else fmean(n.within for n in found)
    return TestNoise(newest.test, within, between, newest.seconds, starts, sum(n.campaigns for n in found))


def _df(starts: int, crossover: bool = True) -> int:
    """Degrees of freedom of the interval over `starts` starts: n - 1, or n - 2 from 4 starts, when
    the crossover estimate (noise.crossover, sysbench's repeats) takes one for the parity of the
    starts; n - 1 always for the paired repeats of the Insert Benchmark and TPROC-C
    (noise.relative_over_repeats)."""
    return starts - 1 if starts < 4 or not crossover else starts - 2


def mde(var: float, starts: int, crossover: bool = True) -> float:
    """The detectable change (as power.detectable_change) of an interval over `starts` starts,
    each with ln-variance `var`."""
    df = _df(starts, crossover)
    return math.expm1((t975(df) + t80(df)) * math.sqrt(var / starts))


def starts_needed(var: float, detect: float, crossover: bool = True) -> int | None:
    """The fewest starts (at least MIN_STARTS) whose interval detects a change of `detect`; None
    when more than MAX_STARTS would be needed."""
    return next((n for n in range(MIN_STARTS, MAX_STARTS + 1) if mde(var, n, crossover) <= detect), None)


def noise_of(measurements: list[Measurement], base: str, seconds: dict[str, float]) -> dict[tuple[str, int], TestNoise]:
    """Each (test, threads)'s noise from a campaign in turns, every repeat on its own start:
    `base` against each other target (an A/A calibration's copy, or any campaign's targets, whose
    true ratio does not change from one start to the next); `seconds` gives each test's run
    length. Within: the mean of the starts' squared standard errors. Between: the variance of
    the starts' values less that, at least 0; with 2 or more starts of each parity the variance
    within each parity, as the crossover estimate has it; with several targets their variances
    pooled, each about its own mean. Tests with fewer than 2 starts are left out."""
    by_cell: dict[tuple[str, int], dict[int, dict[str, Measurement]]] = {}
    for m in measurements:
        if m.status == "ok" and m.value is not None and m.intervals:
            by_cell.setdefault((m.test, m.threads), {}).setdefault(m.round, {})[m.target] = m
    noise = {}
    for (test, threads), repeats in by_cell.items():
        if test not in seconds:
            continue
        others = sorted({t for runs in repeats.values() for t in runs if t != base})
        spreads: list[tuple[float, int]] = []  # (variance of the starts' values, its degrees of freedom)
        within: list[float] = []
        starts = 0
        for other in others:
            centers, inside = _centers(repeats, base, other)
            if len(centers) < 2:
                continue
            spreads.append(_spread(centers))
            within += inside
            starts = max(starts, len(centers))
        if not spreads:
            continue
        df = sum(d for _, d in spreads)
        spread = sum(v * d for v, d in spreads) / df
        inside_mean = fmean(within)
        noise[(test, threads)] = TestNoise(test, inside_mean, max(spread - inside_mean, 0.0), seconds[test], starts)
    return noise


def _centers(repeats: Mapping[int, Mapping[str, Measurement]], base: str, other: str
             ) -> tuple[dict[int, float], list[float]]:
    """Each start's ln rQPS of `other` against `base` (paired turns) and its squared standard error."""
    centers: dict[int, float] = {}
    within: list[float] = []
    for rep, runs in repeats.items():
        if base not in runs or other not in runs:
            continue
        est = paired_turns([runs[other].sample()], [runs[base].sample()])
        se = standard_error(est) if est is not None else None
        if est is None or est.value is None or se is None:
            continue
        centers[rep] = math.log(est.value)
        within.append(se[0] ** 2)
    return centers, within


def _spread(centers: Mapping[int, float]) -> tuple[float, int]:
    """The variance of the starts' values and its degrees of freedom: within each parity of
    starts when both have 2 or more (the crossover), else about their one mean."""
    arms = [[c for rep, c in centers.items() if rep % 2 == parity] for parity in (0, 1)]
    if min(len(arm) for arm in arms) >= 2:
        df = len(centers) - 2
        return sum((len(arm) - 1) * variance(arm) for arm in arms) / df, df
    return variance(list(centers.values())), len(centers) - 1


@dataclass(frozen=True)
class TestPlan:
    """What the plan gives one (test, threads): its run length, the starts it is expected to
    need, the most it may get, and the detectable change expected at those starts."""

    test: str
    threads: int
    seconds: float
    var: float  # one start's ln-variance at `seconds` long runs, as planned
    starts: int  # planned
    most: int  # the cap: headroom over the plan, or what the budget leaves
    calibrated: bool  # False: no calibration of this test, planned from the noisiest one
    prior_df: int = 0  # what `var` is worth when a campaign's own starts are pooled with it (replan)
    floor: float = 0.0  # the calibration's noise floor of the test: no verdict below it, whatever the starts
    crossover: bool = True  # its interval is the crossover one from 4 starts (sysbench); False: paired repeats
    source: str = ""  # the evidence its noise comes from, as `run --check` names it: "[1, 2], 13 starts"

    @property
    def expected(self) -> float:
        """The detectable change expected after the planned starts, never below the floor."""
        return max(mde(self.var, self.starts, self.crossover), self.floor)

    def reaches(self, detect: float) -> bool:
        return self.expected <= detect

    def to_dict(self) -> dict[str, object]:
        return {"test": self.test, "threads": self.threads, "seconds": self.seconds, "var": self.var,
                "starts": self.starts, "most": self.most, "expected": round(self.expected, 6),
                "calibrated": self.calibrated, "prior_df": self.prior_df, "floor": round(self.floor, 6),
                "crossover": self.crossover, **({"source": self.source} if self.source else {})}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TestPlan:
        return cls(str(d["test"]), int(d["threads"]), float(d["seconds"]), float(d["var"]), int(d["starts"]),
                   int(d["most"]), bool(d["calibrated"]), int(d.get("prior_df", 0)), float(d.get("floor", 0.0)),
                   bool(d.get("crossover", True)), str(d.get("source", "")))


@dataclass(frozen=True)
class DetectPlan:
    """A campaign's plan: the threshold, the budget, the run length per duration kind, each
    test's plan and the cost, expected and at most, in seconds."""

    detect: float
    budget_s: float | None
    lengths: dict[str, float]  # duration kind (read, write, insert) -> run length
    tests: tuple[TestPlan, ...]
    expected_s: float
    most_s: float
    calibration: str  # which calibration it rests on, for messages
    notes: tuple[str, ...] = field(default=())
    sequential: bool = False  # the sequential rule (analysis/sequential.py): caps stand, the budget is shared as it runs
    overhead_s: float = 0.0  # a start's cost beyond its run length, per target (what the sequential rule shares)
    targets: int = 2
    fixed_s: float = 0.0  # what the campaign takes besides its measured runs
    # the campaigns its noise comes from, numbered as the tests' `source` cites them:
    # "[1] calibrate-pg17 (#4, 2026-11-27 10:02, A/A, 8 starts)"; empty for a plan from one calibration told in `calibration`
    evidence: tuple[str, ...] = field(default=())
    floors_from: str = ""  # where the tests' noise floors come from, "" when the plan says nothing of them

    def of(self, test: str, threads: int) -> TestPlan | None:
        return next((p for p in self.tests if p.test == test and p.threads == threads), None)

    def to_dict(self) -> dict[str, object]:
        return {"detect": self.detect, "budget_s": self.budget_s, "lengths": self.lengths,
                "tests": [p.to_dict() for p in self.tests], "expected_s": round(self.expected_s, 1),
                "most_s": round(self.most_s, 1), "calibration": self.calibration, "notes": list(self.notes),
                "sequential": self.sequential, "overhead_s": self.overhead_s, "targets": self.targets,
                "fixed_s": round(self.fixed_s, 1),
                **({"evidence": list(self.evidence)} if self.evidence else {}),
                **({"floors_from": self.floors_from} if self.floors_from else {})}


@dataclass(frozen=True)
class Cell:
    """A (test, threads) to plan: its duration kind, the noise calibrated for it (None: none) and
    the calibration's noise floor of the test (analysis/floor.py; 0: none)."""

    test: str
    threads: int
    kind: str
    noise: TestNoise | None
    floor: float = 0.0
    source: str = ""  # which evidence `noise` comes from (TestPlan.source)


def plan(cells: list[Cell], detect: float, fixed_s: float = 0.0, budget_s: float | None = None,
         calibration: str = "", targets: int = 2, overhead_s: float = 5.0, lengths: tuple[float, ...] = LENGTHS,
         spare: tuple[TestNoise, ...] = (), sequential: bool = False) -> DetectPlan:
    """The run length per duration kind and the starts per test that reach `detect` at the least
    cost. A start of one test costs targets * (length + overhead_s) seconds; `fixed_s` is the rest
    of the campaign (starts, loads, settles, warm-up runs). The lengths, one of `lengths` per kind,
    are those that leave the fewest tests out of reach, then cost least; with a budget, those that
    fit it (or overrun it least, when even MIN_STARTS of every test do not), then leave the fewest
    tests out of reach once it is applied, then give the smallest detectable changes to the tests
    out of reach: a tight budget picks shorter runs when they leave starts to spend. A test the calibration
    lacks is planned with the noisiest calibrated test of its kind (or of any kind, `spare`
    included: the calibration's tests this campaign does not run). A test out
    of reach gets MIN_STARTS. Each test may run up to HEADROOM times its planned starts; with a
    budget, the starts beyond MIN_STARTS are cut to what it leaves, in proportion; `sequential`:
    they are not, the lengths are chosen as with the cut (the budget is shared as the campaign
    runs, runner/sequential.py), and the cost is at most the budget."""
    known = [c.noise for c in cells if c.noise is not None] + list(spare)
    if not known:
        raise ValueError("no calibrated test to plan from")

    def stand_in(kind: str) -> TestNoise:
        same = [c.noise for c in cells if c.noise is not None and c.kind == kind] or known
        return max(same, key=lambda n: n.variance(n.seconds))

    noises = [c.noise or stand_in(c.kind) for c in cells]
    needed: dict[tuple[int, float], int | None] = {}

    def at(chosen: dict[str, float], budget: float | None = budget_s) -> DetectPlan:
        planned = []
        for i, (c, noise) in enumerate(zip(cells, noises)):
            t = chosen[c.kind]
            if (i, t) not in needed:
                needed[(i, t)] = starts_needed(noise.variance(t), detect)
            need = needed[(i, t)] if c.floor <= detect else None  # no start lowers the floor
            starts = need or MIN_STARTS
            cap = max(starts, min(MAX_STARTS, math.ceil(starts * HEADROOM))) if need else MIN_STARTS
            planned.append(TestPlan(c.test, c.threads, t, noise.variance(t), starts, cap, c.noise is not None,
                                    noise.df if c.noise is not None else 0, c.floor,
                                    source=c.source if c.noise is not None else ""))
        return _within(DetectPlan(detect, budget, chosen, tuple(planned), 0.0, 0.0, calibration),
                       fixed_s, targets, overhead_s)

    def score(p: DetectPlan) -> tuple[float, int, float, float]:
        short = [t.expected for t in p.tests if not t.reaches(detect)]
        if budget_s is None:
            return 0.0, len(short), 0.0, p.expected_s
        # a budget is there to be spent: of the lengths that fit it (or overrun it least, when even
        # MIN_STARTS of every test do not), those that reach most tests, then see the smallest changes
        return max(0.0, p.most_s - budget_s), len(short), round(sum(short), 6), p.expected_s

    kinds = sorted({c.kind for c in cells})
    best = min((at(dict(zip(kinds, combo))) for combo in product(lengths, repeat=len(kinds))), key=score)
    best = replace(best, overhead_s=overhead_s, targets=targets, fixed_s=fixed_s)
    if not sequential:
        return best
    whole = at(best.lengths, None)
    spend = budget_s if budget_s is not None else math.inf
    return replace(best, tests=whole.tests, sequential=True, expected_s=min(whole.expected_s, spend),
                   most_s=min(whole.most_s, max(spend, best.most_s)))


def repeat_noise(estimates: Mapping[str, list[Estimate]]) -> dict[str, TestNoise]:
    """Each test's noise from an A/A calibration of a workload judged over paired repeats (the
    Insert Benchmark's steps, TPROC-C's NOPM: noise.relative_over_repeats), `estimates` its copy
    against the base: one value per start and nothing to split inside it, so all of it is
    `between`, the variance of the per-start ln ratios (the interval's squared standard error
    times the starts). Tests without an interval over 3 or more starts are left out."""
    noise = {}
    for test, found in estimates.items():
        spread = [(err[0] ** 2 * est.n, est.n) for est in found
                  if est.n >= MIN_STARTS and (err := standard_error(est)) is not None]
        if spread:
            var, n = max(spread)
            noise[test] = TestNoise(test, 0.0, var, 0.0, n)
    return noise


def plan_repeats(tests: list[str], noise: Mapping[str, TestNoise], detect: float, repeat_s: float,
                 budget_s: float | None = None, calibration: str = "", sources: Mapping[str, str] | None = None
                 ) -> DetectPlan:
    """The plan of a workload whose every start runs all its tests (the Insert Benchmark's
    steps, TPROC-C's NOPM): one number of starts for the campaign, the most any test that can
    reach `detect` needs (a test that cannot, within MAX_STARTS, does not raise it), each test
    planned at that number. A start of every target costs `repeat_s`; the run lengths stay the
    campaign's (a step's length is its rows, and one start gives one value, so the noise cannot be
    split into what a longer run would shrink). A test the calibration lacks is planned with its
    noisiest test. With a budget the starts are cut to what it holds, never below MIN_STARTS."""
    known = list(noise.values())
    if not known:
        raise ValueError("no calibrated test to plan from")
    worst = max(known, key=lambda n: n.between)
    needs = {t: starts_needed((noise.get(t) or worst).between, detect, crossover=False) for t in tests}
    reach = [n for n in needs.values() if n is not None]
    starts = max(reach, default=MIN_STARTS)
    most = max(starts, min(MAX_STARTS, math.ceil(starts * HEADROOM))) if reach else MIN_STARTS
    notes: tuple[str, ...] = ()
    if budget_s is not None:
        fits = math.floor(budget_s / repeat_s) if repeat_s > 0 else MAX_STARTS
        if fits < MIN_STARTS:
            notes = (f"the budget is less than {MIN_STARTS} starts of every target take; the campaign gets "
                     f"{MIN_STARTS} (the fewest an interval over starts has)",)
        most = max(MIN_STARTS, min(most, fits))
        starts = min(starts, most)
    planned = tuple(TestPlan(t, 0, 0.0, (noise.get(t) or worst).between, starts,
                             most if needs[t] is not None else starts, t in noise,
                             noise[t].df if t in noise else 0, crossover=False,
                             source=(sources or {}).get(t, "") if t in noise else "") for t in tests)
    return DetectPlan(detect, budget_s, {}, planned, starts * repeat_s, most * repeat_s, calibration, notes)


def _within(found: DetectPlan, fixed_s: float, targets: int, overhead_s: float) -> DetectPlan:
    """The plan with its cost, expected and at most, and with a budget the starts beyond MIN_STARTS
    cut in proportion to what the budget leaves."""
    def cost(p: TestPlan) -> float:
        return targets * (p.seconds + overhead_s)

    planned, budget_s = found.tests, found.budget_s
    most = fixed_s + sum(p.most * cost(p) for p in planned)
    notes: tuple[str, ...] = ()
    if budget_s is not None and most > budget_s:
        floor_s = fixed_s + sum(MIN_STARTS * cost(p) for p in planned)
        extra = sum((p.most - MIN_STARTS) * cost(p) for p in planned)
        share = max(0.0, (budget_s - floor_s) / extra) if extra else 0.0
        planned = tuple(_capped(p, MIN_STARTS + math.floor((p.most - MIN_STARTS) * share)) for p in planned)
        most = fixed_s + sum(p.most * cost(p) for p in planned)
        if floor_s > budget_s:
            notes = (f"the budget is less than {MIN_STARTS} starts of every test take; each test gets {MIN_STARTS} "
                     "(the fewest an interval over starts has)",)
    expected = fixed_s + sum(p.starts * cost(p) for p in planned)
    return replace(found, tests=planned, expected_s=expected, most_s=most, notes=notes)


def _capped(p: TestPlan, most: int) -> TestPlan:
    """A test's plan with at most `most` starts (the budget's share)."""
    return replace(p, starts=min(p.starts, most), most=most)


def replan(p: TestPlan, estimates: list[Estimate], done: int, detect: float) -> int:
    """The starts a test runs in all, decided once after its first `done` starts: the planned
    variance (worth p.prior_df degrees of freedom: its calibration's starts less one, 0 for a
    test planned from another's) pooled with the largest of these starts' own (each compared
    cell's squared standard error times the starts), and the starts that variance needs, at
    least the plan's and at most the test's cap. Only the spread decides, never the ratio; and
    it can only add starts (Wittes and Brittain's restricted design): stopping early when the
    first starts happen to look quiet would pick exactly the campaigns whose interval is too
    narrow (tests/unit/test_planning.py measures both)."""
    own = [found[0] ** 2 * done for est in estimates if (found := standard_error(est)) is not None]
    planned = min(max(p.starts, done), p.most)
    if not own or done < 2:
        return planned
    df = done - 1
    var = (p.prior_df * p.var + df * max(own)) / (p.prior_df + df)
    need = starts_needed(var, detect, p.crossover) or p.most
    return max(planned, min(need, p.most))


def detect_notes(comparison: Comparison, found: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The report's note on a campaign planned to `found` (a stored DetectPlan): how many tests
    reached its threshold, and each that did not with the change it could detect after how many
    starts: its compared cells' largest detectable change, the one each cell shows (never below
    the verdict's minimum effect, the calibration's noise floor included)."""
    if not found:
        return ()
    detect = float(found["detect"])
    missed, reached = [], 0
    for row in comparison.rows:
        cells = [(c.detectable, c.estimate.n) for c in row.cells.values()
                 if c.estimate is not None and c.reference is not None]
        if not cells:
            continue
        could = [d for d, _ in cells]
        if all(d is not None and d <= detect + 1e-12 for d in could):
            reached += 1
            continue
        worst = max(cells, key=lambda dn: math.inf if dn[0] is None else dn[0])
        what = f"{worst[0]:.1%}" if worst[0] is not None else "no interval"
        missed.append(f"{row.test} x{row.threads} ({what} after {worst[1]} starts)")
    line = f"detect {detect:.1%}: {reached} of {reached + len(missed)} tests reached it"
    return (line + (f"; not reached: {', '.join(missed)}" if missed else ""),) + source_notes(found)


def source_notes(found: Mapping[str, Any]) -> tuple[str, ...]:
    """The report's note on what a campaign's plan rested on: the calibration, or the host's
    history with its campaigns (name, number, date, A/A or repeats, starts) and where the noise
    floors came from."""
    evidence = found.get("evidence") or []
    line = f"detect {float(found['detect']):.1%}: planned from {found.get('calibration') or 'a calibration'}"
    if evidence:
        line += ": " + "; ".join(evidence)
    if found.get("floors_from"):
        line += f"; noise floors: {found['floors_from']}"
    return (line,)
