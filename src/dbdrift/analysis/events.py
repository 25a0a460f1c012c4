"""Which engine events coincide with the dips of a per-second rate (or the spikes of a response
time), and which came in the peak before each: the posts' "l.i2 dips every ~10 s: once again,
blame vacuum", made by counting.

A dip is a run of seconds below DIP of the series' median (after the first SKIP_S seconds), from
its first second to its last; a spike a run above SPIKE × the median. The peak before a dip is
the last run of seconds at or above the median that ends before the dip starts and after the
episode before it (for a spike: the last run at or below the median, the calm before it). An
event starts at a second: a vacuum of a table or a checkpoint (as the engine reports them,
runner/events.py), a burst of a rate the engine keeps (WAL or redo written, pages flushed,
checkpoint writes: above BURST × its median), or a fall of a level (dead tuples, history list
length, dirty pages, checkpoint age: down FALL or more in one second).

A dip coincides with a kind of event when one starts within its span widened by WITHIN_S on
either side (a vacuum that starts a second before the rate falls, or while it is down, or as it
recovers); its peak holds one when one starts within the peak's own seconds: a per-second line
at t covers (t - 1, t], so a peak from a to b covers (a - 1, b], not widened further (the seconds
beside a peak are the dips around it).
"By chance" is how many dips (or peaks) would, were each span of the same length placed at a
random second of the step. Pure functions; no I/O.
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
class Episode:
    """One dip (or spike): its first and last second, its lowest (highest) value, and the peak
    before it (calm before a spike) as (first, last) second, None when the series never reached
    its median between the episode before and this one."""

    start: float
    end: float
    extreme: float
    peak: tuple[float, float] | None = None


@dataclass(frozen=True)
class Coincidence:
    """How many of `dips` dips span an event of `kind` and how many would by chance; how many of
    the `peaks` peaks before them hold one, and how many would by chance."""

    kind: str
    hits: int
    dips: int
    by_chance: float
    peak_hits: int = 0
    peaks: int = 0
    peak_by_chance: float = 0.0

    def text(self, kind: str = "dip") -> str:
        return f"{self.hits} of {self.dips} {kind}s span a {self.kind} (by chance {self.by_chance:.1f})"

    def peak_text(self) -> str:
        return f"{self.peak_hits} of {self.peaks} hold a {self.kind} (by chance {self.peak_by_chance:.1f})"


@dataclass(frozen=True)
class Dips:
    """The dips (or spikes) of one series in one step or run, the events ranked by coincidence
    with them, and with the peaks before them."""

    series: str  # what dipped: "inserts/s", "deletes/s", "NOPM", "max insert response"
    kind: str  # "dip" or "spike"
    spans: tuple[Episode, ...]
    median: float
    ranked: tuple[Coincidence, ...]
    during: tuple[tuple[str, ...], ...] = ()  # per episode: the kinds of event within its span
    before: tuple[tuple[str, ...], ...] = ()  # per episode: the kinds of event within the peak before it

    @property
    def starts(self) -> tuple[float, ...]:
        return tuple(e.start for e in self.spans)

    def what(self) -> str:
        """`11 dips of deletes/s below 80% of its median (2,000), 3 s long at the median`."""
        n = len(self.spans)
        lengths = sorted(e.end - e.start + 1 for e in self.spans)
        return (f"{n} {self.kind}{'s' if n != 1 else ''} of {self.series} "
                + (f"below {DIP:.0%} of its median ({self.median:,.0f})" if self.kind == "dip"
                   else f"above {SPIKE:g}x its median ({self.median:,.1f})")
                + (f", {lengths[len(lengths) // 2]:g} s long at the median" if lengths else ""))

    def told(self) -> str:
        """The (at most three) kinds of event that span more dips than chance would."""
        shown = [c for c in self.ranked if c.hits > c.by_chance][:3]
        if not shown:
            return "no engine event coincides more often than chance"
        return "; ".join(c.text(self.kind) for c in shown)

    def told_before(self) -> str:
        """The (at most three) kinds of event the peaks before the dips hold more often than chance."""
        shown = sorted((c for c in self.ranked if c.peak_hits > c.peak_by_chance),
                       key=lambda c: (-c.peak_hits, c.peak_by_chance, c.kind))[:3]
        if not any(e.peak for e in self.spans):
            return f"no {'peak' if self.kind == 'dip' else 'calm'} before any"
        return "; ".join(c.peak_text() for c in shown) if shown else "no engine event more often than chance"

    def line(self, label: str) -> str:
        """`l.i2 pg17: 11 dips of …; 9 of 11 dips span a vacuum of pi1 (…); peaks before: …`."""
        if not self.spans:
            return ""
        before = "peaks before" if self.kind == "dip" else "calms before"
        return f"{label}: {self.what()}; {self.told()}; {before}: {self.told_before()}"


def episodes(t: Sequence[float], values: Sequence[float | None], below: float | None = None,
             above: float | None = None, skip_s: float = SKIP_S) -> tuple[list[Episode], float]:
    """The runs of consecutive seconds below `below` × median (or above `above` × median), after
    `skip_s`, each with the peak (or calm) before it; and the median. Seconds without a value
    break no run and start none."""
    known = [v for tt, v in zip(t, values) if v is not None and tt >= skip_s]
    if len(known) < 3:
        return [], 0.0
    mid = median(known)
    out: list[Episode] = []
    run: list[float] | None = None  # [start, end, extreme]
    good: tuple[float, float] | None = None  # the current run of seconds on the other side of the median
    peak: tuple[float, float] | None = None  # the last such run since the previous episode
    for tt, v in zip(t, values):
        if tt < skip_s or v is None:
            continue
        out_of = (below is not None and v < below * mid) or (above is not None and v > above * mid)
        if out_of:
            if run is None:
                run, peak, good = [tt, tt, v], good or peak, None
            else:
                run[1], run[2] = tt, (min(run[2], v) if below is not None else max(run[2], v))
            continue
        if run is not None:
            out.append(Episode(run[0], run[1], run[2], peak))
            run, peak = None, None
        calm = v >= mid if below is not None else v <= mid
        if calm:
            good = (good[0], tt) if good else (tt, tt)
        elif good:
            peak, good = good, None
    if run is not None:
        out.append(Episode(run[0], run[1], run[2], peak))
    return out, mid


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


def _holds(span: tuple[float, float], at: Sequence[float], within_s: float) -> bool:
    return any(span[0] - within_s <= e <= span[1] + within_s for e in at)


def _in_peak(span: tuple[float, float], at: Sequence[float]) -> bool:
    """An event within the seconds of a peak: (first - 1, last], the time its lines cover."""
    return any(span[0] - 1 < e <= span[1] for e in at)


def _chance(spans: Sequence[tuple[float, float]], at: Sequence[float], seconds: Sequence[float],
            within_s: float | None) -> float:
    """How many of `spans` would hold an event of `at` were each moved to a random second
    (`within_s` None: as a peak holds one)."""
    if not seconds:
        return 0.0
    def holds(span: tuple[float, float]) -> bool:
        return _in_peak(span, at) if within_s is None else _holds(span, at, within_s)
    return sum(sum(1 for s in seconds if holds((s, s + b - a))) / len(seconds) for a, b in spans)


def rank(spans: Sequence[Episode], events: dict[str, list[float]], t: Sequence[float],
         within_s: float = WITHIN_S) -> list[Coincidence]:
    """Each kind of event by how many dips it falls within (widened by `within_s`), most first,
    then by how far above chance; and how many of the peaks before them hold one."""
    seconds = [tt for tt in t if tt >= SKIP_S] or list(t)
    dips = [(e.start, e.end) for e in spans]
    peaks = [e.peak for e in spans if e.peak]
    out = []
    for kind, at in events.items():
        out.append(Coincidence(kind, sum(1 for d in dips if _holds(d, at, within_s)), len(dips),
                               _chance(dips, at, seconds, within_s),
                               sum(1 for p in peaks if _in_peak(p, at)), len(peaks),
                               _chance(peaks, at, seconds, None)))
    return sorted(out, key=lambda c: (-c.hits, c.by_chance, c.kind))


def explain(series: str, kind: str, t: Sequence[float], values: Sequence[float | None], engine_t: Sequence[float],
            engine_series: dict[str, list[float | None]], engine_events: Sequence[dict[str, object]]) -> Dips:
    """The dips (kind "dip") or spikes ("spike") of `values` over `t`, with the engine's events
    ranked by how many of them, and of the peaks before them, they coincide with; and per
    episode the kinds of event within it and within its peak."""
    spans, mid = episodes(t, values, below=DIP if kind == "dip" else None, above=SPIKE if kind == "spike" else None)
    if not spans:
        return Dips(series, kind, (), mid, ())
    started = event_starts(engine_t, engine_series, engine_events)
    during = tuple(tuple(k for k, at in started.items() if _holds((e.start, e.end), at, WITHIN_S)) for e in spans)
    before = tuple(tuple(k for k, at in started.items() if e.peak and _in_peak(e.peak, at)) for e in spans)
    return Dips(series, kind, tuple(spans), mid, tuple(rank(spans, started, t)), during, before)
