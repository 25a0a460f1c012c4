"""Execute a campaign: per target a fresh server, load, settle, runs; store each run as it ends.

Owns the order of side effects and failure handling; statistics and reports live elsewhere.
A failed run is stored and the campaign goes on; a server that dies ends that target only.
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from dbdrift import env
from dbdrift.catalog import sysbench
from dbdrift.driver import process
from dbdrift.driver.protocol import totals
from dbdrift.errors import DriverError, ServerError, UserError
from dbdrift.model import InstallInfo, TargetSpec
from dbdrift.plan.campaign import CampaignSpec, target_to_dict
from dbdrift.plan.expand import LoadStep, RunStep, SettleStep, TargetPlan, estimate_s, expand
from dbdrift.server import fetch
from dbdrift.server.base import port_is_free
from dbdrift.server.postgres import PostgresServer
from dbdrift.store.store import RunRecord, Store

VERSION = "0.1.0"
DBNAME = "sbtest"


class ProgressSink(Protocol):
    def campaign_start(self, total_s: float, total_steps: int) -> None: ...
    def step_start(self, target: str, label: str, expected_s: float) -> None: ...
    def step_end(self, target: str, label: str, status: str, detail: str) -> None: ...
    def message(self, text: str) -> None: ...


class NullProgress:
    def campaign_start(self, total_s, total_steps): pass
    def step_start(self, target, label, expected_s): pass
    def step_end(self, target, label, status, detail): pass
    def message(self, text): pass


@dataclass
class CampaignOutcome:
    campaign_id: int
    runs_ok: int = 0
    runs_failed: int = 0
    runs_skipped: int = 0
    failed_targets: list[str] = field(default_factory=list)


def host_info() -> dict:
    """Minimal host facts stored with the campaign."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {"hostname": platform.node(), "kernel": platform.release(), "cpu_model": model,
            "cpus": os.cpu_count(), "memory_bytes": mem, "python": platform.python_version()}


class Runner:
    def __init__(self, spec: CampaignSpec, store: Store, resume: bool = False,
                 progress: ProgressSink | None = None) -> None:
        self.spec = spec
        self.store = store
        self.resume = resume
        self.progress = progress or NullProgress()
        self.plans = expand(spec)

    def run(self) -> CampaignOutcome:
        installs = self._resolve_installs()  # every target is checked before any server starts
        campaign_id = self._campaign_id()
        outcome = CampaignOutcome(campaign_id)
        todo = {p.target.name: self._pending(campaign_id, p, position) for position, p in enumerate(self.plans)}
        total_s = sum(estimate_s(p, self.spec) for p in self.plans if todo[p.target.name][1])
        # +1 per target: starting its server is a step of its own
        self.progress.campaign_start(total_s, sum(len(p.steps) + 1 for p in self.plans if todo[p.target.name][1]))
        for plan in self.plans:
            target_id, pending = todo[plan.target.name]
            if not pending:
                outcome.runs_skipped += len(plan.runs)
                self.progress.message(f"{plan.target.name}: all runs already stored, skipped (--resume)")
                continue
            try:
                self._run_target(plan, installs[plan.target.name], target_id, pending, outcome)
            except (ServerError, DriverError) as exc:
                outcome.failed_targets.append(plan.target.name)
                self.progress.message(f"error: {exc.message}" + (f"\n  hint: {exc.hint}" if exc.hint else ""))
                self.progress.message(f"{plan.target.name}: remaining runs skipped; the campaign continues")
        return outcome

    # -- campaign bookkeeping -----------------------------------------------------------------
    def _resolve_installs(self) -> dict[str, InstallInfo]:
        for target in self.spec.targets:
            if target.port is not None and not port_is_free(target.port):
                raise UserError(f"port {target.port} on 127.0.0.1 is in use (target {target.name})",
                                f"remove `port` from target {target.name} or stop the process using it")
        installs = {}
        for target in self.spec.targets:
            installs[target.name] = fetch.resolve_install(target, env.cache_dir(), self.progress.message)
        return installs

    def _campaign_id(self) -> int:
        if self.resume:
            existing = self.store.latest_campaign_id(self.spec.name)
            if existing is not None:
                self.progress.message(f"resuming campaign {self.spec.name} (#{existing}) in {self.store.path}")
                return existing
            self.progress.message(f"--resume: no stored campaign named {self.spec.name}; starting it")
        return self.store.add_campaign(self.spec.name, self.spec.to_dict(), host_info(), VERSION)

    def _pending(self, campaign_id: int, plan: TargetPlan, position: int) -> tuple[int, set]:
        target = plan.target
        target_id = self.store.ensure_target(campaign_id, target.name, target.engine, position,
                                             target.name == self.spec.base.name, target_to_dict(target))
        done = self.store.completed_runs(target_id) if self.resume else set()
        pending = {r.key for r in plan.runs if not r.warm and r.key not in done}
        return target_id, pending

    # -- one target ---------------------------------------------------------------------------
    def _run_target(self, plan: TargetPlan, install: InstallInfo, target_id: int, pending: set,
                    outcome: CampaignOutcome) -> None:
        target = plan.target
        run_dir = env.work_dir() / f"{self.spec.name}-{target.name}"
        server = PostgresServer(target, install, run_dir)
        try:
            self._timed_step(target_id, target, "server", f"start {install.engine} {install.version}",
                             lambda: self._start(server, target_id, install))
            admin = server.connection.to_driver()
            process.exec_jobs(admin, [[{"sql": f"DROP DATABASE IF EXISTS {DBNAME}"}],
                                      [{"sql": f"CREATE DATABASE {DBNAME}"}]], what="create database")
            conn = server.connection.with_dbname(DBNAME).to_driver()
            for step in plan.steps:
                server.check_alive()
                if isinstance(step, LoadStep):
                    self._timed_step(target_id, target, "load", step.label, lambda: self._load(conn, step))
                elif isinstance(step, SettleStep):
                    self._timed_step(target_id, target, "settle", step.label, lambda: self._settle(conn, step))
                elif step.warm or step.key in pending:
                    self._run_step(server, conn, target, target_id, step, outcome)
        finally:
            server.stop()
            self._keep_log(server, target_id)

    def _start(self, server: PostgresServer, target_id: int, install: InstallInfo) -> dict:
        server.init()
        server.start()
        admin = server.connection.to_driver()
        rows = process.query(admin, "SELECT name, setting FROM pg_settings ORDER BY name")
        version = process.query(admin, "SELECT version()")
        info = server.info({r[0]: r[1] for r in rows})
        facts = {"version": info.version, "version_string": version[0][0] if version else info.version_string,
                 "data_dir": str(info.data_dir), "log_path": str(info.log_path), "settings": info.settings,
                 "config_text": getattr(server, "config_text", "")}
        self.store.set_target_facts(target_id, install=_install_dict(install), server=facts)
        return {"port": server.connection.port, "version_string": facts["version_string"]}

    def _timed_step(self, target_id: int, target: TargetSpec, kind: str, label: str, action) -> None:
        self.progress.step_start(target.name, label, 0.0)
        started = time.monotonic()
        try:
            detail = action() or {}
        except UserError as exc:
            self.store.add_step(target_id, kind, label, "failed", time.monotonic() - started, {}, exc.message)
            self.progress.step_end(target.name, label, "failed", exc.message)
            raise
        elapsed = time.monotonic() - started
        self.store.add_step(target_id, kind, label, "ok", elapsed, detail)
        self.progress.step_end(target.name, label, "ok", f"{elapsed:.1f}s")

    def _keep_log(self, server: PostgresServer, target_id: int) -> None:
        """Copy the server log next to the store (the run dir is wiped by the next run)."""
        try:
            dest = self.store.path.parent / "dbdrift-logs" / f"target-{target_id}-server.log"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(server.log_path, dest)
        except OSError:
            pass

    # -- load and settle (spec §1.3, §1.9) ---------------------------------------------------------
    def _load(self, conn: dict, step: LoadStep) -> dict:
        workers = max(1, os.cpu_count() or 1)
        phases = load_phases(step.tables, step.rows, workers)
        started = time.monotonic()
        process.exec_jobs(conn, phases, threads=workers, seed=self.spec.seed, what="load")
        elapsed = time.monotonic() - started
        prewarm = self._prewarm(conn, step.tables)
        rows = step.tables * step.rows
        return {"rows": rows, "seconds": elapsed, "rows_per_s": rows / elapsed if elapsed else None,
                "prewarm": prewarm}

    def _prewarm(self, conn: dict, tables: int) -> str:
        relations = [r for n in range(1, tables + 1) for r in (f"sbtest{n}", f"sbtest{n}_pkey", f"k_{n}")]
        sql = "SELECT " + ", ".join(f"pg_prewarm('{r}')" for r in relations)
        try:
            process.exec_jobs(conn, [[{"sql": "CREATE EXTENSION IF NOT EXISTS pg_prewarm"}], [{"sql": sql}]],
                              what="prewarm")
            return "pg_prewarm"
        except DriverError as exc:
            self.progress.message(f"note: pg_prewarm unavailable ({exc.message}); the warm-up run warms the cache")
            return "unavailable"

    def _settle(self, conn: dict, step: SettleStep) -> dict:
        started = time.monotonic()
        tables = self.spec.tables
        vacuum = [{"sql": f"VACUUM (ANALYZE, INDEX_CLEANUP ON) sbtest{n}"} for n in range(1, tables + 1)]
        process.exec_jobs(conn, [vacuum, [{"sql": "CHECKPOINT"}]], threads=tables, what="settle")
        work_s = time.monotonic() - started
        sleep_s = max(0.0, step.total_s - work_s)
        time.sleep(sleep_s)
        return {"work_s": work_s, "slept_s": sleep_s}

    # -- one microbenchmark run -------------------------------------------------------------------
    def _run_step(self, server: PostgresServer, conn: dict, target: TargetSpec, target_id: int,
                  step: RunStep, outcome: CampaignOutcome) -> None:
        spec = self._driver_spec(conn, step)
        self.progress.step_start(target.name, step.label, step.duration_s + step.warmup_s)
        result = process.run_driver("run", spec, timeout_s=step.warmup_s + step.duration_s + 120)
        record = self._record(step, spec, result)
        if record.status != "ok":
            record.server_log_tail = server.log_tail(40)
        if not step.warm or record.status != "ok":
            self.store.add_run(target_id, record)
        if record.status == "ok":
            outcome.runs_ok += 0 if step.warm else 1
            self.progress.step_end(target.name, step.label, "ok", _value_text(record))
        else:
            outcome.runs_failed += 1
            self.progress.step_end(target.name, step.label, record.status, record.error or "")
        if result.interrupted:
            raise KeyboardInterrupt
        if record.status == "failed":
            server.check_alive()  # a dead server ends this target with a ServerError

    def _driver_spec(self, conn: dict, step: RunStep) -> dict:
        test = step.test
        return {
            "backend": "postgres", "connection": conn, "seed": self.spec.seed + step.repeat,
            "threads": step.threads, "warmup_s": step.warmup_s, "duration_s": step.duration_s,
            "interval_s": self.spec.interval_s, "tables": self.spec.tables, "table_size": self.spec.rows,
            "rand": {"type": "zipfian", "exp": 0.8} if test.rand_type == "zipfian" else {"type": "uniform"},
            "prepared": self.spec.prepared,
            "workload": sysbench.render_workload(test, "postgres", self.spec.rows),
        }

    def _record(self, step: RunStep, spec: dict, result: process.DriverResult) -> RunRecord:
        out = result.output
        record = RunRecord(
            test=step.name, test_group=step.test.group, threads=step.threads, repeat=step.repeat,
            status="ok", warmup_s=step.warmup_s, duration_s=step.duration_s, metric=step.test.metric,
            driver_spec=spec, intervals=out.intervals,
            client_cpu_user_s=result.rusage_user_s, client_cpu_sys_s=result.rusage_sys_s)
        if out.intervals:
            t = totals(out.intervals)
            record.measured_s, record.events, record.statements, record.rows = (
                t.measured_s, t.events, t.statements, t.rows)
            record.errors, record.latency, record.qps, record.tps = t.errors, t.latency, t.qps, t.tps
            record.value = scan_krps(self.spec.rows, t.events, t.measured_s, step.threads) \
                if step.test.metric == "krps" else t.qps
            record.warnings = run_warnings(step, t, self.spec.interval_s)
        if result.interrupted:
            record.status, record.error = "interrupted", "interrupted by the user (Ctrl-C)"
        elif result.exit_code != 0 or out.summary is None or not out.intervals:
            record.status, record.error = "failed", process.fatal_message(result, f"run {step.label}")
        return record


def load_phases(tables: int, rows: int, workers: int) -> list[list[dict]]:
    """COPY in parallel chunks, then the PK and k indexes built in parallel (spec §1.3, fast path).

    The table is created without its PK and the PK is attached from a unique index after the
    load: the same final schema as sysbench's, built in a fraction of the time.
    """
    create, copy, index, attach = [], [], [], []
    chunks = max(1, workers // tables) if tables < workers else 1
    for n in range(1, tables + 1):
        create.append({"sql": f"DROP TABLE IF EXISTS sbtest{n}; CREATE TABLE sbtest{n} ("
                              "id SERIAL, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, "
                              "pad CHAR(60) DEFAULT '' NOT NULL)"})
        step = -(-rows // chunks)
        for first in range(1, rows + 1, step):
            copy.append({"copy_sbtest": {"sql": f"COPY sbtest{n} (id, k, c, pad) FROM STDIN",
                                         "first_id": first, "last_id": min(rows, first + step - 1), "k_max": rows}})
        index.append({"sql": f"CREATE UNIQUE INDEX sbtest{n}_pkey ON sbtest{n} (id)"})
        index.append({"sql": f"CREATE INDEX k_{n} ON sbtest{n} (k)"})
        attach.append({"sql": f"ALTER TABLE sbtest{n} ADD CONSTRAINT sbtest{n}_pkey PRIMARY KEY USING INDEX "
                              f"sbtest{n}_pkey; SELECT setval(pg_get_serial_sequence('sbtest{n}', 'id'), {rows})"})
    return [create, copy, index, attach]


def scan_krps(table_rows: int, events: int, measured_s: float, threads: int) -> float | None:
    """Spec §1.5: Krps = (nrows/1000) / avg scan latency (s), per scanning thread.

    In a closed loop the average latency is measured_s * threads / events.
    """
    if events <= 0 or measured_s <= 0:
        return None
    return (table_rows / 1000.0) * events / (measured_s * threads)


def run_warnings(step: RunStep, t, interval_s: float) -> list[dict]:
    warnings = []
    expected = int(step.duration_s / interval_s)
    intervals = round(t.measured_s / interval_s)
    if expected and intervals < expected - 1:
        warnings.append({"kind": "few_intervals", "message": f"{intervals} intervals, expected {expected}"})
    ignored = sum(t.errors.values())
    if ignored:
        warnings.append({"kind": "ignored_errors", "message": f"{ignored} ignorable errors: {json.dumps(t.errors)}"})
    return warnings


def _value_text(record: RunRecord) -> str:
    if record.value is None:
        return "no value"
    unit = "Krps" if record.metric == "krps" else "QPS"
    return f"{record.value:,.0f} {unit}"


def _install_dict(install: InstallInfo) -> dict:
    return {"engine": install.engine, "bindir": str(install.bindir), "version": install.version,
            "source": install.source}
