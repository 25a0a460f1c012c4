"""A campaign planned to detect with the sequential rule (`sequential = true`, the default) as it
runs: which starts of each cell still run. After its first MIN_STARTS starts a cell is looked at
before each further start (analysis/sequential.py): it stops once it is decided (different or
same), or at its cap (the plan's most), or when its share of the budget is spent; each stop is
said and stored (a step of kind `detect` on the base target) for the report.

The budget. sysbench runs a test's starts one after the other before the next test (the tables
the writes change decide the run order), so the budget cannot wait for every cell's first look:
before each further start a cell may spend only its share of what is left. Every test still to
come is reserved its first MIN_STARTS starts, the tests of a higher priority still to come their
planned starts (the fixed plan's, what a cell is expected to need) too, and the rest is shared
in proportion between this cell's remaining starts and the planned extra starts of the tests of
its own priority still to come. With instruction counts (`count_instructions`, counted before
the timed runs) the first priority is the tests the counts cannot see (writes, I/O and locks:
catalog rw other than "R") and those whose instruction verdict is not "no significant change";
without them every test has one priority. A workload whose every start runs all its tests (the
Insert Benchmark, TPROC-C, ...) runs a repeat while any of its tests is undecided, below its cap
and within the budget."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Protocol

from dbdrift.analysis import planning
from dbdrift.analysis.sequential import BUDGET, CAP, DECIDED, Outcome, look_at, stop_text
from dbdrift.model import JsonObject
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.quantities import format_duration
from dbdrift.runner.campaign import CellEstimates
from dbdrift.runner.progress import ProgressSink

Key = tuple[str, int]
DETECT_STEP = "detect"  # the kind of the stored step that records a stop (its label the cell, its status why)


class MeasuredRun(Protocol):
    """What deciding a cell's starts asks of a measured run (sysbench's RunStep): its cell, the
    test's name and threads, and which start of it the run is."""

    @property
    def name(self) -> str: ...
    @property
    def threads(self) -> int: ...
    @property
    def repeat(self) -> int: ...


@dataclass(frozen=True)
class Stop:
    """Where a cell stopped: its outcome at its last look, its starts, and why (DECIDED, CAP, BUDGET)."""

    outcome: Outcome
    starts: int
    why: str
    first: bool = False  # it had the budget's first priority

    def to_dict(self) -> JsonObject:
        return {"outcome": self.outcome.value, "starts": self.starts, "why": self.why, "first": self.first}


class Sequential:
    """One campaign's starts under the sequential rule: `wants` before a measured run, `after`
    when it is stored (per test); `wants_repeat`, `after_repeat` and `repeats` for a workload
    judged over whole repeats (runner/campaign.Repeats)."""

    def __init__(self, spec: CampaignSpec, estimates: CellEstimates, campaign_id: int, progress: ProgressSink,
                 clock: Callable[[], float] = time.monotonic, keep: Callable[[Key, Stop], None] | None = None,
                 moved: Callable[[], set[str]] | None = None) -> None:
        found = spec.detect_plan or {}
        self.detect, self.budget = float(found["detect"]), spec.budget
        self.clock, self.began = clock, clock()
        self.estimates, self.campaign_id, self.progress = estimates, campaign_id, progress
        self.keep, self.moved = keep, moved
        self.plans = {(p.test, p.threads): p for p in
                      (planning.TestPlan.from_dict(d) for d in found["tests"])}
        listed = [(t.name, th) for t in spec.tests for th in spec.workload_plan.threads(spec) if (t.name, th) in self.plans]
        self.order = listed + [k for k in self.plans if k not in listed]  # the run order
        per_start = float(found.get("overhead_s", 0.0))
        targets = int(found.get("targets", len(spec.targets)))
        self.cost = {k: targets * (p.seconds + per_start) for k, p in self.plans.items()}
        self.fixed_s = float(found.get("fixed_s", 0.0))
        self.blind = {(d["test"], int(d["threads"])) for d in found["tests"] if d.get("blind")}
        self.prioritised = bool(spec.workload_plan.counts_instructions(spec) and found.get("prioritised", True))
        self.stops: dict[Key, Stop] = {}
        self.looked: dict[Key, tuple[int, Outcome]] = {}
        self.counts_moved: set[str] | None = None
        self.spent = False
        self.first_repeat: int | None = None

    # -- per test (sysbench) ---------------------------------------------------------------------
    def wants(self, step: MeasuredRun) -> bool:
        """Whether this measured run (a start of its cell) is to run."""
        key, repeat = (step.name, step.threads), step.repeat
        if key not in self.plans:
            return True
        if key in self.stops:
            return False
        if repeat < planning.MIN_STARTS:
            return True  # the fewest an interval over starts has, whatever the budget
        if repeat >= self.plans[key].most:  # --resume: its last start was stored before
            self._stop(key, repeat, DECIDED if self._look(key, repeat) is not Outcome.UNKNOWN else CAP)
            return False
        if self._look(key, repeat) is not Outcome.UNKNOWN:
            self._stop(key, repeat, DECIDED)
            return False
        if not self._affords(key, repeat):
            self._stop(key, repeat, BUDGET)
            return False
        return True

    def after(self, step: MeasuredRun) -> None:
        """A start of a cell is stored: after its last one allowed, its final look."""
        key, done = (step.name, step.threads), step.repeat + 1
        if key in self.plans and key not in self.stops and done >= max(self.plans[key].most, planning.MIN_STARTS):
            self._stop(key, done, DECIDED if self._look(key, done) is not Outcome.UNKNOWN else CAP)

    def _affords(self, key: Key, repeat: int) -> bool:
        """Whether one more start of this cell fits its share of the budget left (the module's
        docstring says how it is shared)."""
        if self.budget is None:
            return True
        left = self.budget - (self.clock() - self.began)
        if left <= 0:
            self._say_spent()
            return False
        upcoming = self.order[self.order.index(key) + 1:]
        mine_first = self._first(key)
        reserve = self.fixed_s * len(upcoming) / max(len(self.order), 1)
        others = 0.0
        for other in upcoming:
            extra = max(self.plans[other].starts - planning.MIN_STARTS, 0) * self.cost[other]
            reserve += planning.MIN_STARTS * self.cost[other]
            if self._first(other) and not mine_first:
                reserve += extra
            elif self._first(other) == mine_first:
                others += extra
        mine = (self.plans[key].most - repeat) * self.cost[key]
        share = (left - reserve) * (mine / (mine + others) if mine + others > 0 else 1.0)
        return self.cost[key] <= share

    def _first(self, key: Key) -> bool:
        """Whether the cell has the budget's first priority: with instruction counts, a test they
        cannot see or one whose counts moved."""
        if not self.prioritised:
            return False
        if self.counts_moved is None:
            self.counts_moved = self.moved() if self.moved is not None else set()
        return key in self.blind or key[0] in self.counts_moved

    # -- over whole repeats (the Insert Benchmark, TPROC-C, vector search, HTAP) ----------------
    def repeats(self) -> int:
        return max(max(p.most for p in self.plans.values()), planning.MIN_STARTS)

    def wants_repeat(self, repeat: int) -> bool:
        """Whether this repeat runs: below MIN_STARTS always; past it while a test is undecided
        and below its cap, and another repeat as long as the mean of those this process ran
        fits the budget."""
        if self.first_repeat is None:
            self.first_repeat = repeat  # --resume: the repeats before it were stored before
        if repeat < planning.MIN_STARTS:
            return True
        for key in self.order:
            if key in self.stops:
                continue
            if repeat >= self.plans[key].most:
                self._stop(key, repeat, DECIDED if self._look(key, repeat) is not Outcome.UNKNOWN else CAP)
            elif self._look(key, repeat) is not Outcome.UNKNOWN:
                self._stop(key, repeat, DECIDED)
        if all(key in self.stops for key in self.plans):
            return False
        if self.budget is not None:
            spent, ran = self.clock() - self.began, repeat - self.first_repeat
            if spent + (spent / ran if ran else 0.0) > self.budget:
                self.progress.message(f"detect: another repeat would overrun the budget of "
                                      f"{format_duration(self.budget)}; the campaign stops after {repeat}")
                for key in self.order:
                    if key not in self.stops:
                        self._stop(key, repeat, BUDGET)
                return False
        return True

    def after_repeat(self, repeat: int) -> None:
        """A repeat is stored: after the last one allowed, every test's final look."""
        done = repeat + 1
        if done >= self.repeats():
            for key in self.order:
                if key not in self.stops:
                    self._stop(key, done, DECIDED if self._look(key, done) is not Outcome.UNKNOWN else CAP)

    # -- looks and stops -------------------------------------------------------------------------
    def _look(self, key: Key, starts: int) -> Outcome:
        """What the cell's interval over its first `starts` starts says (once per number of starts)."""
        seen = self.looked.get(key)
        if seen is not None and seen[0] == starts:
            return seen[1]
        p = self.plans[key]
        found = look_at(self.estimates(self.campaign_id, *key), starts, planning.MIN_STARTS, p.most, self.detect,
                        p.floor)
        self.looked[key] = (starts, found)
        return found

    def _stop(self, key: Key, starts: int, why: str) -> None:
        seen = self.looked.get(key)
        outcome = seen[1] if seen is not None and seen[0] == starts else self._look(key, starts)
        stop = Stop(outcome, starts, why, self._first(key))
        self.stops[key] = stop
        self.progress.message(f"detect: {_name(key)}: {stop_text(outcome.value, starts, why, self.detect)}")
        if self.keep is not None:
            self.keep(key, stop)

    def _say_spent(self) -> None:
        if not self.spent:
            self.progress.message(f"detect: the budget of {format_duration(self.budget or 0.0)} is spent; the "
                                  f"tests still to run get {planning.MIN_STARTS} starts each")
            self.spent = True


def _name(key: Key) -> str:
    return f"{key[0]} x{key[1]}" if key[1] else key[0]
