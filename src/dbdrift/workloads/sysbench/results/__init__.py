"""sysbench's results (layer results): the report of a stored campaign at the thresholds given, as
every verb without the comparison's views reads it (publish, history, run); the hooks of the
workloads judged over repeats that sysbench answers with nothing, each saying why; and its
catalogue of tests as the results layer asks for it (results/microbenchmarks.py's
Microbenchmarks, handed down as the registry's Workload.catalog), with the groupings of `report
--groups`: the four groups of the current posts (the catalogue's own), or the five of the 2024
posts over the 42 tests of `all42` (point query part 1 and 2, range query part 1 and 2, writes;
docs/methodology.md), which refuse tests they have no group for."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from dbdrift.analysis.noise import JUDGING, Estimate, Judging
from dbdrift.errors import InputError
from dbdrift.model import JsonObject
from dbdrift.results.microbenchmarks import Grouping, Microbenchmark
from dbdrift.results.targets import merged_stacks
from dbdrift.store.store import Store
from dbdrift.workloads.sysbench import catalog
from dbdrift.workloads.sysbench.catalog import (CATALOG, DEFAULT_32, FIVE_GROUP_TITLES, FIVE_GROUPS, GROUP_TITLES,
                                               GROUPS, five_group, report_order)
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.workloads.sysbench.results.data import ReportData


def build(store: Store, campaign_id: int, base: str | None, judging: Judging = JUDGING) -> ReportData:
    """The comparison of the campaign's cells against the base (`base`, else the campaign's),
    without the chain, with the verdicts' minimum effect raised to this host's noise floors
    (noise_floor = "auto"): the report `dbdrift report` prints without a view."""
    return build_report(store, MICROBENCHMARKS, str(campaign_id), base, False, judging, noise_floor="auto")


def estimates(store: Store, campaign_id: int) -> dict[str, list[Estimate]]:
    """None of sysbench's tests is judged over repeats: each cell (test x threads) is judged over
    the turns of its runs, and `detect` plans and follows it per cell from a calibration's turns
    (app/detect.py's cell estimates), so no test has estimates over repeats."""
    return {}


def stacks(store: Store, campaign_id: int) -> list[tuple[str, str, dict[str, int] | None]]:
    """(`test xN`, target, stacks) of each measured cell recorded with --flamegraph, its runs'
    stacks merged; `report --flamegraphs` writes a campaign's per cell itself, with a
    differential graph against each cell's own reference (views.py's flamegraph_files)."""
    return [(f"{test} x{threads}", target, folded)
            for (test, threads, target), folded in merged_stacks(store, campaign_id).items()]


def history_values(store: Store, campaign_id: int) -> dict[tuple[str, str], list[float]]:
    """sysbench has no values per repeat: `history` and `publish` follow its tests' runs and
    counts (metrics qps, instructions), not `rate`."""
    return {}


def history_measure(measure: str) -> tuple[str, str]:
    """A measure of history_values, which gives none for sysbench: so nothing asks; a test's
    throughput is its queries per second."""
    return f"{measure}: queries per second (sysbench)", "queries/s"


GROUPINGS = ("four", "five")  # `report --groups`; four is the default

FOUR = Grouping(GROUPS, GROUP_TITLES, {})


def grouping(name: str | None, campaign: str, tests: set[str]) -> Grouping:
    """The grouping `name` (None: four) for a campaign that measured or counted `tests`; the
    five groups of 2024 refuse a test outside the 42 by name."""
    if name in (None, "four"):
        return FOUR
    if name != "five":
        raise InputError(f"--groups {name}: no such grouping", f"choose from {', '.join(GROUPINGS)}")
    outside = sorted(t for t in tests if five_group(t) is None)
    if outside:
        kept = _selection(tests - set(outside))
        keep = f"leave them out with `--tests {kept}`" if kept else "report the four groups (drop --groups)"
        raise InputError(f"--groups five: campaign {campaign} has {len(outside)} test(s) outside the 42 the 2024 "
                        f"posts' five groups cover: {', '.join(outside)}",
                        f"the five groups are of `all42` campaigns (tests = [\"all42\"]): {keep}")
    return Grouping(FIVE_GROUPS, FIVE_GROUP_TITLES, {t: g for t in tests if (g := five_group(t)) is not None})


def _selection(tests: set[str]) -> str:
    """`tests` as a --tests value: a group's name for all of its default-32 members, then the rest."""
    out, rest = [], set(tests)
    for group in GROUPS:
        members = {t for t in DEFAULT_32 if CATALOG[t].group == group}
        if members <= rest:
            out.append(group)
            rest -= members
    return ",".join(out + report_order(rest))


@dataclass(frozen=True)
class SysbenchMicrobenchmarks:
    """The catalogue's tests, groups and layer families (workloads/sysbench/catalog.py) and the
    groupings of `report --groups` (above); a dataclass without fields, so that a Workload
    pickled for a cluster unit equals itself."""

    @property
    def layer_families(self) -> Mapping[str, tuple[str, ...]]:
        return catalog.LAYER_FAMILIES

    @property
    def groupings(self) -> tuple[str, ...]:
        return GROUPINGS

    def entry(self, test: str) -> Microbenchmark | None:
        return catalog.CATALOG.get(test)

    def report_order(self, names: Iterable[str]) -> list[str]:
        return catalog.report_order(names)

    def select(self, names: Sequence[str]) -> Sequence[Microbenchmark]:
        return catalog.select_tests(tuple(names))

    def layer_members(self, family: str) -> list[tuple[str, int, int]]:
        return catalog.layer_members(family)

    def scan_krps(self, table_rows: int, events: int, seconds: float, threads: int) -> float | None:
        return catalog.scan_krps(table_rows, events, seconds, threads)

    def grouping(self, name: str | None, campaign: str, tests: set[str]) -> Grouping:
        return grouping(name, campaign, tests)

    def entries(self, names: Sequence[str] | None, engine: str) -> list[JsonObject]:
        chosen = [t.name for t in catalog.select_tests(tuple(names))] if names else list(catalog.CATALOG)
        return [catalog.describe(catalog.CATALOG[n], engine) for n in catalog.report_order(chosen)]

    def group_titles(self) -> dict[str, str]:
        return dict(catalog.GROUP_TITLES)


MICROBENCHMARKS = SysbenchMicrobenchmarks()
