"""The microbenchmark catalogue as entries: group, statements per event, SQL per engine."""
from __future__ import annotations

from dbdrift.results.outcomes import CatalogListing as CatalogListing  # the record report/ renders
from dbdrift.workloads.sysbench.catalog import CATALOG, GROUP_TITLES, describe, report_order, select_tests


def listing(tests: list[str] | None, engine: str) -> CatalogListing:
    """The tests (names or groups; None: every test) with their SQL for `engine`."""
    names = [t.name for t in select_tests(tests)] if tests else list(CATALOG)
    return CatalogListing([describe(CATALOG[n], engine) for n in report_order(names)], dict(GROUP_TITLES))
