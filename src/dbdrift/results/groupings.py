"""How a sysbench report groups its tests (`report --groups`): the four groups of the current
posts (the catalogue's own), or the five of the 2024 posts over the 42 tests of `all42`
(point query part 1 and 2, range query part 1 and 2, writes; docs/methodology.md). Pure: it
regroups a comparison already made and refuses tests a grouping has no group for."""
from __future__ import annotations

from dataclasses import dataclass, replace

from dbdrift.analysis.relative import Comparison
from dbdrift.errors import UserError
from dbdrift.workloads.sysbench.catalog import FIVE_GROUP_TITLES, FIVE_GROUPS, GROUP_TITLES, GROUPS, five_group

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
        raise UserError(f"--groups {name}: no such grouping", f"choose from {', '.join(GROUPINGS)}", exit_code=2)
    outside = sorted(t for t in tests if five_group(t) is None)
    if outside:
        raise UserError(f"--groups five: campaign {campaign} has {len(outside)} test(s) outside the 42 the 2024 "
                        f"posts' five groups cover: {', '.join(outside)}",
                        "the five groups are of `all42` campaigns (tests = [\"all42\"]): leave those tests out "
                        "with --tests, or report the four groups (drop --groups)", exit_code=2)
    return Grouping(FIVE_GROUPS, FIVE_GROUP_TITLES, {t: g for t in tests if (g := five_group(t)) is not None})


def regrouped(comparison: Comparison, chosen: Grouping) -> Comparison:
    """`comparison` with each row in its group of `chosen`."""
    if not chosen.moved:
        return comparison
    return replace(comparison, rows=tuple(replace(r, group=chosen.moved.get(r.test, r.group)) for r in comparison.rows))
