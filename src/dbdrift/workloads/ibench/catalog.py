"""The Insert Benchmark (docs/methodology.md): its steps with their sizes, batch sizes, rates and
query kinds, and every statement per SQL dialect (tables, secondary indexes, insert, delete,
queries).

Pure data and rendering: no I/O. The driver's `ibench` subcommand runs one step
(docs/protocol.md); `ibench_sql` is that spec's `sql` object.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from dbdrift.catalog.sql import render_sql
from dbdrift.model import IBENCH_STEPS, JsonObject

DBNAME = "ib"
ROWS_PER_QUERY = 10  # LIMIT of the range queries, ids per point query
RESYNC_NOTE = "min(transactionid) every 1000 deletes, max every 100 point queries (the driver)"

STEP_TITLES = {
    "l.i0": "load without secondary indexes",
    "l.x": "create secondary indexes",
    "l.i1": "continue load with 50 inserts per transaction, deleting as many",
    "l.i2": "continue load with 5 inserts per transaction, deleting as many",
    "qr100": "range queries with 100 insert/s per client",
    "qp100": "point queries with 100 insert/s per client",
    "qr500": "range queries with 500 insert/s per client",
    "qp500": "point queries with 500 insert/s per client",
    "qr1000": "range queries with 1000 insert/s per client",
    "qp1000": "point queries with 1000 insert/s per client",
}


@dataclass(frozen=True)
class IBenchParams:
    """A campaign's `[insert_benchmark]` table: rows for all clients together (as ra.sh's
    nr1/nr2), seconds per query step, and the steps it runs."""

    clients: int = 1
    rows_l_i0: int = 10_000_000
    rows_l_i1: int = 4_000_000
    rows_l_i2: int = 1_000_000
    query_s: float = 1800.0
    deletes: bool = True  # delete_per_insert: the table keeps its size from l.i1 on
    shared_table: bool = False  # only1t: every client writes pi1 (not with deletes)
    io_bound: bool = False  # the cache sized well below the table (io_bound_settings)
    steps: tuple[str, ...] = IBENCH_STEPS  # the steps run, a subset of IBENCH_STEPS in its order

    def tables(self) -> list[str]:
        return ["pi1"] * self.clients if self.shared_table else [f"pi{n}" for n in range(1, self.clients + 1)]

    def distinct_tables(self) -> list[str]:
        return sorted(set(self.tables()), key=self.tables().index)


IO_BOUND_ROW_BYTES = 250
"""Bytes of a row with its share of the primary key and the three secondary indexes after l.x
(PostgreSQL 17/18 measured ~245: dbgb1 after l.x ÷ rows; InnoDB is within a factor of two)."""
IO_BOUND_SHARE = 10  # the cache holds at most a tenth of the table and its indexes
IO_BOUND_MIN_MB = 16


def io_bound_cache_mb(sizes: IBenchParams) -> int:
    """The IO-bound setup's cache: a tenth of what l.i0 and l.x build, at least 16 MB."""
    return max(IO_BOUND_MIN_MB, sizes.rows_l_i0 * IO_BOUND_ROW_BYTES // IO_BOUND_SHARE // 2**20)


def io_bound_settings(engine: str, sizes: IBenchParams) -> dict[str, str]:
    """What `io_bound = true` sets on a target (its own settings win): shared_buffers, or the
    InnoDB buffer pool with O_DIRECT so that its misses are storage reads, not page-cache copies.
    PostgreSQL reads through the OS page cache whatever shared_buffers is: its misses are
    storage reads only when the table outgrows the host's free memory too (docs/campaign.md)."""
    mb = io_bound_cache_mb(sizes)
    if engine == "postgres":
        return {"shared_buffers": f"{mb}MB"}
    return {"innodb_buffer_pool_size": f"{mb}M", "innodb_flush_method": "O_DIRECT"}


@dataclass(frozen=True)
class IBenchStep:
    """One step as the driver runs it; rows and rates are per client."""

    name: str
    rows_per_client: int
    rows_per_statement: int
    inserts_per_second: int = 0  # per client; 0 = not rate limited
    deletes: bool = False
    query: str | None = None  # range | point
    create_indexes: bool = False  # l.x: the secondary indexes after the rows

    @property
    def title(self) -> str:
        return STEP_TITLES[self.name]

    @property
    def is_query_step(self) -> bool:
        return self.query is not None

    def target_ips(self, clients: int) -> float | None:
        """The background insert rate the SLA is measured against (all clients)."""
        return float(self.inserts_per_second * clients) if self.is_query_step else None


def steps(sizes: IBenchParams) -> list[IBenchStep]:
    """The campaign's steps (sizes.steps) in order (model.IBENCH_STEPS)."""
    per = sizes.clients

    def share(total: int) -> int:
        return max(1, math.ceil(total / per))

    deletes = sizes.deletes
    every = [
        IBenchStep("l.i0", share(sizes.rows_l_i0), 100),
        IBenchStep("l.x", 100, 100, create_indexes=True),
        IBenchStep("l.i1", share(sizes.rows_l_i1), 50, deletes=deletes),
        IBenchStep("l.i2", share(sizes.rows_l_i2), 5, deletes=deletes),
    ]
    for rate in (100, 500, 1000):
        rows = max(1, round(sizes.query_s * rate))
        every.append(IBenchStep(f"qr{rate}", rows, 50, rate, deletes, "range"))
        every.append(IBenchStep(f"qp{rate}", rows, 50, rate, deletes, "point"))
    return [s for s in every if s.name in sizes.steps]


def settle_seconds(sizes: IBenchParams) -> float:
    """The settle time after l.i2, as the scripts compute it: T = min(1200, 60 + nr1/10^6) s,
    nr1 the l.i0 rows of all tables."""
    return min(1200.0, 60.0 + sizes.rows_l_i0 / 1e6)


# --- SQL per dialect ("postgres" or "mysql") ----------------------------------------------------

_COLUMNS = "dateandtime, cashregisterid, customerid, productid, price, data"


def create_table_sql(table: str, dialect: str) -> list[str]:
    """One benchmark table (pi<n>): PK on transactionid from a sequence / auto_increment, no
    secondary index (l.x adds them)."""
    if dialect == "postgres":
        return [f"DROP TABLE IF EXISTS {table}",
                f"CREATE TABLE {table} (transactionid bigserial primary key, dateandtime timestamp without time zone, "
                "cashregisterid int not null, customerid int not null, productid int not null, price int not null, "
                "data varchar(4000))",
                f"ALTER SEQUENCE {table}_transactionid_seq CACHE 1000"]
    return [f"DROP TABLE IF EXISTS {table}",
            f"CREATE TABLE {table} (transactionid bigint not null auto_increment, dateandtime datetime, "
            "cashregisterid int not null, customerid int not null, productid int not null, price int not null, "
            "data varchar(4000), primary key (transactionid)) ENGINE = InnoDB"]


_INDEXES = (("marketsegment", "productid, customerid, price"),
            ("registersegment", "cashregisterid, customerid, price"),
            ("pdc", "price, dateandtime, customerid"))


def create_indexes_sql(dialect: str) -> list[str]:
    """l.x: three CREATE INDEX on PostgreSQL, one ALTER TABLE with three indexes on InnoDB."""
    if dialect == "postgres":
        return [f"CREATE INDEX {{table}}_{name} ON {{table}} ({cols})" for name, cols in _INDEXES]
    return ["ALTER TABLE {table} " + ", ".join(f"ADD INDEX {{table}}_{name} ({cols})" for name, cols in _INDEXES)]


def _range_queries(dialect: str) -> list[JsonObject]:
    force = dialect != "postgres"

    def hint(name: str) -> str:
        return f" FORCE INDEX ({{table}}_{name})" if force else ""

    shapes = (
        ("marketsegment", "productid, customerid, price", "productid >= ?", 10000),
        ("registersegment", "cashregisterid, customerid, price", "cashregisterid > ?", 1000),
        ("pdc", "price, dateandtime, customerid", "price >= ?", 500),
    )
    return [{"sql": render_sql(f"SELECT {cols} FROM {{table}}{hint(name)} WHERE ({where}) ORDER BY {cols} "
                               f"LIMIT {ROWS_PER_QUERY}", dialect), "domain": domain}
            for name, cols, where, domain in shapes]


def ibench_sql(dialect: str, step: IBenchStep) -> JsonObject:
    """The `sql` object of a driver `ibench` spec (docs/protocol.md) for one step."""
    if dialect == "postgres":
        delete = ("DELETE FROM {table} WHERE transactionid IN (SELECT transactionid FROM {table} "
                  "WHERE transactionid >= {min} ORDER BY transactionid ASC LIMIT {rows})")
    else:
        delete = "DELETE FROM {table} WHERE transactionid >= {min} ORDER BY transactionid ASC LIMIT {rows}"
    ids = ", ".join("?" for _ in range(ROWS_PER_QUERY))
    return {
        "insert": f"INSERT INTO {{table}} ({_COLUMNS}) VALUES",
        "delete": delete,
        "min": "SELECT min(transactionid) FROM {table}",
        "max": "SELECT max(transactionid) FROM {table}",
        "range": _range_queries(dialect),
        "point": render_sql(f"SELECT transactionid, productid, data FROM {{table}} WHERE transactionid IN ({ids})",
                            dialect),
        "after": create_indexes_sql(dialect) if step.create_indexes else [],
    }
