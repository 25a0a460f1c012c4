"""What the runner reports while it works; the CLI provides the console implementation."""
from __future__ import annotations

import threading
from typing import Protocol


class ProgressSink(Protocol):
    def campaign_start(self, total_s: float, total_steps: int) -> None: ...
    # wall_s: how long the step lasts when it is this target's share of a longer one (turns)
    def step_start(self, target: str, label: str, expected_s: float, wall_s: float | None = None) -> None: ...
    def step_end(self, target: str, label: str, status: str, detail: str) -> None: ...
    def message(self, text: str) -> None: ...
    def advance(self, seconds: float) -> None: ...  # expected time passed outside any step (settle rest)


class NullProgress:
    def campaign_start(self, total_s: float, total_steps: int) -> None: pass
    def step_start(self, target: str, label: str, expected_s: float, wall_s: float | None = None) -> None: pass
    def step_end(self, target: str, label: str, status: str, detail: str) -> None: pass
    def message(self, text: str) -> None: pass
    def advance(self, seconds: float) -> None: pass


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

    def step_end(self, target: str, label: str, status: str, detail: str) -> None:
        with self._lock:
            self.inner.step_end(target, label, status, detail)

    def message(self, text: str) -> None:
        with self._lock:
            self.inner.message(text)

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.inner.advance(seconds / self.lanes)
