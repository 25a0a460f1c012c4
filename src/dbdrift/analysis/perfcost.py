"""Whether a measured perf counter's change matters to the time per operation: the posts' "context
switches … 40X but that isn't significant", made by arithmetic (docs/hardware.md, "perf counters").

A counter's change per query (new − reference) times what one event of it costs (COST_NS, an
order-of-magnitude estimate) is the time it adds or saves per operation; set against the
reference's time per operation (the server's CPU µs per op, else perf's own cpu-clock per query,
else the host's CPU µs per op) it is a share. A share of at least the report's smallest effect
(`min_effect`, what the report calls a change) matters: a change of the counter that size could
by itself explain a change of throughput the report would call one. A smaller share does not
matter, however large the counter's ratio. A counter with no cost estimate (the work it counts is
already in instructions and cycles: loads, stores, references, branches) and a derived ratio (ipc,
GHz, the miss percentages) get no note. Pure functions; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass

from dbdrift.analysis.hardware import DERIVED, MetricsRow

COST_NS = {
    "cpu-clock": 1e6, "task-clock": 1e6,  # perf prints msec: one is a millisecond of CPU
    "cycles": 0.33, "stalled-cycles-frontend": 0.33, "stalled-cycles-backend": 0.33,  # at about 3 GHz
    "instructions": 0.33,  # about one cycle each
    "branch-misses": 5.0,  # a pipeline flush, ~15 cycles
    "cache-misses": 80.0, "LLC-load-misses": 80.0,  # a DRAM access
    "LLC-store-misses": 20.0,  # a store miss, mostly hidden by the store buffer
    "LLC-loads": 12.0,  # an L2 miss served by the LLC, ~40 cycles
    "L1-dcache-load-misses": 4.0, "L1-icache-load-misses": 4.0, "L1-icache-loads-misses": 4.0,  # an L2 hit
    "dTLB-load-misses": 10.0, "dTLB-store-misses": 10.0, "iTLB-load-misses": 10.0,  # a page walk
    "context-switches": 3000.0,  # the switch, the scheduler and the caches refilled after it
    "migrations": 5000.0, "cpu-migrations": 5000.0,  # a switch onto a cold CPU
    "minor-faults": 1000.0, "faults": 1000.0, "page-faults": 1000.0, "alignment-faults": 1000.0,
    "major-faults": 100_000.0,  # a read from storage
}
"""Nanoseconds one event of each counter costs, an order-of-magnitude estimate for a ~3 GHz
server core; only the order matters to the note, which asks whether a change could matter."""

TIME_SOURCES = (("srv_us/o", 1e3), ("cpu-clock", 1e6), ("cpu_us/o", 1e3))
"""Where the time per operation comes from, in this order, and its nanoseconds per unit."""


@dataclass(frozen=True)
class CounterChange:
    """One counter of one compared target against its reference, per query."""

    counter: str
    base: float | None
    new: float | None
    ratio: float | None  # new / base
    delta_ns: float | None  # (new - base) x COST_NS: time added (saved) per operation
    share: float | None  # delta_ns / the reference's time per operation
    matters: bool | None  # |share| >= min_effect; None without a cost or a time

    def note(self) -> str:
        """`matters: +5.2% of the time per op (+120.0 ns)`, `too small to matter: …` or `no change`;
        "-" for a derived ratio or without a time per operation, `no cost estimate` for a counter
        COST_NS does not price."""
        if self.matters is None or self.share is None or self.delta_ns is None:
            return "-" if self.counter in COST_NS or self.counter in DERIVED else "no cost estimate"
        if self.delta_ns == 0:
            return "no change"
        said = f"{100 * self.share:+.1f}% of the time per op ({_ns(self.delta_ns)})"
        return f"matters: {said}" if self.matters else f"too small to matter: {said}"


def time_per_op_ns(metrics: dict[str, float | None], perf: dict[str, float]) -> float | None:
    """The reference's time per operation in ns (TIME_SOURCES), None when nothing measured it."""
    for name, scale in TIME_SOURCES:
        value = perf.get(name) if name == "cpu-clock" else metrics.get(name)
        if value:
            return value * scale
    return None


def counter_change(counter: str, base: float | None, new: float | None, time_ns: float | None,
                   min_effect: float) -> CounterChange:
    """The counter's ratio and, where it has a cost and the reference a time per op, its share."""
    ratio = new / base if base and new is not None else None
    cost = COST_NS.get(counter)
    if cost is None or base is None or new is None or not time_ns:
        return CounterChange(counter, base, new, ratio, None, None, None)
    delta = (new - base) * cost
    share = delta / time_ns
    return CounterChange(counter, base, new, ratio, delta, share, abs(share) >= min_effect)


def perf_changes(mrow: MetricsRow, min_effect: float) -> dict[str, dict[str, CounterChange]]:
    """compared target -> counter -> its change against the target's reference, for every
    counter either side counted; only targets whose reference has perf counters too."""
    out = {}
    for target, ref in mrow.references.items():
        if target not in mrow.perf or ref not in mrow.perf:
            continue
        base, new = mrow.perf[ref], mrow.perf[target]
        time_ns = time_per_op_ns(mrow.absolute.get(ref, {}), base)
        out[target] = {name: counter_change(name, base.get(name), new.get(name), time_ns, min_effect)
                       for name in sorted(set(base) | set(new))}
    return out


def _ns(value: float) -> str:
    if abs(value) >= 1e6:
        return f"{value / 1e6:+,.2f} ms"
    if abs(value) >= 1e3:
        return f"{value / 1e3:+,.2f} µs"
    return f"{value:+,.1f} ns"
