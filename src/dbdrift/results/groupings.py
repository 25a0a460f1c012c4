"""How a sysbench report groups its tests (`report --groups`): the four groups of the current
posts (the catalogue's own), or the five of the 2024 posts over the 42 tests of `all42`
(point query part 1 and 2, range query part 1 and 2, writes; docs/methodology.md). Pure: it
regroups a comparison already made and refuses tests a grouping has no group for."""
from __future__ import annotations

from dataclasses import dataclass, replace

from dbdrift.analysis.relative import Comparison
from dbdrift.errors import InputError
from dbdrift.workloads.sysbench.catalog import (CATALOG, DEFAULT_32, FIVE_GROUP_TITLES, FIVE_GROUPS, GROUP_TITLES,
                                               GROUPS, five_group, report_order)

GROUPINGS = ("four", "five")  # `report --groups`; four is the default


@dataclass(frozen=True)
class Grouping:
    """The groups a report shows, in order, their titles, and the group of each test it moved
    out of its catalogue group (empty for the catalogue's grouping)."""

    order: tuple[str, ...]
    titles: dict[str, str]
    moved: dict[str, str]


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


def regrouped(comparison: Comparison, chosen: Grouping) -> Comparison:
    """`comparison` with each row in its group of `chosen`."""
    if not chosen.moved:
        return comparison
    return replace(comparison, rows=tuple(replace(r, group=chosen.moved.get(r.test, r.group)) for r in comparison.rows))
