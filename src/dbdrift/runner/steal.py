"""Host CPU steal per driver interval, read from /proc/stat (metrics/procstat.py) when each
interval line arrives (StealClock), or per window of about a second for the short turns of
runs in which targets take turns (WindowedSteal).

A VM's steal (time the hypervisor gave our vCPUs to someone else) is the main noise source
on shared hosts; intervals with heavy steal are filtered by the analysis.
"""
from __future__ import annotations

import time
from typing import Callable

from dbdrift.metrics.procstat import cpu_jiffies
from dbdrift.metrics.procstat import steal_pct as steal_between
from dbdrift.model import JsonObject


def steal_pct(before: dict[str, int], after: dict[str, int]) -> float:
    """Host steal between two cpu_jiffies() readings, in % of all CPU time; 0 if no time passed."""
    return steal_between(before, after) or 0.0


class StealClock:
    """Driver line callback: annotates each interval dict with `steal_pct` since the previous line."""

    def __init__(self, reader: Callable[[], dict[str, int] | None] = cpu_jiffies) -> None:
        self.reader = reader
        self.last = reader()

    def on_line(self, obj: JsonObject) -> None:
        kind = obj.get("type")
        if kind not in ("warmup", "interval"):
            return
        now = self.reader()
        if kind == "interval" and now is not None and self.last is not None:
            obj["steal_pct"] = steal_pct(self.last, now)
        self.last = now


class WindowedSteal:
    """Host steal for short turns: /proc/stat counts in jiffies (10 ms of each CPU), far too
    coarse for turns of 10 ms, so lines are grouped into windows of `window_s` and every line
    of a window gets that window's steal once it closes (the dicts are annotated in place,
    before anything is stored). Call close() after the run for the last window."""

    def __init__(self, window_s: float = 1.0, reader: Callable[[], dict[str, int] | None] = cpu_jiffies,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.window_s = window_s
        self.reader = reader
        self.clock = clock
        self.started = self.clock()
        self.last = reader()
        self.lines: list[JsonObject] = []

    def on_line(self, obj: JsonObject) -> None:
        if obj.get("type") != "interval":
            if obj.get("type") == "warmup":  # measurement starts: the warmup's steal is not a turn's
                self.started, self.last, self.lines = self.clock(), self.reader(), []
            return
        self.lines.append(obj)
        if self.clock() - self.started >= self.window_s:
            self.close()

    def close(self) -> None:
        now = self.reader()
        if self.lines and now is not None and self.last is not None:
            pct = steal_pct(self.last, now)
            for obj in self.lines:
                obj["steal_pct"] = pct
        self.started, self.last, self.lines = self.clock(), now, []
