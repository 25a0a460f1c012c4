"""The results store: a SQLite file (WAL), one transaction per finished run.

Writes facts only; analysis and reports read them back through `load_campaign_results`.
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from dbdrift.errors import UserError
from dbdrift.model import InsertStepResult
from dbdrift.store.schema import MIGRATIONS, SCHEMA_VERSION


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class RunRecord:
    """One microbenchmark run of one target as stored (status ok, failed or interrupted)."""

    test: str
    test_group: str
    threads: int
    repeat: int
    status: str
    warmup_s: float
    duration_s: float
    metric: str
    driver_spec: dict
    started_at: str = field(default_factory=now_iso)
    measured_s: float | None = None
    events: int | None = None
    statements: int | None = None
    rows: int | None = None
    errors: dict = field(default_factory=dict)
    value: float | None = None
    qps: float | None = None
    tps: float | None = None
    latency: dict = field(default_factory=dict)
    client_cpu_user_s: float | None = None
    client_cpu_sys_s: float | None = None
    warnings: list = field(default_factory=list)
    error: str | None = None
    server_log_tail: str | None = None
    intervals: list[dict] = field(default_factory=list)
    hardware: dict | None = None  # sampler totals over the measured window (metrics/sampler.Delta)
    host: dict | None = None  # host facts and warnings when the run started
    samples: list[tuple[float, dict]] = field(default_factory=list)  # (start_s, Delta) every second
    folded: dict[str, int] | None = None  # perf record stacks of the backends (`--flamegraph`)


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


SAMPLE_COLUMNS = ("elapsed_s", "cpu_user_pct", "cpu_sys_pct", "cpu_iowait_pct", "cpu_steal_pct", "cs", "reads",
                  "read_kb", "writes", "write_kb", "server_cpu_s", "client_cpu_s", "server_rss_bytes")


def _json_or_null(value) -> str | None:
    return None if value is None else json.dumps(value)


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(str(path), timeout=30)
        except (OSError, sqlite3.Error) as exc:
            raise UserError(f"cannot open store {path}: {exc}", "pass --store PATH to a writable location") from None
        self.db.row_factory = sqlite3.Row
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise UserError(f"{path} is not a dbdrift store: {exc}", "pass --store PATH to another file") from None

    def close(self) -> None:
        self.db.close()

    def _migrate(self) -> None:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise UserError(
                f"store {self.path} has schema version {version}, newer than this dbdrift ({SCHEMA_VERSION})",
                "upgrade dbdrift or use another --store")
        for number in range(version, SCHEMA_VERSION):
            with self.db:
                self.db.executescript(MIGRATIONS[number])
                self.db.execute(f"PRAGMA user_version = {number + 1}")

    # -- writing ---------------------------------------------------------------------------
    def add_campaign(self, name: str, spec: dict, host: dict, version: str) -> int:
        with self.db:
            cur = self.db.execute(
                "INSERT INTO campaigns(name, created_at, spec_json, host_json, dbdrift_version) VALUES (?,?,?,?,?)",
                (name, now_iso(), json.dumps(spec), json.dumps(host), version))
        return int(cur.lastrowid)

    def latest_campaign_id(self, name: str | None = None) -> int | None:
        if name is None:
            row = self.db.execute("SELECT id FROM campaigns ORDER BY id DESC LIMIT 1").fetchone()
        elif name.isdigit():
            row = self.db.execute("SELECT id FROM campaigns WHERE id = ?", (int(name),)).fetchone()
        else:
            row = self.db.execute("SELECT id FROM campaigns WHERE name = ? ORDER BY id DESC LIMIT 1",
                                  (name,)).fetchone()
        return int(row[0]) if row else None

    def calibration_ids(self) -> list[int]:
        """The A/A calibration campaigns (`dbdrift calibrate`), newest first."""
        return [int(row[0]) for row in self.db.execute("SELECT id, spec_json FROM campaigns ORDER BY id DESC")
                if json.loads(row[1]).get("calibration")]

    def ensure_target(self, campaign_id: int, name: str, engine: str, position: int, is_base: bool,
                      spec: dict) -> int:
        row = self.db.execute("SELECT id FROM targets WHERE campaign_id = ? AND name = ?",
                              (campaign_id, name)).fetchone()
        with self.db:
            if row:
                self.db.execute("UPDATE targets SET position = ?, is_base = ?, spec_json = ? WHERE id = ?",
                                (position, int(is_base), json.dumps(spec), row[0]))
                return int(row[0])
            cur = self.db.execute(
                "INSERT INTO targets(campaign_id, name, engine, position, is_base, spec_json) VALUES (?,?,?,?,?,?)",
                (campaign_id, name, engine, position, int(is_base), json.dumps(spec)))
        return int(cur.lastrowid)

    def set_target_facts(self, target_id: int, install: dict | None = None, server: dict | None = None) -> None:
        with self.db:
            if install is not None:
                self.db.execute("UPDATE targets SET install_json = ? WHERE id = ?", (json.dumps(install), target_id))
            if server is not None:
                self.db.execute("UPDATE targets SET server_json = ? WHERE id = ?", (json.dumps(server), target_id))

    def add_step(self, target_id: int, kind: str, label: str, status: str, elapsed_s: float,
                 detail: dict, error: str | None = None) -> None:
        with self.db:
            self.db.execute(
                "INSERT INTO steps(target_id, kind, label, status, started_at, elapsed_s, detail_json, error) "
                "VALUES (?,?,?,?,?,?,?,?)",
                (target_id, kind, label, status, now_iso(), elapsed_s, json.dumps(detail), error))

    def add_run(self, target_id: int, run: RunRecord) -> int:
        """Store a run and its intervals in one transaction."""
        with self.db:
            cur = self.db.execute(
                "INSERT INTO runs(target_id, test, test_group, threads, repeat, status, started_at, warmup_s, "
                "duration_s, measured_s, events, statements, rows, errors_json, metric, value, qps, tps, "
                "latency_json, client_cpu_user_s, client_cpu_sys_s, warnings_json, error, server_log_tail, "
                "driver_spec_json, hardware_json, host_json, folded_json) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (target_id, run.test, run.test_group, run.threads, run.repeat, run.status, run.started_at,
                 run.warmup_s, run.duration_s, run.measured_s, run.events, run.statements, run.rows,
                 json.dumps(run.errors), run.metric, run.value, run.qps, run.tps, json.dumps(run.latency),
                 run.client_cpu_user_s, run.client_cpu_sys_s, json.dumps(run.warnings), run.error,
                 run.server_log_tail, json.dumps(run.driver_spec), _json_or_null(run.hardware),
                 _json_or_null(run.host), _json_or_null(run.folded)))
            run_id = int(cur.lastrowid)
            self.db.executemany(
                f"INSERT INTO samples(run_id, idx, start_s, {', '.join(SAMPLE_COLUMNS)}) "
                f"VALUES (?,?,?{',?' * len(SAMPLE_COLUMNS)})",
                [(run_id, i, start_s, *(d[c] for c in SAMPLE_COLUMNS)) for i, (start_s, d) in enumerate(run.samples)])
            self.db.executemany(
                "INSERT INTO intervals(run_id, idx, start_s, end_s, events, statements, rows, errors_json, "
                "latency_json, steal_pct, round) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                [(run_id, iv["index"], iv["start_s"], iv["end_s"], iv["events"], iv["statements"], iv["rows"],
                  json.dumps(iv.get("errors", {})), json.dumps(iv.get("latency_us", {})), iv.get("steal_pct"),
                  iv.get("round"))
                 for iv in run.intervals])
        return run_id

    def add_instructions(self, target_id: int, rec: InstructionRecord) -> int:
        with self.db:
            cur = self.db.execute(
                "INSERT INTO instructions(target_id, test, status, started_at, elapsed_s, n1, n2, ir_json, "
                "ir_per_event, spread_pct, self_json, inclusive_json, error) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (target_id, rec.test, rec.status, rec.started_at, rec.elapsed_s, rec.n1, rec.n2, json.dumps(rec.ir),
                 rec.ir_per_event, rec.spread_pct, json.dumps(rec.self_per_event),
                 json.dumps(rec.inclusive_per_event), rec.error))
        return int(cur.lastrowid)

    def add_ibench_step(self, target_id: int, r: InsertStepResult, driver_spec: dict | None = None) -> int:
        with self.db:
            cur = self.db.execute(
                "INSERT INTO ibench_steps(target_id, step, status, started_at, clients, elapsed_s, inserted, deleted, "
                "queries, ips, dps, qps, target_ips, max_insert_us, max_delete_us, max_query_us, histograms_json, "
                "per_second_json, hardware_json, table_rows, driver_spec_json, error) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (target_id, r.step, r.status, now_iso(), r.clients, r.elapsed_s, r.inserted, r.deleted, r.queries,
                 r.ips, r.dps, r.qps, r.target_ips, r.max_insert_us, r.max_delete_us, r.max_query_us,
                 json.dumps(r.histograms), json.dumps(r.per_second), _json_or_null(r.hardware), r.table_rows,
                 _json_or_null(driver_spec), r.error))
        return int(cur.lastrowid)

    def supersede_ibench(self, target_id: int) -> None:
        """A target's Insert Benchmark reruns from l.i0: its earlier steps leave the reports."""
        with self.db:
            self.db.execute("UPDATE ibench_steps SET superseded = 1 WHERE target_id = ?", (target_id,))

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
            error=r["error"]) for r in rows]

    def ibench_done(self, target_id: int) -> set[str]:
        rows = self.db.execute("SELECT step FROM ibench_steps WHERE target_id = ? AND status = 'ok' "
                               "AND superseded = 0", (target_id,))
        return {r[0] for r in rows}

    # -- reading ---------------------------------------------------------------------------
    def completed_runs(self, target_id: int) -> set[tuple[str, int, int]]:
        rows = self.db.execute("SELECT test, threads, repeat FROM runs WHERE target_id = ? AND status = 'ok' "
                               "AND superseded = 0", (target_id,))
        return {(r[0], r[1], r[2]) for r in rows}

    def supersede(self, target_id: int, test: str, threads: int) -> None:
        """Keep an incomplete interleaved test's runs but leave them out of reports (rerun whole)."""
        with self.db:
            self.db.execute("UPDATE runs SET superseded = 1 WHERE target_id = ? AND test = ? AND threads = ?",
                            (target_id, test, threads))

    def completed_steps(self, target_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM steps WHERE target_id = ? ORDER BY id", (target_id,)).fetchall()

    def campaign(self, campaign_id: int) -> sqlite3.Row:
        return self.db.execute("SELECT * FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()

    def targets(self, campaign_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM targets WHERE campaign_id = ? ORDER BY position",
                               (campaign_id,)).fetchall()

    def runs(self, campaign_id: int) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT runs.*, targets.name AS target FROM runs JOIN targets ON targets.id = runs.target_id "
            "WHERE targets.campaign_id = ? AND runs.superseded = 0 ORDER BY runs.id", (campaign_id,)).fetchall()

    def samples(self, run_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM samples WHERE run_id = ? ORDER BY idx", (run_id,)).fetchall()

    def instructions(self, campaign_id: int) -> list[sqlite3.Row]:
        """The latest successful count per (target, test), with the target's name."""
        return self.db.execute(
            "SELECT i.*, targets.name AS target FROM instructions i JOIN targets ON targets.id = i.target_id "
            "WHERE targets.campaign_id = ? AND i.id IN (SELECT MAX(id) FROM instructions WHERE status = 'ok' "
            "GROUP BY target_id, test) ORDER BY i.id", (campaign_id,)).fetchall()

    def instruction_statuses(self, target_id: int) -> dict[str, int]:
        rows = self.db.execute("SELECT status, COUNT(*) FROM instructions WHERE target_id = ? GROUP BY status",
                               (target_id,))
        return {r[0]: r[1] for r in rows}

    def counted_tests(self, target_id: int) -> set[str]:
        rows = self.db.execute("SELECT test FROM instructions WHERE target_id = ? AND status = 'ok'", (target_id,))
        return {r[0] for r in rows}

    def intervals(self, run_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM intervals WHERE run_id = ? ORDER BY idx", (run_id,)).fetchall()
