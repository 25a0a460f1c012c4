"""A campaign planned to a detectable change (the campaign key `detect`) as it runs: which
starts of each test still run. Each test runs the starts its plan gives; after its first
MIN_STARTS starts that number may be raised once from their spread (analysis/planning.py:
replan), never from the ratio, and once the budget is spent the tests still to come get
MIN_STARTS starts each. A workload whose every start runs all its tests (the Insert Benchmark,
TPROC-C) runs a repeat while any of its tests still wants that start, and past MIN_STARTS
starts no repeat that would overrun the budget. This is the fixed plan (`sequential = false`);
`follow` picks it or the sequential rule (runner/sequential.py) as the campaign's plan says."""
from __future__ import annotations

import time
from typing import Callable

from dbdrift.analysis import planning
from dbdrift.analysis.power import detectable_change
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.quantities import format_duration
from dbdrift.runner.campaign import CampaignOutcome, CellEstimates, Runner
from dbdrift.runner.progress import ProgressSink
from dbdrift.runner.sequential import DETECT_STEP, MeasuredRun, Sequential, Stop
from dbdrift.store.store import Store


class Planned:
    """One planned campaign's starts: `wants` before a measured run, `after` when it is stored."""

    def __init__(self, spec: CampaignSpec, estimates: CellEstimates, campaign_id: int, progress: ProgressSink,
                 clock: Callable[[], float] = time.monotonic) -> None:
        found = spec.detect_plan or {}
        self.detect = float(found["detect"])
        self.budget, self.clock, self.began = spec.budget, clock, clock()
        self.estimates, self.campaign_id, self.progress = estimates, campaign_id, progress
        self.plans = {(p.test, p.threads): p for p in
                      (planning.TestPlan.from_dict(d) for d in found["tests"])}
        self.total = {key: p.starts for key, p in self.plans.items()}
        self.decided: set[tuple[str, int]] = set()
        self.spent = False
        self.first: int | None = None  # the first repeat this process runs (wants_repeat)

    def wants(self, step: MeasuredRun) -> bool:
        """Whether this measured run (a start of its test) is to run."""
        return self._wants((step.name, step.threads), step.repeat)

    def after(self, step: MeasuredRun) -> None:
        """A start of a test is stored: after its first MIN_STARTS decide its starts; after its
        last say what it can detect."""
        key, done = (step.name, step.threads), step.repeat + 1
        if key not in self.plans:
            return
        self._after(key, done)
        if done >= self.total[key] or (self.spent and done >= planning.MIN_STARTS):
            self._say(key, done)

    def wants_repeat(self, repeat: int) -> bool:
        """Whether this repeat (a start of every target, running every test) is to run: while any
        test still wants it, and past MIN_STARTS only when another repeat as long as the mean of
        those this process ran fits the budget."""
        if self.first is None:
            self.first = repeat  # --resume: the repeats before it were stored before
        if repeat >= planning.MIN_STARTS and self.budget is not None:
            spent, ran = self.clock() - self.began, repeat - self.first
            if spent + (spent / ran if ran else 0.0) > self.budget:
                if not self.spent:
                    self.progress.message(f"detect: another repeat would overrun the budget of "
                                          f"{format_duration(self.budget)}; the campaign stops after {repeat}")
                    self.spent = True
                    for key in self.plans:
                        self._say(key, repeat)
                return False
        return any([self._wants(key, repeat) for key in self.plans])  # each test decides, none skipped

    def after_repeat(self, repeat: int) -> None:
        """A repeat is stored: after the first MIN_STARTS decide the starts; after the last say
        what each test can detect."""
        done = repeat + 1
        for key in self.plans:
            self._after(key, done)
        if done >= max(self.total.values()) or (self.spent and done >= planning.MIN_STARTS):
            for key in self.plans:
                self._say(key, done)

    def repeats(self) -> int:
        """The repeats the campaign is planned to run (the most any test wants), for its progress."""
        return max(self.total.values())

    def _wants(self, key: tuple[str, int], repeat: int) -> bool:
        if key not in self.plans:
            return True
        if repeat >= planning.MIN_STARTS and key not in self.decided:
            self._decide(key, repeat)  # --resume: the first starts were stored before
        if repeat >= self.total[key]:
            return False
        if repeat >= planning.MIN_STARTS and self.budget is not None and self.clock() - self.began >= self.budget:
            self._spend()
            return False
        return True

    def _spend(self) -> None:
        if not self.spent:
            self.progress.message(f"detect: the budget of {format_duration(self.budget or 0.0)} is spent; the "
                                  f"tests still to run get {planning.MIN_STARTS} starts each")
            self.spent = True

    def _after(self, key: tuple[str, int], done: int) -> None:
        if done == planning.MIN_STARTS and key not in self.decided:
            self._decide(key, done)

    def _say(self, key: tuple[str, int], done: int) -> None:
        could = self._could(key)
        verdict = "reached" if could is not None and could <= self.detect else "not reached"
        shown = f"{could:.1%}" if could is not None else "no interval"
        self.progress.message(f"detect: {_name(key)}: {shown} after {done} starts ({verdict}: {self.detect:.1%})")

    def _decide(self, key: tuple[str, int], done: int) -> None:
        p = self.plans[key]
        self.total[key] = planning.replan(p, self.estimates(self.campaign_id, *key), done, self.detect)
        self.decided.add(key)
        if self.total[key] != p.starts:
            self.progress.message(f"detect: {_name(key)}: its first {done} starts are noisier than the "
                                  f"calibration's: {self.total[key]} starts (planned {p.starts}, at most {p.most})")

    def _could(self, key: tuple[str, int]) -> float | None:
        """The change the test's cells can detect, never below the calibration's noise floor (as the report has it)."""
        found = [detectable_change(e) for e in self.estimates(self.campaign_id, *key)]
        if not found or None in found:
            return None
        return max(max(d for d in found if d is not None), self.plans[key].floor)


def _name(key: tuple[str, int]) -> str:
    """`point-query x4`; a test planned over whole repeats (threads 0) by its name."""
    return f"{key[0]} x{key[1]}" if key[1] else key[0]


def planned_repeats(runner: Runner, outcome: CampaignOutcome) -> Planned | Sequential | None:
    """The repeats of a campaign planned to detect that still run (Runner.one_after_another); None
    for a campaign without detect."""
    return follow(runner, outcome.campaign_id)


def follow(runner: Runner, campaign_id: int) -> Planned | Sequential | None:
    """What decides a campaign's starts as it runs: the sequential rule (runner/sequential.py)
    when its plan says so, else the fixed plan; None for a campaign without detect."""
    spec, estimates = runner.spec, runner.estimates
    if spec.detect_plan is None or estimates is None:
        return None
    if not spec.detect_plan.get("sequential"):
        return Planned(spec, estimates, campaign_id, runner.progress)
    moved = runner.moved
    return Sequential(spec, estimates, campaign_id, runner.progress, keep=_keeper(runner.store, campaign_id),
                      moved=(lambda: moved(campaign_id)) if moved is not None else None)


def _keeper(store: Store, campaign_id: int) -> Callable[[tuple[str, int], Stop], None]:
    """Each stop stored as a step of kind `detect` on the campaign's base target (the report reads it)."""
    def keep(key: tuple[str, int], stop: Stop) -> None:
        targets = store.targets(campaign_id)
        base = next((t for t in targets if t.is_base), targets[0] if targets else None)
        if base is not None:
            store.add_step(base.id, DETECT_STEP, _name(key), stop.why, 0.0,
                           {"test": key[0], "threads": key[1], **stop.to_dict()})
    return keep
