"""Reading a store: a campaign, its targets and units, and each kind of its results, for
reports, history and --resume. Never writes (writes.py)."""
from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any, Sequence

from dbdrift.model import InsertStepResult, JsonObject, TpccResult, WorkloadRun
from dbdrift.store import facts
from dbdrift.store.connection import Connection
from dbdrift.store.stored import CampaignRecord, TargetRecord, UnitRecord


def _fields(row: sqlite3.Row, *dropped: str) -> dict[str, Any]:
    """The fields of a workload_runs row's record_json, but `dropped` (kept beside the result, not in it)."""
    return {k: v for k, v in json.loads(row["record_json"]).items() if k not in dropped}


class Reads(Connection):
    """The reading half of Store."""

    # -- campaigns ------------------------------------------------------------------------------
    def campaign(self, campaign_id: int) -> CampaignRecord:
        """A campaign the store holds (its id came from this store: a missing one is a bug)."""
        row = self.db.execute("SELECT * FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
        if row is None:
            raise KeyError(f"no campaign #{campaign_id} in {self.path}")
        return CampaignRecord.of(row)

    def campaign_of(self, target_id: int) -> int | None:
        row = self.db.execute("SELECT campaign_id FROM targets WHERE id = ?", (target_id,)).fetchone()
        return int(row[0]) if row else None

    def campaigns(self) -> list[sqlite3.Row]:
        """Every campaign with its counts of runs by status (ok, failed, interrupted, skipped),
        oldest first: sysbench runs, Insert Benchmark steps, TPROC-C runs and other workloads'
        repeats alike (a campaign has one kind)."""
        results = " UNION ALL ".join(f"SELECT target_id, status FROM {table} WHERE superseded = 0"
                                     for table in facts.RESULT_TABLES)
        return self.db.execute(
            f"WITH r AS ({results}) "
            "SELECT c.id, c.name, c.created_at, "
            "SUM(r.status = 'ok') AS ok, SUM(r.status = 'failed') AS failed, "
            "SUM(r.status = 'interrupted') AS interrupted, SUM(r.status = 'skipped') AS skipped, "
            "COUNT(r.status) AS runs "
            "FROM campaigns c LEFT JOIN targets t ON t.campaign_id = c.id "
            "LEFT JOIN r ON r.target_id = t.id GROUP BY c.id ORDER BY c.id").fetchall()

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

    # every table of a campaign's results, and whether its rows can be superseded
    FINGERPRINTED = {kind.table: kind.results for kind in facts.KINDS.values() if kind.table}

    def campaign_fingerprint(self, campaign_id: int) -> str:
        """What changes whenever anything of the campaign's changes: its row, its targets' rows,
        and per result table the count, newest id and superseded count of its rows. Results are
        only ever added or superseded, so an equal fingerprint means an equal campaign; reading it
        costs a few indexed queries, not the campaign."""
        parts = [tuple(self.db.execute("SELECT * FROM campaigns WHERE id = ?", (campaign_id,)).fetchone() or ())]
        parts += [tuple(t) for t in self._target_rows(campaign_id)]
        for table, supersedes in self.FINGERPRINTED.items():
            superseded = "SUM(r.superseded)" if supersedes else "0"
            parts.append(tuple(self.db.execute(
                f"SELECT COUNT(*), MAX(r.id), {superseded} FROM {table} r JOIN targets t ON t.id = r.target_id "
                "WHERE t.campaign_id = ?", (campaign_id,)).fetchone()))
        parts.append(tuple(self.db.execute("SELECT COUNT(*), MAX(id), GROUP_CONCAT(status) FROM units "
                                           "WHERE campaign_id = ?", (campaign_id,)).fetchone()))
        return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]

    def targets(self, campaign_id: int) -> list[TargetRecord]:
        """A campaign's targets in their order."""
        return [TargetRecord.of(row) for row in self._target_rows(campaign_id)]

    def _target_rows(self, campaign_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM targets WHERE campaign_id = ? ORDER BY position",
                               (campaign_id,)).fetchall()

    # -- a campaign's steps and plans --------------------------------------------------------------
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

    def plans(self, campaign_id: int) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT plans.*, targets.name AS target FROM plans JOIN targets ON targets.id = plans.target_id "
            "WHERE targets.campaign_id = ? ORDER BY plans.test, plans.statement, targets.position",
            (campaign_id,)).fetchall()

    # -- sysbench runs ----------------------------------------------------------------------------
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

    def completed_runs(self, target_id: int) -> set[tuple[str, int, int]]:
        rows = self.db.execute("SELECT test, threads, repeat FROM runs WHERE target_id = ? AND status = 'ok' "
                               "AND superseded = 0", (target_id,))
        return {(r[0], r[1], r[2]) for r in rows}

    def samples(self, run_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM samples WHERE run_id = ? ORDER BY idx", (run_id,)).fetchall()

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

    # -- instruction counts ----------------------------------------------------------------------
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

    # -- Insert Benchmark, TPROC-C and the other workloads (workload_runs) -----------------------
    def _workload_rows(self, campaign_id: int, workload: str | None = None) -> list[sqlite3.Row]:
        only = "AND r.workload = ? " if workload else ""
        return self.db.execute(
            "SELECT r.*, targets.name AS target FROM workload_runs r JOIN targets ON targets.id = r.target_id "
            f"WHERE targets.campaign_id = ? AND r.superseded = 0 {only}ORDER BY r.id",
            (campaign_id, workload) if workload else (campaign_id,)).fetchall()

    def ibench_steps(self, campaign_id: int) -> list[InsertStepResult]:
        return [InsertStepResult(target=r["target"], status=r["status"], elapsed_s=r["elapsed_s"], error=r["error"],
                                 repeat=r["repeat"], position=r["position"], **_fields(r, "driver_spec"))
                for r in self._workload_rows(campaign_id, facts.IBENCH)]

    def ibench_done(self, target_id: int, repeat: int = 0) -> set[str]:
        rows = self.db.execute("SELECT json_extract(record_json, '$.step') FROM workload_runs WHERE target_id = ? "
                               "AND repeat = ? AND workload = ? AND status = 'ok' AND superseded = 0",
                               (target_id, repeat, facts.IBENCH))
        return {r[0] for r in rows}

    def tpcc_runs(self, campaign_id: int) -> list[TpccResult]:
        return [TpccResult(target=r["target"], status=r["status"], elapsed_s=r["elapsed_s"], error=r["error"],
                           repeat=r["repeat"], position=r["position"], **_fields(r))
                for r in self._workload_rows(campaign_id, facts.TPCC)]

    def workload_runs(self, campaign_id: int) -> list[WorkloadRun]:
        return [WorkloadRun(target=r["target"], workload=r["workload"], status=r["status"],
                            record=json.loads(r["record_json"]), elapsed_s=r["elapsed_s"], error=r["error"],
                            repeat=r["repeat"], position=r["position"]) for r in self._workload_rows(campaign_id)]

    def workload_done(self, target_id: int, repeat: int) -> bool:
        """Whether a repeat of a workload that keeps it as one run (TPROC-C, vector search,
        CH-benCHmark) is stored ok (an Insert Benchmark's repeat is done when all its steps are:
        ibench_done)."""
        row = self.db.execute("SELECT 1 FROM workload_runs WHERE target_id = ? AND repeat = ? AND status = 'ok' "
                              "AND superseded = 0 AND workload != ?", (target_id, repeat, facts.IBENCH)).fetchone()
        return row is not None

    # -- a cluster's units ---------------------------------------------------------------------------
    def units(self, campaign_id: int) -> list[UnitRecord]:
        return [UnitRecord.of(row) for row in self.db.execute(
            "SELECT * FROM units WHERE campaign_id = ? ORDER BY number, id", (campaign_id,))]

    def unit_result_counts(self, unit_ids: list[int]) -> dict[str, int]:
        """Results the units streamed that reports use, by status (runs; Insert Benchmark steps;
        TPROC-C runs; other workloads' repeats)."""
        if not unit_ids:
            return {}
        marks, counts = ",".join("?" * len(unit_ids)), {}
        for status, n in self.db.execute(f"SELECT status, count(*) FROM runs WHERE unit_id IN ({marks}) "
                                         "AND superseded = 0 GROUP BY status", unit_ids):
            counts[f"runs {status}"] = n
        for workload, status, n in self.db.execute(
                f"SELECT workload, status, count(*) FROM workload_runs WHERE unit_id IN ({marks}) "
                "AND superseded = 0 GROUP BY workload, status", unit_ids):
            what = f"{facts.ROWS_CALLED.get(workload, 'repeats')} {status}"
            counts[what] = counts.get(what, 0) + n
        return counts

    def unit_workers(self, unit_ids: list[int]) -> dict[int, list[str]]:
        """Unit id -> the workers ("name address") that measured the results reports use of it,
        in the order they began: a unit re-queued after its host was lost has more than one."""
        if not unit_ids:
            return {}
        marks = ",".join("?" * len(unit_ids))
        live = " UNION ALL ".join(f"SELECT unit_id, worker, started_at FROM {table} WHERE superseded = 0"
                                  for table in facts.RESULT_TABLES)
        counts = ("SELECT unit_id, worker, started_at FROM instructions WHERE id IN "  # the count reports use
                  "(SELECT MAX(id) FROM instructions WHERE status = 'ok' GROUP BY target_id, test)")
        found: dict[int, list[str]] = {}
        for unit_id, worker in self.db.execute(
                f"SELECT unit_id, worker FROM ({live} UNION ALL {counts}) WHERE unit_id IN ({marks}) "
                "AND worker IS NOT NULL GROUP BY unit_id, worker ORDER BY unit_id, MIN(started_at), worker",
                unit_ids):
            found.setdefault(unit_id, []).append(worker)
        return found
