"""How fast dbdrift loads sbtest1, next to `sysbench oltp_read_only prepare`.

One server; per round both loads of one table of N rows, interleaved ABBA (dbdrift, sysbench,
sysbench, dbdrift, ...). dbdrift's load is exactly what `dbdrift run` does (workloads/sysbench/dialect.py load_phases
through exec_jobs: create, COPY chunks, PK + k index in parallel, attach the PK) with one
connection per CPU; sysbench's builds the same schema with INSERTs and both indexes. Between
loads the table is dropped and a checkpoint taken (untimed), so each load starts alike.

    .venv/bin/python bench/load_speed.py [--version 17.10] [--rows 1000000] [--rounds 2]
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c  # noqa: E402
from dbdrift.driver import process  # noqa: E402
from dbdrift.errors import UserError  # noqa: E402

DBDRIFT, SYSBENCH = "dbdrift", "sysbench"
TARGET_RATIO = 3.0  # dbdrift rows/s over sysbench rows/s, as the issue asks


@dataclass
class Load(c.StealShare):
    round: int
    tool: str
    wall_s: float
    rows: int
    steal_ticks: int
    all_ticks: int

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.wall_s if self.wall_s else float("nan")


def sysbench_load(conn: dict, rows: int) -> float:
    result = c.run_measured(c.sysbench_cmd("oltp_read_only", conn, rows, "prepare"), timeout_s=3600)
    c.check_ok(result, "sysbench oltp_read_only prepare")
    return result.wall_s


def reset(conn: dict) -> None:
    """Untimed, before every load: no table, no dirty pages left from the previous load."""
    c.sql(conn, "DROP TABLE IF EXISTS sbtest1", "CHECKPOINT")


def timed_load(tool: str, round_no: int, conn: dict, rows: int) -> Load:
    reset(conn)
    all0, steal0 = c.cpu_ticks()
    wall = c.dbdrift_load(conn, rows) if tool == DBDRIFT else sysbench_load(conn, rows)
    all1, steal1 = c.cpu_ticks()
    check_loaded(conn, rows, tool)
    return Load(round_no, tool, wall, rows, steal1 - steal0, all1 - all0)


def check_loaded(conn: dict, rows: int, tool: str) -> None:
    """Both loads must leave the same thing: N rows, a primary key and the k index."""
    found = process.query(conn, "SELECT (SELECT count(*) FROM sbtest1), (SELECT count(*) FROM pg_indexes "
                                "WHERE tablename = 'sbtest1')")
    count, indexes = (int(v) for v in found[0])
    if count != rows or indexes != 2:
        raise UserError(f"{tool} load left {count} rows and {indexes} indexes in sbtest1 "
                        f"(expected {rows} and 2)", "check the server log under the dbdrift work dir")


ROW = "{:>5} {:<9} {:>9} {:>12} {:>7} {:>7}"


def run_rounds(conn: dict, args, out) -> list[Load]:
    workers = c.load_workers()
    out(f"\nloads of sbtest1, {args.rows:,} rows (dbdrift: {workers} connections; sysbench: 1), ABBA order:")
    out(ROW.format("round", "tool", "wall s", "rows/s", "steal", "steal"))
    out(ROW.format("", "", "", "", "ticks", "%"))
    loads = c.abba_rounds(args.rounds, DBDRIFT, SYSBENCH, "load",
                          lambda tool, round_no: timed_load(tool, round_no, conn, args.rows),
                          lambda load: out(ROW.format(load.round, load.tool, f"{load.wall_s:.2f}",
                                                      f"{load.rows_per_s:,.0f}", load.steal_ticks,
                                                      f"{load.steal_pct:.1f}")))
    reset(conn)
    return loads


def print_summary(out, loads: list[Load], args) -> None:
    med = {tool: c.median([x.rows_per_s for x in loads if x.tool == tool]) for tool in (DBDRIFT, SYSBENCH)}
    ratio = med[DBDRIFT] / med[SYSBENCH] if med[DBDRIFT] and med[SYSBENCH] else None
    verdict = "met" if ratio is not None and ratio >= TARGET_RATIO else "NOT MET"
    out(f"\nsummary: 1 table × {args.rows:,} rows, {args.rounds} round(s), postgres {args.version}")
    out(f"  dbdrift  load (median): {c.fmt(med[DBDRIFT])} rows/s")
    out(f"  sysbench prepare (median): {c.fmt(med[SYSBENCH])} rows/s")
    out(f"  ratio dbdrift/sysbench: {c.fmt(ratio, '.2f')}×   target ≥ {TARGET_RATIO:.0f}×   {verdict}")


def body(args):
    def run(out) -> None:
        c.require_tool("sysbench")
        sb = subprocess.run(["sysbench", "--version"], capture_output=True, text=True).stdout.strip()
        out(f"load_speed: {' '.join(sys.argv[1:]) or '(defaults)'}")
        out(f"host: {platform.node()}, {os.cpu_count()} CPUs, kernel {platform.release()}; {sb}")
        with c.started_server(args.version, "bench-load-speed", out) as server:
            loads = run_rounds(c.create_database(server), args, out)
        print_summary(out, loads, args)
    return run


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/load_speed.py",
        description="Rows/s of dbdrift's load vs `sysbench oltp_read_only prepare`, one table, one server.")
    parser.add_argument("--version", default="17.10", help="PostgreSQL version to fetch and run (default 17.10)")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows in sbtest1 (default 1000000)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of one load per tool, ABBA order (default 2)")
    args = parser.parse_args(argv)
    if args.rows < 1 or args.rounds < 1:
        parser.error("--rows and --rounds must be at least 1")
    return args


if __name__ == "__main__":
    sys.exit(c.run_main("load_speed", body(parse_args())))
