"""A campaign planned to a detectable change (the campaign key `detect`) as it runs: which
starts of each test still run. Each test runs the starts its plan gives; after its first
MIN_STARTS starts that number may be raised once from their spread (analysis/planning.py:
replan), never from the ratio, and once the budget is spent the tests still to come get
MIN_STARTS starts each."""
from __future__ import annotations

import time
from typing import Callable

from dbdrift.analysis import planning
from dbdrift.analysis.power import detectable_change
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.plan.expand import RunStep
from dbdrift.quantities import format_duration
from dbdrift.runner.campaign import CellEstimates
from dbdrift.runner.progress import ProgressSink


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

    def wants(self, step: RunStep) -> bool:
        """Whether this measured run (a start of its test) is to run."""
        key = (step.name, step.threads)
        if key not in self.plans:
            return True
        if step.repeat >= planning.MIN_STARTS and key not in self.decided:
            self._decide(key, step.repeat)  # --resume: the first starts were stored before
        if step.repeat >= self.total[key]:
            return False
        if step.repeat >= planning.MIN_STARTS and self.budget is not None and self.clock() - self.began >= self.budget:
            if not self.spent:
                self.progress.message(f"detect: the budget of {format_duration(self.budget)} is spent; the tests "
                                      f"still to run get {planning.MIN_STARTS} starts each")
                self.spent = True
            return False
        return True

    def after(self, step: RunStep) -> None:
        """A start of a test is stored: after its first MIN_STARTS decide its starts; after its
        last say what it can detect."""
        key, done = (step.name, step.threads), step.repeat + 1
        if key not in self.plans:
            return
        if done == planning.MIN_STARTS and key not in self.decided:
            self._decide(key, done)
        if done >= self.total[key] or (self.spent and done >= planning.MIN_STARTS):
            could = self._could(key)
            verdict = "reached" if could is not None and could <= self.detect else "not reached"
            shown = f"{could:.1%}" if could is not None else "no interval"
            self.progress.message(f"detect: {step.name} x{step.threads}: {shown} after {done} starts "
                                  f"({verdict}: {self.detect:.1%})")

    def _decide(self, key: tuple[str, int], done: int) -> None:
        p = self.plans[key]
        self.total[key] = planning.replan(p, self.estimates(self.campaign_id, *key), done, self.detect)
        self.decided.add(key)
        if self.total[key] != p.starts:
            self.progress.message(f"detect: {key[0]} x{key[1]}: its first {done} starts are noisier than the "
                                  f"calibration's: {self.total[key]} starts (planned {p.starts}, at most {p.most})")

    def _could(self, key: tuple[str, int]) -> float | None:
        """The change the test's cells can detect, never below the calibration's noise floor (as the report has it)."""
        found = [detectable_change(e) for e in self.estimates(self.campaign_id, *key)]
        if not found or None in found:
            return None
        return max(max(d for d in found if d is not None), self.plans[key].floor)
