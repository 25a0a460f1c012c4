"""Writing a store: campaigns, targets and units as commands create them, and each measured fact
in one transaction, journalled when the store stays busy or its disk is full, so that nothing
measured is lost. How each fact kind is written is facts.py's; reading is reads.py's."""
from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict
from typing import Callable, Sequence, TypeVar

from dbdrift.errors import UserError
from dbdrift.model import InsertStepResult, JsonObject, TpccResult, WorkloadRun
from dbdrift.store import facts, guard, journal
from dbdrift.store.connection import Connection
from dbdrift.store.records import InstructionRecord, RunRecord, now_iso

R = TypeVar("R", RunRecord, InstructionRecord, TpccResult, WorkloadRun)  # a record that facts.insert_* stores whole


class Writes(Connection):
    """The writing half of Store."""

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
                journal.append(self.journal_path, {"kind": kind, **fact})
            except OSError as os_exc:
                if guard.is_full(os_exc) or isinstance(exc, guard.StoreFull):
                    raise guard.full(self.path, f"{doing}, and its journal") from None
                raise
            self.journaled += 1
            return None

    # -- what commands create ----------------------------------------------------------------
    def add_campaign(self, name: str, spec: JsonObject, host: JsonObject, version: str) -> int:
        def insert() -> int:
            with self.db:
                return facts.insert(self.db, "campaigns", {"name": name, "created_at": now_iso(),
                                                           "spec_json": json.dumps(spec), "host_json": json.dumps(host),
                                                           "dbdrift_version": version})
        return int(self._retry(insert, "adding the campaign"))

    def set_campaign_host(self, campaign_id: int, host: JsonObject) -> None:
        """The host facts of a campaign measured on a cluster: those of a host that measured it."""
        def update() -> None:
            with self.db:
                self.db.execute("UPDATE campaigns SET host_json = ? WHERE id = ?", (json.dumps(host), campaign_id))
        self._retry(update, "storing the host facts")

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
                return facts.insert(self.db, "targets", {
                    "campaign_id": campaign_id, "name": name, "engine": engine, "position": position,
                    "is_base": int(is_base), "spec_json": json.dumps(spec)})
        return int(self._retry(upsert, f"adding target {name}"))

    def add_unit(self, campaign_id: int, number: int, host_kind: str | None, tests: list[str],
                 repeats: Sequence[int] = ()) -> int:
        def insert() -> int:
            with self.db:
                return facts.insert(self.db, "units", {
                    "campaign_id": campaign_id, "number": number, "host_kind": host_kind,
                    "tests_json": json.dumps(tests), "repeats_json": json.dumps(list(repeats)), "status": "queued"})
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

    # -- measured facts (facts.KINDS) ----------------------------------------------------------
    def set_target_facts(self, target_id: int, install: JsonObject | None = None, server: JsonObject | None = None) -> None:
        self._keep("target facts", {"target_id": target_id, "install": install, "server": server},
                   lambda: facts.update_target_facts(self.db, target_id, install, server))

    def add_step(self, target_id: int, kind: str, label: str, status: str, elapsed_s: float,
                 detail: JsonObject, error: str | None = None) -> None:
        started_at = now_iso()
        fact = {"target_id": target_id, "step_kind": kind, "label": label, "status": status,
                "started_at": started_at, "elapsed_s": elapsed_s, "detail": detail, "error": error}
        self._keep("step", fact, lambda: facts.insert_step(self.db, target_id, kind, label, status, started_at,
                                                           elapsed_s, detail, error))

    def _keep_record(self, kind: str, target_id: int, record: R,
                     insert: Callable[[sqlite3.Connection, int, R], int]) -> int | None:
        """A target's measured record as one fact, journalled as the target and the record: the
        same for every kind whose insert takes just those."""
        return self._keep(kind, {"target_id": target_id, "record": asdict(record)},
                          lambda: insert(self.db, target_id, record))

    def add_run(self, target_id: int, run: RunRecord) -> int | None:
        """Store a run and its intervals in one transaction (None: kept in the journal)."""
        return self._keep_record("run", target_id, run, facts.insert_run)

    def add_instructions(self, target_id: int, rec: InstructionRecord) -> int | None:
        return self._keep_record("instructions", target_id, rec, facts.insert_instructions)

    def add_ibench_step(self, target_id: int, r: InsertStepResult, driver_spec: JsonObject | None = None) -> int | None:
        return self._keep("ibench step", {"target_id": target_id, "record": asdict(r), "driver_spec": driver_spec},
                          lambda: facts.insert_ibench_step(self.db, target_id, r, driver_spec))

    def add_tpcc_run(self, target_id: int, r: TpccResult) -> int | None:
        return self._keep_record("tpcc run", target_id, r, facts.insert_tpcc_run)

    def add_workload_run(self, target_id: int, r: WorkloadRun) -> int | None:
        return self._keep_record("workload run", target_id, r, facts.insert_workload_run)

    def add_plan(self, target_id: int, test: str, statement: int, sql: str, plan_json: str | None,
                 shape: str | None, error: str | None = None) -> None:
        """The plan of one statement of a test on a target (the newest capture wins)."""
        fact = {"target_id": target_id, "test": test, "statement": statement, "sql": sql, "plan_json": plan_json,
                "shape": shape, "error": error}
        self._keep("plan", fact, lambda: facts.insert_plan(self.db, target_id, test, statement, sql, plan_json,
                                                           shape, error))

    def add_streamed(self, fact: JsonObject, unit_id: int, worker: str | None = None) -> None:
        """Store a fact a unit measured on a cluster host (a journal entry's shape, with this
        store's target id), marked with its unit and the worker that measured it ("name
        address"): a re-queued unit's results come from more than one host. A run of a cell that
        already has one replaces it in reports: every cell counts once, however often its unit
        was re-queued."""
        self._keep("streamed", {"fact": fact, "unit_id": unit_id, "worker": worker},
                   lambda: facts.insert_streamed(self.db, fact, unit_id, worker))

    # -- leaving earlier results out of reports --------------------------------------------------
    def _supersede(self, sql: str, args: tuple[object, ...], doing: str) -> None:
        def update() -> None:
            with self.db:
                self.db.execute(sql, args)
        self._retry(update, doing)

    def supersede(self, target_id: int, test: str, threads: int) -> None:
        """Keep the runs of a test some target lacks (order = "turns") but leave them out of reports (rerun whole)."""
        self._supersede("UPDATE runs SET superseded = 1 WHERE target_id = ? AND test = ? AND threads = ?",
                        (target_id, test, threads), "marking earlier runs superseded")

    def supersede_unfinished(self, target_id: int, test: str, threads: int, repeat: int) -> None:
        """Leave a run's earlier rows that are not ok out of reports: --resume runs it again."""
        self._supersede("UPDATE runs SET superseded = 1 WHERE target_id = ? AND test = ? AND threads = ? "
                        "AND repeat = ? AND status != 'ok'", (target_id, test, threads, repeat),
                        "marking unfinished runs superseded")

    def supersede_ibench(self, target_id: int, repeat: int = 0) -> None:
        """A repeat of a target's Insert Benchmark reruns from l.i0: that repeat's earlier steps
        leave the reports."""
        self._supersede("UPDATE workload_runs SET superseded = 1 WHERE target_id = ? AND repeat = ? AND workload = ?",
                        (target_id, repeat, facts.IBENCH), "marking earlier Insert Benchmark steps superseded")
