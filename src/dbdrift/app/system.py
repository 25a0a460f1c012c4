"""A host check: host facts, what perf and valgrind can measure here, and warnings with a concrete
fix each. Advice only: it changes nothing."""
from __future__ import annotations

import shutil
from dataclasses import asdict

from dbdrift.errors import UserError
from dbdrift.model import SLOW_FSYNC_US, JsonObject
from dbdrift.metrics import fsync, host, perf
from dbdrift.server import rundir


def check(steal_window_s: float) -> JsonObject:
    """`facts` (metrics/host.py), `warnings` (each a message and a hint), `perf` (what perf can
    count here), `valgrind` (its path, or None) and `fsync` (the work directory's flush latency,
    metrics/fsync.py): the JSON `dbdrift system check` prints."""
    facts = host.host_facts(steal_window_s=steal_window_s)
    try:
        flush = fsync.measure(rundir.work_dir())
    except UserError:  # a work directory dbdrift cannot use: `run` says why
        flush = None
    warnings = host.check(facts)
    if flush is not None and flush["p50_us"] >= SLOW_FSYNC_US:
        warnings.append(host.warning(
            "fsync", f"{flush['path']}: a flush takes {flush['p50_us']:,.0f} µs (median of {flush['ops']}), slow "
                     "enough to pace every commit that waits for one",
            "compare durability settings (synchronous_commit, innodb_flush_log_at_trx_commit) on a device with "
            "a power-safe write cache, or set DBDRIFT_WORK_DIR to one"))
    return {"facts": facts, "warnings": warnings, "perf": asdict(perf.probe()),
            "valgrind": shutil.which("valgrind"), "fsync": flush}
