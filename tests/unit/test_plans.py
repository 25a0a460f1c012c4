"""Plans compared as plans (analysis/plans.py) on EXPLAIN JSON documents captured from real servers
(tests/data/plans/, by bench/plan_fixtures.py): one normalised shape whatever the engine's format
printed it, different shapes for another way to run a statement; and the statements EXPLAINed."""
import json
from functools import cache
from pathlib import Path

import pytest

from dbdrift.analysis.plan_step import rows_class
from dbdrift.analysis.plans import plan_shape
from dbdrift.workloads.sysbench import catalog as sysbench

PLANS = Path(__file__).resolve().parents[1] / "data" / "plans"
RANGE = "SELECT c FROM sbtest1 WHERE id BETWEEN 100000 AND 100009"
DISTINCT = "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 100000 AND 100009 ORDER BY c"
UPDATE = "UPDATE sbtest1 SET k=k+1 WHERE id=100000"


@cache
def captured(name: str) -> dict[str, str]:
    """SQL -> the EXPLAIN JSON text one fixture holds for it."""
    doc = json.loads((PLANS / f"{name}.json").read_text())
    return {p["sql"]: p["plan_json"] for p in doc["plans"]}


def shapes(name: str) -> dict[str, str | None]:
    engine = name.split("-")[0]
    return {sql: plan_shape(engine, text) for sql, text in captured(name).items()}


@pytest.mark.parametrize("other", ["mysql-9.7.4", "mysql-9.7.4-v1", "mysql-9.7.4-v2"])
def test_mysql_8_0_and_9_7_give_every_statement_the_same_shape_in_json_format_1_and_2(other):
    assert shapes(other) == shapes("mysql-8.0.33")


def test_a_range_scan_on_primary_is_one_shape_from_mysql_5_6_to_9_7_in_either_format():
    found = {name: shapes(name)[RANGE] for name in ("mysql-5.6.14", "mysql-5.7.22", "mysql-8.0.33", "mysql-9.7.4-v1",
                                                    "mysql-9.7.4-v2")}
    assert set(found.values()) == {"range scan on sbtest using PRIMARY ~10 rows"}, found


def test_format_2_s_distinct_through_a_temporary_table_reads_as_format_1_s():
    assert "query_plan" in captured("mysql-9.7.4-v2")[DISTINCT] and "query_block" in captured("mysql-8.0.33")[DISTINCT]
    assert shapes("mysql-9.7.4-v2")[DISTINCT] == shapes("mysql-8.0.33")[DISTINCT] == \
        "sort (deduplicating temporary table (range scan on sbtest using PRIMARY ~10 rows))"


def test_the_hypergraph_optimizer_s_distinct_by_sorting_is_another_shape():
    assert shapes("mysql-9.7.4-hypergraph")[DISTINCT] == \
        "deduplicating sort (range scan on sbtest using PRIMARY ~10 rows)"


def test_the_hypergraph_optimizer_s_point_select_is_a_unique_lookup_not_a_const_row():
    point = "SELECT c FROM sbtest1 WHERE id=100000"
    assert shapes("mysql-8.0.33")[point] == "const row"
    assert shapes("mysql-9.7.4-hypergraph")[point] == "unique lookup on sbtest using PRIMARY ~1 row"


def test_a_hash_join_names_its_build_side_first_in_format_1_and_in_the_hypergraph_s_format_2():
    join = next(sql for sql in captured("mysql-8.0.33") if sql.startswith("SELECT count(*) FROM sbtest1 a JOIN"))
    assert shapes("mysql-9.7.4-v1")[join] == shapes("mysql-9.7.4-hypergraph")[join] == \
        "hash join (range scan on a using PRIMARY ~10 rows, range scan on b using PRIMARY ~100 rows)"


def test_format_2_s_update_without_a_plan_has_no_shape_and_format_1_s_has_one():
    assert set(shapes("mysql-9.7.4-v2-no-plan").values()) == {None}
    assert shapes("mysql-9.7.4")[UPDATE] == "range scan on sbtest using PRIMARY ~1 row"  # asked for in format 1


def test_an_insert_reads_no_table_whatever_the_version_says_of_it():
    insert = next(sql for sql in captured("mysql-5.6.14") if sql.startswith("INSERT INTO sbtest1 (id, k, c, pad) "
                                                                           "VALUES (1"))
    found = {name: shapes(name)[insert] for name in ("mysql-5.6.14", "mysql-5.7.22", "mysql-9.7.4-hypergraph",
                                                     "mariadb-10.2.11", "mariadb-11.8.9")}
    assert set(found.values()) == {"no table"}, found


def test_mariadb_10_2_s_join_written_as_sibling_keys_reads_as_11_8_s_nested_loop():
    join = next(sql for sql in captured("mariadb-10.2.11") if sql.startswith("SELECT a.c, b.c FROM"))
    text = captured("mariadb-10.2.11")[join]
    assert text.count('"table": {') == 2 and '"nested_loop"' not in text
    assert shapes("mariadb-10.2.11")[join] == shapes("mariadb-11.8.9")[join] == \
        "nested loop (range scan on a using PRIMARY ~10 rows, unique lookup on b using PRIMARY ~1 row)"


def test_mariadb_10_2_10_11_and_11_8_give_the_suite_s_range_and_sort_statements_one_shape():
    for sql in (RANGE, DISTINCT, "SELECT id FROM sbtest1 WHERE id BETWEEN 100000 AND 100100"):
        assert len({shapes(name)[sql] for name in ("mariadb-10.2.11", "mariadb-10.11.5", "mariadb-11.8.9")}) == 1, sql


def test_covering_is_said_of_a_secondary_index_not_of_innodb_s_clustered_primary():
    assert shapes("mariadb-11.8.9")["SELECT k FROM sbtest1 WHERE k BETWEEN 100000 AND 100100"].startswith(
        "covering range scan on sbtest using k_1")
    assert shapes("mysql-8.0.33")["SELECT id FROM sbtest1 WHERE id BETWEEN 100000 AND 100100"] == \
        "range scan on sbtest using PRIMARY ~100 rows"


def test_a_postgres_index_only_scan_is_covering_and_its_range_condition_makes_it_a_range_scan():
    found = shapes("postgres-17.10")
    assert found["SELECT id FROM sbtest1 WHERE id BETWEEN 100000 AND 100100"] == \
        "covering range scan on sbtest using sbtest_pkey ~100 rows"
    assert found["SELECT c FROM sbtest1 WHERE id=100000"] == "lookup on sbtest using sbtest_pkey ~1 row"
    assert found["SELECT * FROM sbtest1 WHERE LENGTH(c) < 0"].startswith("table scan on sbtest ~")


def test_a_postgres_plain_aggregate_is_dropped_and_a_sort_is_kept():
    found = shapes("postgres-17.10")
    assert found["SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 100000 AND 100009"] == found[RANGE]
    assert found["SELECT c FROM sbtest1 WHERE id BETWEEN 100000 AND 100009 ORDER BY c"] == f"sort ({found[RANGE]})"


def test_estimates_of_one_power_of_ten_keep_a_shape_and_a_scan_for_a_lookup_changes_it():
    doc = json.loads(captured("mysql-8.0.33")[RANGE])
    doc["query_block"]["table"]["rows_examined_per_scan"] = 21  # 10 rows on another server's statistics
    assert plan_shape("mysql", json.dumps(doc)) == shapes("mysql-8.0.33")[RANGE]
    doc["query_block"]["table"].update(access_type="ALL", rows_examined_per_scan=197352)
    assert plan_shape("mysql", json.dumps(doc)) == "table scan on sbtest ~100,000 rows"


@pytest.mark.parametrize("estimate, expected", [(0, 0), (1, 0), (3, 0), (4, 1), (10, 1), (31, 1), (32, 2), (101, 2),
                                                (316, 2), (317, 3), (1838, 3), (197352, 5), (None, None), ("x", None)])
def test_the_rows_class_is_the_estimate_s_power_of_ten_rounded(estimate, expected):
    assert rows_class(estimate) == expected


def test_a_document_that_is_not_explain_json_is_refused():
    with pytest.raises(ValueError, match="not an EXPLAIN JSON document of mysql"):
        plan_shape("mysql", '{"rows": 1}')


def test_explain_sql_gives_literal_parameters_within_the_table_and_each_statement_once():
    sql = dict(sysbench.explain_sql(sysbench.CATALOG["read-only_range=100"], "postgres", 10_000))
    assert sql[1] == "SELECT c FROM sbtest1 WHERE id BETWEEN 5000 AND 5099"
    assert "$" not in "".join(sql.values()) and "?" not in "".join(sql.values())
    mysql = sysbench.explain_sql(sysbench.CATALOG["point-query"], "mysql", 10_000)
    assert mysql == [(0, "SELECT c FROM sbtest1 WHERE id=5000")]


def test_an_in_list_is_explained_with_distinct_values_as_a_run_draws_them():
    [(_, sql)] = sysbench.explain_sql(sysbench.CATALOG["random-points_range=10"], "mysql", 10_000)
    assert sql == "SELECT c FROM sbtest1 WHERE id IN (5000, 5001, 5002, 5003, 5004, 5005, 5006, 5007, 5008, 5009)"


def test_explain_statements_keep_the_prepared_form_and_its_parameters():
    [point] = sysbench.explain_statements(sysbench.CATALOG["point-query"], "postgres", 10_000)
    assert point.template == "SELECT c FROM sbtest1 WHERE id=?" and point.literals == ("5000",)
    assert point.sql == "SELECT c FROM sbtest1 WHERE id=5000"
    [scan] = sysbench.explain_statements(sysbench.CATALOG["scan"], "postgres", 10_000)
    assert scan.literals == ()  # nothing for a plan cache to choose: explained as it is
