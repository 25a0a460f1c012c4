"""What else the host did beside a measured run, between two readings of cumulative counters:
the CPU time that no process of dbdrift's used (its servers, its driver, dbdrift itself and its
helpers such as perf) and the device bytes that none of them read or wrote (docs/hardware.md,
"Foreign load").

Pure arithmetic on numbers the sampler read (metrics/sampler.py); reads nothing itself and
judges nothing (analysis/foreign.py holds the thresholds' verdict).
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from dbdrift.metrics.procstat import CLOCK_TICKS

BUSY_FIELDS = ("user", "nice", "system", "irq", "softirq")
"""/proc/stat's fields of CPU time spent running something: idle and iowait are not, and steal
is time the hypervisor gave another guest (counted apart, as steal_pct)."""


def cpu(before: Mapping[str, float], after: Mapping[str, float], ours_s: float,
        ticks: int = CLOCK_TICKS) -> tuple[float, float]:
    """(foreign CPU seconds, their percent of all the host's CPU time) between two /proc/stat
    readings (jiffies per field), where dbdrift's processes used `ours_s` CPU seconds.

    Busy time the host ran minus ours, never below 0: process CPU and /proc/stat are counted by
    the same tick, but a process's last tick before it exits and a reading's place inside a
    tick put a few jiffies on either side, which is why a threshold, not 0, tells load. The
    percent is of every CPU's time (idle, iowait and steal included), so one busy neighbour on
    a 2-CPU host reads 50%. (0, 0) when no time passed."""
    total = sum(after[k] - before[k] for k in after if k in before)
    if total <= 0:
        return 0.0, 0.0
    busy_s = sum(after[k] - before[k] for k in BUSY_FIELDS) / ticks
    foreign_s = max(0.0, busy_s - ours_s)
    return round(foreign_s, 6), round(100.0 * foreign_s * ticks / total, 3)


def io_kb(device_bytes: float | None, ours_bytes: float | None) -> float | None:
    """KB the device moved (read, or written) that dbdrift's processes did not, never below 0;
    None when either side is not known (no block device, or a server's /proc/PID/io unreadable).

    A process's /proc/PID/io counts bytes it made the kernel fetch from storage (read_bytes)
    and bytes it dirtied for writing (write_bytes), when it does so; the device writes dirty
    pages later, so over a second a server's writes can fall on either side of a reading, and
    over a whole window they mostly cancel. File system journal writes are nobody's and read as
    foreign: small beside a writer that is. The caller takes from the device's written bytes
    what the host's dirty pool drained (`drained`): pages dirtied before the window, by an
    earlier run's server as much as by anyone, are not this window's neighbours."""
    if device_bytes is None or ours_bytes is None:
        return None
    return round(max(0.0, device_bytes - ours_bytes) / 1024, 3)


def drained(before: float | None, after: float | None) -> float:
    """Bytes by which the host's pool of pages waiting to be written shrank between two
    readings (0 when it grew or is not known): written now, dirtied earlier."""
    if before is None or after is None:
        return 0.0
    return max(0.0, before - after)


def dirty_bytes(meminfo: Path = Path("/proc/meminfo")) -> float | None:
    """The page cache waiting to be written back: /proc/meminfo's Dirty + Writeback; None where
    unreadable."""
    found = 0.0
    try:
        with meminfo.open() as f:
            for line in f:
                if line.startswith(("Dirty:", "Writeback:")):
                    found += int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return found
