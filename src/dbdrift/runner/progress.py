"""What the runner reports while it works; the CLI provides the console implementation."""
from __future__ import annotations

from typing import Protocol


class ProgressSink(Protocol):
    def campaign_start(self, total_s: float, total_steps: int) -> None: ...
    def step_start(self, target: str, label: str, expected_s: float) -> None: ...
    def step_end(self, target: str, label: str, status: str, detail: str) -> None: ...
    def message(self, text: str) -> None: ...
    def advance(self, seconds: float) -> None: ...  # expected time passed outside any step (settle rest)


class NullProgress:
    def campaign_start(self, total_s, total_steps): pass
    def step_start(self, target, label, expected_s): pass
    def step_end(self, target, label, status, detail): pass
    def message(self, text): pass
    def advance(self, seconds): pass
