"""The facts a store keeps, as one table of kinds: per kind the fields its journal line (or a
unit's streamed fact) carries, how that line is written, and the table its rows go to. The
journal's checks, its import and the marking of streamed results all read this table; a new
kind is a row here. Writes only inside the caller's transaction; never opens, retries or
journals (connection.py, writes.py)."""
from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass
from typing import Callable

from dbdrift.model import HardwareWindow, InsertStepResult, JsonObject, TpccResult, WorkloadRun
from dbdrift.store.records import SAMPLE_COLUMNS, InstructionRecord, RunRecord, now_iso


def _json_or_null(value: object) -> str | None:
    return None if value is None else json.dumps(value)


def _row_id(cur: sqlite3.Cursor) -> int:
    """The id of the row an INSERT just wrote (SQLite sets it on every successful INSERT)."""
    assert cur.lastrowid is not None, "an INSERT that wrote no row"
    return cur.lastrowid


def _foreign_kb(window: HardwareWindow) -> float | None:
    """A sample's foreign KB read and written (None: not known), as stored per sample."""
    read, write = window.get("foreign_read_kb"), window.get("foreign_write_kb")
    return None if read is None or write is None else round(read + write, 3)


def insert(db: sqlite3.Connection, table: str, row: dict[str, object]) -> int:
    """INSERT one row given as column -> value, so that no column list and its placeholders
    and values are kept in step by hand; the new row's id. Table and column names come from
    the store's modules, never from input."""
    sql = f"INSERT INTO {table}({', '.join(row)}) VALUES ({','.join('?' * len(row))})"
    return _row_id(db.execute(sql, tuple(row.values())))


# -- each kind's write ---------------------------------------------------------------------
def insert_run(db: sqlite3.Connection, target_id: int, run: RunRecord) -> int:
    """A run with its 1 s samples and its intervals."""
    run_id = insert(db, "runs", {
        "target_id": target_id, "test": run.test, "test_group": run.test_group, "threads": run.threads,
        "repeat": run.repeat, "status": run.status, "started_at": run.started_at, "warmup_s": run.warmup_s,
        "duration_s": run.duration_s, "measured_s": run.measured_s, "events": run.events,
        "statements": run.statements, "rows": run.rows, "errors_json": json.dumps(run.errors),
        "metric": run.metric, "value": run.value, "qps": run.qps, "tps": run.tps,
        "latency_json": json.dumps(run.latency), "client_cpu_user_s": run.client_cpu_user_s,
        "client_cpu_sys_s": run.client_cpu_sys_s, "warnings_json": json.dumps(run.warnings), "error": run.error,
        "server_log_tail": run.server_log_tail, "driver_spec_json": json.dumps(run.driver_spec),
        "hardware_json": _json_or_null(run.hardware), "host_json": _json_or_null(run.host),
        "folded_json": _json_or_null(run.folded), "position": run.position})
    db.executemany(
        f"INSERT INTO samples(run_id, idx, start_s, {', '.join(SAMPLE_COLUMNS)}, foreign_cpu_pct, foreign_kb) "
        f"VALUES (?,?,?{',?' * len(SAMPLE_COLUMNS)},?,?)",
        [(run_id, i, start_s, *(d.get(c) for c in SAMPLE_COLUMNS), d.get("foreign_cpu_pct"), _foreign_kb(d))
         for i, (start_s, d) in enumerate(run.samples)])
    db.executemany(
        "INSERT INTO intervals(run_id, idx, start_s, end_s, events, statements, rows, errors_json, "
        "latency_json, steal_pct, round, position, foreign_cpu_pct, foreign_kb) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [(run_id, iv["index"], iv["start_s"], iv["end_s"], iv["events"], iv["statements"], iv["rows"],
          json.dumps(iv.get("errors", {})), json.dumps(iv.get("latency_us", {})), iv.get("steal_pct"),
          iv.get("round"), iv.get("position"), iv.get("foreign_cpu_pct"), iv.get("foreign_kb"))
         for iv in run.intervals])
    return run_id


def insert_instructions(db: sqlite3.Connection, target_id: int, rec: InstructionRecord) -> int:
    return insert(db, "instructions", {
        "target_id": target_id, "test": rec.test, "status": rec.status, "started_at": rec.started_at,
        "elapsed_s": rec.elapsed_s, "n1": rec.n1, "n2": rec.n2, "ir_json": json.dumps(rec.ir),
        "ir_per_event": rec.ir_per_event, "spread_pct": rec.spread_pct,
        "self_json": json.dumps(rec.self_per_event), "inclusive_json": json.dumps(rec.inclusive_per_event),
        "error": rec.error, "simulated_json": _json_or_null(rec.simulated_per_event or None),
        "phases_json": _json_or_null(rec.phases or None)})


IBENCH, TPCC = "insert-benchmark", "tpcc"  # the workload_runs rows of an Insert Benchmark step and a TPROC-C run
IN_COLUMNS = ("target", "status", "elapsed_s", "error", "repeat", "position")  # fields kept as columns (target: its row)


def record_of(result: InsertStepResult | TpccResult) -> JsonObject:
    """The fields of an Insert Benchmark step or TPROC-C run that workload_runs keeps in record_json."""
    return {k: v for k, v in asdict(result).items() if k not in IN_COLUMNS}


def insert_ibench_step(db: sqlite3.Connection, target_id: int, r: InsertStepResult,
                       driver_spec: JsonObject | None) -> int:
    """A step of a repeat; the repeat's earlier steps are superseded when it starts again
    (writes.supersede_ibench), not step by step: the steps build on each other."""
    return _insert_run_row(db, target_id, WorkloadRun(
        target=r.target, workload=IBENCH, status=r.status, record={**record_of(r), "driver_spec": driver_spec},
        elapsed_s=r.elapsed_s, error=r.error, repeat=r.repeat, position=r.position))


def insert_tpcc_run(db: sqlite3.Connection, target_id: int, r: TpccResult) -> int:
    """A repeat stored again (--resume after a failure) supersedes the earlier one."""
    return insert_workload_run(db, target_id, WorkloadRun(
        target=r.target, workload=TPCC, status=r.status, record=record_of(r), elapsed_s=r.elapsed_s, error=r.error,
        repeat=r.repeat, position=r.position))


def insert_workload_run(db: sqlite3.Connection, target_id: int, r: WorkloadRun) -> int:
    """A repeat stored again (--resume after a failure) supersedes the earlier one."""
    db.execute("UPDATE workload_runs SET superseded = 1 WHERE target_id = ? AND repeat = ? AND workload = ?",
               (target_id, r.repeat, r.workload))
    return _insert_run_row(db, target_id, r)


def _insert_run_row(db: sqlite3.Connection, target_id: int, r: WorkloadRun) -> int:
    return insert(db, "workload_runs", {
        "target_id": target_id, "workload": r.workload, "repeat": r.repeat, "status": r.status,
        "started_at": now_iso(), "elapsed_s": r.elapsed_s, "record_json": json.dumps(r.record),
        "error": r.error, "position": r.position})


def insert_step(db: sqlite3.Connection, target_id: int, step_kind: str, label: str, status: str, started_at: str,
                elapsed_s: float, detail: JsonObject, error: str | None) -> int:
    return insert(db, "steps", {
        "target_id": target_id, "kind": step_kind, "label": label, "status": status, "started_at": started_at,
        "elapsed_s": elapsed_s, "detail_json": json.dumps(detail), "error": error})


def insert_plan(db: sqlite3.Connection, target_id: int, test: str, statement: int, sql: str, plan_json: str | None,
                shape: str | None, error: str | None) -> int:
    """The newest capture of a statement's plan replaces the one before."""
    return _row_id(db.execute(
        "INSERT OR REPLACE INTO plans(target_id, test, statement, sql, plan_json, shape, error) "
        "VALUES (?,?,?,?,?,?,?)", (target_id, test, statement, sql, plan_json, shape, error)))


def update_target_facts(db: sqlite3.Connection, target_id: int, install: JsonObject | None,
                        server: JsonObject | None) -> None:
    if install is not None:
        db.execute("UPDATE targets SET install_json = ? WHERE id = ?", (json.dumps(install), target_id))
    if server is not None:
        db.execute("UPDATE targets SET server_json = ? WHERE id = ?", (json.dumps(server), target_id))


def insert_streamed(db: sqlite3.Connection, fact: JsonObject, unit_id: int, worker: str | None = None) -> None:
    """A fact a unit measured on a cluster host, marked with its unit and worker; a run of a
    cell that already has one replaces it in reports (a re-queued unit's cell counts once)."""
    if fact["kind"] == "run":
        record = fact["record"]
        db.execute("UPDATE runs SET superseded = 1 WHERE target_id = ? AND test = ? AND threads = ? "
                   "AND repeat = ? AND superseded = 0",
                   (fact["target_id"], record["test"], record["threads"], record["repeat"]))
    row_id = apply(db, fact)
    kind = KINDS[fact["kind"]]
    if kind.unit_marked and row_id is not None:
        db.execute(f"UPDATE {kind.table} SET unit_id = ?, worker = ? WHERE id = ?", (unit_id, worker, row_id))


# -- each kind's journal line, written ----------------------------------------------------
def _run_line(db: sqlite3.Connection, entry: JsonObject) -> int:
    record = dict(entry["record"])
    record["samples"] = [(start, delta) for start, delta in record.get("samples", [])]
    return insert_run(db, entry["target_id"], RunRecord(**record))


def _fields(entry: JsonObject) -> JsonObject:
    return {k: v for k, v in entry.items() if k != "kind"}


def _target_facts_line(db: sqlite3.Connection, entry: JsonObject) -> None:
    update_target_facts(db, entry["target_id"], entry["install"], entry["server"])


def _streamed_line(db: sqlite3.Connection, entry: JsonObject) -> None:
    # a line journaled before schema 18 has no worker: stored as NULL
    insert_streamed(db, entry["fact"], entry["unit_id"], entry.get("worker"))


Writer = Callable[[sqlite3.Connection, JsonObject], "int | None"]


@dataclass(frozen=True)
class FactKind:
    """One kind of fact: what its line carries, how it is written, where its rows go."""

    fields: tuple[str, ...]  # the fields its journal line must carry
    write: Writer  # its line written into the store; the new row's id where it has one
    table: str | None = None  # the table it adds rows to (None: it changes rows of others)
    unit_marked: bool = False  # its rows name the unit and worker that streamed them (schema 13, 18)
    results: bool = False  # its rows are a campaign's results, superseded when measured again


KINDS: dict[str, FactKind] = {  # in this order in a campaign's fingerprint (reads.py)
    "run": FactKind(("target_id", "record"), _run_line, "runs", True, True),
    "ibench step": FactKind(("target_id", "record", "driver_spec"), lambda db, e: insert_ibench_step(
        db, e["target_id"], InsertStepResult(**e["record"]), e["driver_spec"]),
        "workload_runs", True, True),
    "tpcc run": FactKind(("target_id", "record"), lambda db, e: insert_tpcc_run(
        db, e["target_id"], TpccResult(**e["record"])), "workload_runs", True, True),
    "workload run": FactKind(("target_id", "record"), lambda db, e: insert_workload_run(
        db, e["target_id"], WorkloadRun(**e["record"])), "workload_runs", True, True),
    "instructions": FactKind(("target_id", "record"), lambda db, e: insert_instructions(
        db, e["target_id"], InstructionRecord(**e["record"])), "instructions", True),
    "plan": FactKind(("target_id", "test", "statement", "sql", "plan_json", "shape", "error"),
                     lambda db, e: insert_plan(db, **_fields(e)), "plans"),
    "step": FactKind(("target_id", "step_kind", "label", "status", "started_at", "elapsed_s", "detail", "error"),
                     lambda db, e: insert_step(db, **_fields(e)), "steps", True),
    "target facts": FactKind(("target_id", "install", "server"), _target_facts_line),
    "streamed": FactKind(("fact", "unit_id"), _streamed_line),  # and "worker" (schema 18); a line before has none
}

# the tables of a campaign's results that reports count (superseded when measured again)
RESULT_TABLES = tuple(dict.fromkeys(kind.table for kind in KINDS.values() if kind.table and kind.results))
# what a cluster's counts call the workload_runs rows of a workload (the others': "repeats")
ROWS_CALLED = {IBENCH: "Insert Benchmark steps", TPCC: "TPROC-C runs"}


def apply(db: sqlite3.Connection, entry: JsonObject) -> int | None:
    """Write one fact given as its journal line (kind and fields); its row id where it has one."""
    kind = KINDS.get(entry["kind"])
    if kind is None:
        raise ValueError(f"unknown kind {entry['kind']!r}")
    return kind.write(db, entry)
