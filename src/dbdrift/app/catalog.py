"""The microbenchmark catalogue (sysbench's, through the registry) as entries: group, statements per
event, SQL per engine."""
from __future__ import annotations

from dbdrift.results.outcomes import CatalogListing as CatalogListing  # the record report/ renders
from dbdrift.workloads.registry import SYSBENCH


def listing(tests: list[str] | None, engine: str) -> CatalogListing:
    """The tests (names or groups; None: every test) with their SQL for `engine`."""
    return CatalogListing(SYSBENCH.catalog.entries(tests, engine), SYSBENCH.catalog.group_titles())
