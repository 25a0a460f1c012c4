"""The one reader of /proc/stat: aggregate CPU jiffies, the context-switch count and the
runnable count, and the CPU shares (steal, busy) between two readings.

The live host is read through psutil; a test root (a fixture tree under tests/data/host/, or
a file named other than proc/stat) is parsed here, since psutil can only be pointed at another
/proc through its process-wide PROCFS_PATH. psutil gives CPU times as seconds (jiffies /
SC_CLK_TCK); they are turned back into whole jiffies, exactly, so both paths give the same
integers for the same file and percentages do not change with the path.
"""
from __future__ import annotations

import os
from pathlib import Path

import psutil

CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
PROC_STAT = "proc/stat"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100  # psutil's divisor


def is_live(root: str | Path, rel: str) -> bool:
    return Path(root) == Path("/") and rel == PROC_STAT


def cpu_jiffies(root: str | Path = "/", rel: str = PROC_STAT) -> dict[str, int] | None:
    """{field: jiffies} of the aggregate `cpu` line for CPU_FIELDS (user ... steal).

    guest time is already inside user, so it is left out. None where the file is unreadable
    or the kernel gives fewer fields (psutil without iowait or steal: not Linux).
    """
    if is_live(root, rel):
        try:
            times = psutil.cpu_times()
        except OSError:
            return None
        if not all(hasattr(times, name) for name in CPU_FIELDS):
            return None
        return {name: round(getattr(times, name) * CLOCK_TICKS) for name in CPU_FIELDS}
    try:
        with (Path(root) / rel).open() as f:
            fields = f.readline().split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    return dict(zip(CPU_FIELDS, (int(v) for v in fields[1:9])))


def context_switches(root: str | Path = "/", rel: str = PROC_STAT) -> int | None:
    """Context switches since boot (the `ctxt` line); None where unreadable or absent."""
    if is_live(root, rel):
        try:
            return int(psutil.cpu_stats().ctx_switches)  # psutil has no type information
        except OSError:
            return None
    try:
        with (Path(root) / rel).open() as f:
            for line in f:
                if line.startswith("ctxt "):
                    return int(line.split()[1])
    except (OSError, UnicodeDecodeError):
        return None
    return None


def procs_running(root: str | Path = "/", rel: str = PROC_STAT) -> int | None:
    """Tasks runnable now (the `procs_running` line: running or waiting for a CPU), vmstat's `r`,
    which counts the reader itself as vmstat's does; None where unreadable or absent."""
    try:
        with (Path(root) / rel).open() as f:
            for line in f:
                if line.startswith("procs_running "):
                    return int(line.split()[1])
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return None


def share_pct(before: dict[str, int] | None, after: dict[str, int] | None, *fields: str) -> float | None:
    """Percent of all CPU time spent in `fields` between two cpu_jiffies() readings, to 0.01;
    None without both readings or without elapsed jiffies."""
    if before is None or after is None:
        return None
    total = sum(after.values()) - sum(before.values())
    spent = sum(after[name] - before[name] for name in fields)
    return round(100.0 * spent / total, 2) if total > 0 else None


def steal_pct(before: dict[str, int] | None, after: dict[str, int] | None) -> float | None:
    """Host CPU steal (time the hypervisor gave our vCPUs to another guest) between two readings."""
    return share_pct(before, after, "steal")


def busy_pct(before: dict[str, int] | None, after: dict[str, int] | None) -> float | None:
    """CPU time spent running something (user, nice, system, irq, softirq) between two readings:
    what is running now, where the load average still remembers the last minute."""
    return share_pct(before, after, "user", "nice", "system", "irq", "softirq")
