"""sysbench's SQL on each engine (layer runner): the load of the sbtest tables (sysbench's
prepare, faster), the prewarm of their cache, and a test's statement explained as the driver
prepares it. Extends what every workload says to a server (runner/dialect.py).

`PostgresSysbench` speaks to PostgreSQL; `InnoDBSysbench` to MariaDB and MySQL. Jobs are driver
`exec` phases (docs/protocol.md).
"""
from __future__ import annotations

from dbdrift.errors import DriverError
from dbdrift.model import JsonObject
from dbdrift.runner.dialect import Dialect, InnoDBDialect, PostgresDialect
from dbdrift.catalog.sql import render_sql
from dbdrift.workloads.sysbench.catalog import ExplainStatement

DBNAME = "sbtest"


class SysbenchDialect(Dialect):
    """sysbench's tables and statements on one engine."""

    def load_phases(self, tables: int, rows: int, workers: int) -> list[list[JsonObject]]:
        raise NotImplementedError

    def prewarm(self, conn: JsonObject, tables: int, restarted: bool = False) -> tuple[str, str | None]:
        """How the cache was warmed after the load (or, `restarted`, after a restart of the
        server on loaded data), and a note for the user when it could not be."""
        raise NotImplementedError

    def explain_prepared(self, conn: JsonObject, stmt: ExplainStatement) -> str:
        """The plan of the statement as the driver prepares it, after as many executions as a
        run's start makes; where the server plans every execution alike, that of its literal SQL."""
        return self.explain(conn, stmt.sql)


class PostgresSysbench(SysbenchDialect, PostgresDialect):
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


class InnoDBSysbench(SysbenchDialect, InnoDBDialect):
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


def create_table_sql(n: int) -> str:
    """sysbench's MySQL DDL: AUTO_INCREMENT id as the primary key, InnoDB."""
    return (f"CREATE TABLE sbtest{n} (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, "
            "c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE = InnoDB")


def for_engine(engine: str, version: str) -> SysbenchDialect:
    if engine == "postgres":
        return PostgresSysbench(version)
    return InnoDBSysbench(version, engine)
