"""How long the work directory's device takes to make a write durable, as pg_test_fsync
measures it: one 8 KB write at the start of a file, then fdatasync, repeated (docs/hardware.md).

Stored with the host facts of every campaign and printed by `dbdrift system check`: a
comparison of durability settings (synchronous_commit, innodb_flush_log_at_trx_commit) on a
device whose flush is slow measures the device more than the server (results/meta.py).
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TypedDict


BLOCK = 8192  # PostgreSQL's WAL block, pg_test_fsync's write size


class FsyncLatency(TypedDict):
    """The median, 99th percentile and mean of `ops` write+fdatasync pairs in `path`."""

    path: str
    method: str
    ops: int
    p50_us: float
    p99_us: float
    mean_us: float


def measure(directory: Path, seconds: float = 0.5, max_ops: int = 2000) -> FsyncLatency | None:
    """Write + fdatasync of one 8 KB block in a scratch file of `directory` for `seconds` (at
    most `max_ops` times, at least 5); None where the directory cannot be written."""
    path = directory / f".dbdrift-fsync-{os.getpid()}"
    block = os.urandom(BLOCK)
    times: list[float] = []
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError:
        return None
    try:
        os.pwrite(fd, block, 0)
        os.fsync(fd)  # the file's size and blocks exist: later flushes are of data alone
        deadline = time.perf_counter() + seconds
        while len(times) < max_ops and (len(times) < 5 or time.perf_counter() < deadline):
            start = time.perf_counter()
            os.pwrite(fd, block, 0)
            os.fdatasync(fd)
            times.append(time.perf_counter() - start)
    except OSError:
        return None
    finally:
        os.close(fd)
        path.unlink(missing_ok=True)
    times.sort()
    return FsyncLatency(path=str(directory), method="8 KB write + fdatasync", ops=len(times),
                        p50_us=round(times[len(times) // 2] * 1e6, 1),
                        p99_us=round(times[min(len(times) - 1, int(len(times) * 0.99))] * 1e6, 1),
                        mean_us=round(sum(times) / len(times) * 1e6, 1))
