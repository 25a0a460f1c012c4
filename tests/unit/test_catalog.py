from dbdrift.catalog.sql import render_sql
from dbdrift.workloads.sysbench import catalog as sb
from dbdrift.errors import UserError
import pytest


def test_default_suite_has_the_32_tests_of_the_posts_in_four_groups():
    groups = [sb.CATALOG[n].group for n in sb.DEFAULT_32]
    assert len(sb.DEFAULT_32) == 32
    assert [groups.count(g) for g in sb.GROUPS] == [9, 5, 8, 10]


def test_all42_is_the_15_pre_tests_plus_17_reads_and_10_writes():
    assert len(sb.ALL_42) == 42
    assert len([n for n in sb.ALL_42 if ".pre" in n]) == 15
    assert not any(n.startswith("read-only-") for n in sb.ALL_42)


def test_statements_per_event_match_sysbench_counting():
    expected = {"point-query": 1, "read-only_range=100": 16, "read-only-sum": 13, "read-only-count": 1,
                "write-only": 6, "read-write_range=10": 20, "update-inlist": 1, "scan": 1}
    assert {n: sb.CATALOG[n].statements_per_event for n in expected} == expected


def test_read_only_range_upper_bound_is_lo_plus_range_minus_one():
    wl = sb.render_workload(sb.CATALOG["read-only_range=100"], "postgres", 1000)
    simple = wl["statements"][1]
    assert simple["sql"] == "SELECT c FROM sbtest{table} WHERE id BETWEEN $1 AND $2"
    assert simple["params"] == [{"gen": "id", "as": "lo"}, {"gen": "ref", "var": "lo", "plus": 99}]
    assert wl["statements"][0]["repeat"] == 10 and wl["transaction"] is True


def test_hot_points_uses_the_fixed_keys_after_the_middle_of_the_table():
    wl = sb.render_workload(sb.CATALOG["hot-points"], "postgres", 1000)
    values = [p["value"] for p in wl["statements"][0]["params"]]
    assert values == list(range(501, 601))


def test_postgres_insert_omits_the_id_column():
    wl = sb.render_workload(sb.CATALOG["insert"], "postgres", 1000)
    assert wl["statements"][0]["sql"] == "INSERT INTO sbtest{table} (k, c, pad) VALUES ($1, $2, $3)"


def test_write_only_inserts_the_id_it_deleted_into_the_same_table():
    stmts = sb.render_workload(sb.CATALOG["write-only"], "postgres", 1000)["statements"]
    assert stmts[2]["params"][0] == {"gen": "id", "as": "x"}
    assert stmts[3]["params"][0] == {"gen": "ref", "var": "x", "plus": 0}
    assert stmts[3]["table"] == "previous"


def test_update_one_always_hits_row_one_and_update_zipf_is_zipfian():
    assert sb.render_workload(sb.CATALOG["update-one"], "postgres", 1000)["id_max"] == 1
    assert sb.CATALOG["update-zipf"].rand_type == "zipfian"


def test_scan_uses_the_thread_table_and_reports_krps():
    scan = sb.CATALOG["scan"]
    assert scan.metric == "krps" and scan.statements[0].table == "thread"


def test_select_tests_accepts_groups_names_and_sets_in_run_order():
    names = [t.name for t in sb.select_tests(["writes", "point-query"])]
    assert names[0] == "update-inlist" and names[-1] == "insert" and "point-query" in names
    assert len(sb.select_tests(["all42"])) == 42


def test_unknown_test_name_is_a_user_error_with_a_suggestion():
    with pytest.raises(UserError) as err:
        sb.select_tests(["point-querry"])
    assert "point-querry" in err.value.message and "point-query" in err.value.hint


def test_report_order_is_group_order_then_the_posts_order():
    order = sb.report_order(["insert", "scan", "point-query", "read-only_range=10", "hot-points"])
    assert order == ["hot-points", "point-query", "scan", "read-only_range=10", "insert"]


def test_render_sql_numbers_placeholders_for_postgres_only():
    assert render_sql("a=? AND b IN (?, ?)", "postgres") == "a=$1 AND b IN ($2, $3)"
    assert render_sql("a=?", "mysql") == "a=?"


def test_scan_krps_is_thousand_rows_per_average_scan_second_per_thread():
    # 1M rows, 2 threads, 40 scans finished in 10 s: each scan took 0.5 s -> 2,000 Krps per thread
    assert sb.scan_krps(1_000_000, 40, 10.0, 2) == 2000.0
    assert sb.scan_krps(1_000_000, 0, 1.0, 1) == 0.0  # an interval in which no scan finished
    assert sb.scan_krps(1_000_000, 5, 0.0, 1) is None
