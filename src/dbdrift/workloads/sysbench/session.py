"""sysbench's half of a target's session (layer runner): the steps of its plan on one server,
on the session every workload shares (runner/session.py): the load and prewarm of the sbtest
tables, a restart or a new server between repeats, one measured run through the driver and its
RunRecord, the query plans of its test, and the runs stored as failed or skipped.

Stores each run as soon as it ends; the order of targets and steps is run.py's.
"""
from __future__ import annotations

import json
import os
import time

from dbdrift.analysis.plans import plan_shape
from dbdrift.cpus import Placement
from dbdrift.driver import process
from dbdrift.driver.protocol import RunTotals, latency_of, totals
from dbdrift.errors import ServerError, UserError, interrupted_error
from dbdrift.model import STEAL_MAX_PCT, InstallInfo, JsonObject, TargetSpec
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.plan.lifecycle import RESTART_S, STOP_S, SettleStep
from dbdrift.runner.observe import RunObservers
from dbdrift.runner.progress import ProgressSink
from dbdrift.runner.session import TargetSession
from dbdrift.store.store import RunRecord, Store
from dbdrift.workloads.sysbench import catalog as sysbench
from dbdrift.workloads.sysbench.plan import params
from dbdrift.workloads.sysbench.dialect import DBNAME, SysbenchDialect, for_engine
from dbdrift.workloads.sysbench.expand import FreshStep, LoadStep, RunStep, load_s, run_s


class SysbenchSession(TargetSession):
    """A target's server running sysbench's steps; counts the runs it stored by how they ended."""

    dialect: SysbenchDialect

    def __init__(self, spec: CampaignSpec, target: TargetSpec, install: InstallInfo, target_id: int,
                 store: Store, progress: ProgressSink, perf_counters: bool = False,
                 placement: Placement = Placement()) -> None:
        super().__init__(spec, target, install, target_id, store, progress, dbname=DBNAME,
                         perf_counters=perf_counters, placement=placement)
        self.dialect = for_engine(install.engine, install.version)
        self.runs_ok = 0
        self.runs_failed = 0
        self.runs_interrupted = 0
        self.runs_skipped = 0
        self.attempted: set[tuple[str, int, int]] = set()  # keys of runs stored by this session
        self.planned: set[str] = set()  # tests whose query plans this session stored

    # -- a new start between repeats (docs/noise.md) ---------------------------------------------
    def halt(self, step: RunStep) -> None:
        """Stop the server for a restart of all targets together: the campaign stops every one
        before it starts any (restart(step, stopped=True)), see Sequence._restart_all (run.py)."""
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
            return {"prewarm": self.prewarm(params(self.spec).tables, restarted=True), "before": step.label}

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
        """The settle step's work on every sbtest table (or `tables`)."""
        return super().settle_work(step, tables or [f"sbtest{n}" for n in range(1, params(self.spec).tables + 1)])

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
        pace = RunPace(step, params(self.spec).rows)

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
        executed as often as a run's start executes it (SysbenchDialect.explain_prepared).
        A statement the server cannot EXPLAIN is stored with its error; the campaign goes on.
        The EXPLAIN JSON is what reports compare (results/plans.py of this slice); the shape stored beside it
        is this version's reading of it, for a look at the store, and None where it has none."""
        self.planned.add(step.name)
        for stmt in sysbench.explain_statements(step.test, self.install.engine, params(self.spec).rows):
            index, sql = stmt.index, stmt.sql
            try:
                text = (self.dialect.explain_prepared(self.conn, stmt) if params(self.spec).prepared
                        else self.dialect.explain(self.conn, sql))
            except UserError as exc:
                self.store.add_plan(self.target_id, step.name, index, sql, None, None, str(exc)[:500])
                continue
            try:
                shape = plan_shape(self.install.engine, text)
            except ValueError:
                shape = None
            self.store.add_plan(self.target_id, step.name, index, sql, text, shape, None)

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
            "interval_s": self.spec.interval_s, "tables": params(self.spec).tables, "table_size": params(self.spec).rows,
            "rand": {"type": "zipfian", "exp": 0.8} if test.rand_type == "zipfian" else {"type": "uniform"},
            "prepared": params(self.spec).prepared,
            "workload": sysbench.render_workload(test, self.dialect.sql_dialect, params(self.spec).rows),
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
                record.value = sysbench.scan_krps(params(self.spec).rows, t.events, t.measured_s, step.threads) \
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


class RunPace:
    """How far a sysbench run is and its rate now, from the driver's lines (docs/protocol.md
    `run`): the warm-up line, then an interval line every interval_s; None for other lines."""

    def __init__(self, step: RunStep, rows: int) -> None:
        self.step, self.rows = step, rows

    def read(self, obj: JsonObject) -> tuple[float, str] | None:
        step = self.step
        whole = step.warmup_s + step.duration_s
        if obj.get("type") == "warmup":
            return (step.warmup_s / whole if whole else 0.0), "warm-up done"
        if obj.get("type") != "interval":
            return None
        span = float(obj.get("end_s", 0.0)) - float(obj.get("start_s", 0.0))
        return (step.warmup_s + float(obj.get("end_s", 0.0))) / whole if whole else 1.0, self.rate(obj, span)

    def rate(self, interval: JsonObject, span: float) -> str:
        """The interval's throughput in the unit of the run's value: QPS, or Krps for a scan."""
        if span <= 0:
            return ""
        if self.step.test.metric == "krps":
            krps = sysbench.scan_krps(self.rows, int(interval.get("events", 0)), span, self.step.threads)
            return "" if krps is None else f"{krps:,.0f} Krps"
        return f"{int(interval.get('statements', 0)) / span:,.0f} QPS"
