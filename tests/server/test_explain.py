"""The report's own reasoning on real servers: which defaults differ between two versions that
neither configuration set (PostgreSQL 17.10 -> 18.4, MySQL 8.0.33 -> 9.7.4), the
per-statement against per-row split of the random-points family from callgrind counts, and query
plans compared as plans (MySQL 8.0.33's JSON format 1 against 9.7.4's format 2, and 9.7.4's
hypergraph optimizer)."""
from __future__ import annotations

import json

import pytest

from dbdrift.analysis.plans import plan_shape
from dbdrift.driver import process
from dbdrift.workloads.sysbench.dialect import DBNAME, for_engine
from dbdrift.workloads.sysbench import catalog as sysbench
from tests.helpers import dbdrift, shared_work_dir
from tests.server import servers

pytestmark = pytest.mark.server

POINTS = "random-points_range=10,random-points_range=100,random-points_range=1000"


def test_postgres_18_s_changed_io_defaults_and_the_random_points_split_are_reported(tmp_path):
    store = tmp_path / "s.db"
    result = dbdrift("compare", "17.10", "18.4", "--tests", POINTS, "--rows", "20000", "--instructions-only",
                     "--store", store, "--format", "json", work_dir=shared_work_dir("explain-pg"), timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    doc = json.loads(result.stdout)
    [drift] = doc["default_drift"]
    assert (drift["target"], drift["reference"]) == ("pg18.4", "pg17.10")
    found = {s["setting"]: s for s in drift["settings"]}
    assert found["effective_io_concurrency"]["reference"] == "1" and found["effective_io_concurrency"]["target"] == "16"
    assert found["io_workers"]["kind"] == "appeared" and found["io_workers"]["category"] == "I/O method"
    assert "io_method" not in found and "shared_buffers" not in found  # dbdrift's configuration sets them
    assert not any("/dbdrift-" in str(s["reference"]) + str(s["target"]) for s in drift["settings"])
    [split] = [r for r in doc["layers"] if r["family"] == "random-points"]
    assert split["measure"] == "instructions" and split["misfit"] < 0.2, split
    for part in ("per statement", "per row"):
        p = split["parts"][part]
        assert p["reference"] > 0 and p["target"] > 0 and 0.5 < p["ratio"] < 2, (part, p)
        assert p["lower"] <= p["ratio"] <= p["upper"] and p["verdict"] in (
            "regression", "improvement", "no significant change", "too noisy")
    # a statement (parse, plan, round trip, executor set-up) costs more than one more key's index lookup
    assert split["parts"]["per statement"]["reference"] > 2 * split["parts"]["per row"]["reference"]
    text = dbdrift("report", "--store", store).stdout
    assert "per-statement and per-row cost" in text and "effective_io_concurrency" in text


def test_mysql_9_7_s_changed_innodb_defaults_are_reported(tmp_path):
    path = tmp_path / "my.toml"
    path.write_text('name = "my-drift"\nrows = 2000\ntests = ["point-query"]\nread_s = 0.5\nwarmup_s = 0.1\n'
                    'settle_s = 0\nwarm_runs = false\n'
                    '[[targets]]\nname = "my8.0.33"\nengine = "mysql"\nversion = "8.0.33"\nbase = true\n'
                    '[[targets]]\nname = "my9.7.4"\nengine = "mysql"\nversion = "9.7.4"\n')
    store = tmp_path / "s.db"
    result = dbdrift("run", path, "--store", store, "--format", "json", work_dir=shared_work_dir("explain-my"),
                     timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    [drift] = json.loads(result.stdout)["default_drift"]
    found = {s["setting"]: s for s in drift["settings"]}
    assert (found["innodb_flush_method"]["reference"], found["innodb_flush_method"]["target"]) == ("fsync", "O_DIRECT")
    assert found["innodb_flush_method"]["category"] == "durability"
    assert found["innodb_doublewrite_pages"]["target"] == "128"
    ranked = [s["category"] for s in drift["settings"]]
    assert ranked.index("durability") < ranked.index("other")  # the likely ones first


def loaded_mysql(make_server, version: str, rows: int):
    """A MySQL `version` server with sbtest1 of `rows` rows loaded by dbdrift's own load and
    analysed; its dialect and the driver connection to sbtest."""
    server = make_server(servers.fetch("mysql", version), settings={"innodb_buffer_pool_size": "256M"})
    server.start()
    dialect = for_engine("mysql", version)
    admin = server.connection.to_driver()
    process.exec_jobs(admin, dialect.create_database(DBNAME), backend="mysql", what="create database")
    conn = server.connection.with_dbname("sbtest").to_driver()
    process.exec_jobs(conn, dialect.load_phases(1, rows, 2) + [[{"sql": "ANALYZE TABLE sbtest1"}]], threads=2,
                      backend="mysql", what="load")
    return server, dialect, conn


def test_mysql_8_0_and_9_7_plan_alike_and_the_hypergraph_optimizer_plans_read_only_distinct_otherwise(make_server):
    """9.7.4 prints JSON format 2 (and format 1 for the UPDATE, which format 2 has no plan of),
    8.0.33 format 1: one normalised shape each. 9.7.4 with the hypergraph optimizer reads the
    point select of read-only-distinct at execution (unique lookup), not while planning."""
    rows = 20_000
    statements = [s for test in ("read-only-distinct", "update-index")
                  for s in sysbench.explain_statements(sysbench.CATALOG[test], "mysql", rows)]
    found = {}
    for version in ("8.0.33", "9.7.4"):
        server, dialect, conn = loaded_mysql(make_server, version, rows)
        found[version] = [dialect.explain(conn, s.sql) for s in statements]
        if version == "9.7.4":
            server.sql("SET GLOBAL optimizer_switch = 'hypergraph_optimizer=on'")  # each EXPLAIN connects anew
            found["hypergraph"] = [dialect.explain(conn, s.sql) for s in statements[:2]]
        server.stop()
    assert all('"query_block"' in text for text in found["8.0.33"])
    assert '"query_plan"' in found["9.7.4"][0] and '"query_block"' in found["9.7.4"][-1]  # the UPDATE in format 1
    shapes = {key: [plan_shape("mysql", text) for text in texts] for key, texts in found.items()}
    assert shapes["9.7.4"] == shapes["8.0.33"], shapes
    assert shapes["8.0.33"][-1] == "range scan on sbtest using PRIMARY ~1 row"
    assert shapes["8.0.33"][0] == "const row"
    assert shapes["hypergraph"][0] == "unique lookup on sbtest using PRIMARY ~1 row"
