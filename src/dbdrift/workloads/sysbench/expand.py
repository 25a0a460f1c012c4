"""Expand a sysbench campaign into the ordered steps each target executes (docs/methodology.md),
and what they are expected to take.

Pure: no I/O. The slice's run.py walks these steps; the store keys results by RunStep.key. The
settle step and a server's start, restart and stop are every workload's (plan/lifecycle.py).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from dbdrift.model import TargetSpec
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.plan.lifecycle import RESTART_S, SETTLE_WORK_S, START_S, STOP_S, SettleStep
from dbdrift.workloads.sysbench.plan import duration_for, params
from dbdrift.workloads.sysbench.catalog import CATALOG, RUN_ORDER, SETTLE_AFTER, WARM_BEFORE, MicrobenchmarkSpec


@dataclass(frozen=True)
class LoadStep:
    tables: int
    rows: int

    @property
    def label(self) -> str:
        return f"load {self.tables}x{self.rows:,} rows"


@dataclass(frozen=True)
class RunStep:
    name: str  # report name; a warm-up run's ends in model.WARM_SUFFIX, all the store keeps of its flag
    test: MicrobenchmarkSpec
    threads: int
    repeat: int
    duration_s: float
    warmup_s: float
    warm: bool = False  # a warm-up run: run, never reported

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.name, self.threads, self.repeat)

    @property
    def label(self) -> str:
        label = f"{self.name} x{self.threads}" + (f" #{self.repeat + 1}" if self.repeat else "")
        # said in full: a warm-up lasts read_s (or scan_warm_s) and no report shows it
        return label + (" (warm-up, not reported)" if self.warm else "")


@dataclass(frozen=True)
class FreshStep:
    """`restart = "reload"`: every server is stopped, its data directory removed and a new one
    initialised and started before repeat `repeat` (> 0) of the whole test sequence; the load
    and settle steps that follow fill it."""
    repeat: int

    @property
    def label(self) -> str:
        return f"new server for repeat #{self.repeat + 1}"


Step = LoadStep | SettleStep | RunStep | FreshStep


@dataclass(frozen=True)
class TargetPlan:
    target: TargetSpec
    steps: tuple[Step, ...]

    @property
    def runs(self) -> tuple[RunStep, ...]:
        return tuple(s for s in self.steps if isinstance(s, RunStep))


def expand(spec: CampaignSpec) -> list[TargetPlan]:
    """One plan per target, in campaign order; every target runs the same steps."""
    steps = _steps(spec)
    return [TargetPlan(target, steps) for target in spec.targets]


def _steps(spec: CampaignSpec) -> tuple[Step, ...]:
    """Load, settle, then the tests in run order, each run `repeats` times in a row; with
    `restart = "reload"` that sequence once per repeat instead, each on a new server."""
    if params(spec).restart != "reload":
        return tuple(_sequence(spec, range(spec.repeats)))
    steps: list[Step] = []
    for r in range(spec.repeats):
        steps += ([FreshStep(r)] if r else []) + _sequence(spec, (r,))
    return tuple(steps)


def _sequence(spec: CampaignSpec, repeats: Sequence[int]) -> list[Step]:
    steps: list[Step] = [LoadStep(params(spec).tables, params(spec).rows), SettleStep(spec.settle_total_s(), "load")]
    first = repeats[0]
    if params(spec).warm_runs and reads_follow(spec):
        steps.append(_warm(spec, "point-query.warm", "point-query", params(spec).read_s, params(spec).tables, first))
    wrote = False  # a write test ran since the last settle
    for test in tests_of(spec):
        if wrote and test.group != "writes" and RUN_ORDER.index(test.name) > RUN_ORDER.index(SETTLE_AFTER):
            # The post-write reads need a settled database (vacuumed, visibility map set) even
            # when read-write_range=100, after which the scripts settle, is not selected.
            steps.append(SettleStep(spec.settle_total_s(), "the write phase"))
            wrote = False
        if params(spec).warm_runs and test.name in WARM_BEFORE:
            duration = params(spec).scan_warm_s if test.name == "scan" else params(spec).read_s
            steps.append(_warm(spec, WARM_BEFORE[test.name], test.name, duration, params(spec).threads[0], first))
        for threads in params(spec).threads:
            steps.extend(_measured(spec, test, threads, repeats))
        wrote = wrote or test.group == "writes"
        if test.name == SETTLE_AFTER:
            steps.append(SettleStep(spec.settle_total_s(), test.name))
            wrote = False
    return steps


def reads_follow(spec: CampaignSpec) -> bool:
    """Whether a read test is selected: point-query.warm (read_s of point queries after each
    load) warms the cache for the reads, so a campaign of writes alone does not run it."""
    return any(test.group != "writes" for test in tests_of(spec))


def tests_of(spec: CampaignSpec) -> tuple[MicrobenchmarkSpec, ...]:
    """The campaign's tests as the catalogue's entries: the plan layer holds them by what it
    asks of a test (plan/campaign.py's Test), and its parse put these very entries there."""
    return tuple(CATALOG[t.name] for t in spec.tests)


def _measured(spec: CampaignSpec, test: MicrobenchmarkSpec, threads: int, repeats: Sequence[int]) -> list[RunStep]:
    """A run of the full duration and warmup per repeat. Interleaved, each run is one driver
    run in which the targets take turns (workloads/sysbench/turns.py), so no run is cut into pieces."""
    return [RunStep(test.name, test, threads, r, duration_for(spec, test), params(spec).warmup_s) for r in repeats]


def _warm(spec: CampaignSpec, name: str, test_name: str, duration_s: float, threads: int, repeat: int) -> RunStep:
    return RunStep(name, CATALOG[test_name], threads, repeat, duration_s, params(spec).warmup_s, warm=True)


def restarts_before(spec: CampaignSpec, step: Step) -> bool:
    """Whether every server restarts before this step: each measured repeat of a test after
    the first, when the campaign says `restart = "repeat"`, the default (docs/noise.md);
    "reload" starts new servers with FreshStep instead, "never" keeps them."""
    return isinstance(step, RunStep) and not step.warm and step.repeat > 0 and params(spec).restart == "repeat"


RUN_OVERHEAD_S = 0.5  # a driver run's own setup beyond its warm-up and measured seconds
# Each step the runner reports is given exactly its part of the estimate (progress ETA): a run
# run_s, a restart RESTART_S, a new server STOP_S and its start START_S, a settle's work
# SETTLE_WORK_S and its wait the rest of settle_s, a load load_s.


def load_s(step: LoadStep) -> float:
    return 3.0 + step.tables * step.rows / 150_000


def estimate_s(plan: TargetPlan, spec: CampaignSpec, settles: bool = True) -> float:
    """Rough seconds for a target: its start, runs + warmups + settles + a load guess (progress
    ETA). Interleaved targets rest together, so their campaign counts the settle time once."""
    return sum(estimate_parts(plan, spec, settles).values())


# What each part of a target's estimate is, in the words `run --check` uses for them.
MEASURED, WARM, SETTLES, SETUP = "measured runs", "warm-up runs", "settles", "starts, loads, restarts"


def estimate_parts(plan: TargetPlan, spec: CampaignSpec, settles: bool = True) -> dict[str, float]:
    """estimate_s by part: the measured runs (read_s, write_s or insert_s each, plus warmup_s),
    the warm-up runs (read_s or scan_warm_s), the settles (settle_s) and the rest (starts,
    loads, restarts), so `run --check` can say which of them a duration option bounds."""
    parts = dict.fromkeys((MEASURED, WARM, SETTLES, SETUP), 0.0)
    parts[SETUP] += START_S.get(plan.target.engine, 2.0)
    for step in plan.steps:
        if isinstance(step, RunStep):
            parts[WARM if step.warm else MEASURED] += run_s(step)
            parts[SETUP] += RESTART_S if restarts_before(spec, step) else 0.0
        elif isinstance(step, FreshStep):
            parts[SETUP] += STOP_S + START_S.get(plan.target.engine, 2.0)
        elif isinstance(step, SettleStep):
            parts[SETTLES] += (step.total_s if settles else 0.0) + SETTLE_WORK_S
        else:
            parts[SETUP] += load_s(step)
    return parts


def run_s(step: RunStep) -> float:
    """One target's run: its measured and warm-up seconds and the driver's own setup."""
    return step.duration_s + step.warmup_s + RUN_OVERHEAD_S


def run_cost_s(spec: CampaignSpec, step: RunStep) -> float:
    """One target's run with the restart before it: what a run the runner skips saves."""
    return run_s(step) + (RESTART_S if restarts_before(spec, step) else 0.0)


def within_starts(plans: list[TargetPlan], starts: dict[tuple[str, int], int]) -> list[TargetPlan]:
    """The plans without the measured runs beyond each (test, threads)'s `starts` (a detect plan's
    expected starts), whose runner skips them: what the campaign is expected to run."""
    def kept(step: Step) -> bool:
        if not isinstance(step, RunStep) or step.warm or (step.name, step.threads) not in starts:
            return True
        return step.repeat < starts[(step.name, step.threads)]
    return [replace(p, steps=tuple(s for s in p.steps if kept(s))) for p in plans]
