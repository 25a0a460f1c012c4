"""`report --groups five`: the 2024 posts' five groups (point query part 1 and 2, range query
part 1 and 2, writes) over the 42 tests of all42, in every format; a campaign with a test outside
the 42 is refused, naming it."""
from __future__ import annotations

import json
import re

import pytest

from dbdrift.app.report import selected_tests
from dbdrift.errors import UserError
from dbdrift.workloads.sysbench.report.formats import render
from dbdrift.workloads.sysbench.report.words import comparison_lines
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.store.store import RunRecord
from dbdrift.workloads.sysbench.catalog import ALL_42, DEFAULT_32, five_group
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS, grouping
from tests.unit.test_reports import QPS, make_store

pytestmark = pytest.mark.fault("reports")


@pytest.fixture
def store(tmp_path):
    s = make_store(tmp_path / "g.db")  # its six tests are all of the 42
    yield s
    s.close()


def test_the_five_groups_hold_the_42_as_the_posts_split_them():
    sizes = {g: sum(1 for t in ALL_42 if five_group(t) == g) for g in ("point-1", "point-2", "range-1", "range-2",
                                                                        "writes")}
    assert sizes == {"point-1": 11, "point-2": 6, "range-1": 9, "range-2": 6, "writes": 10}


def test_random_points_are_point_query_part_2_and_read_only_range_query_part_2():
    assert five_group("random-points.pre_range=100") == "point-2" and five_group("read-only_range=10") == "range-2"
    assert five_group("scan") == "range-1" and five_group("points-covered-si.pre_range=100") == "point-1"


def test_the_2025_read_only_variants_have_no_group_among_the_five():
    assert [t for t in DEFAULT_32 if five_group(t) is None] == [
        "read-only-count", "read-only-distinct", "read-only-order", "read-only-simple", "read-only-sum"]


def test_a_report_in_five_groups_shows_their_sections_in_the_posts_order(store):
    data = build_report(store, MICROBENCHMARKS, None, None, False, groups="five")
    assert [(s.title, [r.test for r in s.rows]) for s in data.sections(1)] == [
        ("point query, part 1", ["hot-points", "point-query"]),
        ("range query, part 1", ["range-covered-pk", "scan"]),
        ("range query, part 2", ["read-only_range=100"]),
        ("writes", ["update-index"])]


def test_the_words_of_a_five_group_report_speak_of_its_groups(store):
    lines = comparison_lines(build_report(store, MICROBENCHMARKS, None, None, False, groups="five"))
    assert any(line.startswith("  range query, part 1: ") and "for range-covered-pk" in line for line in lines)


def test_the_json_of_a_five_group_report_groups_timed_cells_and_counts_alike(store):
    doc = json.loads(render(build_report(store, MICROBENCHMARKS, None, None, False, groups="five"), "json"))
    groups = {(r["test"], r["measure"]): r["group"] for r in doc["rows"]}
    assert groups[("point-query", "timed")] == groups[("point-query", "instructions")] == "point-1"
    assert {s["group"] for s in doc["group_summaries"]} == {"point-1", "range-1", "range-2", "writes"}


def test_a_campaign_with_a_test_outside_the_42_is_refused_naming_it(store):
    target = store.targets(store.latest_campaign_id(None))[0].id
    store.add_run(target, RunRecord(test="read-only-count", test_group="range-agg", threads=1, repeat=0, status="ok",
                                    warmup_s=1, duration_s=3, metric="qps", driver_spec={}, value=1000.0))
    with pytest.raises(UserError, match="1 test\\(s\\) outside the 42 .*: read-only-count") as refused:
        build_report(store, MICROBENCHMARKS, None, None, False, groups="five")
    assert refused.value.exit_code == 2


def test_the_four_groups_take_any_test():
    assert grouping("four", "c", {"read-only-count", "point-query"}).moved == {}


def test_the_refusal_names_a_tests_value_the_five_groups_take(store):
    target = store.targets(store.latest_campaign_id(None))[0].id
    store.add_run(target, RunRecord(test="read-only-count", test_group="range-agg", threads=1, repeat=0, status="ok",
                                    warmup_s=1, duration_s=3, metric="qps", driver_spec={}, value=1000.0))
    with pytest.raises(UserError) as refused:
        build_report(store, MICROBENCHMARKS, None, None, False, groups="five")
    value = re.search(r"--tests (\S+)`", refused.value.hint).group(1)
    data = build_report(store, MICROBENCHMARKS, None, None, False, tests=selected_tests(value.split(",")), groups="five")
    assert {r.test for r in data.comparison.rows} == set(QPS)
