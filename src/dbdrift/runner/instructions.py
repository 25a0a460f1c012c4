"""Instructions per event, counted deterministically under valgrind callgrind (no PMU needed).

For one target: a fresh server is loaded at full speed, restarted under callgrind and
prewarmed; each microbenchmark then runs N1 and N2 events on one connection with the same
seed, twice. The connection's backend writes its own profile when it exits, and
instructions/event = (Ir(N2) - Ir(N1)) / (N2 - N1), which cancels connection set-up and the
counts a forked backend inherits from the postmaster. Only the backend is counted: the client
and other server processes (checkpointer, WAL writer) are not.
"""
from __future__ import annotations

import os
import shutil
import time
from statistics import fmean

from dbdrift.analysis.instructions import per_event, repeatability
from dbdrift.catalog.sysbench import MicrobenchmarkSpec
from dbdrift.driver import process
from dbdrift.errors import DriverError, UserError
from dbdrift.metrics.callgrind import parse_profile, wait_complete
from dbdrift.plan.expand import LoadStep, RunStep, SettleStep, TargetPlan
from dbdrift.runner.session import DBNAME, TargetSession
from dbdrift.server import osuser
from dbdrift.server.postgres import VALGRIND_COMMS
from dbdrift.store.store import InstructionRecord

TEMPLATE_DB = "sbtest_loaded"  # the loaded, vacuumed database every counted run starts from
REPEATS = 2  # N1, N2, N1, N2: the second pair shows how repeatable the count is
BASE_EVENTS = 1000  # N1 for a one-row statement; heavier events get proportionally fewer
MIN_FUNCTION_IR = 0.5  # per event; smaller per-function slopes are not stored
START_TIMEOUT_S = 300.0  # a postmaster under callgrind takes seconds, not milliseconds, to start
PROFILE_TIMEOUT_S = 120.0
SETUP_STEPS = 5  # start, load, settle, restart under callgrind, priming run
ESTIMATE_TARGET_S = 20.0  # progress ETA: start, load and restart under callgrind
ESTIMATE_TEST_S = 25.0  # progress ETA: one test's four runs under callgrind


def require_valgrind() -> str:
    """The valgrind binary, or a UserError before any server starts."""
    found = shutil.which("valgrind")
    if not found:
        raise UserError("count_instructions needs valgrind, which is not installed",
                        "apt-get install valgrind (or drop --count-instructions / count_instructions)")
    return found


def event_counts(test: MicrobenchmarkSpec) -> tuple[int, int]:
    """(N1, N2) for a test: about BASE_EVENTS row visits in N1 and five times that in N2.

    A range statement counts range_size/10 (a row visited in an index range costs far less
    than a statement); a scan reads the whole table, so it gets a handful of events.
    """
    if test.metric == "krps":
        return 2, 6
    weight = 0.0
    for stmt in test.statements:
        is_range = "BETWEEN" in stmt.sql.upper()
        weight += stmt.repeat * (max(1.0, test.range_size / 10) if is_range else 1.0)
    n1 = max(10, round(BASE_EVENTS / max(1.0, weight)))
    return n1, 5 * n1


TOGGLE_COLLECT = ("PostgresMain", "secure_read", "pgstat_report_stat")
"""Callgrind counts inside PostgresMain only (a forked backend otherwise inherits the
postmaster's counts at fork time, which grow between two connections and would not cancel),
and not inside secure_read or pgstat_report_stat: whether the next query is already in the
socket when the backend reads, and how often statistics are flushed (once a second), depend
on timing, not on the work of an event."""


def valgrind_command(binary: str, out_dir) -> list[str]:
    """valgrind's command line, pinned to one CPU where taskset exists: server processes that
    never run at the same time never retry a lock's compare-and-swap, which otherwise adds
    a few hundred instructions per thousand events at random."""
    pin = ["taskset", "-c", str(min(os.sched_getaffinity(0)))] if shutil.which("taskset") else []
    return [*pin, binary, "--tool=callgrind", "--trace-children=yes", "--dump-instr=no",
            *(f"--toggle-collect={name}" for name in TOGGLE_COLLECT), f"--callgrind-out-file={out_dir}/cg.%p.out"]


def tests_in_run_order(plan: TargetPlan) -> list[MicrobenchmarkSpec]:
    seen: dict[str, MicrobenchmarkSpec] = {}
    for step in plan.steps:
        if isinstance(step, RunStep) and not step.warm and step.test.name not in seen:
            seen[step.test.name] = step.test
    return list(seen.values())


def count_target(session: TargetSession, plan: TargetPlan, skip: set[str] = frozenset()) -> None:
    """Load a fresh server, restart it under callgrind, count every test and store each count.

    Raises ServerError/DriverError when the server dies (the caller ends the target there).
    """
    tests = [t for t in tests_in_run_order(plan) if t.name not in skip]
    if not tests:
        return
    binary = require_valgrind()
    session.start()
    load = next(step for step in plan.steps if isinstance(step, LoadStep))
    # One COPY stream: parallel streams interleave rows by timing, and a different heap layout
    # (pages visited, visibility-map bits) changed range counts by up to 3% between servers.
    session.load(load, workers=1)
    # Vacuumed and checkpointed as the timed runs see it: hint bits set once, not by the first count.
    # Autovacuum is off under callgrind: it would re-analyze tables and send invalidations at times
    # that depend on the machine's load.
    session.settle_work(SettleStep(0.0, "load"))
    _exec_admin(session, [f"CREATE DATABASE {TEMPLATE_DB} TEMPLATE {DBNAME}{_file_copy(session)}",
                          "ALTER SYSTEM SET autovacuum = off"])
    out_dir = session.server.run_dir / "callgrind"
    out_dir.mkdir(exist_ok=True)
    osuser.chown_tree(out_dir, osuser.server_user())
    session.timed_step("server", "restart under valgrind callgrind", lambda: session.server.start_wrapped(
        valgrind_command(binary, out_dir), VALGRIND_COMMS, START_TIMEOUT_S))
    session.prewarm(load.tables)
    # The first backends after a start do one-off work (shared statistics entries, hint bits
    # on shared catalogs) that no later run repeats: spend it on a run nobody counts.
    session.timed_step("server", "prime the server under callgrind",
                       lambda: {"instructions": _profile_of_run(session, tests[0], event_counts(tests[0])[0], out_dir,
                                                                load.tables).total_ir})
    for test in tests:
        record = count_test(session, test, out_dir, load.tables)
        session.store.add_instructions(session.target_id, record)
        if record.status != "ok":
            session.raise_if_dead()


def supports(engine: str) -> bool:
    """Counting needs one backend process per connection to put under callgrind: PostgreSQL."""
    return engine == "postgres"


def count_test(session: TargetSession, test: MicrobenchmarkSpec, out_dir, tables: int) -> InstructionRecord:
    n1, n2 = event_counts(test)
    label = f"{test.name}: instructions/event ({n1} and {n2} events under callgrind)"
    session.progress.step_start(session.name, label, ESTIMATE_TEST_S)
    started = time.monotonic()
    pairs: list[list[int]] = []
    first_pair = []
    try:
        for rep in range(REPEATS):
            profiles = [_profile_of_run(session, test, n, out_dir, tables) for n in (n1, n2)]
            pairs.append([p.total_ir for p in profiles])
            if rep == 0:
                first_pair = profiles
    except (DriverError, UserError) as exc:
        session.progress.step_end(session.name, label, "failed", exc.message)
        return InstructionRecord(test.name, "failed", n1, n2, time.monotonic() - started, pairs, error=exc.message)
    slopes = [(b - a) / (n2 - n1) for a, b in pairs]
    cost = per_event(first_pair[0], n1, first_pair[1], n2)
    record = InstructionRecord(
        test.name, "ok", n1, n2, time.monotonic() - started, pairs, fmean(slopes), repeatability(slopes),
        _significant(cost.self_per_event), _significant(cost.inclusive_per_event))
    session.progress.step_end(session.name, label, "ok",
                              f"{record.ir_per_event:,.0f} instr/event (spread {record.spread_pct:.3f}%)")
    return record


def _profile_of_run(session: TargetSession, test: MicrobenchmarkSpec, events: int, out_dir, tables: int):
    """Run `events` events on one fresh connection and parse that backend's profile.

    Writes change what the next run finds (dead tuples, pruning, index growth), and reads
    after them clean up, so every run starts from a fresh, prewarmed copy of the loaded database.
    """
    force = " WITH (FORCE)" if session.server.major >= 13 else ""
    _exec_admin(session, [f"DROP DATABASE IF EXISTS {DBNAME}{force}",
                          f"CREATE DATABASE {DBNAME} TEMPLATE {TEMPLATE_DB}{_file_copy(session)}"])
    session.prewarm(tables)
    spec = session.driver_spec(RunStep(test.name, test, 1, 0, 3600.0, 0.0))
    spec.update({"max_events": events, "interval_s": 3600.0, "seed": session.spec.seed})
    pids: list[int] = []
    result = process.run_driver("run", spec, timeout_s=3600,
                                on_line=lambda o: pids.extend(o.get("backend_pids", [])) if o.get("type") == "start"
                                else None)
    if result.interrupted:
        raise KeyboardInterrupt
    if result.exit_code != 0 or not pids:
        raise DriverError(process.fatal_message(result, f"{test.name} under callgrind"),
                          f"see {session.server.log_path}")
    # max_events counts warmup too: with warmup_s 0 the first events can still land in the warmup line
    warm = (result.output.warmup or {}).get("events", 0)
    done = warm + result.output.summary.get("events", 0) + sum(result.output.summary.get("errors", {}).values())
    if done != events:
        raise DriverError(f"{test.name} under callgrind ran {done} events, not the {events} asked for",
                          "the driver binary may predate max_events: reinstall dbdrift (`./dev test` does)")
    path = out_dir / f"cg.{pids[0]}.out"
    wait_complete(path, PROFILE_TIMEOUT_S)
    profile = parse_profile(path)
    if not os.environ.get("DBDRIFT_KEEP_PROFILES"):
        path.unlink()
    return profile


def _exec_admin(session: TargetSession, statements: list[str]) -> None:
    process.exec_jobs(session.server.connection.to_driver(), [[{"sql": sql}] for sql in statements],
                      what="instruction count set-up")


def _file_copy(session: TargetSession) -> str:
    """Copy the template as files (15+ defaults to WAL-logging every block, slow under callgrind)."""
    return " STRATEGY FILE_COPY" if session.server.major >= 15 else ""


def _significant(per_function: dict[str, float]) -> dict[str, float]:
    return {name: round(v, 2) for name, v in per_function.items() if abs(v) >= MIN_FUNCTION_IR}
