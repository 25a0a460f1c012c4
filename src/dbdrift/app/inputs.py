"""The words and values the command line reads and writes, from the layers that define them
(engines, tests, durations, percentages, what verdicts judge by), so that cli/ reaches the layers
below only through app/."""
from __future__ import annotations

from dbdrift.analysis.noise import JUDGING, Judging
from dbdrift.errors import UserError
from dbdrift.model import ENGINES
from dbdrift.quantities import PercentRange, format_duration, format_percent, parse_duration_s, parse_percent
from dbdrift.workloads.registry import SYSBENCH

__all__ = ["ENGINES", "JUDGING", "Judging", "PercentRange", "format_duration", "format_percent", "parse_duration_s", "parse_percent",
           "select_tests", "split_list"]

select_tests = SYSBENCH.catalog.select  # test, group and set names resolved into the microbenchmarks they name


def split_list(values: list[str] | None) -> list[str]:
    """`--tests a,b --tests c` -> [a, b, c]; an empty item is refused."""
    names = [item.strip() for value in values or () for item in value.split(",")]
    if not all(names):
        raise UserError(f"--tests {','.join(values or ())!r} has an empty name",
                        "separate names with single commas, e.g. --tests point,update-index", exit_code=2)
    return names
