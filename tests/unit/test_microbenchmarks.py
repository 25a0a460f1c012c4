"""The catalogue of tests handed down to results/ (results/microbenchmarks.py): a report says
each counted test's group from the catalogue it was given, and a workload without a catalogue
(judged over repeats) refuses tests and groupings by name instead of reporting nothing."""
from __future__ import annotations

import pytest

from dbdrift.errors import InputError
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.results.microbenchmarks import NO_MICROBENCHMARKS, duration_kind, writes
from dbdrift.workloads.registry import WORKLOADS
from dbdrift.workloads.sysbench.catalog import CATALOG
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS

pytestmark = pytest.mark.fault("reports")


def test_a_report_names_each_counted_test_by_its_catalogue_group(golden):
    data = build_report(golden, MICROBENCHMARKS, None, None, False)
    assert data.instructions and all(data.group_of(r.test) == CATALOG[r.test].group for r in data.instructions)


def test_a_report_of_five_groups_names_a_counted_test_by_its_group_among_the_five(golden):
    data = build_report(golden, MICROBENCHMARKS, None, None, False, groups="five")
    assert data.group_of("point-query") == "point-1" and data.group_of("read-only_range=100") == "range-2"


def test_a_name_the_catalogue_does_not_hold_has_no_group_in_a_report(golden):
    assert build_report(golden, MICROBENCHMARKS, None, None, False).group_of("no-such-test") is None


def test_only_sysbench_hands_down_a_catalogue_of_tests():
    assert {name for name, w in WORKLOADS.items() if w.catalog is not NO_MICROBENCHMARKS} == {"sysbench"}


def test_a_workload_without_a_catalogue_refuses_tests_by_name():
    with pytest.raises(InputError, match="tests point-query: this workload has no catalogue of tests"):
        NO_MICROBENCHMARKS.select(["point-query"])


def test_a_workload_without_a_catalogue_refuses_a_grouping_by_name():
    with pytest.raises(InputError, match="--groups five: campaign c has no catalogue of tests to group"):
        NO_MICROBENCHMARKS.grouping("five", "c", {"l.i0"})


def test_a_test_s_run_length_and_whether_it_writes_come_from_its_entry_and_an_unknown_one_reads():
    assert (duration_kind(MICROBENCHMARKS, "update-index"), writes(MICROBENCHMARKS, "update-index")) == ("write", True)
    assert (duration_kind(MICROBENCHMARKS, "point-query"), writes(MICROBENCHMARKS, "point-query")) == ("read", False)
    assert (duration_kind(MICROBENCHMARKS, "gone"), writes(MICROBENCHMARKS, "gone")) == ("read", False)
    assert (duration_kind(NO_MICROBENCHMARKS, "point-query"), writes(NO_MICROBENCHMARKS, "point-query")) == ("read", False)


def test_the_catalogue_lists_the_tests_it_selects_in_report_order_and_the_empty_one_nothing():
    listed = [e["name"] for e in MICROBENCHMARKS.entries(["writes"], "mysql")]
    assert listed and all(MICROBENCHMARKS.entry(n).group == "writes" for n in listed)
    assert listed == MICROBENCHMARKS.report_order(listed)
    assert NO_MICROBENCHMARKS.entries(None, "postgres") == [] and NO_MICROBENCHMARKS.group_titles() == {}
