"""A server's life as every workload's plan has it: the settle step, and the seconds a start, a
restart, a stop and a settle's work are expected to take (the progress ETA, `run --check`).

Pure: no I/O. A workload's own steps (sysbench's: workloads/sysbench/expand.py) build on these;
runner/session.py, which starts and settles every workload's servers, reads them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class SettleStep:
    total_s: float
    after: str  # "load" or the test (or step) it follows

    @property
    def label(self) -> str:
        return f"settle after {self.after}"


# Seconds a fresh server takes to initialise and start, as measured on a 2-CPU VM (MySQL's
# --initialize is the slow part): the progress ETA's share of each target's start.
START_S = {"postgres": 2.0, "mariadb": 8.0, "mysql": 14.0}
RESTART_S = 3.0  # a server's restart between repeats
STOP_S = 1.0  # a server's stop before its data directory is replaced (restart = "reload")
SETTLE_WORK_S = 1.0  # a settle's work (vacuum, checkpoint; InnoDB's flushing) before its quiet wait


class Sized(Protocol):
    """What a settle's length is sized by (sysbench's SysbenchParams): the tables and rows."""

    @property
    def tables(self) -> int: ...
    @property
    def rows(self) -> int: ...


def sized_settle_s(spec: Sized) -> float:
    """A settle long enough for the tables' purge and checkpoint: a minute plus a second per
    million rows, at most 20 minutes (sysbench's; the workloads judged over repeats take it too)."""
    return min(1200.0, 60.0 + spec.tables * spec.rows / 1e6)


@dataclass(frozen=True)
class DefaultSizes:
    """sysbench's default sizes (its keys' `tables` and `rows`), which the settle of a workload
    without sbtest tables has always been sized by."""

    tables: int = 1
    rows: int = 1_000_000


def default_settle_s(spec: object) -> float:
    """The settle of a workload whose tables are not sysbench's (TPROC-C, vector search, HTAP):
    that of sysbench's default sizes, one table of a million rows (61 s)."""
    return sized_settle_s(DefaultSizes())
