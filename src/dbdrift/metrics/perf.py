"""Linux `perf stat` counters: probe what this CPU exposes, build the command, parse its CSV
output, and run it: `probe` runs `perf stat … true`, StatCollector attaches `perf stat` to the
processes the runner names for a run's measured window (runner/observe.py decides which and
when). Counts per query are analysis/hardware.py's.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

# The seven counter groups of the Small Datum scripts (docs/hardware.md), one `perf stat -e`
# argument each; a run counts one group (group_for_round).
COUNTER_GROUPS = (
    "cpu-clock,cycles,bus-cycles,instructions,branches,branch-misses",
    "cache-references,cache-misses,stalled-cycles-backend,stalled-cycles-frontend",
    "L1-dcache-loads,L1-dcache-load-misses,L1-dcache-stores",
    "dTLB-loads,dTLB-load-misses,dTLB-stores,dTLB-store-misses",
    "iTLB-load-misses,iTLB-loads,L1-icache-loads-misses,L1-icache-loads",
    "LLC-loads,LLC-load-misses,LLC-stores,LLC-store-misses,LLC-prefetches",
    "alignment-faults,context-switches,migrations,major-faults,minor-faults,faults",
)

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


def stat_command(pid: int | Sequence[int], events: str | Sequence[str], seconds: float) -> list[str]:
    """`perf stat -x, -e <events> -p <pid[,pid]> -- sleep <seconds>`: count processes for a while."""
    joined = events if isinstance(events, str) else ",".join(events)
    pids = str(pid) if isinstance(pid, int) else ",".join(str(p) for p in pid)
    return ["perf", "stat", "-x,", "-e", joined, "-p", pids, "--", "sleep", f"{seconds:g}"]


def perf_event_paranoid(root: str | Path = "/") -> int | None:
    try:
        return int((Path(root) / "proc/sys/kernel/perf_event_paranoid").read_text().strip())
    except (OSError, ValueError):
        return None


def run_stat(runner: Callable[..., subprocess.CompletedProcess[str]], event: str) -> tuple[str | None, str]:
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


def probe(runner: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run, root: str | Path = "/", is_root: bool | None = None) -> PerfSupport:
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


class StatCollector:
    """`perf stat` attached to the benchmark's backends for the measured window of one run.

    start() launches it without waiting; finish() collects the counters (SIGINT makes perf
    print what it has if the run ended early). Any failure gives an empty dict and a reason:
    counters are optional and never fail a run.
    """

    def __init__(self, popen: Callable[..., subprocess.Popen[str]] = subprocess.Popen) -> None:
        self.popen = popen
        self.proc: subprocess.Popen[str] | None = None
        self.error = ""

    def start(self, pids: Sequence[int], events: str, seconds: float) -> None:
        cmd = stat_command(list(pids), events, seconds)
        try:
            self.proc = self.popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        except OSError as exc:
            self.error = f"perf stat did not start: {exc}"

    def finish(self, timeout_s: float = 10.0) -> dict[str, float | None]:
        if self.proc is None:
            return {}
        try:
            _, err = self.proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGINT)
            try:
                _, err = self.proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.error = "perf stat did not stop"
                return {}
        counters = parse_perf_stat_csv(err or "")
        if not counters:
            self.error = f"perf stat printed no counters: {(err or '').strip()[-200:]}"
        return counters


def group_for_round(round_: int) -> tuple[int, str]:
    """(1-based group number, events) for a run: repeats cycle through the seven
    COUNTER_GROUPS, so a test with seven or more repeats gets all of them."""
    index = round_ % len(COUNTER_GROUPS)
    return index + 1, COUNTER_GROUPS[index]
