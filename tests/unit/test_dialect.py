"""What sessions send each engine: load, settle and run SQL per dialect,
and that the driver accepts every job shape (checked by the real driver binary, null backend)."""
from __future__ import annotations

import json
from pathlib import Path

from dbdrift.workloads.sysbench import catalog as sysbench
from dbdrift.driver import process
from dbdrift.model import ConnectionInfo
from dbdrift.runner.dialect import INNODB_FLUSH_SETTINGS, InnoDBDialect, PostgresDialect, for_engine
from dbdrift.workloads.sysbench.dialect import InnoDBSysbench, PostgresSysbench


def test_innodb_load_is_sysbench_ddl_one_insert_stream_per_table_then_the_k_index():
    create, insert, index = InnoDBSysbench("11.4.5").load_phases(tables=2, rows=1000, workers=8)
    ddl = [job["sql"] for job in create]
    # drop and create of a table are one job: jobs of a phase run concurrently
    assert len(ddl) == 2 and ddl[0].startswith("DROP TABLE IF EXISTS sbtest1; CREATE TABLE sbtest1 (")
    assert "id INTEGER NOT NULL AUTO_INCREMENT" in ddl[0] and "PRIMARY KEY (id)" in ddl[0]
    assert ddl[0].endswith("ENGINE = InnoDB") and "k_1" not in ddl[0]
    assert [job["insert_sbtest"] for job in insert] == [
        {"sql": f"INSERT INTO sbtest{n} (id, k, c, pad) VALUES", "first_id": 1, "last_id": 1000, "k_max": 1000}
        for n in (1, 2)]
    assert [job["sql"] for job in index] == ["CREATE INDEX k_1 ON sbtest1 (k)", "CREATE INDEX k_2 ON sbtest2 (k)"]


def test_postgres_load_copies_each_table_in_one_id_ordered_stream_whatever_the_workers():
    # parallel chunks into one table would interleave pages differently on every server
    create, copy, index, attach = PostgresSysbench("17.10").load_phases(tables=2, rows=1000, workers=8)
    spans = [(job["copy_sbtest"]["sql"].split()[1], job["copy_sbtest"]["first_id"], job["copy_sbtest"]["last_id"])
             for job in copy]
    assert spans == [("sbtest1", 1, 1000), ("sbtest2", 1, 1000)]
    assert "PRIMARY KEY USING INDEX" in attach[0]["sql"]


def test_the_driver_accepts_every_load_phase_of_both_dialects():
    for dialect in (PostgresSysbench("17.10"), InnoDBSysbench("10.11.5")):
        phases = dialect.load_phases(tables=2, rows=100, workers=2)
        jobs = process.exec_jobs({}, phases, backend="null", what="load")
        assert len(jobs) == sum(len(p) for p in phases)


def test_mysql_statements_keep_question_marks_and_insert_passes_id_0():
    insert = sysbench.CATALOG["insert"]
    workload = sysbench.render_workload(insert, InnoDBDialect("11.4.5").sql_dialect, 1000)
    assert workload["statements"][0]["sql"] == "INSERT INTO sbtest{table} (id, k, c, pad) VALUES (0, ?, ?, ?)"
    pg = sysbench.render_workload(insert, PostgresDialect("17.10").sql_dialect, 1000)
    assert pg["statements"][0]["sql"] == "INSERT INTO sbtest{table} (k, c, pad) VALUES ($1, $2, $3)"


def test_settle_restores_pct_before_lwm_so_lwm_is_never_clamped():
    sent = []

    class Recording(InnoDBDialect):
        def _exec(self, conn, phases, threads=1, what="SQL"):
            sent.extend(job["sql"] for phase in phases for job in phase)
            return []

    Recording("11.4.5").settle_end({}, {"restore": {"innodb_max_dirty_pages_pct_lwm": "10",
                                                    "innodb_max_dirty_pages_pct": "90.000000"}})
    statements = sent[0].split("; ")
    assert statements == ["SET GLOBAL innodb_max_dirty_pages_pct = 90.000000",
                          "SET GLOBAL innodb_max_dirty_pages_pct_lwm = 10"]
    assert set(INNODB_FLUSH_SETTINGS) >= {"innodb_max_dirty_pages_pct_lwm", "innodb_max_dirty_pages_pct"}


def test_mysql_8_4_resets_binary_logs_with_its_new_statement():
    sent = []

    class Recording(InnoDBDialect):
        def _query(self, conn, sql):
            return [["innodb_max_dirty_pages_pct", "90"]]

        def _exec(self, conn, phases, threads=1, what="SQL"):
            sent.append([job["sql"] for phase in phases for job in phase])
            return []

    Recording("8.4.3", "mysql").settle_start({}, ["sbtest1"])
    Recording("8.0.36", "mysql").settle_start({}, ["sbtest1"])
    Recording("11.4.5", "mariadb").settle_start({}, ["sbtest1"])
    assert [s[0] for s in sent] == ["RESET BINARY LOGS AND GTIDS", "RESET MASTER", "RESET MASTER"]
    assert sent[0][1] == "SET GLOBAL innodb_max_dirty_pages_pct = 1"  # only what the server has
    assert sent[0][2] == "ANALYZE TABLE sbtest1"


def test_engines_get_their_dialect_and_mysql_connections_name_the_socket_file():
    assert for_engine("postgres", "17.10").backend == "postgres"
    assert for_engine("mariadb", "11.4.5").backend == for_engine("mysql", "8.0.36").backend == "mysql"
    conn = ConnectionInfo(Path("/r/sock"), 3307, "root", "mysql", socket_file=Path("/r/sock/mysqld.sock"))
    assert conn.with_dbname("sbtest").to_driver()["socket"] == "/r/sock/mysqld.sock"
    assert "socket" not in ConnectionInfo(Path("/r"), 5432, "postgres", "postgres").to_driver()


def test_mysql_explain_asks_for_json_format_1_where_format_2_holds_no_plan():
    """Replies as MySQL 9.7.4 gave them (tests/data/plans/): format 2 of an UPDATE has no plan."""
    plans = Path(__file__).resolve().parents[1] / "data" / "plans"
    [no_plan] = [p["plan_json"] for p in json.loads((plans / "mysql-9.7.4-v2-no-plan.json").read_text())["plans"]
                 if p["sql"].startswith("UPDATE sbtest1 SET k=k+1")]
    sent = []

    class Replying(InnoDBDialect):
        def _query(self, conn, sql):
            sent.append(sql)
            return [[no_plan if len(sent) == 1 else '{"query_block": {"select_id": 1}}']]

    text = Replying("9.7.4", "mysql").explain({}, "UPDATE sbtest1 SET k=k+1 WHERE id=100000")
    assert sent == ["EXPLAIN FORMAT=JSON UPDATE sbtest1 SET k=k+1 WHERE id=100000",
                    "SET SESSION explain_json_format_version = 1; EXPLAIN FORMAT=JSON UPDATE sbtest1 SET k=k+1 "
                    "WHERE id=100000"]
    assert text == '{"query_block": {"select_id": 1}}'
