"""Hardware used per operation, under the Small Datum scripts' names: `sum_met.sh` for sysbench,
`etl.sh` for the Insert Benchmark (docs/hardware.md), and perf stat counters per query.

Pure functions over the sampler's window totals as stored with each run (`hardware_json`:
elapsed_s, cpu_user_pct, cpu_sys_pct, cpu_iowait_pct, cpu_steal_pct, cs, reads, read_kb,
writes, write_kb, server_cpu_s, client_cpu_s, server_rss_bytes, and `perf` where counters
ran). `ops` is the run's throughput: QPS, or Krps for scans, so a scan's per-operation
figures are per thousand rows.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from dbdrift.analysis.foreign import foreign_io_pct
from dbdrift.model import WINDOW_COUNTS, WINDOW_DISK, WINDOW_IO, WINDOW_PCTS, HardwareWindow, PerfCounts

SYSBENCH_METRICS = ("cpu/o", "cs/o", "r/o", "rKB/o", "wKB/o", "o/s", "cpu_us/o", "srv_us/o", "cli_us/o",
                    "bg_us/o", "bg%", "fl/s", "fl/o", "r_ms", "w_ms", "aqu", "dsc/s", "fcpu%", "fio%")
"""`sum_met.sh`'s columns; CPU µs per operation: host total, server tree, driver, the server's
background work, and the background's share of the server's CPU; then the disk as iostat
shows it: cache flushes per second and per operation, read and write await in ms, the average
queue depth, discards per second; then the foreign load beside them (analysis/foreign.py): the
host's CPU time other processes used, and the share of the device's bytes (which r/o, rKB/o
and wKB/o count, device-wide) that no process of dbdrift's moved."""

METRIC_DIGITS = {"cpu/o": 6, "cs/o": 3, "r/o": 3, "rKB/o": 3, "wKB/o": 3, "o/s": 0,
                 "cpu_us/o": 1, "srv_us/o": 1, "cli_us/o": 1, "bg_us/o": 1, "bg%": 1,
                 "fl/s": 1, "fl/o": 4, "r_ms": 2, "w_ms": 2, "aqu": 2, "dsc/s": 1, "fcpu%": 1, "fio%": 1}


def combine(windows: Sequence[tuple[HardwareWindow | None, float | None]]) -> tuple[HardwareWindow, float] | None:
    """Merge the windows of several runs (rounds, repeats) of one cell into one window.

    Counts and CPU seconds add up, percentages are averaged weighted by elapsed time, RSS is
    the largest seen, and ops is the time-weighted mean throughput. Runs without a window
    (failed, or stored before samplers existed) are skipped; none left gives None.
    """
    usable = [(w, w.get("elapsed_s", 0.0), ops) for w, ops in windows if w and ops is not None and w.get("elapsed_s")]
    if not usable:
        return None
    elapsed = sum(seconds for _, seconds, _ in usable)
    merged = HardwareWindow(elapsed_s=elapsed)
    for pct in WINDOW_PCTS:
        merged[pct] = sum(w.get(pct, 0.0) * seconds for w, seconds, _ in usable) / elapsed
    for count in WINDOW_COUNTS:
        merged[count] = sum(w.get(count) or 0 for w, _, _ in usable)
    for io in WINDOW_IO:
        values = [w.get(io) for w, _, _ in usable]
        known = [v for v in values if v is not None]
        merged[io] = sum(known) if len(known) == len(values) else None
    for key in (*WINDOW_DISK, "server_bg_cpu_s"):  # only where every window has it
        if all(key in w for w, _, _ in usable):
            merged[key] = sum(w[key] for w, _, _ in usable)  # type: ignore[literal-required]
    if all("foreign_cpu_pct" in w for w, _, _ in usable):  # windows stored before foreign load was sampled lack it
        merged["foreign_cpu_pct"] = sum(w["foreign_cpu_pct"] * seconds for w, seconds, _ in usable) / elapsed
        reads = [w.get("foreign_read_kb") for w, _, _ in usable]
        writes = [w.get("foreign_write_kb") for w, _, _ in usable]
        merged["foreign_read_kb"] = None if None in reads else sum(v or 0.0 for v in reads)
        merged["foreign_write_kb"] = None if None in writes else sum(v or 0.0 for v in writes)
    if all("runnable" in w for w, _, _ in usable):  # a mean, as the percentages are
        merged["runnable"] = sum(w["runnable"] * seconds for w, seconds, _ in usable) / elapsed
    if all("background" in w for w, _, _ in usable):
        merged["background"] = added(w["background"] for w, _, _ in usable)
    merged["server_rss_bytes"] = max(w.get("server_rss_bytes") or 0 for w, _, _ in usable)
    ops = sum(o * seconds for _, seconds, o in usable) / elapsed
    return merged, ops


def added(parts: Iterable[dict[str, float]]) -> dict[str, float]:
    """Per-key sums of several {role: seconds} maps."""
    out: dict[str, float] = {}
    for part in parts:
        for key, value in part.items():
            out[key] = out.get(key, 0.0) + value
    return out


def disk_metrics(window: HardwareWindow, ops: float) -> dict[str, float | None]:
    """The disk as iostat and the posts read it, from one window: flushes per second and per
    operation, read and write await (ms per completed request), the average queue depth and
    discards per second. None where the kernel does not count it (flushes before 5.5,
    discards before 4.18), where the data directory has no device, or where nothing was
    requested (await of no reads)."""
    elapsed = window.get("elapsed_s") or 0.0
    out: dict[str, float | None] = {"fl/s": None, "fl/o": None, "r_ms": None, "w_ms": None, "aqu": None,
                                    "dsc/s": None}
    if not elapsed:
        return out
    flushes = window.get("flushes")
    if flushes is not None:
        out["fl/s"] = flushes / elapsed
        out["fl/o"] = flushes / elapsed / ops if ops else None
    reads, writes = window.get("reads"), window.get("writes")
    read_ms, write_ms = window.get("read_ms"), window.get("write_ms")
    out["r_ms"] = read_ms / reads if read_ms is not None and reads else None
    out["w_ms"] = write_ms / writes if write_ms is not None and writes else None
    queue_ms = window.get("queue_ms")
    out["aqu"] = queue_ms / (elapsed * 1000) if queue_ms is not None else None
    discards = window.get("discards")
    out["dsc/s"] = discards / elapsed if discards is not None else None
    return out


def background_share(window: HardwareWindow) -> float | None:
    """The server's background CPU as a percentage of all its CPU; None where not split."""
    bg, total = window.get("server_bg_cpu_s"), window.get("server_cpu_s")
    return None if bg is None or not total else 100.0 * bg / total


def sysbench_metrics(window: HardwareWindow, ops: float, ncpu: int) -> dict[str, float | None]:
    """SYSBENCH_METRICS from one measured window.

    cpu/o = (user+sys % of all CPUs) / ops, `sum_met.sh`'s unit; cpu_us/o = cpu/o · ncpu · 10^4
    (host CPU µs per operation, everything on the host); srv_us/o and cli_us/o split that into
    the server's process tree and the driver. A device-less data directory (tmpfs) gives None
    for the I/O columns; ops of 0 gives None everywhere but o/s.
    """
    elapsed = window.get("elapsed_s", 0.0)
    out: dict[str, float | None] = dict.fromkeys(SYSBENCH_METRICS)
    out["o/s"] = ops
    if not ops or not elapsed:
        return out
    cpu_per_op = (window["cpu_user_pct"] + window["cpu_sys_pct"]) / ops
    out["cpu/o"] = cpu_per_op
    out["cpu_us/o"] = cpu_per_op * ncpu * 1e4
    out["cs/o"] = window["cs"] / elapsed / ops
    out["srv_us/o"] = window["server_cpu_s"] * 1e6 / (elapsed * ops)
    out["cli_us/o"] = window["client_cpu_s"] * 1e6 / (elapsed * ops)
    bg = window.get("server_bg_cpu_s")
    out["bg_us/o"] = None if bg is None else bg * 1e6 / (elapsed * ops)
    out["bg%"] = background_share(window)
    out.update(disk_metrics(window, ops))
    out["fcpu%"], out["fio%"] = window.get("foreign_cpu_pct"), foreign_io_pct(window)
    reads, read_kb, write_kb = window.get("reads"), window.get("read_kb"), window.get("write_kb")
    if reads is not None:
        out["r/o"] = reads / elapsed / ops
        out["rKB/o"] = None if read_kb is None else read_kb / elapsed / ops
        out["wKB/o"] = None if write_kb is None else write_kb / elapsed / ops
    return out


VMSTAT = ("us", "sy", "r", "cs/s")
"""vmstat's columns over a window: mean user and system CPU % of all CPUs, mean runnable count
(None for windows stored before it was read) and context switches per second."""


def vmstat(window: HardwareWindow) -> dict[str, float | None]:
    """VMSTAT of one window, as the posts read vmstat beside the throughput."""
    elapsed = window["elapsed_s"]
    runnable = window.get("runnable")
    return {"us": window["cpu_user_pct"], "sy": window["cpu_sys_pct"],
            "r": None if runnable is None else float(runnable), "cs/s": window["cs"] / elapsed if elapsed else None}


def insert_benchmark_metrics(window: HardwareWindow, ips: float, qps: float, ncpu: int) -> dict[str, float | None]:
    """`etl.sh`'s columns for one Insert Benchmark step.

    rate = ips for load steps (qps == 0) and qps for query steps; wpi and wkbpi are always
    per insert, as are flushes (flpi); bgpq is the server's background CPU µs per operation.
    Columns the samplers cannot give (dbgb1, dbgb2, maxop, p50, p99) come from
    the step itself and are not computed here; rss is the largest server RSS in GB.
    """
    elapsed = window["elapsed_s"]
    rate = qps if qps else ips

    def per(value: float | None, denominator: float | None) -> float | None:
        return None if value is None or not denominator else value / denominator

    rps, wps = per(window.get("reads"), elapsed), per(window.get("writes"), elapsed)
    rkbps, wkbps = per(window.get("read_kb"), elapsed), per(window.get("write_kb"), elapsed)
    cpups = window["cpu_user_pct"] + window["cpu_sys_pct"]
    csps = per(window["cs"], elapsed)
    disk = disk_metrics(window, rate)
    bg = window.get("server_bg_cpu_s")
    return {
        "bgpq": per(None if bg is None else bg * 1e6 / elapsed, rate), "bg%": background_share(window),
        "flps": disk["fl/s"], "flpi": per(disk["fl/s"], ips), "rawait": disk["r_ms"], "wawait": disk["w_ms"],
        "aqu": disk["aqu"],
        "ips": ips, "qps": qps, "rps": rps, "wps": wps,
        "rmbps": None if rkbps is None else rkbps / 1024, "wmbps": None if wkbps is None else wkbps / 1024,
        "rpq": per(rps, rate), "rkbpq": per(rkbps, rate), "wpi": per(wps, ips), "wkbpi": per(wkbps, ips),
        "csps": csps, "cpups": cpups, "cspq": per(csps, rate),
        "cpupq": per(cpups / 100 * ncpu * 1e6, rate),
        "us": window["cpu_user_pct"], "sy": window["cpu_sys_pct"], "r": vmstat(window)["r"],
        "uspq": per(window["cpu_user_pct"] / 100 * ncpu * 1e6, rate),
        "sypq": per(window["cpu_sys_pct"] / 100 * ncpu * 1e6, rate),
        "rss": window.get("server_rss_bytes", 0) / 1e9,
    }


def relative_value(new: float | None, base: float | None) -> float | None:
    """new ÷ base as `sum_met.sh` prints it: both 0 → 1, base 0 → inf, a missing side → None."""
    if new is None or base is None:
        return None
    if base == 0:
        return 1.0 if new == 0 else float("inf")
    return new / base


# Ratios derived from perf stat counters (metrics/perf.py COUNTER_GROUPS): name -> (numerator,
# denominator, scale). perf prints cpu-clock in msec, so GHz = cycles / (msec * 1e6 ns).
DERIVED = {
    "ipc": ("instructions", "cycles", 1.0),
    "ghz": ("cycles", "cpu-clock", 1e-6),
    "branch-miss-pct": ("branch-misses", "branches", 100.0),
    "cache-miss-pct": ("cache-misses", "cache-references", 100.0),
    "L1-dcache-load-miss-pct": ("L1-dcache-load-misses", "L1-dcache-loads", 100.0),
    "dTLB-load-miss-pct": ("dTLB-load-misses", "dTLB-loads", 100.0),
    "iTLB-load-miss-pct": ("iTLB-load-misses", "iTLB-loads", 100.0),
    "L1-icache-load-miss-pct": ("L1-icache-loads-misses", "L1-icache-loads", 100.0),
}


def per_query(counters: dict[str, float | None], queries: int) -> dict[str, float | None]:
    """Each counter divided by `queries` (None stays None; every value None if queries <= 0),
    plus the ratios of DERIVED where both inputs were counted and the denominator is not 0."""
    result = {name: None if value is None or queries <= 0 else value / queries for name, value in counters.items()}
    for name, (top, bottom, scale) in DERIVED.items():
        numerator, denominator = counters.get(top), counters.get(bottom)
        if numerator is not None and denominator:
            result[name] = numerator / denominator * scale
    return result


def perf_per_query(runs: list[tuple[PerfCounts | None, float]]) -> dict[str, float]:
    """perf counters of several runs per query: each counter's sum over the runs that counted
    it, divided by those runs' queries; `runs` holds (hardware["perf"], queries) pairs."""
    sums: dict[str, float] = {}
    queries: dict[str, float] = {}
    for perf, n in runs:
        for name, value in (perf or {}).get("counters", {}).items():
            if value is not None and n:
                sums[name] = sums.get(name, 0.0) + value
                queries[name] = queries.get(name, 0.0) + n
    out = {name: sums[name] / queries[name] for name in sums}
    for name, (top, bottom, scale) in DERIVED.items():
        if top in sums and sums.get(bottom):
            out[name] = sums[top] / sums[bottom] * scale
    return out


@dataclass(frozen=True)
class MetricsRow:
    """Per-operation metrics of every target on one microbenchmark, and each relative to its reference."""

    test: str
    threads: int
    absolute: dict[str, dict[str, float | None]]  # target -> metric -> value
    relative: dict[str, dict[str, float | None]]  # compared target -> metric -> new/reference
    references: dict[str, str]  # compared target -> the target it is divided by
    perf: dict[str, dict[str, float]] = field(default_factory=dict)  # target -> perf counter per query


def metrics_rows(cells: dict[tuple[str, int], dict[str, list[tuple[HardwareWindow, float]]]], targets: list[str],
                 references: dict[str, str], test_order: list[str], ncpu: int) -> list[MetricsRow]:
    """One row per (test, threads): windows of each target's runs combined, then
    SYSBENCH_METRICS and perf counters per query."""
    position = {name: i for i, name in enumerate(test_order)}
    rows = []
    for test, threads in sorted(cells, key=lambda k: (k[1], position.get(k[0], len(position)), k[0])):
        absolute: dict[str, dict[str, float | None]] = {}
        for target in targets:
            merged = combine(cells[(test, threads)].get(target, []))
            if merged is not None:
                absolute[target] = sysbench_metrics(merged[0], merged[1], ncpu)
        if not absolute:
            continue
        relative = {t: {m: relative_value(absolute[t][m], absolute[ref][m]) for m in SYSBENCH_METRICS}
                    for t, ref in references.items() if t in absolute and ref in absolute}
        perf = {t: perf_per_query([(w.get("perf"), ops * w.get("elapsed_s", 0.0)) for w, ops in runs if w and ops])
                for t, runs in cells[(test, threads)].items()}
        rows.append(MetricsRow(test, threads, absolute, relative, {t: references[t] for t in relative},
                               {t: p for t, p in perf.items() if p}))
    return rows
