"""What the runner reports while it works; the CLI provides the console implementation.

A step is announced (step_start) with its share of the campaign's estimate, may report how far
it is while it runs (step_progress: the driver's interval lines, as pgbench -P prints them; each
workload reads its own, e.g. RunPace in workloads/sysbench/session.py), and ends (step_end). Tally
lets a part of the campaign credit what its steps did not (a failed target's steps that will not
run), so the ETA reaches 0 when the campaign does.
"""
from __future__ import annotations

import threading
from typing import Protocol



class ProgressSink(Protocol):
    def campaign_start(self, total_s: float, total_steps: int) -> None: ...
    # wall_s: how long the step lasts when it is this target's share of a longer one (turns)
    def step_start(self, target: str, label: str, expected_s: float, wall_s: float | None = None) -> None: ...
    # fraction: of the step's expected work done (0..1); rate: its throughput now, as words ("19,876 QPS")
    def step_progress(self, target: str, label: str, fraction: float, rate: str) -> None: ...
    def step_end(self, target: str, label: str, status: str, detail: str) -> None: ...
    def message(self, text: str) -> None: ...
    # expected time (and steps) passed outside any step: a settle's work share, runs a plan skipped
    def advance(self, seconds: float, steps: int = 0) -> None: ...


class NullProgress:
    def campaign_start(self, total_s: float, total_steps: int) -> None: pass
    def step_start(self, target: str, label: str, expected_s: float, wall_s: float | None = None) -> None: pass
    def step_progress(self, target: str, label: str, fraction: float, rate: str) -> None: pass
    def step_end(self, target: str, label: str, status: str, detail: str) -> None: pass
    def message(self, text: str) -> None: pass
    def advance(self, seconds: float, steps: int = 0) -> None: pass


class LanesProgress:
    """A sink shared by `lanes` threads that work at the same time (instruction counts of
    several targets at once): calls reach `inner` one at a time, and every step's expected
    seconds count 1/lanes of the campaign's wall-clock estimate, so the ETA stays in wall time."""

    def __init__(self, inner: ProgressSink, lanes: int) -> None:
        self.inner, self.lanes = inner, max(1, lanes)
        self._lock = threading.Lock()

    def campaign_start(self, total_s: float, total_steps: int) -> None:
        with self._lock:
            self.inner.campaign_start(total_s, total_steps)

    def step_start(self, target: str, label: str, expected_s: float, wall_s: float | None = None) -> None:
        with self._lock:
            self.inner.step_start(target, label, expected_s / self.lanes, wall_s)

    def step_progress(self, target: str, label: str, fraction: float, rate: str) -> None:
        with self._lock:
            self.inner.step_progress(target, label, fraction, rate)

    def step_end(self, target: str, label: str, status: str, detail: str) -> None:
        with self._lock:
            self.inner.step_end(target, label, status, detail)

    def message(self, text: str) -> None:
        with self._lock:
            self.inner.message(text)

    def advance(self, seconds: float, steps: int = 0) -> None:
        with self._lock:
            self.inner.advance(seconds / self.lanes, steps)


class Tally:
    """A sink in front of `inner` that keeps what went through it (the expected seconds of the
    steps that ended, and how many), so that when a part of the campaign ends (a target, a
    repeat, the timed runs) `settle` credits what of its estimate its steps did not: the steps
    of a target that failed, which will not run. Without it the ETA keeps them to the end."""

    def __init__(self, inner: ProgressSink) -> None:
        self.inner = inner
        self.seconds, self.steps = 0.0, 0
        self._open: dict[tuple[str, str], float] = {}

    def campaign_start(self, total_s: float, total_steps: int) -> None:
        self.inner.campaign_start(total_s, total_steps)

    def step_start(self, target: str, label: str, expected_s: float, wall_s: float | None = None) -> None:
        self._open[(target, label)] = expected_s
        self.inner.step_start(target, label, expected_s, wall_s)

    def step_progress(self, target: str, label: str, fraction: float, rate: str) -> None:
        self.inner.step_progress(target, label, fraction, rate)

    def step_end(self, target: str, label: str, status: str, detail: str) -> None:
        self.seconds += self._open.pop((target, label), 0.0)
        self.steps += 1
        self.inner.step_end(target, label, status, detail)

    def message(self, text: str) -> None:
        self.inner.message(text)

    def advance(self, seconds: float, steps: int = 0) -> None:
        self.seconds += seconds
        self.steps += steps
        self.inner.advance(seconds, steps)

    def settle(self, seconds: float, steps: int) -> None:
        """The part whose estimate was `seconds` and `steps` is over: credit what is left of them."""
        rest_s, rest_steps = max(0.0, seconds - self.seconds), max(0, steps - self.steps)
        if rest_s > 1e-9 or rest_steps:
            self.inner.advance(rest_s, rest_steps)
        self.seconds, self.steps = 0.0, 0
