"""One target's server for the length of a campaign: start, load, settle, run steps, stop.

Owns the side effects on one server and the RunRecord of each run; it does not decide the
order of targets (the workload's run.py does) and stores each run as soon as it ends.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dbdrift.analysis.plans import plan_shape
from dbdrift.workloads.sysbench import catalog as sysbench
from dbdrift.cpus import Placement, pinned
from dbdrift.driver import process
from dbdrift.driver.protocol import RunTotals, latency_of, totals
from dbdrift.errors import DriverError, ServerError, UserError, interrupted_error
from dbdrift.model import STEAL_MAX_PCT, InstallInfo, JsonObject, TargetSpec, WorkloadRun
from dbdrift.metrics import binary
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.plan.expand import (RESTART_S, SETTLE_WORK_S, START_S, STOP_S, FreshStep, LoadStep, RunStep,
                                 SettleStep, load_s, run_s)
from dbdrift.runner import sourcebuild
from dbdrift.runner.dialect import DBNAME, for_engine
from dbdrift.metrics.sampler import Sampler
from dbdrift.runner import events
from dbdrift.runner.events import EngineWatch
from dbdrift.runner.observe import RunObservers, ServerFlame, StepWatchers
from dbdrift.runner.progress import ProgressSink, RunPace
from dbdrift.server.base import full_disk_hint, live_servers, own_run_dir, release_run_dir
from dbdrift.server import rundir
from dbdrift.server.engines import make_server
from dbdrift.store.guard import StoreFull
from dbdrift.store.store import RunRecord, Store


@dataclass
class RepeatOutcome:
    """How a repeat kept by TargetSession.keep_repeat ended; the block may set a failure it
    found without raising (a window that failed), an exception sets its own."""

    status: str = "ok"  # ok | failed | interrupted
    error: str | None = None


class TargetSession:
    def __init__(self, spec: CampaignSpec, target: TargetSpec, install: InstallInfo, target_id: int,
                 store: Store, progress: ProgressSink, perf_counters: bool = False, dbname: str = DBNAME,
                 placement: Placement = Placement()) -> None:
        self.spec, self.target, self.install = spec, target, install
        self.placement = placement  # the server's processes and the timed driver runs (dbdrift/cpus.py)
        self.perf_counters = perf_counters  # attach `perf stat` to the backends during each run
        self.target_id, self.store, self.progress = target_id, store, progress
        run_dir = rundir.new_run_dir(rundir.work_dir(), spec.name, target.name)
        own_run_dir(run_dir)  # removed on the way out even when a second Ctrl-C cuts stop() short
        owner = rundir.owner_facts(spec.name, target.name, install.engine, store.path)
        self.server = make_server(target, install, run_dir, owner)
        self.dialect = for_engine(install.engine, install.version)
        self.dbname = dbname
        self.position: int | None = None  # its place in this repeat's order of targets, when they run in turn
        self.conn: JsonObject = {}
        self._settling: JsonObject | None = None
        self.runs_ok = 0
        self.runs_failed = 0
        self.runs_interrupted = 0
        self.runs_skipped = 0
        self.attempted: set[tuple[str, int, int]] = set()  # keys of runs stored by this session
        self.planned: set[str] = set()  # tests whose query plans this session stored
        self.started = False  # the server came up at least once
        self.failed = False  # set when an error ended this target (runner/campaign.py)
        self.log_copy: Path | None = None  # where stop() kept the server log

    @property
    def name(self) -> str:
        return self.target.name

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        self.timed_step("server", f"start {self.install.engine} {self.install.version}", self._start,
                        START_S.get(self.install.engine, 2.0))
        self.started = True
        admin = self.server.connection.to_driver()
        process.exec_jobs(admin, self.dialect.create_database(self.dbname), backend=self.dialect.backend,
                          what="create database")
        self.conn = self.server.connection.with_dbname(self.dbname).to_driver()

    def stop(self) -> None:
        """Stop the server, keep its log beside the store, and remove its data directory
        (a campaign's servers are never reused; DBDRIFT_KEEP_DATA=1 keeps them to inspect)."""
        self.server.stop()
        if self.server.launched:
            try:
                self.log_copy = rundir.copy_log(self.server.log_path, self.store.path, self.spec.name,
                                                self.store.campaign_of(self.target_id), self.name)
            except OSError:
                pass
        if not os.environ.get("DBDRIFT_KEEP_DATA") and not self.server.is_alive():
            # After a failure the logs and config the error points at stay; the data goes.
            shutil.rmtree(self.server.data_dir if self.failed else self.server.run_dir, ignore_errors=True)
            release_run_dir(self.server.run_dir)  # removed, or a failed target's logs kept on purpose

    def halt(self, step: RunStep) -> None:
        """Stop the server for a restart of all targets together: the campaign stops every one
        before it starts any (restart(step, stopped=True)), see Sequence._restart_all (workloads/sysbench/run.py)."""
        self.check_ready(step, self.driver_spec(step))  # one that died since its last run is not revived
        self.server.stop()

    def restart(self, step: RunStep, stopped: bool = False) -> None:
        """Stop the server (unless `stopped` by halt) and start it again on the same data, pinned
        as at the first start, then warm its cache: each repeat of a test after the first runs
        on a fresh start, so what a start draws (docs/noise.md) varies between repeats as it
        does between targets."""
        if not stopped:
            self.check_ready(step, self.driver_spec(step))

        def work() -> JsonObject:
            if not stopped:
                self.server.stop()
            self._launch()
            return {"prewarm": self.prewarm(self.spec.tables, restarted=True), "before": step.label}

        self.timed_step("server", f"restart before {step.label}", work, RESTART_S)

    def reload(self, step: FreshStep) -> None:
        """`restart = "reload"`: stop the server, keep its log, remove its data directory and
        start a new one (the plan's load and settle follow), so that each repeat also draws
        what a restart keeps: the data files (docs/noise.md). Interleaved targets do not call
        this: they all retire before any starts again, in the order restarts use
        (Sequence._cycle_all). A server that died is not replaced."""
        self.retire(step)
        self.start()

    def retire(self, step: FreshStep) -> None:
        """The first half of a reload: stop the server, keep its log, remove its data directory."""
        self.server.check_alive()
        def work() -> JsonObject:
            self.stop()
            return {"before": step.label}

        self.timed_step("server", f"stop for {step.label}", work, STOP_S)

    def _launch(self) -> None:
        with pinned(self.placement.server):  # every backend and thread it starts inherits the set
            self.server.start()

    def _start(self) -> JsonObject:
        self.server.init()
        self._launch()
        admin = self.server.connection.to_driver()
        info = self.server.info(self.dialect.settings(admin))
        version_string = self.dialect.version_string(admin)
        facts = {"version": info.version, "version_string": version_string or info.version_string,
                 "data_dir": str(info.data_dir), "log_path": str(info.log_path), "settings": info.settings,
                 "config_text": self.server.config_text}
        self.store.set_target_facts(self.target_id, install=_install_dict(self.install), server=facts)
        return {"port": self.server.connection.port, "version_string": facts["version_string"]}

    def timed_step(self, kind: str, label: str, action: Callable[[], JsonObject | None],
                   expected_s: float = 0.0) -> float:
        """Run a setup step, store it as a step record, and return the seconds it took;
        `expected_s` is its share of the campaign's estimate (progress ETA)."""
        self.progress.step_start(self.name, label, expected_s)
        started = time.monotonic()
        try:
            detail = action() or {}
        except UserError as exc:
            if not isinstance(exc, StoreFull):  # the store's disk, named in its own hint, not the run dir's
                exc.hint = full_disk_hint(exc.message, self.server.run_dir) or exc.hint
            self.store.add_step(self.target_id, kind, label, "failed", time.monotonic() - started, {}, exc.message)
            self.progress.step_end(self.name, label, "failed", exc.message)
            if kind != "server":
                self.raise_if_dead()  # report the server's death, not the client error it caused
            raise
        elapsed = time.monotonic() - started
        self.store.add_step(self.target_id, kind, label, "ok", elapsed, detail)
        self.progress.step_end(self.name, label, "ok", f"{elapsed:.1f}s")
        return elapsed

    # -- load and settle (docs/methodology.md) ---------------------------------------------------
    def load(self, step: LoadStep, workers: int | None = None) -> None:
        """Load with `workers` concurrent driver jobs (default one per CPU): the tables side by
        side, then their indexes. Each table is one id-ordered stream, so its row order does
        not depend on `workers`; one worker builds everything one after the other."""
        self.server.check_alive()
        self.timed_step("load", step.label, lambda: self._load(step, workers or max(1, os.cpu_count() or 1)),
                        load_s(step))

    def _load(self, step: LoadStep, workers: int) -> JsonObject:
        started = time.monotonic()
        process.exec_jobs(self.conn, self.dialect.load_phases(step.tables, step.rows, workers), threads=workers,
                          backend=self.dialect.backend, seed=self.spec.seed, what="load")
        elapsed = time.monotonic() - started
        rows = step.tables * step.rows
        return {"rows": rows, "seconds": elapsed, "rows_per_s": rows / elapsed if elapsed else None,
                "prewarm": self.prewarm(step.tables)}

    def prewarm(self, tables: int, restarted: bool = False) -> str:
        how, note = self.dialect.prewarm(self.conn, tables, restarted)
        if note:
            self.progress.message(f"note: {note}")
        return how

    def settle_work(self, step: SettleStep, tables: list[str] | None = None) -> float:
        """The settle step's work (vacuum/analyze and checkpoint, or analyze and flushing); returns
        the seconds it took. The caller sleeps the rest of the settle time (once for all
        targets when they take turns), then calls settle_end."""
        self.server.check_alive()

        def work() -> JsonObject:
            names = tables or [f"sbtest{n}" for n in range(1, self.spec.tables + 1)]
            self._settling = self.dialect.settle_start(self.conn, names)
            return {"settle_total_s": step.total_s, **self._settling}

        return self.timed_step("settle", step.label, work, SETTLE_WORK_S)

    def settle_end(self) -> None:
        """After the settle sleep: restore what the settle step changed (InnoDB flushing)."""
        started, self._settling = self._settling, None
        if started:
            self.dialect.settle_end(self.conn, started)

    # -- one microbenchmark run ------------------------------------------------------------------
    def run(self, step: RunStep) -> RunRecord:
        """Run one step through the driver and store it (warm runs only when they fail).

        Raises KeyboardInterrupt after storing an interrupted run, and ServerError when the
        run failed because the server died.
        """
        spec = self.driver_spec(step)
        self.check_ready(step, spec)
        self.progress.step_start(self.name, step.label, run_s(step))
        observers = self.observers(step, step.duration_s).start()
        pace = RunPace(step, self.spec.rows)

        def on_line(obj: JsonObject) -> None:
            observers.on_line(obj)
            now = pace.read(obj)
            if now is not None:
                self.progress.step_progress(self.name, step.label, *now)

        try:
            result = process.run_driver("run", spec, timeout_s=step.warmup_s + step.duration_s + 120,
                                        on_line=on_line, on_start=observers.on_driver_start,
                                        cpus=self.placement.driver)
        finally:
            observers.stop()
        record = self.conclude(step, spec, result, observers)
        if result.interrupted:
            raise KeyboardInterrupt
        if record.status == "failed":
            self.raise_if_dead()  # a dead server ends this target with a ServerError
        return record

    def check_ready(self, step: RunStep, spec: JsonObject) -> None:
        """Before a run: a server that died since the last one gets the run stored as failed."""
        try:
            self.server.check_alive()
        except ServerError as exc:  # died between runs (e.g. while another target ran alone)
            self._store_failed(step, spec, exc.message)
            raise

    def observers(self, step: RunStep, measured_s: float, steal: bool = True) -> RunObservers:
        return RunObservers(self.sampler(), self.server.run_dir, measured_s,
                            step.repeat, self.perf_counters, self.spec.flamegraphs,
                            watch_backends=self.dialect.backend_pids_are_processes, steal=steal)

    def engine_watch(self) -> EngineWatch:
        """The engine's own counters each second (runner/events.py), not started, over a
        connection of its own to this target's benchmark database."""
        major = int(self.install.version.split(".")[0]) if self.install.version[:1].isdigit() else 0
        return events.watch(self.install.engine, self.server.connection.with_dbname(self.dbname), major)

    def sampler(self) -> Sampler:
        """The 1 s sampler of this target's running server (not started), its CPU split by role;
        every other server dbdrift runs now (the other targets') is its peer: their CPU and I/O
        are dbdrift's, not foreign load."""
        peers = tuple(pid for s in live_servers() if s is not self.server and (pid := s.server_pid) is not None)
        return Sampler(self.server.server_pid, self.server.data_dir, self.server.roles(), peers=peers)

    def step_watchers(self) -> StepWatchers:
        """The sampler and the engine's counters started, and the server's stacks ready to record
        (`flamegraphs`), for one Insert Benchmark step or TPROC-C run on this target's server."""
        sampler = self.sampler()
        sampler.start()
        return StepWatchers(sampler, self.engine_watch().start(),
                            ServerFlame(self.spec.flamegraphs, self.server.server_pid, self.server.run_dir / "perf.data"))

    def conclude(self, step: RunStep, spec: JsonObject, result: process.DriverResult, observers: RunObservers,
                 share: float = 1.0) -> RunRecord:
        """Make the run's record from the driver's result and what was observed, store it and
        report it. `share` < 1: this target's part of a run the targets took turns in (its
        window's host-wide counters are scaled to it, see RunObservers.attach)."""
        record = self.record(step, spec, result)
        observers.attach(record, share)
        if record.status != "ok":
            record.server_log_tail = self.server.log_tail(40)
        if not step.warm or record.status != "ok":
            self.store.add_run(self.target_id, record)
            self.attempted.add(step.key)
        if record.status == "ok":
            self.runs_ok += 0 if step.warm else 1
            self.progress.step_end(self.name, step.label, "ok", _value_text(record))
            if not step.warm and step.name not in self.planned:
                self.capture_plans(step)
        else:
            if record.status == "interrupted":
                self.runs_interrupted += 0 if step.warm else 1
            else:
                self.runs_failed += 1
            self.progress.step_end(self.name, step.label, record.status, record.error or "")
        return record

    def capture_plans(self, step: RunStep) -> None:
        """Store the plan of each of the test's statements as the server chooses it now, after
        the test's first measured run (its data, statistics and caches as the run left them);
        of a prepared statement (`prepared`, the default) the plan it gets once it has been
        executed as often as a run's start executes it (Dialect.explain_prepared).
        A statement the server cannot EXPLAIN is stored with its error; the campaign goes on.
        The EXPLAIN JSON is what reports compare (results/plans.py); the shape stored beside it
        is this version's reading of it, for a look at the store, and None where it has none."""
        self.planned.add(step.name)
        for stmt in sysbench.explain_statements(step.test, self.install.engine, self.spec.rows):
            index, sql = stmt.index, stmt.sql
            try:
                text = (self.dialect.explain_prepared(self.conn, stmt) if self.spec.prepared
                        else self.dialect.explain(self.conn, sql))
            except UserError as exc:
                self.store.add_plan(self.target_id, step.name, index, sql, None, None, str(exc)[:500])
                continue
            try:
                shape = plan_shape(self.install.engine, text)
            except ValueError:
                shape = None
            self.store.add_plan(self.target_id, step.name, index, sql, text, shape, None)

    @contextmanager
    def keep_repeat(self, workload: str, record: JsonObject, repeat: int) -> Iterator[RepeatOutcome]:
        """Store the repeat whole (store.add_workload_run) when the block ends, whatever ends
        it: `record` as the block left it, so what was measured before a failure or Ctrl-C is
        kept; the exception, if any, goes on."""
        outcome, started = RepeatOutcome(), time.monotonic()
        try:
            yield outcome
        except KeyboardInterrupt:
            outcome.status, outcome.error = "interrupted", interrupted_error()
            raise
        except (ServerError, DriverError) as exc:
            outcome.status, outcome.error = "failed", exc.message
            raise
        finally:
            self.store.add_workload_run(self.target_id, WorkloadRun(
                target=self.name, workload=workload, status=outcome.status, record=record,
                elapsed_s=time.monotonic() - started, error=outcome.error, repeat=repeat, position=self.position))

    def raise_if_dead(self, grace_s: float = 1.0) -> None:
        """After a failure: raise the server's ServerError if it died. A postmaster killed a
        moment ago can still be exiting (tearing down its shared memory), so look again for
        up to `grace_s` before concluding it is alive."""
        deadline = time.monotonic() + grace_s
        while True:
            self.server.check_alive()
            if time.monotonic() >= deadline:
                return
            time.sleep(0.05)

    def _store_failed(self, step: RunStep, spec: JsonObject, error: str) -> None:
        record = new_record(step, spec, "failed", self.position)
        record.error, record.server_log_tail = error, self.server.log_tail(40)
        self.store.add_run(self.target_id, record)
        self.attempted.add(step.key)
        self.runs_failed += 1
        self.progress.step_end(self.name, step.label, "failed", error)

    def skip(self, steps: list[RunStep], reason: str) -> None:
        """Store `steps` as skipped runs (status "skipped", error `reason`, e.g. "server died"),
        so reports name what was not measured and why; --resume runs them."""
        for step in steps:
            record = new_record(step, {}, "skipped", self.position)
            record.error = reason
            self.store.add_run(self.target_id, record)
            self.attempted.add(step.key)
            self.runs_skipped += 1

    def driver_spec(self, step: RunStep) -> JsonObject:
        test = step.test
        return {
            "backend": self.dialect.backend, "connection": self.conn, "seed": self.spec.seed + step.repeat,
            "threads": step.threads, "warmup_s": step.warmup_s, "duration_s": step.duration_s,
            "interval_s": self.spec.interval_s, "tables": self.spec.tables, "table_size": self.spec.rows,
            "rand": {"type": "zipfian", "exp": 0.8} if test.rand_type == "zipfian" else {"type": "uniform"},
            "prepared": self.spec.prepared,
            "workload": sysbench.render_workload(test, self.dialect.sql_dialect, self.spec.rows),
        }

    def record(self, step: RunStep, spec: JsonObject, result: process.DriverResult) -> RunRecord:
        out = result.output
        record = new_record(step, spec, "ok", self.position)
        record.intervals = out.intervals
        record.client_cpu_user_s, record.client_cpu_sys_s = result.rusage_user_s, result.rusage_sys_s
        if out.intervals:
            t = totals(out.intervals)
            record.measured_s, record.events, record.statements, record.rows = (
                t.measured_s, t.events, t.statements, t.rows)
            record.errors, record.latency, record.qps, record.tps = t.errors, t.latency, t.qps, t.tps
            if not t.latency["count"] and out.summary and out.summary.get("latency_us"):
                record.latency = latency_of(out.summary["latency_us"])  # runs in turns
            if step.test.metric == "krps":  # a run in which no scan finished has no value
                record.value = sysbench.scan_krps(self.spec.rows, t.events, t.measured_s, step.threads) \
                    if t.events > 0 else None
            else:
                record.value = t.qps
            record.warnings = run_warnings(step, t, self.spec.interval_s, out.intervals)
        if result.interrupted:
            record.status, record.error = "interrupted", interrupted_error()
        elif result.exit_code != 0 or out.summary is None or not out.intervals:
            record.status, record.error = "failed", process.fatal_message(result, f"run {step.label}")
        return record


def new_record(step: RunStep, spec: JsonObject, status: str, position: int | None = None) -> RunRecord:
    """A run's record before its results: what the step is, its status, driver spec and place
    in its repeat's order (whole runs taken in turn)."""
    return RunRecord(test=step.name, test_group=step.test.group, threads=step.threads, repeat=step.repeat,
                     status=status, warmup_s=step.warmup_s, duration_s=step.duration_s, metric=step.test.metric,
                     driver_spec=spec, position=position)


def run_warnings(step: RunStep, t: RunTotals, interval_s: float, intervals: list[JsonObject]) -> list[JsonObject]:
    """Enumerated warnings stored with the run so reports can flag the cell."""
    warnings = []
    expected = int(step.duration_s / interval_s)
    got = round(t.measured_s / interval_s)
    if expected and got < expected - 1:
        warnings.append({"kind": "few_intervals", "message": f"{got} intervals, expected {expected}"})
    ignored = sum(t.errors.values())
    if ignored:
        warnings.append({"kind": "ignored_errors", "message": f"{ignored} ignorable errors: {json.dumps(t.errors)}"})
    steal = [iv["steal_pct"] for iv in intervals if iv.get("steal_pct") is not None]
    if steal and max(steal) > STEAL_MAX_PCT:
        warnings.append({"kind": "steal", "message": f"host CPU steal up to {max(steal):.0f}% "
                                                     f"(mean {sum(steal) / len(steal):.1f}%)"})
    return warnings


def _value_text(record: RunRecord) -> str:
    if record.value is None:
        return "no value"
    unit = "Krps" if record.metric == "krps" else "QPS"
    return f"{record.value:,.0f} {unit}"


def _install_dict(install: InstallInfo) -> JsonObject:
    """The install as stored with its target, with its server binary's sizes (`dbdrift bloat`)."""
    facts: JsonObject = {"engine": install.engine, "bindir": str(install.bindir), "version": install.version,
             "source": install.source}
    built = sourcebuild.build_facts(install.bindir) if install.source == "basedir" else None
    if built:  # a commit of a source tree built by `bisect --source`: history tells commits apart by it
        facts["build"] = {k: built.get(k) for k in ("repository", "commit", "committed_at", "depth", "subject")}
    try:
        facts["binary"] = binary.binary_facts(binary.server_binary(install.bindir, install.engine))
    except (UserError, OSError):
        pass  # a wrapper script or an unreadable file: the report then has no size for it
    return facts


def settle_wait(progress: ProgressSink, who: str, step: SettleStep, work_s: float) -> None:
    """Sleep the rest of a settle (its total less the work already done) as a progress step of
    its own, announced with its length before it starts: the work's "ok 0.3s" is not the end
    of the settle. `who` is a target, or "all targets" when they rest together (turns)."""
    rest_s = max(0.0, step.total_s - work_s)
    label = f"{step.label}: quiet for {rest_s:.0f}s (settle_s {step.total_s:g}s less the work)"
    progress.step_start(who, label, rest_s)
    slices = max(1, math.ceil(rest_s / WAIT_SLICE_S))  # the bar and ETA move while it waits
    for n in range(1, slices + 1):
        time.sleep(rest_s / slices)
        progress.step_progress(who, label, n / slices, "")
    progress.step_end(who, label, "ok", f"{rest_s:.1f}s")
    progress.advance(step.total_s - rest_s)  # the work's share of the settle's estimate


WAIT_SLICE_S = 1.0  # a settle's quiet wait reports its progress this often
