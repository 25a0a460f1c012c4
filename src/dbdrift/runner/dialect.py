"""What a session says to each engine's server, in its own SQL, whatever the workload: the
database, the settle step (docs/methodology.md), the effective settings, the version string and
a statement's plan. A workload's own SQL (sysbench's load and prewarm: workloads/sysbench/dialect.py)
extends these classes.

`PostgresDialect` speaks to PostgreSQL; `InnoDBDialect` to MariaDB and MySQL (InnoDB tables,
the driver's `mysql` backend). Jobs are driver `exec` phases (docs/protocol.md).
"""
from __future__ import annotations

import time

from dbdrift.analysis.plans_mysql import NOT_EXECUTABLE
from dbdrift.driver import process
from dbdrift.model import JsonObject
from dbdrift.server.mycnf import version_tuple


class Dialect:
    backend = "postgres"  # the driver backend (docs/protocol.md)
    sql_dialect = "postgres"  # catalog/sql.py render_sql's dialect
    backend_pids_are_processes = True  # the driver's start line names OS processes to watch

    def __init__(self, version: str) -> None:
        self.version = version

    def create_database(self, dbname: str) -> list[list[JsonObject]]:
        return [[{"sql": f"DROP DATABASE IF EXISTS {dbname}"}], [{"sql": f"CREATE DATABASE {dbname}"}]]

    def settings(self, admin: JsonObject) -> dict[str, str]:
        raise NotImplementedError

    def version_string(self, admin: JsonObject) -> str:
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

    def _query(self, conn: JsonObject, sql: str) -> list[list[str | None]]:
        return process.query(conn, sql, backend=self.backend)

    def _exec(self, conn: JsonObject, phases: list[list[JsonObject]], threads: int = 1, what: str = "SQL") -> list[JsonObject]:
        return process.exec_jobs(conn, phases, threads=threads, backend=self.backend, what=what)


class PostgresDialect(Dialect):
    def settings(self, admin: JsonObject) -> dict[str, str]:
        return {str(r[0]): r[1] or "" for r in self._query(admin, "SELECT name, setting FROM pg_settings ORDER BY name")}

    def version_string(self, admin: JsonObject) -> str:
        rows = self._query(admin, "SELECT version()")
        return (rows[0][0] or "") if rows else ""

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


def for_engine(engine: str, version: str) -> Dialect:
    if engine == "postgres":
        return PostgresDialect(version)
    return InnoDBDialect(version, engine)
