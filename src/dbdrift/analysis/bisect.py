"""Binary search for the first version (or commit) whose metric moved past a threshold from the
good end, in the direction the bad end moved. Pure: measuring is the caller's `measure`.

A candidate whose measurement failed is skipped, as `git bisect skip` would: the search tries
the untested candidate nearest the middle instead, and when only skipped ones remain between the
last good and the first bad, the answer is that range.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Probe:
    index: int
    label: str
    value: float | None  # None: the measurement failed (skipped)
    moved: float | None  # value / good - 1
    bad: bool | None


@dataclass
class Outcome:
    labels: list[str]
    threshold: float
    probes: list[Probe] = field(default_factory=list)
    last_good: int | None = None
    first_bad: int | None = None
    skipped_between: list[int] = field(default_factory=list)  # untestable candidates the answer cannot exclude
    verdict: str = ""  # "found" | "no-move" | "good-failed" | "bad-failed" | "improved"

    @property
    def direction(self) -> int:
        """+1 when the bad end is higher than the good one, -1 when lower."""
        bad = self.probe(len(self.labels) - 1)
        return 1 if bad and bad.moved and bad.moved > 0 else -1

    def probe(self, index: int) -> Probe | None:
        return next((p for p in self.probes if p.index == index), None)


def bisect(labels: list[str], measure: Callable[[int], float | None], threshold: float) -> Outcome:
    """Measure both ends, then midpoints: a candidate is bad when its value moved from the good
    end's by at least `threshold` in the direction the bad end moved."""
    out = Outcome(list(labels), threshold)
    if len(labels) < 2:
        raise ValueError("bisect needs a good and a bad candidate")
    good = measure(0)
    out.probes.append(Probe(0, labels[0], good, 0.0 if good else None, False if good else None))
    if not good:
        out.verdict = "good-failed"
        return out
    last = len(labels) - 1
    bad_value = measure(last)
    if not bad_value:
        out.probes.append(Probe(last, labels[last], None, None, None))
        out.verdict = "bad-failed"
        return out
    moved = bad_value / good - 1
    is_bad = abs(moved) >= threshold
    out.probes.append(Probe(last, labels[last], bad_value, moved, is_bad))
    if not is_bad:
        out.verdict = "no-move"
        return out
    sign = 1 if moved > 0 else -1
    lo, hi, skipped = 0, last, set()
    while True:
        untested = [i for i in range(lo + 1, hi) if i not in skipped]
        if not untested:
            break
        mid = (lo + hi) // 2
        index = min(untested, key=lambda i: (abs(i - mid), i))
        value = measure(index)
        if not value:
            skipped.add(index)
            out.probes.append(Probe(index, labels[index], None, None, None))
            continue
        change = value / good - 1
        bad_here = change * sign >= threshold
        out.probes.append(Probe(index, labels[index], value, change, bad_here))
        if bad_here:
            hi = index
        else:
            lo = index
    out.last_good, out.first_bad = lo, hi
    out.skipped_between = sorted(i for i in skipped if lo < i < hi)
    out.verdict = "found"
    return out
