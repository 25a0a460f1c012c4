"""Which engine events coincide with the dips of a per-second rate (or the spikes of a response
time): the posts' "l.i2 dips every ~10 s: once again, blame vacuum", made by counting.

A dip is a run of seconds below DIP of the series' median (after the first SKIP_S seconds);
it starts at its first second. An event starts at a second: a vacuum of a table or a checkpoint
(as the engine reports them, runner/events.py), a burst of a rate the engine keeps (WAL or redo
written, pages flushed, checkpoint writes: above BURST × its median), or a fall of a level
(dead tuples, history list length, dirty pages, checkpoint age: down FALL or more in one
second). A dip coincides with a kind of event when one starts within WITHIN_S of the dip's
start; "by chance" is how many dips would, were they placed at random seconds of the step.
Pure functions; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass
from statistics import median
from typing import Sequence

DIP = 0.8
SPIKE = 2.0
SKIP_S = 2.0
WITHIN_S = 1.0
BURST = 2.0
FALL = 0.2
RATES = {"wal_mb": "WAL burst", "redo_mb": "redo burst", "pages_flushed": "page flush burst",
         "checkpoint_buffers": "checkpoint writes"}
LEVELS = {"dead_tuples": "dead tuples fall", "history_length": "purge (history list falls)",
          "dirty_pages": "dirty pages fall", "checkpoint_age_mb": "checkpoint (age falls)"}


@dataclass(frozen=True)
class Coincidence:
    """How many of `dips` dips start within WITHIN_S of an event of `kind`, and how many would by chance."""

    kind: str
    hits: int
    dips: int
    by_chance: float

    def text(self) -> str:
        return f"{self.hits} of {self.dips} start within {WITHIN_S:g} s of a {self.kind} (by chance {self.by_chance:.1f})"


@dataclass(frozen=True)
class Dips:
    """The dips (or spikes) of one series in one step or run, and the events ranked by coincidence."""

    series: str  # what dipped: "inserts/s", "NOPM", "max insert response"
    kind: str  # "dip" or "spike"
    starts: tuple[float, ...]
    median: float
    ranked: tuple[Coincidence, ...]

    def line(self, label: str) -> str:
        """`l.i2 pg17: 11 dips of inserts/s below 80% of its median (14,200); 9 of 11 start ...`."""
        if not self.starts:
            return ""
        what = (f"{len(self.starts)} {self.kind}{'s' if len(self.starts) != 1 else ''} of {self.series} "
                + (f"below {DIP:.0%} of its median ({self.median:,.0f})" if self.kind == "dip"
                   else f"above {SPIKE:g}x its median ({self.median:,.1f})"))
        shown = [c for c in self.ranked if c.hits > c.by_chance][:3]
        told = "; ".join(c.text() for c in shown) if shown else "no engine event coincides more often than chance"
        return f"{label}: {what}; {told}"


def episodes(t: Sequence[float], values: Sequence[float | None], below: float | None = None,
             above: float | None = None, skip_s: float = SKIP_S) -> tuple[list[float], float]:
    """The start times of runs of consecutive seconds below `below` × median (or above `above` ×
    median), after `skip_s`; and the median. Seconds without a value break no run and start none."""
    known = [v for tt, v in zip(t, values) if v is not None and tt >= skip_s]
    if len(known) < 3:
        return [], 0.0
    mid = median(known)
    starts, inside = [], False
    for tt, v in zip(t, values):
        if tt < skip_s or v is None:
            continue
        out = (below is not None and v < below * mid) or (above is not None and v > above * mid)
        if out and not inside:
            starts.append(tt)
        inside = out
    return starts, mid


def event_starts(t: Sequence[float], series: dict[str, list[float | None]],
                 events: Sequence[dict[str, object]]) -> dict[str, list[float]]:
    """kind -> the seconds at which an event of that kind started (see the module's docstring)."""
    out: dict[str, list[float]] = {}
    for e in events:
        kind = f"vacuum of {e['what']}" if e.get("kind") == "vacuum" else str(e.get("kind"))
        out.setdefault(kind, []).append(float(e["t"]))  # type: ignore[arg-type]
    for name, kind in RATES.items():
        values = series.get(name)
        if not values:
            continue
        known = [v for v in values if v is not None]
        mid = median(known) if known else 0.0
        was = False
        for tt, v in zip(t, values):
            now = v is not None and v > 0 and v > BURST * mid
            if now and not was:
                out.setdefault(kind, []).append(tt)
            was = now
    for name, kind in LEVELS.items():
        values = series.get(name)
        if not values:
            continue
        for tt, a, b in zip(t[1:], values, values[1:]):
            if a is not None and b is not None and a > 0 and b < (1 - FALL) * a:
                out.setdefault(kind, []).append(tt)
    return out


def rank(starts: Sequence[float], events: dict[str, list[float]], t: Sequence[float],
         within_s: float = WITHIN_S) -> list[Coincidence]:
    """Each kind of event by how many dips start within `within_s` of one, most first, then by
    how far above chance; chance = dips × the share of the step's seconds that lie that close
    to an event of the kind."""
    seconds = [tt for tt in t if tt >= SKIP_S] or list(t)
    out = []
    for kind, at in events.items():
        hits = sum(1 for s in starts if any(abs(s - e) <= within_s for e in at))
        near = sum(1 for s in seconds if any(abs(s - e) <= within_s for e in at))
        chance = len(starts) * near / len(seconds) if seconds else 0.0
        out.append(Coincidence(kind, hits, len(starts), chance))
    return sorted(out, key=lambda c: (-c.hits, c.by_chance, c.kind))


def explain(series: str, kind: str, t: Sequence[float], values: Sequence[float | None], engine_t: Sequence[float],
            engine_series: dict[str, list[float | None]], engine_events: Sequence[dict[str, object]]) -> Dips:
    """The dips (kind "dip") or spikes ("spike") of `values` over `t`, with the engine's events
    ranked by how many of them they coincide with."""
    starts, mid = episodes(t, values, below=DIP if kind == "dip" else None, above=SPIKE if kind == "spike" else None)
    ranked = rank(starts, event_starts(engine_t, engine_series, engine_events), t) if starts else []
    return Dips(series, kind, tuple(starts), mid, tuple(ranked))
