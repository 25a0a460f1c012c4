"""The Python half of docs/protocol.md: parse driver lines, merge histograms, percentiles.

No process handling here (driver/process.py) and no knowledge of the catalog.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from dbdrift.model import JsonObject, LatencySummary

PROTOCOL_VERSION = 3  # 3: the spec carries every value; the driver has no defaults (docs/protocol.md)


def bucket_lower_ns(index: int) -> int:
    """Lower bound in ns of histogram bucket `index` (log-linear, 16 sub-buckets per octave)."""
    if index < 16:
        return index
    exponent = 4 + (index - 16) // 16
    mantissa = (index - 16) % 16
    return (16 + mantissa) << (exponent - 4)


def bucket_index(value_ns: int) -> int:
    """Inverse of bucket_lower_ns: the bucket holding `value_ns` (the driver buckets values the
    same way; here only tests use it, to check the driver's histograms)."""
    if value_ns < 16:
        return max(value_ns, 0)
    exponent = value_ns.bit_length() - 1
    return 16 + (exponent - 4) * 16 + ((value_ns >> (exponent - 4)) & 15)


def merge_buckets(histograms: list[list[list[int]]]) -> dict[int, int]:
    merged: dict[int, int] = {}
    for hist in histograms:
        for index, count in hist:
            merged[index] = merged.get(index, 0) + count
    return merged


def percentile_us(buckets: dict[int, int], q: float, max_us: float | None = None) -> float | None:
    """Upper bound (µs) of the bucket holding rank ceil(q * count), or the exact `max_us` when
    that is smaller; None for an empty histogram.

    The rank's value lies in its bucket and is at most the largest value recorded, so the
    smaller of the two bounds it, and a percentile never reads above the maximum (the bucket
    of the maximum ends up to 1/16 above it: 37.75 ms over a maximum of 36.19 ms). It is never
    below the minimum either: a bucket's upper bound exceeds every value in it."""
    total = sum(buckets.values())
    if total == 0:
        return None
    # Integer rank as the driver computes it: ceil(pct * total / 100), no float rounding.
    pct = round(q * 100)
    rank = max(1, (pct * total + 99) // 100)
    seen = 0
    for index in sorted(buckets):
        seen += buckets[index]
        if seen >= rank:
            bound = bucket_lower_ns(index + 1) / 1000.0
            return bound if max_us is None else min(bound, max_us)
    return None  # pragma: no cover - rank <= total always lands above


@dataclass
class DriverOutput:
    """Everything a driver process printed, split by line type."""

    start: JsonObject | None = None
    warmup: JsonObject | None = None
    intervals: list[JsonObject] = field(default_factory=list)
    jobs: list[JsonObject] = field(default_factory=list)
    summary: JsonObject | None = None
    fatal: JsonObject | None = None
    unparsed: list[str] = field(default_factory=list)
    window_edges: list[JsonObject] = field(default_factory=list)  # tpcc "phase" lines: the measured window's edges
    loads: list[JsonObject] = field(default_factory=list)

    def add_line(self, line: str) -> JsonObject | None:
        line = line.strip()
        if not line:
            return None
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            self.unparsed.append(line)
            return None
        if not isinstance(obj, dict):  # every protocol line is an object (docs/protocol.md)
            self.unparsed.append(line)
            return None
        kind = obj.get("type")
        if kind == "interval":
            self.intervals.append(obj)
        elif kind == "job":
            self.jobs.append(obj)
        elif kind in ("start", "warmup", "summary", "fatal"):
            setattr(self, kind, obj)
        elif kind in ("phase", "load"):  # tpcc: its window's edges, and each piece of its load
            (self.window_edges if kind == "phase" else self.loads).append(obj)
        else:
            self.unparsed.append(line)
        return obj


def parse_lines(text: str) -> DriverOutput:
    out = DriverOutput()
    for line in text.splitlines():
        out.add_line(line)
    return out


@dataclass(frozen=True)
class RunTotals:
    """Totals over a run's intervals; throughput is statements per measured second."""

    measured_s: float
    events: int
    statements: int
    rows: int
    errors: dict[str, int]
    latency: LatencySummary

    @property
    def qps(self) -> float | None:
        return self.statements / self.measured_s if self.measured_s > 0 else None

    @property
    def tps(self) -> float | None:
        return self.events / self.measured_s if self.measured_s > 0 else None


def totals(intervals: list[JsonObject]) -> RunTotals:
    measured = sum(max(0.0, iv["end_s"] - iv["start_s"]) for iv in intervals)
    errors: dict[str, int] = {}
    for iv in intervals:
        for name, count in iv.get("errors", {}).items():
            errors[name] = errors.get(name, 0) + count
    buckets = merge_buckets([iv.get("latency_us", {}).get("buckets", []) for iv in intervals])
    lat = [iv.get("latency_us", {}) for iv in intervals]
    mins = [x["min"] for x in lat if x.get("min") is not None]
    maxs = [x["max"] for x in lat if x.get("max") is not None]
    latency = _latency(buckets, min(mins) if mins else None, max(maxs) if maxs else None)
    return RunTotals(measured, sum(iv["events"] for iv in intervals), sum(iv["statements"] for iv in intervals),
                     sum(iv["rows"] for iv in intervals), errors, latency)


def _latency(buckets: dict[int, int], low: float | None, high: float | None) -> LatencySummary:
    return LatencySummary(count=sum(buckets.values()), min=low, max=high, p50=percentile_us(buckets, 0.50, high),
                          p95=percentile_us(buckets, 0.95, high), p99=percentile_us(buckets, 0.99, high))


def latency_of(summary: JsonObject) -> LatencySummary:
    """A run's latency dict from one `latency_us` object (a summary's) instead of its intervals."""
    return _latency(merge_buckets([summary.get("buckets", [])]), summary.get("min"), summary.get("max"))
