"""Instructions per event, counted deterministically under valgrind callgrind (no PMU needed).

For one target: a fresh server is loaded with one worker, restarted under callgrind and
prewarmed; each microbenchmark then runs N1 and N2 events on one connection with the same
seed, twice, and instructions/event = (Ir(N2) - Ir(N1)) / (N2 - N1), which cancels connection
set-up and everything else both runs share. Only the server's work for the connection is
counted, never the client's:
- PostgreSQL: the connection's backend process writes its own profile when it exits
  (TOGGLE_COLLECT); other processes (checkpointer, WAL writer) are not counted. The tests
  that only read run first, all on the loaded database (reads leave it as they found it:
  vacuumed, hinted, all in shared buffers); each run of a test that writes starts from a
  fresh copy of it (CREATE DATABASE … TEMPLATE).
- MySQL and MariaDB: one process, a thread per connection. Callgrind counts inside the
  command dispatcher only (DISPATCH), in every thread; counters are zeroed before each run
  and dumped after it by statements that enter a function callgrind watches (ZERO_SQL,
  DUMP_SQL). Background threads (purge, page cleaner, log writer) and waits for the client's
  next command are outside it. Every run of a test that writes starts on a new server from a
  copy of the loaded data directory; tests that only read run first, on the server that is up.
On a server or database that earlier runs used, a test's first run pays one-off costs
(statistics entries, statement caches, pg_stat_statements entries) that its later runs do not:
each test that shares one is primed with a run nobody counts.
"""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from statistics import fmean
from collections.abc import Callable, Iterable
from typing import AbstractSet

from dbdrift.analysis.instructions import per_event, repeatability
from dbdrift.workloads.sysbench.catalog import MicrobenchmarkSpec
from dbdrift.driver import process
from dbdrift.errors import DriverError, UserError
from dbdrift.model import JsonObject
from dbdrift.metrics.callgrind import Profile, parse_profile, require_valgrind, wait_complete
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.plan.lifecycle import START_S, SettleStep
from dbdrift.workloads.sysbench.dialect import DBNAME
from dbdrift.workloads.sysbench.expand import LoadStep, RunStep, TargetPlan
from dbdrift.workloads.sysbench.plan import params
from dbdrift.workloads.sysbench.session import SysbenchSession
from dbdrift.server import osuser
from dbdrift.server.mariadb import MariaDBServer
from dbdrift.server.postgres import VALGRIND_COMMS, PostgresServer
from dbdrift.store.store import InstructionRecord

TEMPLATE_DB = "sbtest_loaded"  # the loaded, vacuumed database every counted run starts from
NOISE_IR = {"postgres": 200_000, "mysql": 400_000, "mariadb": 400_000}
"""What does not cancel between two N1/N2 pairs of one test, per engine. PostgreSQL: at most
~180k instructions at 1M rows, mostly a few thousand (bench/README.md, instructions.py: the
worst spread 0.114% of a 160M difference). InnoDB's background threads leave more (MySQL 8.0:
0.6% of range-covered-pk, 0.3-2.1% of update-index at 200k rows): it keeps the difference it
was counted with before, twice PostgreSQL's."""
PRECISION = 0.0025
"""The precision a count is sized to, as a share of the count: an eighth of the 2% minimum
effect, so a count's own error never decides a verdict."""


def difference_ir(engines: Iterable[str]) -> float:
    """The instructions N2 - N1 events are sized to, so that what does not cancel is PRECISION
    of them: 80M on PostgreSQL (about 2,000 point queries), 160M with MySQL or MariaDB. Every
    target of a campaign counts the same N1 and N2 (a write test's count depends a little on
    them), so the campaign's noisiest engine sizes them all."""
    return max((NOISE_IR.get(e, NOISE_IR["mysql"]) for e in engines), default=NOISE_IR["postgres"]) / PRECISION


def campaign_difference(spec: CampaignSpec) -> float:
    """The difference every count of `spec` is sized to: that of its targets' engines, so a
    resumed campaign, or an estimate of some of its targets, sizes them as the whole campaign does."""
    return difference_ir(t.engine for t in spec.targets)


DIFFERENCE_IR = difference_ir(["postgres"])
STATEMENT_IR = 40_000  # estimate: a statement that reads one row (17.10: point-query 43k)
WRITE_STATEMENT_IR = 100_000  # estimate: a statement that writes one row (17.10: delete 67k, update-index 126k)
IN_ROW_IR = 14_000  # estimate: each further row of an IN list read (17.10: random-points 14.5k)
IN_WRITE_ROW_IR = 75_000  # estimate: each further row of an IN list written (17.10: update-inlist 75k)
RANGE_ROW_IR = 2_500  # estimate: each row of an index range read (17.10: 1.6k summed, 2.7k returned)
SORTED_ROW_IR = 10_000  # estimate: each row of a range sorted by c (ORDER BY, DISTINCT: collation)
SCAN_ROW_IR = 5_000  # estimate: each row of a full scan (17.10, 1M rows: 4.7k, LENGTH(c) per row)
MIN_N1 = 6  # a prepared statement's first five executions are planned each time (custom plans)
ONE_PAIR_FROM = 2.0
"""A second N1/N2 pair, which shows how repeatable the count is, runs unless one pair's
difference is ONE_PAIR_FROM times the sized difference: one pair is then already twice as
precise as PRECISION asks (an event heavier than the difference: a 10,000-row range, a full
scan), and a second would double the cost of the heaviest tests for a spread nobody needs."""
MIN_FUNCTION_IR = 0.5  # per event; smaller per-function slopes are not stored
START_TIMEOUT_S = 300.0  # a postmaster under callgrind takes seconds, not milliseconds, to start
PROFILE_TIMEOUT_S = 120.0
SETUP_STEPS = 5  # start, load, settle, restart under callgrind, priming run (+ MySQL/MariaDB: data copy)
# The estimate (`run --check`, the progress ETA), as measured on the 2-CPU VMs on an idle host
# (bench/README.md, instruction_pass.py: the phases of PostgreSQL 17.10's 32 tests at 1M rows):
ESTIMATE_LOAD_ROWS_S = 225_000  # rows a second a counted server is loaded and settled at (one worker)
ESTIMATE_CALLGRIND_START_S = 1.5  # the restart under callgrind
ESTIMATE_RUN_S = 0.5  # one counted run's fixed part: the driver, a connection, reading the profile
ESTIMATE_COPY_S = 0.6  # PostgreSQL: a fresh copy of the loaded database for a run of a test that writes ...
ESTIMATE_PREWARM_S_PER_ROW = 1.45e-6  # ... and its prewarm under callgrind (also once after the restart)
ESTIMATE_S_PER_IR = 5.8e-9  # callgrind's pace, seconds per counted instruction (estimated_ir's)
ESTIMATE_FRESH_SERVER_S = 50.0  # MySQL/MariaDB write tests: a new server under callgrind per run


PHASES = ("copy", "prime", "run", "profile")
"""Where a test's counting time goes (stored per count, printed by bench/instruction_pass.py):
copy, a fresh database or data directory and its prewarm; prime, the uncounted run of a test
on a shared database; run, the counted runs; profile, waiting for and reading callgrind's files."""


class PhaseClock:
    """Seconds per phase of one test's count."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._phase: str | None = None
        self._since = 0.0

    def __call__(self, phase: str | None) -> None:
        """Enter `phase` (None: stop the clock); the time since the last call goes to the phase before."""
        now = time.monotonic()
        if self._phase is not None:
            self.seconds[self._phase] = self.seconds.get(self._phase, 0.0) + now - self._since
        self._phase, self._since = phase, now

    def rounded(self) -> dict[str, float]:
        self(None)
        return {k: round(v, 3) for k, v in self.seconds.items()}


def estimated_ir(test: MicrobenchmarkSpec, rows: int) -> float:
    """A rough number of instructions one event of `test` costs (PostgreSQL 17 figures): per
    statement STATEMENT_IR (WRITE_STATEMENT_IR when it writes), plus per further row of an IN list IN_ROW_IR (IN_WRITE_ROW_IR when it
    writes it), per row of an index range RANGE_ROW_IR (SORTED_ROW_IR when sorted), per row of a
    table scan SCAN_ROW_IR (`rows`: a table's rows). Within a few times of the counted value is
    enough: it only sizes the runs (event_counts)."""
    if test.metric == "krps":
        return SCAN_ROW_IR * rows
    total = 0.0
    for stmt in test.statements:
        sql = stmt.sql.upper()
        writes = sql.lstrip().startswith(("UPDATE", "DELETE", "INSERT"))
        one = WRITE_STATEMENT_IR if writes else STATEMENT_IR
        if "BETWEEN" in sql:
            sorted_ = "ORDER BY" in sql or "DISTINCT" in sql
            cost = one + test.range_size * (SORTED_ROW_IR if sorted_ else RANGE_ROW_IR)
        elif " IN (" in sql:
            listed = sql[sql.index(" IN ("):].count("?")
            cost = one + (listed - 1) * (IN_WRITE_ROW_IR if writes else IN_ROW_IR)
        else:
            cost = one
        total += stmt.repeat * cost
    return total + (2 * STATEMENT_IR if test.transaction else 0)


def event_counts(test: MicrobenchmarkSpec, rows: int, difference: float = DIFFERENCE_IR) -> tuple[int, int]:
    """(N1, N2) for a test: N2 - N1 events cost about `difference` instructions (at least one
    event; difference_ir), and N1 is a quarter of that, never below MIN_N1, so that the
    difference holds only executions of prepared statements past their first five (planned
    each time). A scan reads the whole table per event and gets (0, 1): its one-off costs (a
    connection, one plan) are a vanishing part of a million rows read."""
    if test.metric == "krps":
        return 0, 1
    cost = estimated_ir(test, rows)
    more = max(1, round(difference / cost))
    n1 = max(MIN_N1, round(more / 4))
    return n1, n1 + more


def prime_events(test: MicrobenchmarkSpec, rows: int, difference: float = DIFFERENCE_IR) -> int:
    """Events of the uncounted run that takes a test's one-off costs on a shared database
    (MIN_N1), or none for a test counted by one pair: its difference is so large that one-off
    costs (an entry per statement and index, tens of thousands of instructions) vanish in it."""
    return 0 if repeats(test, rows, difference) == 1 else MIN_N1


def repeats(test: MicrobenchmarkSpec, rows: int, difference: float = DIFFERENCE_IR) -> int:
    """N1/N2 pairs to count: two, or one when a pair's difference is ONE_PAIR_FROM times `difference`."""
    n1, n2 = event_counts(test, rows, difference)
    return 1 if (n2 - n1) * estimated_ir(test, rows) >= ONE_PAIR_FROM * difference else 2


TOGGLE_COLLECT = ("PostgresMain", "secure_read", "pgstat_report_stat")
"""Callgrind counts inside PostgresMain only (a forked backend otherwise inherits the
postmaster's counts at fork time, which grow between two connections and would not cancel),
and not inside secure_read or pgstat_report_stat: whether the next query is already in the
socket when the backend reads, and how often statistics are flushed (once a second), depend
on timing, not on the work of an event."""


DISPATCH = ("dispatch_command(*",)
"""MySQL and MariaDB: callgrind counts inside dispatch_command only, the function that executes
one command (a query, a prepared statement's execution, a prepare, a quit) a client sent.
do_command, its caller, waits for and reads that command from the socket outside it; the
server's background threads never enter it. Both the stripped MySQL builds (in .dynsym) and
the MariaDB ones have the symbol."""
COUNTING_SETTINGS = {"loose_table_open_cache_instances": "1", "loose_innodb_log_file_size": "48M",
                     "loose_innodb_redo_log_capacity": "96M"}
MARIADB_COUNTING_SETTINGS = {"innodb_use_native_aio": "0"}
"""MySQL and MariaDB under callgrind: one table cache (with several, a connection uses the
instance its thread id picks, and the first statements on an instance that has not opened
the tables yet pay for opening them, a cost that differs from run to run), and a small redo
log, so that the data directory a write test's run starts from is
cheap to copy. MariaDB also gets InnoDB's own I/O threads (MARIADB_COUNTING_SETTINGS) instead
of the kernel's asynchronous I/O, which valgrind does not support in its io_uring form (11.8
built with liburing never got past its InnoDB start under callgrind); MySQL keeps libaio, which
valgrind runs, as InnoDB's simulated I/O in 5.6 and 5.7 left an occasional burst of ~700M
instructions in a counted insert run. loose_: options that 5.7 / 10.1 do not have (redo
capacity), or that 8.4 and 9.x no longer have (innodb_log_file_size)."""


def counting_settings(engine: str) -> dict[str, str]:
    """The server settings a MySQL or MariaDB server is counted with (see COUNTING_SETTINGS)."""
    return {**COUNTING_SETTINGS, **(MARIADB_COUNTING_SETTINGS if engine == "mariadb" else {})}


ZERO_SQL, ZERO_AT = "SELECT SLEEP(0)", "Item_func_sleep::val_int*"
DUMP_SQL, DUMP_AT = "SELECT BENCHMARK(1, 0)", "Item_func_benchmark::val_int*"
"""MySQL and MariaDB: callgrind zeroes its counters when a thread enters ZERO_AT and writes a
dump when one enters DUMP_AT, functions no microbenchmark calls; an admin connection sends
the statements that enter them. (callgrind_control would need vgdb to reach an idle server;
vgdb wakes it through ptrace, which can leave mysqld stopped.) The admin connection's few
statements around a run are the same for every run and cancel in the N1/N2 difference."""


def valgrind_command(binary: str, out_dir: Path, engine: str = "postgres", simulate_cache: bool = False,
                     cpu: int | None = None) -> list[str]:
    """valgrind's command line, pinned to one CPU (`cpu`, default the lowest this process may
    use) where taskset exists: server processes (or threads) that never run at the same time
    never retry a lock's compare-and-swap, which otherwise adds instructions at random."""
    where = min(os.sched_getaffinity(0)) if cpu is None else cpu
    pin = ["taskset", "-c", str(where)] if shutil.which("taskset") else []
    if engine == "postgres":
        counting = ["--trace-children=yes", *(f"--toggle-collect={name}" for name in TOGGLE_COLLECT)]
    else:
        counting = [*(f"--toggle-collect={name}" for name in DISPATCH), f"--zero-before={ZERO_AT}",
                    f"--dump-before={DUMP_AT}"]
    simulation = ["--cache-sim=yes", "--branch-sim=yes"] if simulate_cache else []
    return [*pin, binary, "--tool=callgrind", "--dump-instr=no", *simulation, *counting,
            f"--callgrind-out-file={out_dir}/cg.%p.out"]


def estimate_counts(spec: CampaignSpec, plans: list[TargetPlan]) -> tuple[float, int]:
    """Expected seconds (summed over `plans`, before they share the CPUs) and progress steps of
    counting the instructions of `plans`, targets of `spec`."""
    difference = campaign_difference(spec)
    found = [estimate(plan, difference) for plan in plans]
    return sum(seconds for seconds, _ in found), sum(steps for _, steps in found)


def estimate(plan: TargetPlan, difference: float) -> tuple[float, int]:
    """Expected seconds and progress steps of counting one target's tests: its start and load,
    the restart under callgrind with its prewarm and prime, and each test (`difference`: the
    campaign's, campaign_difference)."""
    tests = tests_in_run_order(plan, difference)
    engine = plan.target.engine
    load = next(step for step in plan.steps if isinstance(step, LoadStep))
    rows = load.rows * load.tables
    setup = (START_S.get(engine, 2.0) + rows / ESTIMATE_LOAD_ROWS_S + ESTIMATE_CALLGRIND_START_S
             + rows * ESTIMATE_PREWARM_S_PER_ROW
             + (_run_s(tests[0], prime_events(tests[0], load.rows, difference) or 1, load.rows) if tests else 0.0))
    return (setup + sum(test_estimate_s(t, engine, load.rows, load.tables, i == 0, difference)
                        for i, t in enumerate(tests)),
            SETUP_STEPS + (engine != "postgres") + len(tests))


def test_estimate_s(test: MicrobenchmarkSpec, engine: str, rows: int, tables: int = 1, primed: bool = False,
                    difference: float = DIFFERENCE_IR) -> float:
    """One test's count: its prime (a test that reads, on the shared database), and its N1/N2
    pairs, each run of a test that writes on a fresh copy (MySQL/MariaDB: a new server)."""
    n1, n2 = event_counts(test, rows, difference)
    if reads_only(test):
        fresh = 0.0
    elif engine == "postgres":
        fresh = ESTIMATE_COPY_S + rows * tables * ESTIMATE_PREWARM_S_PER_ROW
    else:
        fresh = ESTIMATE_FRESH_SERVER_S
    events = prime_events(test, rows, difference)
    prime = _run_s(test, events, rows) if reads_only(test) and not primed and events else 0.0
    return prime + repeats(test, rows, difference) * (2 * fresh + _run_s(test, n1, rows) + _run_s(test, n2, rows))


def _run_s(test: MicrobenchmarkSpec, events: int, rows: int) -> float:
    """One run of `events` events under callgrind, on a database that is ready."""
    return ESTIMATE_RUN_S + events * estimated_ir(test, rows) * ESTIMATE_S_PER_IR


def tests_in_run_order(plan: TargetPlan, difference: float = DIFFERENCE_IR) -> list[MicrobenchmarkSpec]:
    """The plan's tests, those that only read first (they share the loaded database or
    server), then those that write (each run on a fresh copy); in each part the tests counted
    by one pair (the scan) last, so the server's prime is a few events of a light test; else
    in the plan's order."""
    seen: dict[str, MicrobenchmarkSpec] = {}
    for step in plan.steps:
        if isinstance(step, RunStep) and not step.warm and step.test.name not in seen:
            seen[step.test.name] = step.test
    rows = next(step.rows for step in plan.steps if isinstance(step, LoadStep))
    return sorted(seen.values(), key=lambda t: (not reads_only(t), repeats(t, rows, difference) == 1))


def reads_only(test: MicrobenchmarkSpec) -> bool:
    """A test whose runs leave the data as they found it, so that every run of it, and of the
    other such tests, can share one copy."""
    return test.rw == "R"


def count_target(session: SysbenchSession, plan: TargetPlan, skip: AbstractSet[str] = frozenset(),
                 cpu: int | None = None) -> None:
    """Load a fresh server, restart it under callgrind on `cpu`, count every test and store each count.

    Raises ServerError/DriverError when the server dies (the caller ends the target there).
    """
    difference = campaign_difference(session.spec)
    tests = [t for t in tests_in_run_order(plan, difference) if t.name not in skip]
    if not tests:
        return
    binary = require_valgrind()
    postgres = session.install.engine == "postgres"
    session.start()
    load = next(step for step in plan.steps if isinstance(step, LoadStep))
    # One worker: the tables and indexes are built one after the other, so every counted server
    # is loaded the same way whatever the host's CPU count (each table is one id-ordered stream
    # in any case; a different physical layout would change range tests' counts).
    session.load(load, workers=1)
    session.settle_work(SettleStep(0.0, "load"))
    if postgres:
        # Vacuumed and checkpointed as the timed runs see it: hint bits set once, not by the first
        # count. Autovacuum is off under callgrind: it would re-analyze tables and send
        # invalidations at times that depend on the machine's load.
        _exec_admin(session, [f"CREATE DATABASE {TEMPLATE_DB} TEMPLATE {DBNAME}{_file_copy(session)}",
                              "ALTER SYSTEM SET autovacuum = off"])
    else:
        session.settle_end()  # ANALYZE done; the flushing settings restored
        _save_loaded_data(session)
    out_dir = session.server.run_dir / "callgrind"
    out_dir.mkdir(exist_ok=True)
    osuser.chown_tree(out_dir, osuser.server_user())
    session.timed_step("server", "restart under valgrind callgrind", lambda: session.server.start_wrapped(
        valgrind_command(binary, out_dir, session.install.engine, params(session.spec).simulate_cache, cpu),
        VALGRIND_COMMS, START_TIMEOUT_S))
    session.prewarm(load.tables, restarted=True)  # the start under callgrind emptied InnoDB's buffer pool
    # The first runs after a start do one-off work (PostgreSQL: shared statistics entries, hint
    # bits on shared catalogs; InnoDB: table and statement caches) that no later run repeats:
    # spend it on a run nobody counts, of the first test (a few events).
    session.timed_step("server", "prime the server under callgrind",
                       lambda: {"instructions": _profile_of_run(session, tests[0],
                                                                prime_events(tests[0], load.rows, difference) or 1,
                                                                out_dir, load.tables).total_ir})
    for i, test in enumerate(tests):
        record = count_test(session, test, out_dir, load.tables, difference, primed=i == 0)
        session.store.add_instructions(session.target_id, record)
        if record.status != "ok":
            session.raise_if_dead()


def supports(engine: str) -> bool:
    """Engines whose server's work per connection callgrind can single out (see the module doc)."""
    return engine in ("postgres", "mysql", "mariadb")


def count_test(session: SysbenchSession, test: MicrobenchmarkSpec, out_dir: Path, tables: int, difference: float,
               primed: bool = False) -> InstructionRecord:
    """Count `test`'s N1/N2 pairs, sized to the campaign's `difference`. A test that only reads
    shares the database or server the tests before it used; unless `primed` (the server's prime
    run was this test's), a run of a few events nobody counts pays its one-off costs first."""
    rows = params(session.spec).rows
    prime = prime_events(test, rows, difference) if reads_only(test) and not primed else 0
    n1, n2 = event_counts(test, rows, difference)
    label = f"{test.name}: instructions/event ({n1} and {n2} events under callgrind)"
    session.progress.step_start(session.name, label, test_estimate_s(test, session.install.engine, rows,
                                                                    params(session.spec).tables, primed, difference))
    started = time.monotonic()
    clock = PhaseClock()
    pairs: list[list[int]] = []
    first_pair = []
    try:
        if prime:
            clock("prime")
            _profile_of_run(session, test, prime, out_dir, tables)
        for rep in range(repeats(test, rows, difference)):
            profiles = [_profile_of_run(session, test, n, out_dir, tables, clock) for n in (n1, n2)]
            pairs.append([p.total_ir for p in profiles])
            if rep == 0:
                first_pair = profiles
    except (DriverError, UserError) as exc:
        session.progress.step_end(session.name, label, "failed", exc.message)
        return InstructionRecord(test.name, "failed", n1, n2, time.monotonic() - started, pairs, error=exc.message,
                                 phases=clock.rounded())
    slopes = [(b - a) / (n2 - n1) for a, b in pairs]
    cost = per_event(first_pair[0], n1, first_pair[1], n2)
    spread = repeatability(slopes) if len(slopes) > 1 else None  # one pair: no second count to compare
    record = InstructionRecord(
        test.name, "ok", n1, n2, time.monotonic() - started, pairs, fmean(slopes), spread,
        _significant(cost.self_per_event), _significant(cost.inclusive_per_event),
        simulated_per_event=simulated_per_event(first_pair[0], n1, first_pair[1], n2), phases=clock.rounded())
    repeat = f"spread {spread:.3f}%" if spread is not None else "one pair"
    session.progress.step_end(session.name, label, "ok", f"{record.ir_per_event:,.0f} instr/event ({repeat})")
    return record


def simulated_per_event(small: Profile, n1: int, large: Profile, n2: int) -> dict[str, float]:
    """Each cache and branch event callgrind simulated, per event: (count(N2) - count(N1)) / (N2 - N1),
    as instructions are. Empty when the profiles hold only Ir (no simulation)."""
    names = [e for e in large.totals if e != "Ir" and e in small.totals]
    return {e: (large.totals[e] - small.totals[e]) / (n2 - n1) for e in names}


def _profile_of_run(session: SysbenchSession, test: MicrobenchmarkSpec, events: int, out_dir: Path,
                    tables: int, clock: PhaseClock | None = None) -> Profile:
    """Run `events` events on one fresh connection and return the server's profile of it;
    `clock` (when given) is told each phase's start."""
    tick = clock or (lambda phase: None)
    if session.install.engine == "postgres":
        return _backend_profile_of_run(session, test, events, out_dir, tables, tick)
    return _dispatch_profile_of_run(session, test, events, out_dir, tick)


def _backend_profile_of_run(session: SysbenchSession, test: MicrobenchmarkSpec, events: int, out_dir: Path,
                            tables: int, tick: Callable[[str], None]) -> Profile:
    """PostgreSQL: the run's backend writes its profile when it exits.

    Writes change what the next run finds (dead tuples, pruning, index growth), and reads
    after them clean up, so every run of a test that writes starts from a fresh, prewarmed copy
    of the loaded database. The tests that only read run first, on the loaded database itself.
    """
    if not reads_only(test):
        tick("copy")
        force = " WITH (FORCE)" if _postgres(session).major >= 13 else ""
        _exec_admin(session, [f"DROP DATABASE IF EXISTS {DBNAME}{force}",
                              f"CREATE DATABASE {DBNAME} TEMPLATE {TEMPLATE_DB}{_file_copy(session)}"])
        session.prewarm(tables)
    tick("run")
    pids = _run_counted(session, test, events)
    if not pids:
        raise DriverError(f"{test.name} under callgrind: the driver named no backend", f"see {session.server.log_path}")
    tick("profile")
    return _read_profile(out_dir / f"cg.{pids[0]}.out")


def _save_loaded_data(session: SysbenchSession) -> None:
    """MySQL/MariaDB: with COUNTING_SETTINGS (the redo resized by a start), stopped cleanly, the
    loaded data directory is copied aside for write tests to start from."""
    def work() -> JsonObject:
        server = _innodb(session)
        # MariaDB 11.8 reserves address space for innodb_buffer_pool_size_max (by default far
        # more than valgrind can map): no more than the buffer pool it has.
        settings = {**counting_settings(session.install.engine),
                    "loose_innodb_buffer_pool_size_max": server.value("SELECT @@innodb_buffer_pool_size")}
        server.stop()
        server.reconfigure(settings)
        server.start()
        server.stop()
        server.save_data()
        return {"settings": settings}

    session.timed_step("server", "copy the loaded data directory", work)


def _dispatch_profile_of_run(session: SysbenchSession, test: MicrobenchmarkSpec, events: int,
                             out_dir: Path, tick: Callable[[str], None]) -> Profile:
    """MySQL/MariaDB: zero the counters, run, dump: the dump holds what dispatch_command did
    for this run's connection (nothing else runs commands meanwhile). A test that writes
    starts from the loaded data directory, on a new server (the InnoDB analogue of
    PostgreSQL's template copy): its rows, undo and index growth would otherwise change what
    the next run finds."""
    if not reads_only(test):
        tick("copy")
        server = _innodb(session)
        server.restore_data()
        server.start()
        session.prewarm(params(session.spec).tables, restarted=True)
    tick("run")
    pid = session.server.server_pid
    _exec_admin(session, [ZERO_SQL])
    _run_counted(session, test, events)
    tick("profile")
    before = set(out_dir.glob(f"cg.{pid}.out.*"))
    _exec_admin(session, [DUMP_SQL])
    return _read_profile(_new_dump(out_dir, pid, before, session))


def _read_profile(path: Path) -> Profile:
    """The profile once callgrind has written all of it; the file is removed unless
    DBDRIFT_KEEP_PROFILES is set."""
    wait_complete(path, PROFILE_TIMEOUT_S)
    profile = parse_profile(path)
    if not os.environ.get("DBDRIFT_KEEP_PROFILES"):
        path.unlink()
    return profile


def _new_dump(out_dir: Path, pid: int | None, before: set[Path], session: SysbenchSession) -> Path:
    deadline = time.monotonic() + PROFILE_TIMEOUT_S
    while time.monotonic() < deadline:
        new = sorted(set(out_dir.glob(f"cg.{pid}.out.*")) - before, key=lambda p: p.stat().st_mtime)
        if new:
            return new[-1]
        session.raise_if_dead()
        time.sleep(0.05)
    raise DriverError(f"callgrind wrote no dump into {out_dir} within {PROFILE_TIMEOUT_S:g} s after {DUMP_SQL}",
                      f"see {session.server.log_path}")


def _run_counted(session: SysbenchSession, test: MicrobenchmarkSpec, events: int) -> list[int]:
    """Exactly `events` events of `test` on one connection; the backend pids the driver names."""
    spec = session.driver_spec(RunStep(test.name, test, 1, 0, 3600.0, 0.0))
    spec.update({"max_events": events, "interval_s": 3600.0, "seed": session.spec.seed})
    pids: list[int] = []
    result = process.run_driver("run", spec, timeout_s=3600,
                                on_line=lambda o: pids.extend(o.get("backend_pids", [])) if o.get("type") == "start"
                                else None)
    if result.interrupted:
        raise KeyboardInterrupt
    if result.exit_code != 0:
        raise DriverError(process.fatal_message(result, f"{test.name} under callgrind"),
                          f"see {session.server.log_path}")
    # max_events counts warmup too: with warmup_s 0 the first events can still land in the warmup line
    warm = (result.output.warmup or {}).get("events", 0)
    summary = result.output.summary or {}
    done = warm + summary.get("events", 0) + sum(summary.get("errors", {}).values())
    if done != events:
        raise DriverError(f"{test.name} under callgrind ran {done} events, not the {events} asked for",
                          "the driver binary may predate max_events: reinstall dbdrift (`./dev test` does)")
    return pids


def _exec_admin(session: SysbenchSession, statements: list[str]) -> None:
    process.exec_jobs(session.server.connection.to_driver(), [[{"sql": sql}] for sql in statements],
                      backend=session.dialect.backend, what="instruction count set-up")


def _file_copy(session: SysbenchSession) -> str:
    """Copy the template as files (15+ defaults to WAL-logging every block, slow under callgrind)."""
    return " STRATEGY FILE_COPY" if _postgres(session).major >= 15 else ""


def _postgres(session: SysbenchSession) -> PostgresServer:
    """The server of a PostgreSQL target, for the steps only PostgreSQL's counting takes
    (template databases by major version)."""
    server = session.server
    if not isinstance(server, PostgresServer):
        raise TypeError(f"{server.label} is not a PostgreSQL server")
    return server


def _innodb(session: SysbenchSession) -> MariaDBServer:
    """The server of a MariaDB or MySQL target, for the steps only InnoDB's counting takes
    (reconfigure, and the loaded data directory copied aside and back)."""
    server = session.server
    if not isinstance(server, MariaDBServer):
        raise TypeError(f"{server.label} is not a MariaDB or MySQL server")
    return server


def _significant(per_function: dict[str, float]) -> dict[str, float]:
    """Per function, rounded, without the ones below MIN_FUNCTION_IR. C++ names lose their
    parameter lists, so a function whose signature changed between versions stays one line;
    code a stripped binary names only by address goes into one STRIPPED bucket."""
    merged: dict[str, float] = {}
    for name, value in per_function.items():
        key = function_key(name)
        merged[key] = merged.get(key, 0.0) + value
    return {name: round(v, 2) for name, v in merged.items() if abs(v) >= MIN_FUNCTION_IR}


STRIPPED = "(functions without a symbol)"


def function_key(name: str) -> str:
    """"rec_get_offsets(unsigned char const*, ...) const" -> "rec_get_offsets";
    "0x0000000001ee2130" -> STRIPPED; C names unchanged."""
    if name.startswith("0x") and all(c in "0123456789abcdefABCDEF" for c in name[2:]):
        return STRIPPED
    text = name.rstrip()
    for suffix in (" const", " &&", " &"):
        if text.endswith(suffix):
            text = text[: -len(suffix)]
    if not text.endswith(")"):
        return name
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[i], 0)
        if depth == 0:
            return text[:i] if i > 0 and not text[:i].endswith("operator") else name
    return name
