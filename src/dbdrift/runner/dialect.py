"""What a session says to each engine's server, in its own SQL: the database, the load, the
prewarm, the settle step (docs/methodology.md), the effective settings and the version string.

`PostgresDialect` speaks to PostgreSQL; `InnoDBDialect` to MariaDB and MySQL (InnoDB tables,
the driver's `mysql` backend). Jobs are driver `exec` phases (docs/protocol.md).
"""
from __future__ import annotations

import time

from dbdrift.analysis.plans_mysql import NOT_EXECUTABLE
from dbdrift.workloads.sysbench.catalog import ExplainStatement, render_sql
from dbdrift.driver import process
from dbdrift.errors import DriverError
from dbdrift.model import JsonObject
from dbdrift.server.mycnf import version_tuple

DBNAME = "sbtest"


class Dialect:
    backend = "postgres"  # the driver backend (docs/protocol.md)
    sql_dialect = "postgres"  # catalog.render_sql's dialect
    backend_pids_are_processes = True  # the driver's start line names OS processes to watch

    def __init__(self, version: str) -> None:
        self.version = version

    def create_database(self, dbname: str = DBNAME) -> list[list[JsonObject]]:
        return [[{"sql": f"DROP DATABASE IF EXISTS {dbname}"}], [{"sql": f"CREATE DATABASE {dbname}"}]]

    def settings(self, admin: JsonObject) -> dict[str, str]:
        raise NotImplementedError

    def version_string(self, admin: JsonObject) -> str:
        raise NotImplementedError

    def load_phases(self, tables: int, rows: int, workers: int) -> list[list[JsonObject]]:
        raise NotImplementedError

    def prewarm(self, conn: JsonObject, tables: int, restarted: bool = False) -> tuple[str, str | None]:
        """How the cache was warmed after the load (or, `restarted`, after a restart of the
        server on loaded data), and a note for the user when it could not be."""
        raise NotImplementedError

    def settle_start(self, conn: JsonObject, tables: list[str]) -> JsonObject:
        """The work of the settle step (sysbench and Insert Benchmark alike) on `tables`, done
        before its sleep; returns facts to store."""
        raise NotImplementedError

    def settle_end(self, conn: JsonObject, started: JsonObject) -> None:
        """After the settle step's sleep: undo what settle_start changed for the duration."""

    explain_prefix = "EXPLAIN (FORMAT JSON) "

    def explain(self, conn: JsonObject, sql: str) -> str:
        """The server's plan for one statement, as its EXPLAIN JSON text (nothing is executed)."""
        rows = self._query(conn, self.explain_prefix + sql)
        return "\n".join(str(r[0]) for r in rows)

    def explain_prepared(self, conn: JsonObject, stmt: ExplainStatement) -> str:
        """The plan of the statement as the driver prepares it, after as many executions as a
        run's start makes; where the server plans every execution alike, that of its literal SQL."""
        return self.explain(conn, stmt.sql)

    def _query(self, conn: JsonObject, sql: str) -> list[list[str | None]]:
        return process.query(conn, sql, backend=self.backend)

    def _exec(self, conn: JsonObject, phases: list[list[JsonObject]], threads: int = 1, what: str = "SQL") -> list[JsonObject]:
        return process.exec_jobs(conn, phases, threads=threads, backend=self.backend, what=what)


class PostgresDialect(Dialect):
    PLANNED_EXECUTIONS = 5
    """A prepared statement's first five executions get a plan for their parameters (a custom
    plan); from the sixth the plan cache may use a generic plan instead, and a run's statements
    are executed thousands of times."""

    def explain_prepared(self, conn: JsonObject, stmt: ExplainStatement) -> str:
        """EXPLAIN EXECUTE of the statement prepared as the driver prepares it (parameter types
        left to the server), after PLANNED_EXECUTIONS executions, so that the plan recorded is
        the one the plan cache then chooses. All in one transaction that is rolled back: a write
        statement's executions change nothing. Without parameters there is nothing to choose."""
        if not stmt.literals or stmt.template.lstrip().upper().startswith("INSERT"):
            # nothing to choose; an INSERT executed five times with one id would hit its own key
            return super().explain_prepared(conn, stmt)
        prepared = render_sql(stmt.template, "postgres")
        args = ", ".join(stmt.literals)
        script = ["BEGIN", f"PREPARE dbdrift_plan AS {prepared}",
                  *[f"EXECUTE dbdrift_plan({args})"] * self.PLANNED_EXECUTIONS,
                  f"{self.explain_prefix}EXECUTE dbdrift_plan({args})", "ROLLBACK"]
        rows = self._query(conn, "; ".join(script))  # the driver keeps the last result set: the EXPLAIN's
        return "\n".join(str(r[0]) for r in rows)

    def settings(self, admin: JsonObject) -> dict[str, str]:
        return {str(r[0]): r[1] or "" for r in self._query(admin, "SELECT name, setting FROM pg_settings ORDER BY name")}

    def version_string(self, admin: JsonObject) -> str:
        rows = self._query(admin, "SELECT version()")
        return (rows[0][0] or "") if rows else ""

    def load_phases(self, tables: int, rows: int, workers: int) -> list[list[JsonObject]]:
        """One COPY stream per table (tables in parallel), then the PK and k indexes built in
        parallel: sysbench's prepare, faster.

        The table is created without its PK and the PK is attached from a unique index after the
        load: the same final schema as sysbench's, built in a fraction of the time. Rows go in in
        id order, one stream per table, as sysbench's prepare does: the heap is then laid out
        identically on every server. Parallel chunks into one table would interleave their
        pages differently on each server, and two servers loaded alike would then differ on
        index scans (docs/methodology.md; docs/noise.md, D15 and E11).
        `workers` is not used (the caller's thread count runs the tables and indexes side by side).
        """
        create, copy, index, attach = [], [], [], []
        for n in range(1, tables + 1):
            create.append({"sql": f"DROP TABLE IF EXISTS sbtest{n}; CREATE TABLE sbtest{n} ("
                                  "id SERIAL, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, "
                                  "pad CHAR(60) DEFAULT '' NOT NULL)"})
            copy.append({"copy_sbtest": {"sql": f"COPY sbtest{n} (id, k, c, pad) FROM STDIN",
                                         "first_id": 1, "last_id": rows, "k_max": rows}})
            index.append({"sql": f"CREATE UNIQUE INDEX sbtest{n}_pkey ON sbtest{n} (id)"})
            index.append({"sql": f"CREATE INDEX k_{n} ON sbtest{n} (k)"})
            attach.append({"sql": f"ALTER TABLE sbtest{n} ADD CONSTRAINT sbtest{n}_pkey PRIMARY KEY USING INDEX "
                                  f"sbtest{n}_pkey; SELECT setval(pg_get_serial_sequence('sbtest{n}', 'id'), {rows})"})
        return [create, copy, index, attach]

    def prewarm(self, conn: JsonObject, tables: int, restarted: bool = False) -> tuple[str, str | None]:
        relations = [r for n in range(1, tables + 1) for r in (f"sbtest{n}", f"sbtest{n}_pkey", f"k_{n}")]
        sql = "SELECT " + ", ".join(f"pg_prewarm('{r}')" for r in relations)
        try:
            self._exec(conn, [[{"sql": "CREATE EXTENSION IF NOT EXISTS pg_prewarm"}], [{"sql": sql}]], what="prewarm")
            return "pg_prewarm", None
        except DriverError as exc:
            note = f"pg_prewarm unavailable ({exc.message}); the warm-up run warms the cache"
            return "unavailable", None if restarted else note  # said once, after the load

    def settle_start(self, conn: JsonObject, tables: list[str]) -> JsonObject:
        """Vacuum analyze every table in parallel until its visibility map is complete, then
        checkpoint; returns the passes and the pages left not all-visible per table.

        A vacuum that starts right after the load or the write phase finds the xmin horizon
        still held by backends that are going away, and then marks few pages all-visible; a
        moment later a second pass marks them all. Index-only scans visit the heap for the
        pages left out, so two servers loaded and written alike would differ on the covered
        tests for as long as they run (docs/methodology.md). A table whose
        pg_class.relallvisible (set by the vacuum) is below its relpages is vacuumed again,
        VACUUM_PASSES times at most, VACUUM_RETRY_S apart."""
        left: dict[str, int] = {}
        passes = 0
        todo = list(tables)
        while todo and passes < VACUUM_PASSES:
            if passes:
                time.sleep(VACUUM_RETRY_S)
            passes += 1
            vacuum = [{"sql": f"VACUUM (ANALYZE, INDEX_CLEANUP ON) {t}"} for t in todo]
            self._exec(conn, [vacuum], threads=len(todo), what="settle")
            names = ", ".join(f"'{t}'" for t in todo)
            left = {str(r[0]): int(r[1] or 0) - int(r[2] or 0) for r in self._query(
                conn, f"SELECT relname, relpages, relallvisible FROM pg_class WHERE relname IN ({names}) "
                      "AND relnamespace = 'public'::regnamespace")}
            todo = [t for t in todo if left.get(t, 0) > 0]
        self._exec(conn, [[{"sql": "CHECKPOINT"}]], what="settle")
        return {"vacuum_passes": passes, "pages_not_all_visible": {t: n for t, n in left.items() if n > 0}}


VACUUM_PASSES = 5  # PostgreSQL settle: vacuums of a table whose visibility map is still incomplete
VACUUM_RETRY_S = 0.5

# The InnoDB settle step (docs/methodology.md): flush dirty pages hard during the settle
# sleep, then restore the server's values.
INNODB_FLUSH_SETTINGS = {"innodb_max_dirty_pages_pct_lwm": "1", "innodb_max_dirty_pages_pct": "1",
                         "innodb_idle_flush_pct": "100"}


class InnoDBDialect(Dialect):
    backend = "mysql"
    sql_dialect = "mysql"
    backend_pids_are_processes = False  # connection ids: the server is one process of threads
    explain_prefix = "EXPLAIN FORMAT=JSON "

    def __init__(self, version: str, engine: str = "mariadb") -> None:
        super().__init__(version)
        self.engine = engine

    def settings(self, admin: JsonObject) -> dict[str, str]:
        return {str(r[0]): r[1] or "" for r in self._query(admin, "SHOW GLOBAL VARIABLES")}

    def explain(self, conn: JsonObject, sql: str) -> str:
        """As the server prints it; where MySQL's JSON format 2 (9.x's default) has no plan of
        the statement (a single-table UPDATE or DELETE under the traditional optimizer), the
        plan in format 1, asked for on the EXPLAIN's own connection."""
        text = super().explain(conn, sql)
        if NOT_EXECUTABLE in text:
            rows = self._query(conn, f"SET SESSION explain_json_format_version = 1; {self.explain_prefix}{sql}")
            text = "\n".join(str(r[0]) for r in rows)
        return text

    def version_string(self, admin: JsonObject) -> str:
        rows = self._query(admin, "SELECT @@version, @@version_comment")
        return f"{rows[0][0]} ({rows[0][1]})" if rows else ""

    def load_phases(self, tables: int, rows: int, workers: int) -> list[list[JsonObject]]:
        """sysbench's prepare with the tables loaded in parallel: one stream of
        multi-row INSERTs in id order per table (InnoDB appends to its clustered index), then
        the k index per table, built after the load as sysbench does."""
        create, insert, index = [], [], []
        for n in range(1, tables + 1):
            # one job: the jobs of a phase run concurrently, a separate DROP could follow the CREATE
            create.append({"sql": f"DROP TABLE IF EXISTS sbtest{n}; {create_table_sql(n)}"})
            insert.append({"insert_sbtest": {"sql": f"INSERT INTO sbtest{n} (id, k, c, pad) VALUES",
                                             "first_id": 1, "last_id": rows, "k_max": rows}})
            index.append({"sql": f"CREATE INDEX k_{n} ON sbtest{n} (k)"})
        return [create, insert, index]

    def prewarm(self, conn: JsonObject, tables: int, restarted: bool = False) -> tuple[str, str | None]:
        """After the load the rows were just inserted through the buffer pool, which dbdrift sizes
        to hold them: nothing is read back. After a restart the buffer pool is empty: every
        table's clustered index (all columns) and its k index are read, tables in parallel."""
        if not restarted:
            return "buffer pool (just loaded)", None
        reads = [{"sql": f"SELECT SUM(LENGTH(c) + LENGTH(pad)) FROM sbtest{n}; "
                         f"SELECT SUM(k) FROM sbtest{n} FORCE INDEX (k_{n})"} for n in range(1, tables + 1)]
        self._exec(conn, [reads], threads=tables, what="prewarm")
        return "read every table and k index", None

    def settle_start(self, conn: JsonObject, tables: list[str]) -> JsonObject:
        """RESET MASTER (RESET BINARY LOGS AND GTIDS on MySQL 8.4+), analyze every table in
        parallel, and flush dirty pages with INNODB_FLUSH_SETTINGS (those this server has)
        until settle_end restores them."""
        reset = "RESET BINARY LOGS AND GTIDS" if self.engine == "mysql" and version_tuple(self.version) >= (8, 4) \
            else "RESET MASTER"
        have = {r[0]: r[1] for r in self._query(conn, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ("
                                                    + ", ".join(f"'{k}'" for k in INNODB_FLUSH_SETTINGS) + ")")}
        analyze = [{"sql": f"ANALYZE TABLE {t}"} for t in tables]
        flush = [{"sql": "; ".join(f"SET GLOBAL {k} = {v}" for k, v in INNODB_FLUSH_SETTINGS.items() if k in have)
                  or "SELECT 1"}]
        self._exec(conn, [[{"sql": reset}], flush, analyze], threads=len(tables), what="settle")
        return {"restore": have}

    def settle_end(self, conn: JsonObject, started: JsonObject) -> None:
        restore = started.get("restore") or {}
        if restore:
            # In reverse: lwm may not exceed pct, so pct goes back up before lwm does.
            sets = [f"SET GLOBAL {k} = {restore[k]}" for k in reversed(INNODB_FLUSH_SETTINGS) if k in restore]
            self._exec(conn, [[{"sql": "; ".join(sets)}]],
                       what="settle (restore flushing settings)")


def create_table_sql(n: int) -> str:
    """sysbench's MySQL DDL: AUTO_INCREMENT id as the primary key, InnoDB."""
    return (f"CREATE TABLE sbtest{n} (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, "
            "c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE = InnoDB")


def for_engine(engine: str, version: str) -> Dialect:
    if engine == "postgres":
        return PostgresDialect(version)
    return InnoDBDialect(version, engine)
