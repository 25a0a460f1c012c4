"""Run the Insert Benchmark (docs/methodology.md) for one target: a fresh server, the tables,
then l.i0, l.x, l.i1, l.i2, the settle step and the six query steps (those selected), each
through the driver's `ibench` subcommand; every step is stored as soon as it ends.

The steps build on each other (the rows, the indexes), so a target that fails or is resumed
runs from l.i0 again; a failed target ends there and the campaign goes on with the next.
With `repeats`, each repeat runs every step again on a fresh server and is stored as its own.
"""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from dbdrift.workloads.ibench import catalog as ibench
from dbdrift.workloads.ibench.plan import params
from dbdrift.driver import process
from dbdrift.errors import DriverError, ServerError, interrupted_error
from dbdrift.metrics.sampler import Sampler
from dbdrift.model import EngineEvents, InsertStepResult, InstallInfo, JsonObject
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.plan.lifecycle import SettleStep
from dbdrift.runner.campaign import CampaignOutcome, Runner, target_repeats
from dbdrift.runner.detect import planned_repeats
from dbdrift.runner.session import TargetSession, settle_wait

SETTLE_AFTER = "l.i2"
# Rows per second assumed for the ETA of steps that are not rate limited (refined by nothing:
# the first campaign on a machine shows how far off they are).
ASSUMED_IPS = {"l.i0": 60_000, "l.x": 200_000, "l.i1": 15_000, "l.i2": 3_000}


def estimate_s(step: ibench.IBenchStep, sizes: ibench.IBenchParams) -> float:
    if step.is_query_step:
        return step.rows_per_client / step.inserts_per_second
    rows = sizes.rows_l_i0 if step.name == "l.x" else step.rows_per_client * sizes.clients
    return rows / ASSUMED_IPS[step.name]


def plan_s(spec: CampaignSpec) -> float:
    """Expected seconds of one target's steps and settle."""
    steps = ibench.steps(params(spec))
    settle = spec.settle_total_s() if any(s.name == SETTLE_AFTER for s in steps) else 0.0
    return sum(estimate_s(s, params(spec)) for s in steps) + settle


def progress_steps(spec: CampaignSpec) -> int:
    """Progress steps of one target: its start, table creation, each step, and the settle's work
    and quiet wait (a step each) when the steps include the one it follows."""
    return len(params(spec).steps) + 2 + 2 * (SETTLE_AFTER in params(spec).steps)


def run_target(session: TargetSession, install: InstallInfo, repeat: int = 0) -> None:
    """All selected steps on a fresh server, stored as repeat `repeat`; raises ServerError/DriverError
    when the target fails (stored first), KeyboardInterrupt after storing an interrupted step."""
    spec, sizes = session.spec, params(session.spec)
    session.start()
    tables = sizes.distinct_tables()
    session.timed_step("load", f"create tables {', '.join(tables)}", lambda: _create_tables(session, tables))
    for step in ibench.steps(sizes):
        result = run_step(session, step, repeat)
        if result.status != "ok":
            session.raise_if_dead()
            raise DriverError(f"{session.name}: Insert Benchmark step {step.name} {result.status}: {result.error}",
                              "the later steps need this one's rows; see the server log")
        if step.name == SETTLE_AFTER:
            settle = SettleStep(spec.settle_total_s(), SETTLE_AFTER)
            work_s = session.settle_work(settle, tables)
            settle_wait(session.progress, session.name, settle, work_s)
            session.settle_end()


def _create_tables(session: TargetSession, tables: list[str]) -> JsonObject:
    dialect = session.dialect
    jobs = [[{"sql": sql} for sql in ibench.create_table_sql(t, dialect.sql_dialect)] for t in tables]
    process.exec_jobs(session.conn, [[job] for phase in zip(*jobs) for job in phase], backend=dialect.backend,
                      what="create tables")
    return {"tables": tables}


def driver_spec(session: TargetSession, step: ibench.IBenchStep, repeat: int = 0) -> JsonObject:
    spec, sizes = session.spec, params(session.spec)
    return {
        "backend": session.dialect.backend, "connection": session.conn, "seed": spec.seed + repeat,
        "step": step.name, "clients": sizes.clients, "tables": sizes.tables(), "interval_s": spec.interval_s,
        "rows_per_client": step.rows_per_client, "rows_per_statement": step.rows_per_statement,
        "inserts_per_second": step.inserts_per_second, "deletes": step.deletes, "query": step.query,
        "query_threads": 1 if step.query else 0, "data_length": [10, 20],
        "sql": ibench.ibench_sql(session.dialect.sql_dialect, step),
    }


def run_step(session: TargetSession, step: ibench.IBenchStep, repeat: int = 0) -> InsertStepResult:
    """One step through the driver, with the host sampled over it; stored before returning."""
    session.server.check_alive()
    sizes = params(session.spec)
    spec = driver_spec(session, step, repeat)
    expected = estimate_s(step, sizes)
    label = f"{step.name} ({step.title})"
    if session.spec.repeats > 1:
        label += f", repeat {repeat + 1}/{session.spec.repeats}"
    session.progress.step_start(session.name, label, expected)
    watchers = session.step_watchers()
    timeout_s = max(600.0, 20 * expected + 600)

    marked = [None]  # the t_sec of the last end mark: every client prints a line per interval
    pace = StepPace(step, sizes.clients, expected)

    def on_line(obj: JsonObject) -> None:
        kind = obj.get("type")
        now = pace.read(obj)
        if now is not None:
            session.progress.step_progress(session.name, label, *now)
        if kind == "start":
            watchers.sampler.mark("start", obj.get("mono_s"))
            watchers.watch.mark_start()
            watchers.flame.start(timeout_s)
        elif kind == "interval" and obj.get("t_sec") != marked[0]:
            marked[0] = obj.get("t_sec")
            watchers.sampler.mark("end", obj.get("mono_s"))

    try:
        out = process.run_driver("ibench", spec, timeout_s=timeout_s,
                                 on_line=on_line, on_start=watchers.on_start, cpus=session.placement.driver)
    finally:
        engine, folded, why = watchers.stop()
    if why:
        session.progress.message(f"{session.name} {step.name}: {why}")
    result = replace(_result(session, step, out, watchers.sampler, repeat, engine), folded=folded)
    session.store.add_ibench_step(session.target_id, result, spec)
    session.progress.step_end(session.name, label, result.status, _summary_text(result) if result.status == "ok"
                              else result.error or "")
    if out.interrupted:
        raise KeyboardInterrupt
    return result


class StepPace:
    """How far an Insert Benchmark step is and its rates now, from its clients' interval lines
    (docs/protocol.md `ibench`): the rows inserted of the step's rows, or (l.x, whose index
    build prints nothing) the seconds of its estimate; the inserts and queries a second of every
    client in its latest interval."""

    def __init__(self, step: ibench.IBenchStep, clients: int, expected_s: float) -> None:
        self.step, self.expected_s = step, expected_s
        self.rows = 0 if step.create_indexes else step.rows_per_client * clients
        self.latest: dict[object, JsonObject] = {}  # client -> its latest interval line

    def read(self, obj: JsonObject) -> tuple[float, str] | None:
        if obj.get("type") != "interval":
            return None
        self.latest[obj.get("client")] = obj
        if self.rows:
            fraction = sum(int(c.get("t_ins") or 0) for c in self.latest.values()) / self.rows
        else:
            fraction = float(obj.get("t_sec") or 0.0) / self.expected_s if self.expected_s else 0.0
        rate = f"{sum(float(c.get('i_ips') or 0.0) for c in self.latest.values()):,.0f} inserts/s"
        if self.step.is_query_step:
            rate += f", {sum(float(c.get('i_qps') or 0.0) for c in self.latest.values()):,.0f} queries/s"
        return fraction, rate


def _result(session: TargetSession, step: ibench.IBenchStep, out: process.DriverResult,
            sampler: Sampler, repeat: int = 0, engine: EngineEvents | None = None) -> InsertStepResult:
    summary = out.output.summary or {}
    sizes = params(session.spec)
    elapsed = float(summary.get("elapsed_s") or 0.0)
    inserted, deleted, queries = (int(summary.get(k) or 0) for k in ("inserted", "deleted", "queries"))
    indexed = inserted + sizes.rows_l_i0 if step.name == "l.x" else inserted  # l.x: indexed rows/s

    def rate(n: int) -> float:
        return n / elapsed if elapsed > 0 else 0.0

    histograms = summary.get("histograms") or {}
    status, error = "ok", None
    if out.interrupted:
        status, error = "interrupted", interrupted_error()
    elif out.exit_code != 0 or not summary:
        status, error = "failed", process.fatal_message(out, f"step {step.name}")
    window = sampler.window()
    return InsertStepResult(
        target=session.name, step=step.name, status=status, clients=sizes.clients, elapsed_s=elapsed,
        inserted=inserted, deleted=deleted, queries=queries, ips=rate(indexed), dps=rate(deleted),
        qps=rate(queries), target_ips=step.target_ips(sizes.clients),
        max_insert_us=(histograms.get("insert") or {}).get("max_us"),
        max_delete_us=(histograms.get("delete") or {}).get("max_us"),
        max_query_us=(histograms.get("query") or {}).get("max_us"),
        histograms=histograms,
        per_second=[{k: v for k, v in iv.items() if k not in ("type", "client", "mono_s")}
                    for iv in out.output.intervals if iv.get("client") == 1],
        hardware=window.as_dict() if window else None,
        table_rows=_table_rows(session) if status == "ok" else None,
        error=error, repeat=repeat, position=session.position, events=engine,
        **(_db_sizes(session) if status == "ok" else {}),
    )


def _table_rows(session: TargetSession) -> int | None:
    """Rows in all benchmark tables after the step (the table size must hold from l.i1 on)."""
    tables = params(session.spec).distinct_tables()
    sql = " + ".join(f"(SELECT count(*) FROM {t})" for t in tables)
    return _count(session, f"SELECT {sql}")


def _count(session: TargetSession, sql: str) -> int | None:
    """The number the one-cell query `sql` returns; None when the query fails or returns none."""
    try:
        value = process.query(session.conn, sql, backend=session.dialect.backend)[0][0]
        return None if value is None else int(value)
    except (DriverError, ServerError, ValueError, IndexError):
        return None


def _db_sizes(session: TargetSession) -> JsonObject:
    """etl.sh's sizes after a step, in bytes: the benchmark database (PostgreSQL:
    pg_database_size; InnoDB: `du -bs` of its directory) and the whole data directory."""
    data_dir = Path(session.server.data_dir)
    if session.dialect.backend == "postgres":
        db_bytes = _count(session, "SELECT pg_database_size(current_database())")
    else:
        db_bytes = apparent_bytes(data_dir / session.dbname)
    return {"db_bytes": db_bytes, "datadir_bytes": apparent_bytes(data_dir)}


def apparent_bytes(path: Path) -> int | None:
    """`du -bs PATH`: the apparent sizes of every file under it (None when it is not there)."""
    if not path.exists():
        return None
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue  # removed while walking (a WAL segment recycled)
    return total


def _summary_text(r: InsertStepResult) -> str:
    text = f"{r.ips:,.0f} inserts/s"
    if r.qps:
        text = f"{r.qps:,.0f} queries/s, {text}"
        if r.target_ips:
            text += f" (target {r.target_ips:,.0f})"
    return f"{text} in {r.elapsed_s:.1f}s"


# -- the hooks of the Workload (workloads/registry.py) -------------------------------------------
def run(runner: Runner, installs: dict[str, InstallInfo], outcome: CampaignOutcome) -> None:
    """Every target's steps, one target after the other, each repeat on fresh servers."""
    store, wanted = runner.store, set(params(runner.spec).steps)

    def one(session: TargetSession, install: InstallInfo, target_id: int, repeat: int) -> None:
        store.supersede_ibench(target_id, repeat)  # the steps build on each other: all again
        run_target(session, install, repeat)

    runner.one_after_another(installs, outcome, ibench.DBNAME, plan_s(runner.spec), progress_steps(runner.spec),
                             len(wanted), lambda tid, rep: store.ibench_done(tid, rep) >= wanted,
                             lambda tid, rep: len(store.ibench_done(tid, rep)), one, planned_repeats(runner, outcome))


def estimate(spec: CampaignSpec) -> tuple[float, int]:
    n = target_repeats(spec)
    return plan_s(spec) * n, progress_steps(spec) * n


def clients(spec: CampaignSpec) -> int:
    return params(spec).clients


# -- the checks of the Workload (workloads/registry.py): the Insert Benchmark
def preflight(spec: CampaignSpec) -> None:
    """Nothing to refuse before anything is fetched: the driver runs its steps and needs no Python
    package, and every engine runs them."""


def check_builds(spec: CampaignSpec, cache_dir: Path) -> None:
    """Nothing to refuse in a build before it is fetched: every build of the three engines runs its
    steps (no extension)."""


def check_installs(spec: CampaignSpec, installs: dict[str, InstallInfo]) -> None:
    """Nothing to refuse in a found build: every build of the three engines runs its steps (no
    extension)."""
