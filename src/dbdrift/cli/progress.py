"""Progress lines with ETA for long campaigns (stderr). A bar on a terminal, plain lines otherwise."""
from __future__ import annotations

import sys
import time
from typing import TextIO

from dbdrift.app.inputs import format_duration


TRUST_AFTER = 0.1  # of the expected work: from then on the ETA scales fully by the pace so far
# A step expected to take this long or longer says so when it starts, also when stderr is not a
# terminal (a log, CI): a warm-up, a settle's wait or a load is never minutes of silence.
ANNOUNCE_S = 5.0


class ConsoleProgress:
    """Tracks expected seconds done vs total to give an ETA that self-corrects with elapsed time.
    `verbosity` -1 (--quiet) drops the bar and the lines of steps that went well; 1 (--verbose)
    adds a line as each step starts."""

    def __init__(self, stream: TextIO | None = None, verbosity: int = 0) -> None:
        self.stream = stream or sys.stderr
        self.verbosity = verbosity
        self.tty = self.stream.isatty() and verbosity >= 0
        self.total_s = 0.0
        self.done_s = 0.0
        self.steps_total = 0
        self.steps_done = 0
        self.started = time.monotonic()
        self.expected: dict[tuple[str, str], float] = {}  # steps started and not ended (several at once in lanes)

    def campaign_start(self, total_s: float, total_steps: int) -> None:
        self.total_s, self.steps_total = max(total_s, 1.0), total_steps
        self.done_s, self.steps_done = 0.0, 0  # one sink can follow several campaigns (bisect)
        self.started = time.monotonic()
        if self.verbosity < 0:
            return
        self._line(f"campaign: {total_steps} steps, about {format_duration(total_s)} expected")

    def _eta(self) -> str:
        """The estimate left, scaled by how fast the work done went (elapsed ÷ expected); the
        scale is trusted in proportion to the share done, fully from TRUST_AFTER on, so a
        server start that beat its estimate does not halve the ETA of an hour's campaign."""
        elapsed = time.monotonic() - self.started
        left = max(0.0, self.total_s - self.done_s)
        if self.done_s <= 0:
            return format_duration(left)
        trust = min(1.0, self.done_s / (TRUST_AFTER * self.total_s))
        return format_duration(left * (trust * elapsed / self.done_s + 1.0 - trust))

    def step_start(self, target: str, label: str, expected_s: float, wall_s: float | None = None) -> None:
        self.expected[(target, label)] = expected_s
        announce = expected_s >= ANNOUNCE_S or self.verbosity > 0  # --verbose: every step as it starts
        about = f" (about {format_duration(expected_s)})" if announce and self.verbosity >= 0 else ""
        if about and wall_s and wall_s > expected_s:  # its share of a run in turns
            about = f" (about {format_duration(expected_s)} of turns in {format_duration(wall_s)})"
        if self.tty:
            pct = 100.0 * min(1.0, self.done_s / self.total_s) if self.total_s else 0.0
            width = 24
            filled = int(width * pct / 100)
            bar = "#" * filled + "-" * (width - filled)
            self.stream.write(f"\r\x1b[K[{bar}] {pct:3.0f}% ETA {self._eta()}  {target}: {label}{about} ...")
            self.stream.flush()
        elif about:
            self._line(f"{target}: {label}{about} ...")

    def step_end(self, target: str, label: str, status: str, detail: str) -> None:
        self.steps_done += 1
        self.done_s += self.expected.pop((target, label), 0.0) or 1.0
        if status == "ok" and self.verbosity < 0:
            return
        mark = "ok" if status == "ok" else status.upper()
        self._line(f"[{self.steps_done}/{self.steps_total}] {target}: {label}: {mark} {detail} "
                   f"(ETA {self._eta()})")

    def advance(self, seconds: float) -> None:
        self.done_s += seconds

    def message(self, text: str) -> None:
        self._line(text)

    def _line(self, text: str) -> None:
        prefix = "\r\x1b[K" if self.tty else ""
        self.stream.write(prefix + text + "\n")
        self.stream.flush()
