"""How much a turn's place in the order moves its speed: per target and per position, each
with a 95% interval, from the turns of one run in which several targets took turns.

A round holds one turn of every target. Within a round, d = ln(rate) − the round's mean of
ln(rate) removes what every target saw alike (drift, a burst of steal). The mean of d over a
target's turns is that target's offset from the others: with identical targets (A/A/A/A)
it is pure order bias. The mean of what is left after the target offsets, per position in
the round, is the position effect; in a balanced order it cancels out of every target's
rQPS, and a large one says the targets disturb each other's next turn (docs/noise.md). What a
position effect does to a target is its bias: the mean position effect over the target's own
turns, less the mean over all targets. A balanced order (plan/rounds.py) gives every target
every position equally often, so the bias is 0 whatever the effects; the report names the
targets whose bias is still RESIDUAL_EFFECT or more (an unbalanced order, a run cut short).
Intervals are t intervals over TURN_BATCHES contiguous batches of rounds (the batch means of
analysis.noise: neighbouring rounds are correlated).
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from statistics import fmean, stdev

from dbdrift.analysis.noise import TURN_BATCHES, t975

RESIDUAL_EFFECT = 0.01  # a target biased this much (either way) by significant position effects is reported


@dataclass(frozen=True)
class Turn:
    """One measured turn: which repeat and round, its position in the round, whose it was,
    and its throughput."""

    repeat: int
    round: int
    position: int
    target: str
    rate: float


@dataclass(frozen=True)
class Effect:
    """A relative effect exp(mean) − 1 with its 95% interval; `n` batches it rests on."""

    value: float
    lower: float | None
    upper: float | None
    n: int

    @property
    def excludes_zero(self) -> bool:
        return self.lower is not None and self.upper is not None and (self.lower > 0 or self.upper < 0)

    def text(self) -> str:
        if self.lower is None or self.upper is None:
            return f"{self.value:+.2%}"
        return f"{self.value:+.2%} [{self.lower:+.2%}, {self.upper:+.2%}]"


@dataclass(frozen=True)
class PositionEffects:
    targets: dict[str, Effect]  # each target's offset from the round mean
    positions: dict[int, Effect]  # each position's offset once the target offsets are taken out
    rounds: int
    bias: dict[str, float]  # what the significant position effects add to each target's offset
    separable: bool = True  # False: the order never lets target offsets and place effects apart

    def residual(self, threshold: float = RESIDUAL_EFFECT) -> dict[str, float]:
        """The targets whose result the position effects move by `threshold` or more."""
        return {t: b for t, b in self.bias.items() if abs(b) >= threshold}


def _effect(values_by_batch: list[list[float]]) -> Effect:
    means = [fmean(v) for v in values_by_batch if v]
    if not means:
        return Effect(0.0, None, None, 0)
    centre = fmean(means)
    if len(means) < 3:
        return Effect(math.expm1(centre), None, None, len(means))
    half = t975(len(means) - 1) * stdev(means) / math.sqrt(len(means))
    return Effect(math.expm1(centre), math.expm1(centre - half), math.expm1(centre + half), len(means))


def position_effects(turns: list[Turn], batches: int = TURN_BATCHES) -> PositionEffects | None:
    """Target and position effects of one test's turns; None without two complete rounds.
    Only complete rounds (every target once, every rate > 0) count.

    d = ln(rate) − its round's mean is fitted as target offset + position effect by least
    squares (backfitting, both centred). Where the order never lets the two apart (targets that
    only ever share places with each other, as alternating order does to the first and last
    listed of three or more) the split is not determined: `separable` is False and the
    position effects and biases are not given."""
    by_round: dict[tuple[int, int], list[Turn]] = defaultdict(list)
    for t in turns:
        by_round[(t.repeat, t.round)].append(t)
    names = {t.target for t in turns}
    complete = [sorted(ts, key=lambda t: t.position) for _, ts in sorted(by_round.items())
                if len(ts) == len(names) and {t.target for t in ts} == names and all(t.rate > 0 for t in ts)]
    if len(names) < 2 or len(complete) < 2:
        return None
    centred = []
    for ts in complete:
        mean = fmean(math.log(t.rate) for t in ts)
        centred.append([(t, math.log(t.rate) - mean) for t in ts])
    flat = [(t.target, t.position, d) for rnd in centred for t, d in rnd]
    places = sorted({p for _, p, _ in flat})
    separable = _connected({(name, p) for name, p, _ in flat})
    offset, effect = _fit(flat, sorted(names), places) if separable else (
        {name: fmean(d for n, _, d in flat if n == name) for name in names}, {p: 0.0 for p in places})
    batches = min(batches, len(centred))
    size = len(centred) / batches
    chunks = [[x for rnd in centred[round(b * size):round((b + 1) * size)] for x in rnd] for b in range(batches)]
    targets = {name: _effect([[d - effect[t.position] for t, d in chunk if t.target == name] for chunk in chunks])
               for name in sorted(names)}
    positions = {p: _effect([[d - offset[t.target] for t, d in chunk if t.position == p] for chunk in chunks])
                 for p in places} if separable else {}
    # each target's share of each place, and what the significant place effects make of it
    logs = {p: effect[p] for p, e in positions.items() if e.excludes_zero}
    own = {name: fmean(logs.get(p, 0.0) for n, p, _ in flat if n == name) for name in names}
    mean = fmean(own.values())
    bias = {name: math.expm1(own[name] - mean) for name in sorted(names)} if separable else {}
    return PositionEffects(targets, positions, len(complete), bias, separable)


def _connected(cells: set[tuple[str, int]]) -> bool:
    """Whether every target and place are linked through the (target, place) pairs that occur:
    only then can a target's offset be told from its places' effects."""
    graph: dict[object, set[object]] = defaultdict(set)
    for name, p in cells:
        graph[("t", name)].add(("p", p))
        graph[("p", p)].add(("t", name))
    start = next(iter(graph))
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph[todo.pop()] - seen:
            seen.add(nxt)
            todo.append(nxt)
    return len(seen) == len(graph)


def _fit(flat: list[tuple[str, int, float]], names: list[str], places: list[int],
         sweeps: int = 200) -> tuple[dict[str, float], dict[int, float]]:
    """Least squares d ≈ offset[target] + effect[place] by backfitting over the (target, place)
    cells' sums and counts; the effects centred."""
    total: dict[tuple[str, int], float] = defaultdict(float)
    count: dict[tuple[str, int], int] = defaultdict(int)
    for t, p, d in flat:
        total[(t, p)] += d
        count[(t, p)] += 1
    cells = list(count)
    offset = {n: 0.0 for n in names}
    effect = {p: 0.0 for p in places}
    for _ in range(sweeps):
        offset = {n: sum(total[c] - count[c] * effect[c[1]] for c in cells if c[0] == n)
                  / sum(count[c] for c in cells if c[0] == n) for n in names}
        effect = {p: sum(total[c] - count[c] * offset[c[0]] for c in cells if c[1] == p)
                  / sum(count[c] for c in cells if c[1] == p) for p in places}
        centre = fmean(effect.values())
        effect = {p: e - centre for p, e in effect.items()}
    return offset, effect


def order_notes(turns_by_cell: dict[str, list[Turn]], unit: str = "turns") -> tuple[str, ...]:
    """Report notes: one per cell (a test, a step) with a target the place effects moved by
    RESIDUAL_EFFECT or more (which targets, by how much, the place effects), and one for all
    cells whose order cannot tell a place effect from a target's own. `unit` is what took
    places in the order: turns in rounds, or repeats (whole runs)."""
    notes, confounded = [], []
    for cell, turns in turns_by_cell.items():
        pe = position_effects(turns, batches=TURN_BATCHES if unit == "turns" else len({t.round for t in turns}))
        if pe is None:
            continue
        if not pe.separable:
            confounded.append(cell)
        elif moved := pe.residual():
            who = ", ".join(f"{t} by {b:+.1%}" for t, b in moved.items())
            places = ", ".join(f"{e.value:+.1%}" for _, e in sorted(pe.positions.items()))
            notes.append(f"order: on {cell}, the places its {unit} took in the order moved {who} (the places, first "
                         f"to last: {places}); whole cycles of round_order = \"balanced\" give every target every "
                         "place equally often")
    if confounded:
        notes.append(f"order: the targets' {unit} kept to some places only ({', '.join(confounded[:3])}"
                     f"{', ...' if len(confounded) > 3 else ''}), so what a place does cannot be told from what a "
                     "target does, and results carry it (up to a few % in docs/noise.md E18): "
                     "round_order = \"balanced\" (the default) gives every target every place")
    return tuple(notes)
