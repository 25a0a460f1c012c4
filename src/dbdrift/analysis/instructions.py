"""Instructions per event from two callgrind profiles of one connection, and which functions move.

Pure arithmetic over counts; profiles arrive duck-typed (analysis never imports metrics).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypedDict

from dbdrift.analysis.noise import JUDGING, Judging, Verdict

MIN_DELTA_PER_EVENT = 1.0  # instructions per event; smaller function deltas are noise in a report
ROOT_SHARE = 0.95  # a function whose callees hold this share of every event, on both sides, is a root frame


class ProfileCounts(Protocol):
    """What per_event reads from a profile (metrics.callgrind.Profile has it)."""

    @property
    def total_ir(self) -> int: ...
    @property
    def self_ir(self) -> Mapping[str, int]: ...
    @property
    def inclusive_ir(self) -> Mapping[str, int]: ...


@dataclass(frozen=True)
class EventCost:
    """Instructions per event of one target, whole process and per function (name -> count)."""

    ir_per_event: float
    self_per_event: dict[str, float]
    inclusive_per_event: dict[str, float]


def _slope(first: Mapping[str, int], second: Mapping[str, int], events: int) -> dict[str, float]:
    out = {}
    for name in first.keys() | second.keys():
        diff = second.get(name, 0) - first.get(name, 0)
        if diff:
            out[name] = diff / events
    return out


def per_event(p1: ProfileCounts, n1: int, p2: ProfileCounts, n2: int) -> EventCost:
    """(x2 - x1) / (n2 - n1) for the total and for every function's self and inclusive count.

    Method: two runs of one connection that differ only in the number of events; start-up,
    connection set-up and (PostgreSQL) the counts a forked backend inherits from the postmaster
    are the same in both and cancel. Assumes every event costs the same (caches warm in both runs).
    A function missing from one profile counts 0 there; functions whose count did not change are
    left out of the dicts (read them with .get(name, 0.0)). Results are not clipped: a negative
    value means work happened in the shorter run only (e.g. a cache load). n1 == n2: ValueError.
    """
    events = n2 - n1
    if events == 0:
        raise ValueError(f"per_event needs two different event counts, got n1 = n2 = {n1}")
    return EventCost(
        ir_per_event=(p2.total_ir - p1.total_ir) / events,
        self_per_event=_slope(p1.self_ir, p2.self_ir, events),
        inclusive_per_event=_slope(p1.inclusive_ir, p2.inclusive_ir, events),
    )


def repeatability(values: list[float]) -> float:
    """Spread of repeated measurements, (max - min) / mean, in percent.

    One value: 0. All zero: 0. Mean 0 with a spread: inf. Empty list: ValueError.
    """
    if not values:
        raise ValueError("repeatability needs at least one value")
    spread = max(values) - min(values)
    mean = sum(values) / len(values)
    if spread == 0:
        return 0.0
    return float("inf") if mean == 0 else 100.0 * spread / abs(mean)


_CLONE_SUFFIX = re.compile(r"(\.(?:isra|constprop|part|cold|lto_priv)(?:\.\d+)?)+$")


def canonical(name: str) -> str:
    """A function's name without GCC clone suffixes: `f.isra.8` in one build and `f.isra.7` in
    another are the same function, and comparing builds must not show them as two moves."""
    return _CLONE_SUFFIX.sub("", name)


def _by_canonical(costs: Mapping[str, float]) -> dict[str, float]:
    merged: dict[str, float] = {}
    for name, value in costs.items():
        key = canonical(name)
        merged[key] = merged.get(key, 0.0) + value
    return merged


class FunctionRow(TypedDict):
    """One function's instructions per event on both sides."""

    function: str
    base: float
    new: float
    delta: float  # new - base


class FunctionRows(TypedDict):
    """The functions that grew and those that shrank, largest |delta| first."""

    grew: list[FunctionRow]
    shrank: list[FunctionRow]


class FunctionDelta(TypedDict):
    """function_delta(): which functions account for a change in instructions per event."""

    self: FunctionRows
    inclusive: FunctionRows
    total_delta: float
    explained: float | None


def _rows(base: Mapping[str, float], new: Mapping[str, float], top: int) -> FunctionRows:
    base, new = _by_canonical(base), _by_canonical(new)
    rows: list[FunctionRow] = []
    for name in base.keys() | new.keys():
        before, after = base.get(name, 0.0), new.get(name, 0.0)
        if abs(after - before) >= MIN_DELTA_PER_EVENT:
            rows.append(FunctionRow(function=name, base=before, new=after, delta=after - before))
    rows.sort(key=lambda row: (-abs(row["delta"]), row["function"]))
    return {"grew": [r for r in rows if r["delta"] > 0][:top],
            "shrank": [r for r in rows if r["delta"] < 0][:top]}


def function_delta(base: EventCost, new: EventCost, top: int = 5) -> FunctionDelta:
    """Which functions account for the change in instructions per event from `base` to `new`.

    Returns {"self": {"grew": rows, "shrank": rows}, "inclusive": {...}, "total_delta": float,
    "explained": float | None}. A row is {"function", "base", "new", "delta"} in instructions per
    event; each list holds at most `top` rows by |delta| (ties by name), and deltas under
    MIN_DELTA_PER_EVENT are dropped. "explained" is the sum of the listed self deltas that moved
    the same way as the total, divided by total_delta: "+1,500 per query, 93% of it in these
    five functions". It can pass 1.0 when other functions moved the other way, and is None when
    |total_delta| < MIN_DELTA_PER_EVENT. Inclusive rows overlap each other, so they explain nothing;
    they leave out root frames (`(below main)`, `main`, `PostmasterMain`, ...: at least ROOT_SHARE
    of the event's instructions on both sides), whose delta only repeats the total.
    """
    self_rows = _rows(base.self_per_event, new.self_per_event, top)
    total_delta = new.ir_per_event - base.ir_per_event
    explained = None
    if abs(total_delta) >= MIN_DELTA_PER_EVENT:
        same_way = self_rows["grew"] if total_delta > 0 else self_rows["shrank"]
        explained = sum(row["delta"] for row in same_way) / total_delta
    return FunctionDelta(self=self_rows, inclusive=_rows(*_below_roots(base, new), top), total_delta=total_delta,
                         explained=explained)


def _below_roots(base: EventCost, new: EventCost) -> tuple[dict[str, float], dict[str, float]]:
    """Both inclusive maps without the functions that hold nearly all of each event (root frames)."""
    roots = {name for name in base.inclusive_per_event.keys() & new.inclusive_per_event.keys()
             if base.inclusive_per_event[name] >= ROOT_SHARE * base.ir_per_event
             and new.inclusive_per_event[name] >= ROOT_SHARE * new.ir_per_event}
    return ({k: v for k, v in base.inclusive_per_event.items() if k not in roots},
            {k: v for k, v in new.inclusive_per_event.items() if k not in roots})


@dataclass(frozen=True)
class InstructionRow:
    """Instructions per event of every target on one test, each compared with its reference."""

    test: str
    costs: dict[str, EventCost]  # target -> counted cost
    spread_pct: dict[str, float | None]  # target -> repeatability of the count (None: one N1/N2 pair)
    relative: dict[str, float | None]  # compared target -> new / reference
    deltas: dict[str, FunctionDelta]  # compared target -> function_delta(reference, target)
    references: dict[str, str]  # compared target -> the target it is divided by
    simulated: dict[str, dict[str, float]] = field(default_factory=dict)  # target -> simulated_events()
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # compared target -> instruction_verdict()
    rechecked: dict[str, str] = field(default_factory=dict)  # compared target -> what `recheck --pin-defaults` found


def instruction_verdict(ratio: float | None, spreads_pct: list[float | None], judging: Judging = JUDGING) -> Verdict:
    """What a ratio of instructions per event (new / reference) says, read as throughput: more
    instructions per event is slower. With the minimum effect `judging.min_effect`: a regression
    when the ratio is at least 1 + min_effect, an improvement at 1 - min_effect or below, else no
    significant change; too noisy when either count's two N1/N2 pairs differ by more than half
    the minimum effect (a count of one pair has no spread and is taken as it is: it is one where
    the spread is negligible)."""
    if ratio is None:
        return Verdict.NOT_MEASURED
    if any(s is not None and s > 100 * judging.min_effect / 2 for s in spreads_pct):
        return Verdict.TOO_NOISY
    if ratio >= 1 + judging.min_effect:
        return Verdict.REGRESSION
    if ratio <= 1 - judging.min_effect:
        return Verdict.IMPROVEMENT
    return Verdict.NO_CHANGE


# callgrind's simulated events summed into what the posts' perf-stat tables show, per event
SIMULATED = (("instructions", ("Ir",)), ("L1-icache misses", ("I1mr",)), ("L1-dcache misses", ("D1mr", "D1mw")),
             ("LL misses", ("ILmr", "DLmr", "DLmw")), ("branches", ("Bc", "Bi")),
             ("branch mispredicts", ("Bcm", "Bim")))


def simulated_events(ir_per_event: float, events: dict[str, float]) -> dict[str, float]:
    """The SIMULATED figures per event from callgrind's raw events (empty without simulation)."""
    if not events:
        return {}
    raw = {"Ir": ir_per_event, **events}
    return {name: sum(raw.get(e, 0.0) for e in parts) for name, parts in SIMULATED
            if any(e in raw for e in parts)}


def instruction_rows(counts: dict[tuple[str, str], tuple[EventCost, float | None]], references: dict[str, str],
                     test_order: list[str], top: int = 5,
                     simulated: dict[tuple[str, str], dict[str, float]] | None = None,
                     judging: Judging = JUDGING) -> list[InstructionRow]:
    """Rows in `test_order` for every test counted on at least one target.

    `counts` maps (test, target) to (EventCost, spread_pct); `references` maps each compared
    target to the target it is divided by. A missing side leaves that comparison out.
    """
    position = {name: i for i, name in enumerate(test_order)}
    rows = []
    for test in sorted({t for t, _ in counts}, key=lambda n: (position.get(n, len(position)), n)):
        costs = {target: cost for (t, target), (cost, _) in counts.items() if t == test}
        spread = {target: s for (t, target), (_, s) in counts.items() if t == test}
        relative: dict[str, float | None] = {}
        deltas: dict[str, FunctionDelta] = {}
        verdicts: dict[str, Verdict] = {}
        for target, ref in references.items():
            if target in costs and ref in costs:
                base_ir = costs[ref].ir_per_event
                relative[target] = costs[target].ir_per_event / base_ir if base_ir else None
                deltas[target] = function_delta(costs[ref], costs[target], top)
                verdicts[target] = instruction_verdict(relative[target], [spread.get(target), spread.get(ref)],
                                                       judging)
        sim = {target: s for (t, target), s in (simulated or {}).items() if t == test and s}
        rows.append(InstructionRow(test, costs, spread, relative, deltas, references, sim, verdicts))
    return rows
