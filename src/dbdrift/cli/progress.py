"""Progress lines with ETA for long campaigns (stderr). A bar on a terminal, plain lines otherwise.

Inside a step the driver's interval lines move it, as pgbench -P does: on a terminal the bar,
the ETA and the step's rate now are redrawn at most every TICK_S; where stderr is no terminal
(a log, CI) a line every LOG_EVERY_S says how far the step is and its rate.
"""
from __future__ import annotations

import sys
import time
from typing import TextIO

from dbdrift.app.inputs import format_duration

TICK_S = 1.0  # a terminal's bar is redrawn at most this often inside a step
LOG_EVERY_S = 10.0  # a log gets a line this often per step in progress (pgbench -P 10)
# A step expected to take this long or longer says so when it starts, also when stderr is not a
# terminal (a log, CI): a warm-up, a settle's wait or a load is never minutes of silence.
ANNOUNCE_S = 5.0
PRIOR_STEPS = 4  # the ETA's fit starts from 2 x this many steps that went as guessed (eta_s)


class ConsoleProgress:
    """The steps done against the campaign's estimate, a bar and an ETA (see `eta_s`).
    `verbosity` -1 (--quiet) drops the bar, the lines of steps that went well and those of
    steps in progress; 1 (--verbose) adds a line as each step starts."""

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
        self.partial: dict[tuple[str, str], float] = {}  # of those, the expected seconds their driver reported done
        self.begun: dict[tuple[str, str], float] = {}  # when each started
        self.overlap: dict[tuple[str, str], int] = {}  # the most steps in progress at once while it ran
        self.logged: dict[tuple[str, str], float] = {}  # when each last wrote a line of its progress
        self.rates: dict[tuple[str, str], str] = {}  # each one's rate now, as its driver last reported it
        self.fitted = [0, 0.0, 0.0, 0.0, 0.0]  # ended steps: n and the sums of expected, wall, expected², expected x wall
        self.last_end = self.started
        self.drawn = 0.0  # when the terminal's bar was last drawn inside a step

    def campaign_start(self, total_s: float, total_steps: int) -> None:
        self.total_s, self.steps_total = max(total_s, 1.0), total_steps
        self.done_s, self.steps_done = 0.0, 0  # one sink can follow several campaigns (bisect)
        self.fitted = [0, 0.0, 0.0, 0.0, 0.0]
        self.started = self.last_end = time.monotonic()
        if self.verbosity < 0:
            return
        self._line(f"campaign: {total_steps} steps, about {format_duration(total_s)} expected")

    def eta_s(self) -> float:
        """Seconds left, as the steps done went: each step took a fixed overhead (starting the
        driver, connecting, storing, the time between steps) plus its share of the estimate
        scaled by a pace, wall = a + b x expected, fitted by least squares over the steps ended
        so far; the steps left (in-flight ones less what their driver reported done) are
        expected to go alike. One pace for all would take a restart that beat its 3 s guess
        for a sign that the measured runs, which last what they are given, will be quicker too,
        and drop the ETA by a share of the whole campaign at each one (~30 s each, issue 65);
        the fit tells the two apart once both have ended. Until enough steps have, it is held
        near wall = expected by PRIOR_STEPS steps that went exactly as guessed."""
        left = max(0.0, self.total_s - self.done_s - sum(self.partial.values()))
        steps_left = max(0, self.steps_total - self.steps_done)
        if not steps_left:  # every step of the estimate has ended: what is left of it went to none of them
            return 0.0
        overhead, pace = self.fit()
        return max(0.0, overhead * steps_left + pace * left)

    def fit(self) -> tuple[float, float]:
        """(a, b) of wall = a + b x expected over the ended steps and the prior's (see eta_s)."""
        mean_share = self.total_s / max(1, self.steps_total)
        n = self.fitted[0] + 2 * PRIOR_STEPS
        sum_e = self.fitted[1] + PRIOR_STEPS * mean_share  # half the prior's steps at 0 s, half at the mean share
        sum_w = self.fitted[2] + PRIOR_STEPS * mean_share
        sum_ee = self.fitted[3] + PRIOR_STEPS * mean_share ** 2
        sum_ew = self.fitted[4] + PRIOR_STEPS * mean_share ** 2
        spread = sum_ee - sum_e * sum_e / n
        pace = (sum_ew - sum_e * sum_w / n) / spread if spread > 1e-9 else 1.0
        return (sum_w - pace * sum_e) / n, pace

    def _eta(self) -> str:
        return format_duration(self.eta_s())

    def step_start(self, target: str, label: str, expected_s: float, wall_s: float | None = None) -> None:
        key = (target, label)
        self.expected[key] = expected_s
        self.begun[key] = time.monotonic()
        for k in self.expected:  # targets in turns, lanes: their wall time is shared
            self.overlap[k] = max(self.overlap.get(k, 1), len(self.expected))
        announce = expected_s >= ANNOUNCE_S or self.verbosity > 0  # --verbose: every step as it starts
        about = f" (about {format_duration(expected_s)})" if announce and self.verbosity >= 0 else ""
        if about and wall_s and wall_s > expected_s:  # its share of a run in turns
            about = f" (about {format_duration(expected_s)} of turns in {format_duration(wall_s)})"
        if self.tty:
            self._bar(f"{target}: {label}{about} ...")
        elif about:
            self._line(f"{target}: {label}{about} ...")

    def step_progress(self, target: str, label: str, fraction: float, rate: str) -> None:
        key = (target, label)
        if key not in self.expected:
            return
        fraction = min(1.0, max(0.0, fraction))
        self.partial[key] = fraction * self.expected[key]
        if self.verbosity < 0:
            return
        self.rates[key] = rate
        now = time.monotonic()
        where = f"{fraction:.0%} ({format_duration(now - self.begun[key])})"
        if self.tty:
            together = [k for k in self.expected if k[1] == label and self.rates.get(k)]  # targets taking turns
            if len(together) > 1:
                shown = f"{label}: {where}, " + "; ".join(f"{t} {self.rates[(t, lb)]}" for t, lb in together)
            else:
                shown = f"{target}: {label}: {where}" + (f", {rate}" if rate else "")
            if now - self.drawn >= TICK_S:
                self.drawn = now
                self._bar(shown)
            return
        where += f", {rate}" if rate else ""
        if now - self.logged.get(key, self.begun[key]) >= LOG_EVERY_S:
            self.logged[key] = now
            self._line(f"{target}: {label}: {where} (ETA {self._eta()})")

    def step_end(self, target: str, label: str, status: str, detail: str) -> None:
        key = (target, label)
        now = time.monotonic()
        expected = self.expected.pop(key, 0.0)
        self.partial.pop(key, None)
        self.logged.pop(key, None)
        self.rates.pop(key, None)
        began = min(self.begun.pop(key, now), self.last_end)  # the time since the step before is its own
        wall = (now - began) / self.overlap.pop(key, 1)  # steps in turns or lanes share their wall time
        for i, value in enumerate((1, expected, wall, expected * expected, expected * wall)):
            self.fitted[i] += value
        self.last_end = now
        self.steps_done += 1
        self.done_s += expected
        if status == "ok" and self.verbosity < 0:
            return
        mark = "ok" if status == "ok" else status.upper()
        self._line(f"[{self.steps_done}/{self.steps_total}] {target}: {label}: {mark} {detail} "
                   f"(ETA {self._eta()})")

    def advance(self, seconds: float, steps: int = 0) -> None:
        self.done_s += seconds
        self.steps_done += steps

    def message(self, text: str) -> None:
        self._line(text)

    def _bar(self, text: str) -> None:
        done = self.done_s + sum(self.partial.values())
        pct = 100.0 * min(1.0, done / self.total_s) if self.total_s else 0.0
        width = 24
        filled = int(width * pct / 100)
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r\x1b[K[{bar}] {pct:3.0f}% ETA {self._eta()}  {text}")
        self.stream.flush()

    def _line(self, text: str) -> None:
        prefix = "\r\x1b[K" if self.tty else ""
        self.stream.write(prefix + text + "\n")
        self.stream.flush()
