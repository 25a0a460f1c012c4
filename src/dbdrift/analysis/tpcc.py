"""TPROC-C results as the posts read them: NOPM per target, NOPM relative to the base (with a
95% interval over repeats), TPM, the hardware per new order from the host samplers, and
per-transaction response times. Pure functions of `TpccResult` values.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import fmean, median

from dbdrift.analysis.noise import Estimate, relative_over_repeats
from dbdrift.analysis import events
from dbdrift.analysis.flame_areas import AreaShares, merged, shares
from dbdrift.analysis.hardware import background_share, combine, disk_metrics, vmstat
from dbdrift.model import TPCC_TRANSACTIONS as TRANSACTIONS
from dbdrift.model import TpccResult

HARDWARE = ("cpu/no", "server/no", "client/no", "client%", "bg/no", "bg%", "cs/no", "wkb/no", "fl/no", "fl/s",
            "w_ms", "aqu")
"""Per new order in the measured window: host CPU µs (user + system over every CPU); the
server's and the driver's process CPU µs and the driver's share of the two; the server's
background CPU µs and its share of the server's CPU; context switches; KB written to storage;
flushes (fsyncs) per new order and per second; write await (ms) and queue depth."""


HOST = ("cpu/no", "us/no", "sy/no", "cpuPer", "us", "sy", "r", "cs/s")
"""The host CPU as vmstat shows it, per new order and over the window: host CPU µs per new order
and its user and system parts, the posts' cpuPer = ((us + sy) / NOPM) * 1000 (us and sy in % of
all CPUs), then vmstat's us, sy, r (runnable count) and cs/s (analysis/hardware.vmstat)."""


@dataclass(frozen=True)
class Latency:
    count: int
    errors: int
    rollbacks: int
    p50_us: float | None
    p95_us: float | None
    p99_us: float | None
    max_us: float | None


@dataclass(frozen=True)
class TargetSummary:
    target: str
    runs: int  # ok runs (repeats) the values are means of
    failed: int
    nopm: float | None
    tpm: float | None
    relative: Estimate | None  # NOPM ÷ the base's; None for the base itself
    hardware: dict[str, float | None] = field(default_factory=dict)
    host: dict[str, float | None] = field(default_factory=dict)  # HOST
    procedures: bool | None = None  # how its ok runs ran the transactions; None without any
    latency: dict[str, Latency] = field(default_factory=dict)  # TRANSACTIONS order
    consistency_ok: bool | None = None  # every ok run passed every check; None without runs or checks
    errors: list[str] = field(default_factory=list)  # why runs failed


def summarize(results: list[TpccResult], targets: list[str], ncpu: int) -> list[TargetSummary]:
    """One summary per target in order; the first is the base of the relative NOPM."""
    by_target = {t: _latest_per_repeat([r for r in results if r.target == t]) for t in targets}
    ok = {t: [r for r in rs if r.status == "ok"] for t, rs in by_target.items()}
    base = targets[0]
    out = []
    for t in targets:
        runs = ok[t]
        est = None
        if t != base and runs and ok[base]:
            est = relative_nopm(runs, ok[base])
        out.append(TargetSummary(
            target=t, runs=len(runs), failed=sum(1 for r in by_target[t] if r.status != "ok"),
            nopm=fmean(r.nopm for r in runs) if runs else None, tpm=fmean(r.tpm for r in runs) if runs else None,
            relative=est, hardware=hardware_per_new_order(runs, ncpu), host=host_cpu(runs, ncpu),
            procedures=runs[0].procedures if runs else None, latency=latencies(runs),
            consistency_ok=consistency_of(runs),
            errors=[r.error for r in by_target[t] if r.status != "ok" and r.error]))
    return out


def _latest_per_repeat(results: list[TpccResult]) -> list[TpccResult]:
    last = {r.repeat: r for r in results}
    return [last[k] for k in sorted(last)]


def relative_nopm(new: list[TpccResult], base: list[TpccResult]) -> Estimate:
    """NOPM new ÷ base: noise.relative_over_repeats of each repeat's NOPM over its window."""
    def values(results: list[TpccResult]) -> list[tuple[int, float, float]]:
        return [(r.repeat, r.nopm, r.elapsed_s) for r in results]
    return relative_over_repeats(values(new), values(base))


def hardware_per_new_order(runs: list[TpccResult], ncpu: int) -> dict[str, float | None]:
    """HARDWARE over the runs' sampled windows merged into one (analysis/hardware.combine: sums
    over sums, so a longer window weighs more); None where no run has a window or no new order
    was made, and for the KB written, background and disk columns where a window lacks them."""
    out: dict[str, float | None] = dict.fromkeys(HARDWARE)
    windows = [(r, r.hardware) for r in runs if r.hardware and r.hardware.get("elapsed_s")]
    orders = sum(r.new_orders for r, _ in windows)
    merged = combine([(w, r.new_orders / w["elapsed_s"]) for r, w in windows]) if orders > 0 else None
    if merged is None:
        return out
    w, _ = merged
    server_s, client_s = w.get("server_cpu_s") or 0.0, w.get("client_cpu_s") or 0.0
    out["cpu/no"] = (w["cpu_user_pct"] + w["cpu_sys_pct"]) / 100 * ncpu * w["elapsed_s"] * 1e6 / orders
    out["server/no"] = server_s * 1e6 / orders
    out["client/no"] = client_s * 1e6 / orders
    out["client%"] = 100 * client_s / (server_s + client_s) if server_s + client_s > 0 else None
    out["cs/no"] = (w.get("cs") or 0) / orders
    written = w.get("write_kb")
    out["wkb/no"] = None if written is None else written / orders
    bg = w.get("server_bg_cpu_s")
    out["bg/no"] = None if bg is None else bg * 1e6 / orders
    out["bg%"] = background_share(w)
    disk = disk_metrics(w, orders / w["elapsed_s"])
    out["fl/no"], out["fl/s"], out["w_ms"], out["aqu"] = disk["fl/o"], disk["fl/s"], disk["w_ms"], disk["aqu"]
    return out


def host_cpu(runs: list[TpccResult], ncpu: int) -> dict[str, float | None]:
    """HOST over the runs' windows merged into one (combine); cpuPer divides by the runs' NOPM
    weighted as the windows are. None throughout without a window or a new order."""
    out: dict[str, float | None] = dict.fromkeys(HOST)
    windows = [(r.hardware, r.nopm) for r in runs if r.hardware and r.hardware.get("elapsed_s")]
    orders = sum(r.new_orders for r in runs if r.hardware and r.hardware.get("elapsed_s"))
    merged = combine(windows) if orders > 0 else None
    if merged is None:
        return out
    w, nopm = merged
    cpu_s = ncpu * w["elapsed_s"] * 1e6 / 100 / orders  # µs per new order of one % of all CPUs
    out.update(vmstat(w))
    out["us/no"], out["sy/no"] = w["cpu_user_pct"] * cpu_s, w["cpu_sys_pct"] * cpu_s
    out["cpu/no"] = (w["cpu_user_pct"] + w["cpu_sys_pct"]) * cpu_s
    out["cpuPer"] = (w["cpu_user_pct"] + w["cpu_sys_pct"]) / nopm * 1000 if nopm > 0 else None
    return out


@dataclass(frozen=True)
class ProceduresRow:
    """One DBMS (a target without its sp level) with and without stored procedures, as the posts'
    table has it: NOPM and cpuPer of each setting, and sp1's NOPM over sp0's."""

    name: str
    nopm: dict[bool, float | None]  # procedures -> NOPM
    cpu_per: dict[bool, float | None]  # procedures -> cpuPer

    @property
    def ratio(self) -> float | None:
        off, on = self.nopm.get(False), self.nopm.get(True)
        return on / off if on is not None and off else None


def procedures_table(summaries: Sequence[TargetSummary]) -> list[ProceduresRow]:
    """The targets that ran both ways, paired by name without their sp level (the procedures
    axis is the last, so it ends the name: pg17-sp0 and pg17-sp1 are pg17); [] when none did."""
    rows: dict[str, ProceduresRow] = {}
    for s in summaries:
        if s.procedures is None:
            continue
        label = f"sp{int(s.procedures)}"
        if not s.target.endswith(label):
            continue
        name = s.target[:-len(label)].rstrip("-_") or s.target
        row = rows.setdefault(name, ProceduresRow(name, {}, {}))
        row.nopm[s.procedures], row.cpu_per[s.procedures] = s.nopm, s.host.get("cpuPer")
    return [r for r in rows.values() if len(r.nopm) == 2]


def flame_areas(results: Sequence[TpccResult], targets: Sequence[str]) -> list[tuple[str, AreaShares]]:
    """Each target's flamegraph areas over the stacks of all its runs that recorded some (the
    repeats merged, as `report --flamegraphs` draws them), in target order, the base first;
    targets without stacks are left out."""
    out = []
    for t in targets:
        found = shares(merged(r.folded for r in results if r.target == t and r.folded))
        if found is not None:
            out.append((t, found))
    return out


def latencies(runs: list[TpccResult]) -> dict[str, Latency]:
    """Per transaction type over all runs: counts summed, max the largest, and p50/p95/p99 each
    run's own (the driver's, from its histogram of the window), the median over the runs when
    there are several (the histograms themselves are in the JSON report).

    A run's percentile is capped at that run's max: drivers before the cap reported the upper
    bound of the bucket, which for the bucket of the maximum lies up to 1/16 above it (a p99
    of 37.75 ms over a max of 36.19 ms). Capped, each run has p50 ≤ p95 ≤ p99 ≤ max, and the
    medians keep that order (a median is monotone in every value) under the largest max."""
    out = {}
    for tx in TRANSACTIONS:
        parts = [r.by_type.get(tx) or {} for r in runs]
        if not any(parts):
            continue

        def mid(key: str) -> float | None:
            values = [_capped(p[key], p.get("max_us")) for p in parts if p.get(key) is not None]
            return median(values) if values else None
        maxes = [p["max_us"] for p in parts if p.get("max_us") is not None]
        out[tx] = Latency(count=sum(int(p.get("count") or 0) for p in parts),
                          errors=sum(int(p.get("errors") or 0) for p in parts),
                          rollbacks=sum(int(p.get("rollbacks") or 0) for p in parts),
                          p50_us=mid("p50_us"), p95_us=mid("p95_us"), p99_us=mid("p99_us"),
                          max_us=max(maxes) if maxes else None)
    return out


def _capped(value: float, max_us: float | None) -> float:
    return value if max_us is None else min(value, max_us)


def nopm_series(result: TpccResult) -> tuple[tuple[float, ...], tuple[float | None, ...]]:
    """(t_sec, NOPM) of every interval line, ramp-up included, for charts."""
    lines = [iv for iv in result.intervals if iv.get("t_sec") is not None]
    return tuple(float(iv["t_sec"]) for iv in lines), tuple(iv.get("nopm") for iv in lines)


def run_dips(result: TpccResult) -> tuple[events.Dips, ...]:
    """The run's NOPM dips over its intervals (after the first SKIP_S seconds of the ramp-up),
    with the engine events that coincide (analysis/events.py); none without engine counters."""
    if not result.events or not result.events["t"] or not result.intervals:
        return ()
    t, nopm = nopm_series(result)
    engine = result.events
    dips = events.explain("NOPM", "dip", t, nopm, engine["t"], engine["series"], engine["events"])
    return (dips,) if dips.starts else ()


def consistency_of(runs: list[TpccResult]) -> bool | None:
    """False when a run failed a check, True when every run was checked and passed, else None
    (no runs, or runs of a campaign with consistency_checks = false)."""
    if any(not c.get("ok") for r in runs for c in r.consistency):
        return False
    return True if runs and all(r.consistency for r in runs) else None
