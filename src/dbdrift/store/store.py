"""The results store: a SQLite file (WAL), one transaction per finished run.

Writes facts only; reports read them back. A measured fact is never lost to a busy store:
writes wait for another program's lock with backoff (`DBDRIFT_STORE_WAIT_S`, default 120 s)
and, if it is still held, go to a journal beside the store (`<store>.journal`, one JSON line
per fact) that the next open of the store imports.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
import time
import urllib.parse
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Literal, Mapping, Sequence, TypeVar

from dbdrift.errors import UserError
from dbdrift.model import HardwareWindow, InsertStepResult, JsonObject, TpccResult, WorkloadRun
from dbdrift.store import guard, journal
from dbdrift.store.schema import MIGRATIONS, SCHEMA_VERSION


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class RunRecord:
    """One microbenchmark run of one target as stored (status ok, failed, interrupted, or
    skipped: not run because its target had failed)."""

    test: str
    test_group: str
    threads: int
    repeat: int
    status: str
    warmup_s: float
    duration_s: float
    metric: str
    driver_spec: JsonObject
    started_at: str = field(default_factory=now_iso)
    measured_s: float | None = None
    events: int | None = None
    statements: int | None = None
    rows: int | None = None
    errors: dict[str, int] = field(default_factory=dict)  # error class -> count
    value: float | None = None
    qps: float | None = None
    tps: float | None = None
    latency: Mapping[str, object] = field(default_factory=dict)  # driver.protocol LatencySummary
    client_cpu_user_s: float | None = None
    client_cpu_sys_s: float | None = None
    warnings: list[JsonObject] = field(default_factory=list)  # {"kind", "message"[, "hint"]}
    error: str | None = None
    server_log_tail: str | None = None
    intervals: list[JsonObject] = field(default_factory=list)
    hardware: HardwareWindow | None = None  # sampler totals over the measured window (metrics/sampler.Delta)
    host: JsonObject | None = None  # host facts and warnings when the run started
    samples: list[tuple[float, HardwareWindow]] = field(default_factory=list)  # (start_s, Delta) every second
    folded: dict[str, int] | None = None  # perf record stacks of the backends (`--flamegraph`)
    position: int | None = None  # its place in its repeat's order when targets take whole runs in turn


@dataclass
class InstructionRecord:
    """Instructions per event of one microbenchmark on one target, counted under callgrind."""

    test: str
    status: str
    n1: int
    n2: int
    elapsed_s: float
    ir: list[list[int]] = field(default_factory=list)  # [Ir(n1), Ir(n2)] per repetition
    ir_per_event: float | None = None
    spread_pct: float | None = None
    self_per_event: dict[str, float] = field(default_factory=dict)
    inclusive_per_event: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    started_at: str = field(default_factory=now_iso)
    simulated_per_event: dict[str, float] = field(default_factory=dict)  # callgrind cache/branch events
    phases: dict[str, float] = field(default_factory=dict)  # seconds per phase (runner/instructions.py PHASES)


SampleColumn = Literal["elapsed_s", "cpu_user_pct", "cpu_sys_pct", "cpu_iowait_pct", "cpu_steal_pct", "cs", "reads",
                       "read_kb", "writes", "write_kb", "server_cpu_s", "client_cpu_s", "server_rss_bytes"]
SAMPLE_COLUMNS: tuple[SampleColumn, ...] = ("elapsed_s", "cpu_user_pct", "cpu_sys_pct", "cpu_iowait_pct", "cpu_steal_pct", "cs", "reads",
                  "read_kb", "writes", "write_kb", "server_cpu_s", "client_cpu_s", "server_rss_bytes")


T = TypeVar("T")


def _foreign_kb(window: HardwareWindow) -> float | None:
    """A sample's foreign KB read and written (None: not known), as stored per sample."""
    read, write = window.get("foreign_read_kb"), window.get("foreign_write_kb")
    return None if read is None or write is None else round(read + write, 3)


def _json_or_null(value: object) -> str | None:
    return None if value is None else json.dumps(value)


def _row_id(cur: sqlite3.Cursor) -> int:
    """The id of the row an INSERT just wrote (SQLite sets it on every successful INSERT)."""
    assert cur.lastrowid is not None, "an INSERT that wrote no row"
    return cur.lastrowid


SQLITE_TIMEOUT_S = 5.0  # one attempt's wait for a lock; _retry tries again until wait_s
DEFAULT_WAIT_S = 120.0


def is_busy(exc: BaseException) -> bool:
    """SQLite's "database is locked" / "database is busy": another connection holds a lock."""
    return isinstance(exc, sqlite3.OperationalError) and any(w in str(exc) for w in ("locked", "busy"))


def wait_s_from_env() -> float:
    try:
        return max(0.0, float(os.environ.get("DBDRIFT_STORE_WAIT_S", DEFAULT_WAIT_S)))
    except ValueError:
        return DEFAULT_WAIT_S


class Store:
    """A dbdrift store. `read_only` opens the file with SQLite's mode=ro and never changes it: a
    store written by an older dbdrift, or with a journal not yet imported, is read through a
    migrated copy in memory (the next writing command migrates and imports the file itself); one
    in a folder this user cannot write is read as _connect says. Writing, it refuses a store it
    could not write before it touches it (guard.require_writable)."""

    def __init__(self, path: Path, wait_s: float | None = None, *, read_only: bool = False,
                 checked: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self.checked = checked  # this process has checked the file already: skip quick_check (it reads every page)
        self.wait_s = wait_s_from_env() if wait_s is None else wait_s
        self.journal_path = path.with_name(path.name + ".journal")
        self.journaled = 0  # facts this process wrote to the journal (the store was busy)
        self.imported = 0  # facts imported from the journal when the store was opened
        self.notes: list[str] = []  # warnings for the command to print (a loose mode, rejected journal lines)
        try:
            self.db = self._open()
        except UserError:
            raise
        except sqlite3.DatabaseError as exc:
            raise guard.as_user_error(exc, path, not read_only) or UserError(
                f"cannot open store {path}: {exc}", self._cannot_open_hint()) from None
        except OSError as exc:
            if guard.is_full(exc):
                raise guard.full(path, "creating the store") from None
            raise UserError(f"cannot open store {path}: {exc}", self._cannot_open_hint()) from None

    def _cannot_open_hint(self) -> str:
        if self.read_only:
            return "check that you may read the store and the files beside it (-wal, -shm), or pass another --store"
        return "pass --store PATH to a writable location"

    def _open(self) -> sqlite3.Connection:
        """Recognise, check and (writing) create or migrate the store; then import its journal."""
        writing = not self.read_only
        if writing:
            guard.require_writable(self.path)
        created = guard.create_private(self.path) if writing else False
        # the file is read only through SQLite: closing any other descriptor of it would drop this
        # process's POSIX locks, which SQLite's other connections here (another()) rely on
        loose = guard.loose_mode_note(self.path) if writing and not created else None
        if loose:
            self.notes.append(loose)
        timeout = min(SQLITE_TIMEOUT_S, max(0.05, self.wait_s))
        self.db = db = self._connect(timeout)
        db.row_factory = sqlite3.Row
        version = self._retry(lambda: guard.recognise(db, self.path, writing), "open")
        if version and not self.checked:
            self._retry(lambda: guard.check_intact(db, self.path, version, writing), "open")
        if writing:
            self._retry(lambda: db.execute("PRAGMA journal_mode=WAL"), "open")
            db.execute("PRAGMA foreign_keys=ON")
            self._retry(self._migrate, "open")
            self.imported = self.import_journal()
        elif version < SCHEMA_VERSION or self.journal_path.exists():
            self.db = db = self._in_memory(db)
            self._migrate()
            self.imported = self.import_journal()
        return db

    def _connect(self, timeout: float) -> sqlite3.Connection:
        if not self.read_only:
            return sqlite3.connect(str(self.path), timeout=timeout)
        uri = "file:" + urllib.parse.quote(str(self.path.resolve()))
        db = sqlite3.connect(uri + "?mode=ro", uri=True, timeout=timeout)
        try:
            db.execute("PRAGMA user_version").fetchone()
            return db
        except sqlite3.OperationalError as exc:
            # a WAL store in a folder this user cannot write (permissions, a read-only mount):
            # SQLite cannot make its -shm, and says "unable to open" or "readonly directory"
            db.close()
            if not guard.is_denied(exc):
                raise
        wal = Path(str(self.path) + "-wal")
        if not wal.exists() or wal.stat().st_size == 0:
            # no -wal: no one can be writing it (that too needs the folder), so the main file
            # alone is the whole store
            return sqlite3.connect(uri + "?mode=ro&immutable=1", uri=True, timeout=timeout)
        return self._copy_with_wal(wal, timeout)

    def _copy_with_wal(self, wal: Path, timeout: float) -> sqlite3.Connection:
        """The store and its -wal (left by a writer that was killed: a live one keeps a -shm
        beside them) copied where SQLite can make the -shm, read into memory, the copy removed
        at once (a reading process of `publish` ends without running finalizers)."""
        with tempfile.TemporaryDirectory(prefix="dbdrift-store-") as scratch:
            copy = Path(scratch) / "store.db"
            shutil.copyfile(self.path, copy)
            shutil.copyfile(wal, Path(f"{copy}-wal"))
            return self._in_memory(sqlite3.connect(str(copy), timeout=timeout))

    def _in_memory(self, db: sqlite3.Connection) -> sqlite3.Connection:
        memory = sqlite3.connect(":memory:")
        memory.row_factory = sqlite3.Row
        db.backup(memory)
        db.close()
        return memory

    def another(self) -> "Store":
        """A second connection to this store, for another thread (checked when this one was opened)."""
        return type(self)(self.path, self.wait_s, checked=True)

    def close(self) -> None:
        if self.journaled:
            self.import_journal()  # the lock may be gone by now
        self.db.close()

    # -- a busy store ----------------------------------------------------------------------
    def _retry(self, action: Callable[[], T], doing: str) -> T:
        """`action` until no other program holds the store's lock, with backoff, for at most
        wait_s; then a UserError naming the store."""
        deadline, delay = time.monotonic() + self.wait_s, 0.1
        while True:
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if guard.is_full(exc):
                    raise guard.full(self.path, doing) from None
                if not is_busy(exc):
                    raise
                if time.monotonic() >= deadline:
                    raise UserError(
                        f"store {self.path} is locked by another program ({doing}: {exc}; waited "
                        f"{self.wait_s:g} s)",
                        "end the program holding it (e.g. a sqlite3 shell inside a transaction), or pass "
                        "another --store; DBDRIFT_STORE_WAIT_S sets how long dbdrift waits") from None
                time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
                delay = min(delay * 2, 5.0)

    def _keep(self, kind: str, fact: JsonObject, write: Callable[[], int | None]) -> int | None:
        """Write a measured fact in one transaction; if the store stays locked or its disk is
        full, append it to the journal instead (imported at the next open) and return None. A
        fact neither can take stops the campaign with the full disk's error."""
        def transaction() -> int | None:
            with self.db:
                return write()
        doing = f"storing {kind}" if kind.endswith("s") else f"storing a {kind}"  # instructions, target facts
        try:
            return self._retry(transaction, doing)
        except UserError as exc:
            try:
                self._append_journal({"kind": kind, **fact})
            except OSError as os_exc:
                if guard.is_full(os_exc) or isinstance(exc, guard.StoreFull):
                    raise guard.full(self.path, f"{doing}, and its journal") from None
                raise
            self.journaled += 1
            return None

    def _append_journal(self, entry: JsonObject) -> None:
        fd = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a") as out:
            fcntl.flock(out, fcntl.LOCK_EX)
            size = os.fstat(out.fileno()).st_size
            try:
                out.write(json.dumps(entry) + "\n")
                out.flush()
                os.fsync(out.fileno())
            except OSError:
                os.ftruncate(out.fileno(), size)  # no half line for the next import to reject
                raise

    def import_journal(self) -> int:
        """Write the facts kept in the journal into the store (one transaction) and empty it;
        0 when there is none or the store is still busy. A line that is no fact (cut short by a
        kill, not an object, an unknown kind, missing fields) or that the store refuses is moved
        to `<journal>.rejected-<time>`, with a note; the others are imported. A read-only store
        imports into its copy in memory and leaves the journal as it is."""
        try:
            handle = self.journal_path.open("r" if self.read_only else "r+")
        except FileNotFoundError:
            return 0
        with handle:
            fcntl.flock(handle, fcntl.LOCK_SH if self.read_only else fcntl.LOCK_EX)
            good, bad = journal.parse(handle.read())
            try:
                self.db.execute("BEGIN IMMEDIATE")
                imported = 0
                for line, entry in good:
                    self.db.execute("SAVEPOINT fact")
                    try:
                        self._apply(entry)
                        imported += 1
                    except sqlite3.OperationalError as exc:
                        if is_busy(exc) or guard.is_full(exc):
                            raise
                        self.db.execute("ROLLBACK TO fact")
                        bad.append((line, f"refused by the store: {exc}"))
                    except (KeyError, TypeError, ValueError, AttributeError, sqlite3.DatabaseError) as exc:
                        self.db.execute("ROLLBACK TO fact")
                        bad.append((line, f"refused by the store: {type(exc).__name__}: {exc}"))
                    self.db.execute("RELEASE fact")
                self.db.commit()
            except sqlite3.OperationalError as exc:
                self.db.rollback()
                if is_busy(exc):
                    return 0
                if guard.is_full(exc):
                    raise guard.full(self.path, f"importing {self.journal_path}") from None
                raise
            if self.read_only:
                if bad:
                    self.notes.append(journal.note(self.journal_path, bad, None))
                return imported
            kept = journal.set_aside(self.journal_path, [line for line, _ in bad]) if bad else None
            if bad:
                self.notes.append(journal.note(self.journal_path, bad, kept))
            handle.seek(0)
            handle.truncate()
        self.journal_path.unlink(missing_ok=True)
        return imported

    def _apply(self, entry: JsonObject) -> int | None:
        """Write one fact as `_keep` would have; returns its row id where it has one."""
        kind = entry["kind"]
        if kind == "run":
            record = dict(entry["record"])
            record["samples"] = [(start, delta) for start, delta in record.get("samples", [])]
            return self._insert_run(entry["target_id"], RunRecord(**record))
        if kind == "instructions":
            return self._insert_instructions(entry["target_id"], InstructionRecord(**entry["record"]))
        if kind == "tpcc run":
            return self._insert_tpcc_run(entry["target_id"], TpccResult(**entry["record"]))
        if kind == "workload run":
            return self._insert_workload_run(entry["target_id"], WorkloadRun(**entry["record"]))
        if kind == "ibench step":
            return self._insert_ibench_step(entry["target_id"], InsertStepResult(**entry["record"]),
                                            entry["driver_spec"])
        if kind == "step":
            return self._insert_step(**{k: v for k, v in entry.items() if k != "kind"})
        if kind == "plan":
            return self._insert_plan(**{k: v for k, v in entry.items() if k != "kind"})
        if kind == "target facts":
            self._update_target_facts(entry["target_id"], entry["install"], entry["server"])
        elif kind == "streamed":  # a line journaled before schema 18 has no worker: stored as NULL
            self._insert_streamed(entry["fact"], entry["unit_id"], entry.get("worker"))
        else:
            raise ValueError(f"unknown kind {kind!r}")
        return None

    # -- results streamed from a cluster's units (dbdrift/cluster) ---------------------------
    STREAMED_TABLES = {"run": "runs", "instructions": "instructions", "ibench step": "ibench_steps",
                       "tpcc run": "tpcc_runs", "workload run": "workload_runs", "step": "steps"}

    def add_streamed(self, fact: JsonObject, unit_id: int, worker: str | None = None) -> None:
        """Store a fact a unit measured on a cluster host (a journal entry's shape, with this
        store's target id), marked with its unit and the worker that measured it ("name
        address"): a re-queued unit's results come from more than one host. A run of a cell that
        already has one replaces it in reports: every cell counts once, however often its unit
        was re-queued."""
        self._keep("streamed", {"fact": fact, "unit_id": unit_id, "worker": worker},
                   lambda: self._insert_streamed(fact, unit_id, worker))

    def _insert_streamed(self, fact: JsonObject, unit_id: int, worker: str | None = None) -> None:
        if fact["kind"] == "run":
            record = fact["record"]
            self.db.execute("UPDATE runs SET superseded = 1 WHERE target_id = ? AND test = ? AND threads = ? "
                            "AND repeat = ? AND superseded = 0",
                            (fact["target_id"], record["test"], record["threads"], record["repeat"]))
        row_id = self._apply(fact)
        table = self.STREAMED_TABLES.get(fact["kind"])
        if table and row_id is not None:
            self.db.execute(f"UPDATE {table} SET unit_id = ?, worker = ? WHERE id = ?", (unit_id, worker, row_id))

    def add_unit(self, campaign_id: int, number: int, host_kind: str | None, tests: list[str],
                 repeats: Sequence[int] = ()) -> int:
        def insert() -> int:
            with self.db:
                return _row_id(self.db.execute(
                    "INSERT INTO units(campaign_id, number, host_kind, tests_json, repeats_json, status) "
                    "VALUES (?,?,?,?,?,?)",
                    (campaign_id, number, host_kind, json.dumps(tests), json.dumps(list(repeats)), "queued")))
        return self._retry(insert, "storing a unit")

    def update_unit(self, unit_id: int, **values: object) -> None:
        """Set a unit's status, attempts, worker, hostname, host (facts), error, started_at, ended_at."""
        if "host" in values:
            values["host_json"] = json.dumps(values.pop("host"))
        columns = ", ".join(f"{k} = ?" for k in values)

        def update() -> None:
            with self.db:
                self.db.execute(f"UPDATE units SET {columns} WHERE id = ?", (*values.values(), unit_id))
        self._retry(update, "updating a unit")

    def units(self, campaign_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM units WHERE campaign_id = ? ORDER BY number, id",
                               (campaign_id,)).fetchall()

    def unit_result_counts(self, unit_ids: list[int]) -> dict[str, int]:
        """Results the units streamed that reports use, by status (runs; Insert Benchmark steps;
        TPROC-C runs)."""
        if not unit_ids:
            return {}
        marks, counts = ",".join("?" * len(unit_ids)), {}
        for table, what in (("runs", "runs"), ("ibench_steps", "Insert Benchmark steps"),
                            ("tpcc_runs", "TPROC-C runs"), ("workload_runs", "repeats")):
            for status, n in self.db.execute(f"SELECT status, count(*) FROM {table} WHERE unit_id IN ({marks}) "
                                             "AND superseded = 0 GROUP BY status", unit_ids):
                counts[f"{what} {status}"] = n
        return counts

    def unit_workers(self, unit_ids: list[int]) -> dict[int, list[str]]:
        """Unit id -> the workers ("name address") that measured the results reports use of it,
        in the order they began: a unit re-queued after its host was lost has more than one."""
        if not unit_ids:
            return {}
        marks = ",".join("?" * len(unit_ids))
        live = " UNION ALL ".join(f"SELECT unit_id, worker, started_at FROM {table} WHERE superseded = 0"
                                  for table in ("runs", "ibench_steps", "tpcc_runs", "workload_runs"))
        counts = ("SELECT unit_id, worker, started_at FROM instructions WHERE id IN "  # the count reports use
                  "(SELECT MAX(id) FROM instructions WHERE status = 'ok' GROUP BY target_id, test)")
        found: dict[int, list[str]] = {}
        for unit_id, worker in self.db.execute(
                f"SELECT unit_id, worker FROM ({live} UNION ALL {counts}) WHERE unit_id IN ({marks}) "
                "AND worker IS NOT NULL GROUP BY unit_id, worker ORDER BY unit_id, MIN(started_at), worker",
                unit_ids):
            found.setdefault(unit_id, []).append(worker)
        return found

    def set_campaign_host(self, campaign_id: int, host: JsonObject) -> None:
        """The host facts of a campaign measured on a cluster: those of a host that measured it."""
        def update() -> None:
            with self.db:
                self.db.execute("UPDATE campaigns SET host_json = ? WHERE id = ?", (json.dumps(host), campaign_id))
        self._retry(update, "storing the host facts")

    def _migrate(self) -> None:
        """Apply the migrations the store lacks (guard.recognise refused a newer one), and mark
        it dbdrift's (application_id) in the same transaction as the first."""
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION and self.db.execute("PRAGMA application_id").fetchone()[0] != guard.APPLICATION_ID:
            with self.db:
                self.db.execute(f"PRAGMA application_id = {guard.APPLICATION_ID}")
        for number in range(version, SCHEMA_VERSION):
            with self.db:
                self.db.executescript(MIGRATIONS[number])
                self.db.execute(f"PRAGMA user_version = {number + 1}")
                self.db.execute(f"PRAGMA application_id = {guard.APPLICATION_ID}")
            # each migration rewrites the schema's pages into the WAL: fold them into the file as
            # it goes (a new store's WAL would otherwise grow to ~0.5 MB of superseded pages)
            try:
                self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.OperationalError:
                pass  # a busy store keeps its WAL; SQLite checkpoints it later

    # -- writing ---------------------------------------------------------------------------
    def add_campaign(self, name: str, spec: JsonObject, host: JsonObject, version: str) -> int:
        def insert() -> int:
            with self.db:
                return _row_id(self.db.execute(
                    "INSERT INTO campaigns(name, created_at, spec_json, host_json, dbdrift_version) "
                    "VALUES (?,?,?,?,?)", (name, now_iso(), json.dumps(spec), json.dumps(host), version)))
        return int(self._retry(insert, "adding the campaign"))

    def latest_campaign_id(self, name: str | None = None) -> int | None:
        if name is None:
            row = self.db.execute("SELECT id FROM campaigns ORDER BY id DESC LIMIT 1").fetchone()
        elif name.isdigit():
            row = self.db.execute("SELECT id FROM campaigns WHERE id = ?", (int(name),)).fetchone()
        else:
            row = self.db.execute("SELECT id FROM campaigns WHERE name = ? ORDER BY id DESC LIMIT 1",
                                  (name,)).fetchone()
        return int(row[0]) if row else None

    def latest_comparison(self) -> tuple[int | None, list[int]]:
        """The newest campaign that compares two or more targets, and the newer one-target
        campaigns passed over for it (a bisect's probes, a single-version run), newest first.
        A store of one-target campaigns only gives its newest, with nothing passed over."""
        rows = self.db.execute("SELECT c.id, (SELECT COUNT(*) FROM targets t WHERE t.campaign_id = c.id) "
                               "FROM campaigns c ORDER BY c.id DESC").fetchall()
        skipped: list[int] = []
        for campaign_id, targets in rows:
            if targets >= 2:
                return int(campaign_id), skipped
            skipped.append(int(campaign_id))
        return (skipped[0] if skipped else None), []

    def calibration_ids(self) -> list[int]:
        """The A/A calibration campaigns (`dbdrift calibrate`), newest first."""
        return [int(row[0]) for row in self.db.execute(
            "SELECT id, spec_json FROM campaigns WHERE spec_json LIKE '%calibration%' ORDER BY id DESC")
                if json.loads(row[1]).get("calibration")]  # LIKE: only the specs that can say so are parsed

    def ensure_target(self, campaign_id: int, name: str, engine: str, position: int, is_base: bool,
                      spec: JsonObject) -> int:
        def upsert() -> int:
            with self.db:
                row = self.db.execute("SELECT id FROM targets WHERE campaign_id = ? AND name = ?",
                                      (campaign_id, name)).fetchone()
                if row:
                    self.db.execute("UPDATE targets SET position = ?, is_base = ?, spec_json = ? WHERE id = ?",
                                    (position, int(is_base), json.dumps(spec), row[0]))
                    return int(row[0])
                return _row_id(self.db.execute(
                    "INSERT INTO targets(campaign_id, name, engine, position, is_base, spec_json) "
                    "VALUES (?,?,?,?,?,?)", (campaign_id, name, engine, position, int(is_base),
                                             json.dumps(spec))))
        return int(self._retry(upsert, f"adding target {name}"))

    def set_target_facts(self, target_id: int, install: JsonObject | None = None, server: JsonObject | None = None) -> None:
        self._keep("target facts", {"target_id": target_id, "install": install, "server": server},
                   lambda: self._update_target_facts(target_id, install, server))

    def _update_target_facts(self, target_id: int, install: JsonObject | None, server: JsonObject | None) -> None:
        if install is not None:
            self.db.execute("UPDATE targets SET install_json = ? WHERE id = ?", (json.dumps(install), target_id))
        if server is not None:
            self.db.execute("UPDATE targets SET server_json = ? WHERE id = ?", (json.dumps(server), target_id))

    def add_step(self, target_id: int, kind: str, label: str, status: str, elapsed_s: float,
                 detail: JsonObject, error: str | None = None) -> None:
        started_at = now_iso()
        fact = {"target_id": target_id, "step_kind": kind, "label": label, "status": status,
                "started_at": started_at, "elapsed_s": elapsed_s, "detail": detail, "error": error}
        self._keep("step", fact, lambda: self._insert_step(target_id, kind, label, status, started_at, elapsed_s,
                                                           detail, error))

    def _insert(self, table: str, row: dict[str, object]) -> int:
        """INSERT one row given as column -> value, so that no column list and its placeholders
        and values are kept in step by hand; the new row's id. Table and column names come from
        this module, never from input."""
        sql = f"INSERT INTO {table}({', '.join(row)}) VALUES ({','.join('?' * len(row))})"
        return _row_id(self.db.execute(sql, tuple(row.values())))

    def _insert_step(self, target_id: int, step_kind: str, label: str, status: str, started_at: str,
                     elapsed_s: float, detail: JsonObject, error: str | None) -> int:
        return self._insert("steps", {
            "target_id": target_id, "kind": step_kind, "label": label, "status": status, "started_at": started_at,
            "elapsed_s": elapsed_s, "detail_json": json.dumps(detail), "error": error})

    def add_run(self, target_id: int, run: RunRecord) -> int | None:
        """Store a run and its intervals in one transaction (None: kept in the journal)."""
        return self._keep("run", {"target_id": target_id, "record": asdict(run)},
                          lambda: self._insert_run(target_id, run))

    def _insert_run(self, target_id: int, run: RunRecord) -> int:
        run_id = self._insert("runs", {
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
        self.db.executemany(
            f"INSERT INTO samples(run_id, idx, start_s, {', '.join(SAMPLE_COLUMNS)}, foreign_cpu_pct, foreign_kb) "
            f"VALUES (?,?,?{',?' * len(SAMPLE_COLUMNS)},?,?)",
            [(run_id, i, start_s, *(d.get(c) for c in SAMPLE_COLUMNS), d.get("foreign_cpu_pct"), _foreign_kb(d))
             for i, (start_s, d) in enumerate(run.samples)])
        self.db.executemany(
            "INSERT INTO intervals(run_id, idx, start_s, end_s, events, statements, rows, errors_json, "
            "latency_json, steal_pct, round, position, foreign_cpu_pct, foreign_kb) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [(run_id, iv["index"], iv["start_s"], iv["end_s"], iv["events"], iv["statements"], iv["rows"],
              json.dumps(iv.get("errors", {})), json.dumps(iv.get("latency_us", {})), iv.get("steal_pct"),
              iv.get("round"), iv.get("position"), iv.get("foreign_cpu_pct"), iv.get("foreign_kb"))
             for iv in run.intervals])
        return run_id

    def add_instructions(self, target_id: int, rec: InstructionRecord) -> int | None:
        return self._keep("instructions", {"target_id": target_id, "record": asdict(rec)},
                          lambda: self._insert_instructions(target_id, rec))

    def _insert_instructions(self, target_id: int, rec: InstructionRecord) -> int:
        return self._insert("instructions", {
            "target_id": target_id, "test": rec.test, "status": rec.status, "started_at": rec.started_at,
            "elapsed_s": rec.elapsed_s, "n1": rec.n1, "n2": rec.n2, "ir_json": json.dumps(rec.ir),
            "ir_per_event": rec.ir_per_event, "spread_pct": rec.spread_pct,
            "self_json": json.dumps(rec.self_per_event), "inclusive_json": json.dumps(rec.inclusive_per_event),
            "error": rec.error, "simulated_json": _json_or_null(rec.simulated_per_event or None),
            "phases_json": _json_or_null(rec.phases or None)})

    def add_ibench_step(self, target_id: int, r: InsertStepResult, driver_spec: JsonObject | None = None) -> int | None:
        return self._keep("ibench step", {"target_id": target_id, "record": asdict(r), "driver_spec": driver_spec},
                          lambda: self._insert_ibench_step(target_id, r, driver_spec))

    def _insert_ibench_step(self, target_id: int, r: InsertStepResult, driver_spec: JsonObject | None) -> int:
        return self._insert("ibench_steps", {
            "target_id": target_id, "step": r.step, "status": r.status, "started_at": now_iso(), "clients": r.clients,
            "elapsed_s": r.elapsed_s, "inserted": r.inserted, "deleted": r.deleted, "queries": r.queries,
            "ips": r.ips, "dps": r.dps, "qps": r.qps, "target_ips": r.target_ips, "max_insert_us": r.max_insert_us,
            "max_delete_us": r.max_delete_us, "max_query_us": r.max_query_us,
            "histograms_json": json.dumps(r.histograms), "per_second_json": json.dumps(r.per_second),
            "hardware_json": _json_or_null(r.hardware), "table_rows": r.table_rows,
            "driver_spec_json": _json_or_null(driver_spec), "error": r.error, "db_bytes": r.db_bytes,
            "datadir_bytes": r.datadir_bytes, "repeat": r.repeat, "position": r.position,
            "events_json": _json_or_null(r.events), "folded_json": _json_or_null(r.folded)})

    def supersede_ibench(self, target_id: int, repeat: int = 0) -> None:
        """A repeat of a target's Insert Benchmark reruns from l.i0: that repeat's earlier steps
        leave the reports."""
        def update() -> None:
            with self.db:
                self.db.execute("UPDATE ibench_steps SET superseded = 1 WHERE target_id = ? AND repeat = ?",
                                (target_id, repeat))
        self._retry(update, "marking earlier Insert Benchmark steps superseded")

    def ibench_steps(self, campaign_id: int) -> list[InsertStepResult]:
        rows = self.db.execute(
            "SELECT s.*, targets.name AS target FROM ibench_steps s JOIN targets ON targets.id = s.target_id "
            "WHERE targets.campaign_id = ? AND s.superseded = 0 ORDER BY s.id", (campaign_id,)).fetchall()
        return [InsertStepResult(
            target=r["target"], step=r["step"], status=r["status"], clients=r["clients"], elapsed_s=r["elapsed_s"],
            inserted=r["inserted"], deleted=r["deleted"], queries=r["queries"], ips=r["ips"], dps=r["dps"],
            qps=r["qps"], target_ips=r["target_ips"], max_insert_us=r["max_insert_us"],
            max_delete_us=r["max_delete_us"], max_query_us=r["max_query_us"],
            histograms=json.loads(r["histograms_json"]), per_second=json.loads(r["per_second_json"]),
            hardware=json.loads(r["hardware_json"]) if r["hardware_json"] else None, table_rows=r["table_rows"],
            error=r["error"], db_bytes=r["db_bytes"], datadir_bytes=r["datadir_bytes"], repeat=r["repeat"],
            position=r["position"], events=json.loads(r["events_json"]) if r["events_json"] else None,
            folded=json.loads(r["folded_json"]) if r["folded_json"] else None)
            for r in rows]

    def ibench_done(self, target_id: int, repeat: int = 0) -> set[str]:
        rows = self.db.execute("SELECT step FROM ibench_steps WHERE target_id = ? AND repeat = ? AND status = 'ok' "
                               "AND superseded = 0", (target_id, repeat))
        return {r[0] for r in rows}

    def add_tpcc_run(self, target_id: int, r: TpccResult) -> int | None:
        return self._keep("tpcc run", {"target_id": target_id, "record": asdict(r)},
                          lambda: self._insert_tpcc_run(target_id, r))

    def _insert_tpcc_run(self, target_id: int, r: TpccResult) -> int:
        """A repeat stored again (--resume after a failure) supersedes the earlier one."""
        self.db.execute("UPDATE tpcc_runs SET superseded = 1 WHERE target_id = ? AND repeat = ?",
                        (target_id, r.repeat))
        return self._insert("tpcc_runs", {
            "target_id": target_id, "repeat": r.repeat, "status": r.status, "started_at": now_iso(),
            "warehouses": r.warehouses, "clients": r.clients, "procedures": int(r.procedures),
            "elapsed_s": r.elapsed_s, "new_orders": r.new_orders, "transactions": r.transactions, "nopm": r.nopm,
            "tpm": r.tpm, "by_type_json": json.dumps(r.by_type), "intervals_json": json.dumps(r.intervals),
            "hardware_json": _json_or_null(r.hardware), "consistency_json": json.dumps(r.consistency),
            "load_s": r.load_s, "error": r.error, "position": r.position, "events_json": _json_or_null(r.events),
            "folded_json": _json_or_null(r.folded)})

    def tpcc_runs(self, campaign_id: int) -> list[TpccResult]:
        rows = self.db.execute(
            "SELECT r.*, targets.name AS target FROM tpcc_runs r JOIN targets ON targets.id = r.target_id "
            "WHERE targets.campaign_id = ? AND r.superseded = 0 ORDER BY r.id", (campaign_id,)).fetchall()
        return [TpccResult(
            target=r["target"], status=r["status"], warehouses=r["warehouses"], clients=r["clients"],
            procedures=bool(r["procedures"]), elapsed_s=r["elapsed_s"], new_orders=r["new_orders"],
            transactions=r["transactions"], nopm=r["nopm"], tpm=r["tpm"], by_type=json.loads(r["by_type_json"]),
            intervals=json.loads(r["intervals_json"]),
            hardware=json.loads(r["hardware_json"]) if r["hardware_json"] else None,
            consistency=json.loads(r["consistency_json"]), load_s=r["load_s"], error=r["error"], repeat=r["repeat"],
            position=r["position"], events=json.loads(r["events_json"]) if r["events_json"] else None,
            folded=json.loads(r["folded_json"]) if r["folded_json"] else None)
            for r in rows]

    def tpcc_done(self, target_id: int, repeat: int) -> bool:
        row = self.db.execute("SELECT 1 FROM tpcc_runs WHERE target_id = ? AND repeat = ? AND status = 'ok' "
                              "AND superseded = 0", (target_id, repeat)).fetchone()
        return row is not None

    def add_workload_run(self, target_id: int, r: WorkloadRun) -> int | None:
        return self._keep("workload run", {"target_id": target_id, "record": asdict(r)},
                          lambda: self._insert_workload_run(target_id, r))

    def _insert_workload_run(self, target_id: int, r: WorkloadRun) -> int:
        """A repeat stored again (--resume after a failure) supersedes the earlier one."""
        self.db.execute("UPDATE workload_runs SET superseded = 1 WHERE target_id = ? AND repeat = ?",
                        (target_id, r.repeat))
        return self._insert("workload_runs", {
            "target_id": target_id, "workload": r.workload, "repeat": r.repeat, "status": r.status,
            "started_at": now_iso(), "elapsed_s": r.elapsed_s, "record_json": json.dumps(r.record),
            "error": r.error, "position": r.position})

    def workload_runs(self, campaign_id: int) -> list[WorkloadRun]:
        rows = self.db.execute(
            "SELECT r.*, targets.name AS target FROM workload_runs r JOIN targets ON targets.id = r.target_id "
            "WHERE targets.campaign_id = ? AND r.superseded = 0 ORDER BY r.id", (campaign_id,)).fetchall()
        return [WorkloadRun(target=r["target"], workload=r["workload"], status=r["status"],
                            record=json.loads(r["record_json"]), elapsed_s=r["elapsed_s"], error=r["error"],
                            repeat=r["repeat"], position=r["position"]) for r in rows]

    def workload_done(self, target_id: int, repeat: int) -> bool:
        row = self.db.execute("SELECT 1 FROM workload_runs WHERE target_id = ? AND repeat = ? AND status = 'ok' "
                              "AND superseded = 0", (target_id, repeat)).fetchone()
        return row is not None

    # -- reading ---------------------------------------------------------------------------
    def completed_runs(self, target_id: int) -> set[tuple[str, int, int]]:
        rows = self.db.execute("SELECT test, threads, repeat FROM runs WHERE target_id = ? AND status = 'ok' "
                               "AND superseded = 0", (target_id,))
        return {(r[0], r[1], r[2]) for r in rows}

    def supersede(self, target_id: int, test: str, threads: int) -> None:
        """Keep the runs of a test some target lacks (order = "turns") but leave them out of reports (rerun whole)."""
        def update() -> None:
            with self.db:
                self.db.execute("UPDATE runs SET superseded = 1 WHERE target_id = ? AND test = ? AND threads = ?",
                                (target_id, test, threads))
        self._retry(update, "marking earlier runs superseded")

    def supersede_unfinished(self, target_id: int, test: str, threads: int, repeat: int) -> None:
        """Leave a run's earlier rows that are not ok out of reports: --resume runs it again."""
        def update() -> None:
            with self.db:
                self.db.execute("UPDATE runs SET superseded = 1 WHERE target_id = ? AND test = ? AND threads = ? "
                                "AND repeat = ? AND status != 'ok'", (target_id, test, threads, repeat))
        self._retry(update, "marking unfinished runs superseded")

    def add_plan(self, target_id: int, test: str, statement: int, sql: str, plan_json: str | None,
                 shape: str | None, error: str | None = None) -> None:
        """The plan of one statement of a test on a target (the newest capture wins)."""
        fact = {"target_id": target_id, "test": test, "statement": statement, "sql": sql, "plan_json": plan_json,
                "shape": shape, "error": error}
        self._keep("plan", fact, lambda: self._insert_plan(target_id, test, statement, sql, plan_json, shape, error))

    def _insert_plan(self, target_id: int, test: str, statement: int, sql: str, plan_json: str | None,
                     shape: str | None, error: str | None) -> int:
        return _row_id(self.db.execute(
            "INSERT OR REPLACE INTO plans(target_id, test, statement, sql, plan_json, shape, error) "
            "VALUES (?,?,?,?,?,?,?)", (target_id, test, statement, sql, plan_json, shape, error)))

    def plans(self, campaign_id: int) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT plans.*, targets.name AS target FROM plans JOIN targets ON targets.id = plans.target_id "
            "WHERE targets.campaign_id = ? ORDER BY plans.test, plans.statement, targets.position",
            (campaign_id,)).fetchall()

    def campaign_of(self, target_id: int) -> int | None:
        row = self.db.execute("SELECT campaign_id FROM targets WHERE id = ?", (target_id,)).fetchone()
        return int(row[0]) if row else None

    def campaigns(self) -> list[sqlite3.Row]:
        """Every campaign with its counts of runs by status (ok, failed, interrupted, skipped),
        oldest first: sysbench runs, Insert Benchmark steps and TPROC-C runs alike (a campaign has
        one kind)."""
        return self.db.execute(
            "WITH r AS (SELECT target_id, status FROM runs WHERE superseded = 0 "
            "UNION ALL SELECT target_id, status FROM ibench_steps WHERE superseded = 0 "
            "UNION ALL SELECT target_id, status FROM tpcc_runs WHERE superseded = 0 "
            "UNION ALL SELECT target_id, status FROM workload_runs WHERE superseded = 0) "
            "SELECT c.id, c.name, c.created_at, "
            "SUM(r.status = 'ok') AS ok, SUM(r.status = 'failed') AS failed, "
            "SUM(r.status = 'interrupted') AS interrupted, SUM(r.status = 'skipped') AS skipped, "
            "COUNT(r.status) AS runs "
            "FROM campaigns c LEFT JOIN targets t ON t.campaign_id = c.id "
            "LEFT JOIN r ON r.target_id = t.id GROUP BY c.id ORDER BY c.id").fetchall()

    # every table of a campaign's results, and whether its rows can be superseded
    FINGERPRINTED = {"runs": True, "ibench_steps": True, "tpcc_runs": True, "workload_runs": True,
                     "instructions": False, "plans": False, "steps": False}

    def campaign_fingerprint(self, campaign_id: int) -> str:
        """What changes whenever anything of the campaign's changes: its row, its targets' rows,
        and per result table the count, newest id and superseded count of its rows. Results are
        only ever added or superseded, so an equal fingerprint means an equal campaign; reading it
        costs a few indexed queries, not the campaign."""
        parts = [tuple(self.campaign(campaign_id) or ())]
        parts += [tuple(t) for t in self.targets(campaign_id)]
        for table, supersedes in self.FINGERPRINTED.items():
            superseded = "SUM(r.superseded)" if supersedes else "0"
            parts.append(tuple(self.db.execute(
                f"SELECT COUNT(*), MAX(r.id), {superseded} FROM {table} r JOIN targets t ON t.id = r.target_id "
                "WHERE t.campaign_id = ?", (campaign_id,)).fetchone()))
        parts.append(tuple(self.db.execute("SELECT COUNT(*), MAX(id), GROUP_CONCAT(status) FROM units "
                                           "WHERE campaign_id = ?", (campaign_id,)).fetchone()))
        return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]

    def completed_steps(self, target_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM steps WHERE target_id = ? ORDER BY id", (target_id,)).fetchall()

    def detect_stops(self, campaign_id: int) -> dict[tuple[str, int], JsonObject]:
        """Where each cell of a campaign planned to detect with the sequential rule stopped (the
        steps of kind `detect` runner/sequential.py stores; the latest per cell, for --resume)."""
        rows = self.db.execute(
            "SELECT s.detail_json FROM steps s JOIN targets t ON t.id = s.target_id "
            "WHERE t.campaign_id = ? AND s.kind = 'detect' ORDER BY s.id", (campaign_id,)).fetchall()
        found: dict[tuple[str, int], JsonObject] = {}
        for row in rows:
            detail = json.loads(row[0])
            found[(str(detail["test"]), int(detail["threads"]))] = detail
        return found

    def campaign(self, campaign_id: int) -> sqlite3.Row:
        row: sqlite3.Row = self.db.execute("SELECT * FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
        return row

    def targets(self, campaign_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM targets WHERE campaign_id = ? ORDER BY position",
                               (campaign_id,)).fetchall()

    def runs(self, campaign_id: int) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT runs.*, targets.name AS target FROM runs JOIN targets ON targets.id = runs.target_id "
            "WHERE targets.campaign_id = ? AND runs.superseded = 0 ORDER BY runs.id", (campaign_id,)).fetchall()

    def has_runs(self, campaign_id: int) -> bool:
        """Whether the campaign stored any sysbench run (not superseded), without reading them."""
        found = self.db.execute(
            "SELECT EXISTS (SELECT 1 FROM runs JOIN targets ON targets.id = runs.target_id "
            "WHERE targets.campaign_id = ? AND runs.superseded = 0)", (campaign_id,)).fetchone()[0]
        return bool(found)

    def samples(self, run_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM samples WHERE run_id = ? ORDER BY idx", (run_id,)).fetchall()

    def instructions(self, campaign_id: int) -> list[sqlite3.Row]:
        """The latest successful count per (target, test), with the target's name."""
        return self.db.execute(
            "SELECT i.*, targets.name AS target FROM instructions i JOIN targets ON targets.id = i.target_id "
            "WHERE targets.campaign_id = ? AND i.id IN (SELECT MAX(m.id) FROM instructions m JOIN targets mt "
            "ON mt.id = m.target_id WHERE mt.campaign_id = ? AND m.status = 'ok' GROUP BY m.target_id, m.test) "
            "ORDER BY i.id", (campaign_id, campaign_id)).fetchall()

    def instruction_statuses(self, target_id: int) -> dict[str, int]:
        rows = self.db.execute("SELECT status, COUNT(*) FROM instructions WHERE target_id = ? GROUP BY status",
                               (target_id,))
        return {r[0]: r[1] for r in rows}

    def counted_tests(self, target_id: int) -> set[str]:
        rows = self.db.execute("SELECT test FROM instructions WHERE target_id = ? AND status = 'ok'", (target_id,))
        return {r[0] for r in rows}

    def intervals(self, run_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM intervals WHERE run_id = ? ORDER BY idx", (run_id,)).fetchall()

    def run_intervals(self, run_ids: Sequence[int]) -> dict[int, list[sqlite3.Row]]:
        """The intervals of each of `run_ids`, in order: a few queries for what a report reads of
        every run of a campaign (a query per run costs more than the reading)."""
        out: dict[int, list[sqlite3.Row]] = {}
        for start in range(0, len(run_ids), 500):  # well under SQLite's limit of bound parameters
            chunk = list(run_ids[start:start + 500])
            for row in self.db.execute(f"SELECT * FROM intervals WHERE run_id IN ({','.join('?' * len(chunk))}) "
                                       "ORDER BY run_id, idx", chunk):
                out.setdefault(row["run_id"], []).append(row)
        return out
