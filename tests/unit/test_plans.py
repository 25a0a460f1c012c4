"""Plan shapes (analysis/plans.py) on EXPLAIN JSON as PostgreSQL and MySQL print it: equal shapes
for plans that differ only in estimates and literals, different ones for another access path."""
import json

from dbdrift.analysis.plans import plan_shape
from dbdrift.workloads.sysbench import catalog as sysbench

PG_AGG = {"Plan": {"Node Type": "Aggregate", "Strategy": "Plain", "Startup Cost": 1.5, "Total Cost": 40.2,
                   "Plan Rows": 1, "Plans": [{"Node Type": "Index Only Scan", "Parent Relationship": "Outer",
                                              "Scan Direction": "Forward", "Index Name": "sbtest3_pkey",
                                              "Relation Name": "sbtest3", "Alias": "sbtest3", "Total Cost": 38.0,
                                              "Plan Rows": 999, "Index Cond": "((id >= 500) AND (id <= 1499))"}]}}
MY_RANGE = {"query_block": {"select_id": 1, "cost_info": {"query_cost": "20.3"}, "table": {
    "table_name": "sbtest1", "access_type": "range", "possible_keys": ["PRIMARY"], "key": "PRIMARY",
    "used_key_parts": ["id"], "key_length": "4", "rows_examined_per_scan": 100, "filtered": "100.00",
    "using_index": True, "cost_info": {"read_cost": "10.1"}, "used_columns": ["id"],
    "attached_condition": "(`sbtest`.`sbtest1`.`id` between 500 and 599)"}}}


def test_a_postgres_shape_keeps_nodes_indexes_and_tables_and_drops_estimates_and_literals():
    shape = plan_shape("postgres", json.dumps([PG_AGG]))
    assert shape == "Aggregate Plain (Index Only Scan Forward using sbtest_pkey on sbtest)"
    other = json.loads(json.dumps(PG_AGG))
    other["Plan"]["Total Cost"] = 99.0
    other["Plan"]["Plans"][0]["Index Cond"] = "((id >= 7) AND (id <= 1006))"
    assert plan_shape("postgres", json.dumps([other])) == shape
    other["Plan"]["Plans"][0]["Node Type"] = "Index Scan"
    assert plan_shape("postgres", json.dumps([other])) != shape


def test_a_mysql_shape_keeps_the_access_path_and_drops_costs_and_conditions():
    shape = plan_shape("mysql", json.dumps(MY_RANGE))
    assert shape == "{query_block {table {access_type=range key=PRIMARY table_name=sbtest using_index=true}}}"
    full = json.loads(json.dumps(MY_RANGE))
    full["query_block"]["table"]["rows_examined_per_scan"] = 5
    assert plan_shape("mysql", json.dumps(full)) == shape
    full["query_block"]["table"].pop("using_index")
    assert plan_shape("mysql", json.dumps(full)) != shape


def test_explain_sql_gives_literal_parameters_within_the_table_and_each_statement_once():
    sql = dict(sysbench.explain_sql(sysbench.CATALOG["read-only_range=100"], "postgres", 10_000))
    assert sql[1] == "SELECT c FROM sbtest1 WHERE id BETWEEN 5000 AND 5099"
    assert "$" not in "".join(sql.values()) and "?" not in "".join(sql.values())
    mysql = sysbench.explain_sql(sysbench.CATALOG["point-query"], "mysql", 10_000)
    assert mysql == [(0, "SELECT c FROM sbtest1 WHERE id=5000")]


def test_explain_statements_keep_the_prepared_form_and_its_parameters():
    [point] = sysbench.explain_statements(sysbench.CATALOG["point-query"], "postgres", 10_000)
    assert point.template == "SELECT c FROM sbtest1 WHERE id=?" and point.literals == ("5000",)
    assert point.sql == "SELECT c FROM sbtest1 WHERE id=5000"
    [scan] = sysbench.explain_statements(sysbench.CATALOG["scan"], "postgres", 10_000)
    assert scan.literals == ()  # nothing for a plan cache to choose: explained as it is


def test_an_in_list_is_explained_with_distinct_values_as_a_run_draws_them():
    [(_, sql)] = sysbench.explain_sql(sysbench.CATALOG["random-points_range=10"], "mysql", 10_000)
    assert sql == "SELECT c FROM sbtest1 WHERE id IN (5000, 5001, 5002, 5003, 5004, 5005, 5006, 5007, 5008, 5009)"
