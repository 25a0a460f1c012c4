"""The words and values the command line reads and writes, from the layers that define them
(engines, tests, durations), so that cli/ reaches the layers below only through app/."""
from __future__ import annotations

from dbdrift.workloads.sysbench.catalog import select_tests
from dbdrift.model import ENGINES
from dbdrift.units import format_duration, parse_duration_s

__all__ = ["ENGINES", "format_duration", "parse_duration_s", "select_tests"]
