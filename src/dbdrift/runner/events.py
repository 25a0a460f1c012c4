"""The engine's own counters, read once a second beside an Insert Benchmark step or a TPROC-C
run, so that a dip in the rate can be laid beside what the server was doing (docs/hardware.md,
"Engine events"): PostgreSQL's vacuums in progress, checkpoints, WAL written and dead tuples;
InnoDB's history list length (purge lag), dirty pages, checkpoint age, redo written and pages
flushed.

One connection of its own (pg8000 for PostgreSQL, PyMySQL for MariaDB and MySQL) and one
statement a second; a counter the server does not have reads None. Nothing here can fail a
step: a watch that cannot connect or whose query fails stops and says why in `error`.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import pg8000.native  # type: ignore[import-untyped]
import pymysql

from dbdrift.model import ConnectionInfo, EngineEvents, JsonObject

PG_SQL = """SELECT pg_current_wal_lsn() - '0/0'::pg_lsn,
  (SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables),
  (SELECT coalesce(string_agg(relid::regclass::text, ',' ORDER BY relid), '') FROM pg_stat_progress_vacuum),
  {checkpoints}"""
PG_CHECKPOINTS = {True: "(SELECT num_timed + num_requested FROM pg_stat_checkpointer), "
                        "(SELECT buffers_written FROM pg_stat_checkpointer)",
                  False: "(SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter), "
                         "(SELECT buffers_checkpoint FROM pg_stat_bgwriter)"}
"""PostgreSQL 17 moved the checkpointer's counters from pg_stat_bgwriter to pg_stat_checkpointer."""

INNODB_STATUS = ("Innodb_history_list_length", "Innodb_buffer_pool_pages_dirty", "Innodb_checkpoint_age",
                 "Innodb_os_log_written", "Innodb_buffer_pool_pages_flushed")
INNODB_METRICS = {"trx_rseg_history_len": "Innodb_history_list_length",
                  "log_lsn_checkpoint_age": "Innodb_checkpoint_age"}
"""MySQL has no status variable for purge lag or checkpoint age: its INNODB_METRICS counters
(enabled by default) stand in for MariaDB's."""

SERIES = ("wal_mb", "dead_tuples", "checkpoint_buffers", "history_length", "dirty_pages", "checkpoint_age_mb",
          "redo_mb", "pages_flushed")
"""Per-second values as stored: rates (MB of WAL or redo, buffers and pages written in that
second) and levels (dead tuples, history list length, dirty pages, checkpoint age)."""


@dataclass
class EngineWatch:
    """Reads the engine's counters every `period_s` in a thread from start() to stop()."""

    engine: str  # postgres, mariadb, mysql
    connect: Callable[[], Any]  # a DB-API or pg8000.native connection
    major: int = 0  # PostgreSQL's major version
    period_s: float = 1.0
    origin: float | None = None  # monotonic time of t = 0 (the driver's start line)
    rows: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    error: str = ""

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="dbdrift-events", daemon=True)

    def start(self) -> "EngineWatch":
        self._thread.start()
        return self

    def mark_start(self) -> None:
        self.origin = time.monotonic()

    def stop(self) -> EngineEvents | None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        return events_of(self.rows, self.origin, self.error)

    def _loop(self) -> None:
        try:
            conn = self.connect()
        except Exception as exc:  # noqa: BLE001 - any client error: the step goes on without events
            self.error = f"no connection for engine events: {exc}"
            return
        try:
            while True:
                started = time.monotonic()
                try:
                    self.rows.append((started, self._read(conn)))
                except Exception as exc:  # noqa: BLE001
                    self.error = f"engine events stopped: {exc}"
                    return
                if self._stop.wait(max(0.0, self.period_s - (time.monotonic() - started))):
                    return
        finally:
            try:
                conn.close()
            except Exception:  # noqa: BLE001
                pass

    def _read(self, conn: Any) -> dict[str, Any]:
        if self.engine == "postgres":
            row = conn.run(PG_SQL.format(checkpoints=PG_CHECKPOINTS[self.major >= 17]))[0]
            return {"wal_bytes": _num(row[0]), "dead_tuples": _num(row[1]),
                    "vacuums": [v for v in str(row[2] or "").split(",") if v],
                    "checkpoints": _num(row[3]), "checkpoint_buffers": _num(row[4])}
        with conn.cursor() as cursor:
            names = ", ".join(f"'{n}'" for n in INNODB_STATUS)
            cursor.execute(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({names})")
            values = {str(k): _num(v) for k, v in cursor.fetchall()}
            if self.engine == "mysql":
                metrics = ", ".join(f"'{n}'" for n in INNODB_METRICS)
                cursor.execute(f"SELECT NAME, COUNT FROM information_schema.INNODB_METRICS WHERE NAME IN ({metrics}) "
                               "AND STATUS = 'enabled'")  # a disabled counter reads 0
                values |= {INNODB_METRICS[str(k)]: _num(v) for k, v in cursor.fetchall()}
        return values


def _num(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def events_of(rows: list[tuple[float, dict[str, Any]]], origin: float | None, error: str = "") -> EngineEvents | None:
    """The stored form: per-second series (SERIES) and discrete events (a vacuum of a table
    starting, a checkpoint starting), timed from `origin`; None when nothing was read."""
    if len(rows) < 2:
        return EngineEvents(t=[], series={}, events=[], error=error or "fewer than two readings") if error else None
    start = origin if origin is not None else rows[0][0]
    t: list[float] = []
    series: dict[str, list[float | None]] = {}
    events: list[JsonObject] = []

    def add(name: str, value: float | None) -> None:
        series.setdefault(name, [None] * (len(t) - 1)).append(value)

    for (t0, a), (t1, b) in zip(rows, rows[1:]):
        t.append(round(t1 - start, 2))
        span = max(t1 - t0, 1e-3)
        if "wal_bytes" in b:  # PostgreSQL
            add("wal_mb", _rate(a.get("wal_bytes"), b.get("wal_bytes"), span, 2**20))
            add("dead_tuples", b.get("dead_tuples"))
            add("checkpoint_buffers", _rate(a.get("checkpoint_buffers"), b.get("checkpoint_buffers"), span))
            for table in sorted(set(b.get("vacuums") or []) - set(a.get("vacuums") or [])):
                events.append({"t": t[-1], "kind": "vacuum", "what": table})
            if (b.get("checkpoints") or 0) > (a.get("checkpoints") or 0):
                events.append({"t": t[-1], "kind": "checkpoint", "what": ""})
        else:
            add("history_length", b.get("Innodb_history_list_length"))
            add("dirty_pages", b.get("Innodb_buffer_pool_pages_dirty"))
            age = b.get("Innodb_checkpoint_age")
            add("checkpoint_age_mb", None if age is None else age / 2**20)
            add("redo_mb", _rate(a.get("Innodb_os_log_written"), b.get("Innodb_os_log_written"), span, 2**20))
            add("pages_flushed", _rate(a.get("Innodb_buffer_pool_pages_flushed"),
                                       b.get("Innodb_buffer_pool_pages_flushed"), span))
    for name in series:
        series[name] += [None] * (len(t) - len(series[name]))
    return EngineEvents(t=t, series=series, events=events, error=error)


def _rate(a: float | None, b: float | None, span: float, scale: float = 1.0) -> float | None:
    if a is None or b is None:
        return None
    return round(max(0.0, b - a) / span / scale, 3)


def watch(engine: str, connection: ConnectionInfo, major: int = 0) -> EngineWatch:
    """An EngineWatch over a server's socket, as the user and in the database of `connection`."""
    if engine == "postgres":
        def connect() -> Any:
            return pg8000.native.Connection(connection.user, database=connection.dbname,
                                            unix_sock=f"{connection.socket_dir}/.s.PGSQL.{connection.port}",
                                            application_name="dbdrift-events")
    else:
        socket = connection.socket_file or connection.socket_dir / "mysqld.sock"

        def connect() -> Any:
            return pymysql.connect(unix_socket=str(socket), user=connection.user, password="",
                                   database=connection.dbname, autocommit=True, connect_timeout=10)
    return EngineWatch(engine, connect, major)
