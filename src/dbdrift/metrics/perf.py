"""Linux `perf stat` counters: probe what this CPU exposes, build the command, parse its CSV
output and normalise it per query. Runs only `perf stat … true` itself (in `probe`); attaching
to a server is the runner's job, with the command `stat_command` builds.
"""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

# The seven groups of the methodology spec §3.4, one `perf stat -e` argument each.
COUNTER_GROUPS = (
    "cpu-clock,cycles,bus-cycles,instructions,branches,branch-misses",
    "cache-references,cache-misses,stalled-cycles-backend,stalled-cycles-frontend",
    "L1-dcache-loads,L1-dcache-load-misses,L1-dcache-stores",
    "dTLB-loads,dTLB-load-misses,dTLB-stores,dTLB-store-misses",
    "iTLB-load-misses,iTLB-loads,L1-icache-loads-misses,L1-icache-loads",
    "LLC-loads,LLC-load-misses,LLC-stores,LLC-store-misses,LLC-prefetches",
    "alignment-faults,context-switches,migrations,major-faults,minor-faults,faults",
)

# derived name: (numerator, denominator, scale). perf prints cpu-clock in msec, so
# GHz = cycles / (msec * 1e6 ns).
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
INSTALL_HINT = "install perf: apt-get install linux-perf (Debian), linux-tools-$(uname -r) (Ubuntu), dnf install perf"
PROBE_TIMEOUT_S = 30


@dataclass(frozen=True)
class PerfSupport:
    """What `perf stat` can count on this host, and why not where it cannot."""

    available: bool  # a perf binary ran and printed counter lines
    hardware_counters: bool  # e.g. instructions, cycles: needs a PMU, which most VMs hide
    software_events: bool  # e.g. task-clock, context-switches: kernel-side, work everywhere
    reason: str
    perf_event_paranoid: int | None = None


def parse_perf_stat_csv(text: str) -> dict[str, float | None]:
    """`perf stat -x,` output (value, unit, event, run time, pct, metric value, metric unit)
    -> {event: value}. `<not supported>`/`<not counted>` give None; clock events stay in msec
    as perf prints them. Metric-only lines (empty event) and comments are skipped; a
    modifier such as `:u` is dropped from the event name."""
    counters: dict[str, float | None] = {}
    for line in text.splitlines():
        fields = line.split(",")
        if line.startswith("#") or len(fields) < 3 or not fields[2].strip():
            continue
        event = re.sub(r":[ukhHGpP]+$", "", fields[2].strip())
        try:
            counters[event] = float(fields[0])
        except ValueError:
            counters[event] = None
    return counters


def per_query(counters: dict[str, float | None], queries: int) -> dict[str, float | None]:
    """Each counter divided by `queries` (None stays None; every value None if queries <= 0),
    plus the ratios of DERIVED where both inputs were counted and the denominator is not 0."""
    result = {name: None if value is None or queries <= 0 else value / queries for name, value in counters.items()}
    for name, (top, bottom, scale) in DERIVED.items():
        numerator, denominator = counters.get(top), counters.get(bottom)
        if numerator is not None and denominator:
            result[name] = numerator / denominator * scale
    return result


def stat_command(pid: int, events: str | Sequence[str], seconds: float) -> list[str]:
    """`perf stat -x, -e <events> -p <pid> -- sleep <seconds>`: count one process for a while."""
    joined = events if isinstance(events, str) else ",".join(events)
    return ["perf", "stat", "-x,", "-e", joined, "-p", str(pid), "--", "sleep", f"{seconds:g}"]


def perf_event_paranoid(root: str | Path = "/") -> int | None:
    try:
        return int((Path(root) / "proc/sys/kernel/perf_event_paranoid").read_text().strip())
    except (OSError, ValueError):
        return None


def run_stat(runner, event: str) -> tuple[str | None, str]:
    """(perf's stderr, "") or (None, why perf could not run)."""
    cmd = ["perf", "stat", "-x,", "-e", event, "true"]
    try:
        done = runner(cmd, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except FileNotFoundError:
        return None, "perf not found on PATH"
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"`{' '.join(cmd)}` failed: {exc}"
    if event in parse_perf_stat_csv(done.stderr or ""):
        return done.stderr, ""
    first = next((line for line in (done.stderr or "").splitlines() if line.strip()), "no output")
    return None, f"`{' '.join(cmd)}` exited {done.returncode}: {first.strip()}"


def hardware_reason(text: str, value: float | None) -> str:
    probe_cmd = "`perf stat -e instructions true`"
    if value is not None:
        return f"{probe_cmd} counted {value:.0f} instructions: hardware counters work"
    if "<not counted>" in text:
        return (f"{probe_cmd} reports <not counted>: the PMU exists but the counter was not scheduled "
                "(the NMI watchdog or another profiler may hold it: sysctl kernel.nmi_watchdog=0)")
    return f"{probe_cmd} reports <not supported>: this CPU/VM exposes no hardware PMU"


def paranoid_note(paranoid: int | None, is_root: bool) -> str:
    if paranoid is None or paranoid <= 1 or is_root:
        return ""
    return (f"; kernel.perf_event_paranoid is {paranoid}, which limits a non-root user to its own "
            "user-space counts: run as root or sysctl kernel.perf_event_paranoid=1")


def probe(runner=subprocess.run, root: str | Path = "/", is_root: bool | None = None) -> PerfSupport:
    """Run `perf stat -x, -e instructions true` and `… -e task-clock true` and read their CSV."""
    paranoid = perf_event_paranoid(root)
    note = paranoid_note(paranoid, os.geteuid() == 0 if is_root is None else is_root)
    hw_text, hw_error = run_stat(runner, "instructions")
    sw_text, sw_error = run_stat(runner, "task-clock")
    if hw_text is None and sw_text is None:
        hint = f" — {INSTALL_HINT}" if "not found" in hw_error else ""
        return PerfSupport(False, False, False, hw_error + hint + note, paranoid)
    hw_value = parse_perf_stat_csv(hw_text).get("instructions") if hw_text else None
    sw_value = parse_perf_stat_csv(sw_text).get("task-clock") if sw_text else None
    reason = hardware_reason(hw_text, hw_value) if hw_text is not None else hw_error
    return PerfSupport(True, hw_value is not None, sw_value is not None, reason + note, paranoid)
