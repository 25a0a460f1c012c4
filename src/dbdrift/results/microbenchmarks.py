"""What the results layer asks of a catalogue of microbenchmarks (sysbench's: workloads/sysbench/
results.py): the order tests are reported in, the tests a campaign's `tests` select,
a test's entry, the layer families, the scan rate and the groupings of `report --groups`.

The verbs hand a catalogue down (the registry's Workload.catalog); nothing here knows
the tests by name. Also the one grouping type a catalogue answers with, and how a comparison
is regrouped by it (pure)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from dbdrift.analysis.relative import Comparison
from dbdrift.errors import InputError
from dbdrift.model import JsonObject


class Microbenchmark(Protocol):
    """A test's catalogue entry, as far as a report and the verbs read it (a campaign's tests are
    these: plan/campaign.py's Test asks the name and duration kind of one)."""

    @property
    def name(self) -> str: ...
    @property
    def group(self) -> str: ...
    @property
    def metric(self) -> str: ...  # qps | krps
    @property
    def duration_kind(self) -> str: ...  # read | write | insert: which run length it gets
    @property
    def rw(self) -> str: ...  # R | W | R+W


@dataclass(frozen=True)
class Grouping:
    """The groups a report shows, in order, their titles, and the group of each test it moved
    out of its catalogue group (empty for the catalogue's grouping)."""

    order: tuple[str, ...]
    titles: dict[str, str]
    moved: dict[str, str]


class Microbenchmarks(Protocol):
    """A catalogue of microbenchmarks as sysbench's report builder, results/measurements.py and
    results/history.py read it."""

    @property
    def layer_families(self) -> Mapping[str, tuple[str, ...]]:
        """Family -> its tests, whose per-statement and per-row costs are told apart (analysis/layers.py)."""
        ...

    @property
    def groupings(self) -> tuple[str, ...]:
        """The names `report --groups` takes, the default first."""
        ...

    def entry(self, test: str) -> Microbenchmark | None:
        """A test's entry, None for a name the catalogue does not hold."""
        ...

    def report_order(self, names: Iterable[str]) -> list[str]:
        """`names` in the order a report lists them."""
        ...

    def select(self, names: Sequence[str]) -> Sequence[Microbenchmark]:
        """The tests a campaign's `tests` names; InputError for a name the catalogue does not hold."""
        ...

    def layer_members(self, family: str) -> list[tuple[str, int, int]]:
        """(test, statements per event, rows per event) of each test of a layer family."""
        ...

    def scan_krps(self, table_rows: int, events: int, seconds: float, threads: int) -> float | None:
        """The rate of a `krps` test's interval; None when it measured nothing (no time, no thread)."""
        ...

    def grouping(self, name: str | None, campaign: str, tests: set[str]) -> Grouping:
        """The grouping `name` (None: the default) of a campaign that measured or counted `tests`."""
        ...

    def entries(self, names: Sequence[str] | None, engine: str) -> list[JsonObject]:
        """`dbdrift catalog`'s listing: the tests `names` select (None: every test), each with its
        SQL for `engine`, in report order."""
        ...

    def group_titles(self) -> dict[str, str]:
        """The title of each of the catalogue's own groups."""
        ...


@dataclass(frozen=True)
class NoMicrobenchmarks:
    """The catalogue of a workload judged over repeats (Insert Benchmark, TPROC-C, vector, HTAP):
    its report is its own, so it has no test of a catalogue; a report of names alone orders them
    by name, and no grouping but the (empty) default."""

    @property
    def layer_families(self) -> Mapping[str, tuple[str, ...]]:
        return {}

    @property
    def groupings(self) -> tuple[str, ...]:
        return ()

    def entry(self, test: str) -> Microbenchmark | None:
        return None

    def report_order(self, names: Iterable[str]) -> list[str]:
        return sorted(names)

    def select(self, names: Sequence[str]) -> Sequence[Microbenchmark]:
        if names:
            raise InputError(f"tests {', '.join(names)}: this workload has no catalogue of tests",
                             "leave `tests` out: the workload runs all of its own")
        return ()

    def layer_members(self, family: str) -> list[tuple[str, int, int]]:
        return []

    def scan_krps(self, table_rows: int, events: int, seconds: float, threads: int) -> float | None:
        return None

    def entries(self, names: Sequence[str] | None, engine: str) -> list[JsonObject]:
        return []

    def group_titles(self) -> dict[str, str]:
        return {}

    def grouping(self, name: str | None, campaign: str, tests: set[str]) -> Grouping:
        if name is not None:
            raise InputError(f"--groups {name}: campaign {campaign} has no catalogue of tests to group",
                             "drop --groups")
        return Grouping((), {}, {})


NO_MICROBENCHMARKS = NoMicrobenchmarks()


def duration_kind(catalog: Microbenchmarks, test: str) -> str:
    """Which run length `test` gets (read | write | insert); a read's for a test the catalogue
    does not hold (one a stored campaign names)."""
    entry = catalog.entry(test)
    return entry.duration_kind if entry is not None else "read"


def writes(catalog: Microbenchmarks, test: str) -> bool:
    """Whether `test` writes (its entry's rw is not "R"), and so waits on I/O and locks, which
    instruction counts cannot see; False for a test the catalogue does not hold."""
    entry = catalog.entry(test)
    return entry is not None and entry.rw != "R"


def regrouped(comparison: Comparison, chosen: Grouping) -> Comparison:
    """`comparison` with each row in its group of `chosen`."""
    if not chosen.moved:
        return comparison
    return replace(comparison, rows=tuple(replace(r, group=chosen.moved.get(r.test, r.group)) for r in comparison.rows))
