"""Run a campaign: validate and fetch every target, then walk the plan in turns or sequentially.

Sequential: one server at a time, each target runs all its steps (the scripts' way).
Interleaved: all servers up and loaded at once; every measured step is one driver run in which
the targets take turns of `turn_s` in a balanced order (A B, B A, ...; runner/turns.py),
so drift and bursts of steal hit every target alike and turns can be paired round by round.
Targets of different engine families cannot share a driver run: they take whole runs in turn.
"""
from __future__ import annotations

import contextlib
import os
import platform
import threading
from dataclasses import asdict, dataclass, field

from dbdrift import cpus, env
from dbdrift.version import __version__
from dbdrift.errors import DriverError, ServerError, UserError
from dbdrift.model import InstallInfo
from dbdrift.plan.campaign import CampaignSpec, target_to_dict
from dbdrift.plan.expand import (FreshStep, LoadStep, SettleStep, TargetPlan, estimate_parts, expand,
                                 restarts_before)
from dbdrift.metrics import host, perf
from dbdrift.workloads.ibench.catalog import DBNAME as IBENCH_DB
from dbdrift.workloads.tpcc.catalog import DBNAME as TPCC_DB
from dbdrift.runner import instructions, turns
from dbdrift.workloads.ibench import run as ibench
from dbdrift.workloads.tpcc import run as tpcc
from dbdrift.driver import process
from dbdrift.runner.progress import LanesProgress, NullProgress, ProgressSink
from dbdrift.runner.session import TargetSession, settle_wait
from dbdrift.server import engines
from dbdrift.store.store import Store

VERSION = __version__  # stored with each campaign


@dataclass
class CampaignOutcome:
    campaign_id: int
    runs_ok: int = 0
    runs_failed: int = 0
    runs_skipped: int = 0  # not run because their target failed (stored as "skipped")
    runs_kept: int = 0  # already in the store (--resume)
    instructions_ok: int = 0
    instructions_failed: int = 0
    failed_targets: list[str] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)  # target -> why it ended early

    def summary(self) -> str:
        """`12 runs (1 failed, 20 skipped: pg18 server died)`."""
        parts = [f"{self.runs_failed} failed"]
        if self.runs_skipped:
            why = "; ".join(f"{t} {w}" for t, w in self.failures.items())
            parts.append(f"{self.runs_skipped} skipped: {why}" if why else f"{self.runs_skipped} skipped")
        if self.runs_kept:
            parts.append(f"{self.runs_kept} already stored")
        return f"{self.runs_ok} runs ({', '.join(parts)})"


@dataclass
class TargetState:
    plan: TargetPlan
    target_id: int
    pending: set


def estimate(spec: CampaignSpec, timed: list[TargetPlan], counted: list[TargetPlan]) -> tuple[float, int]:
    """Expected seconds and progress steps of a campaign: the timed runs of the `timed` plans
    and the instruction counts of the `counted` ones (what `run` shows and `run --check` prints)."""
    in_turns = spec.order == "turns" and len(timed) > 1
    total_s, steps = sum(estimate_by_part(spec, timed, counted).values()), 0
    if spec.timed:
        # a target's start, its steps, a new server's stop and start, and restarts between repeats
        steps = sum(len(p.steps) + 1 + sum(isinstance(x, FreshStep) or restarts_before(spec, x) for x in p.steps)
                    for p in timed)
        # each settle's quiet wait is a step of its own, once for all targets in turns
        steps += sum(isinstance(x, SettleStep) for p in timed[:1 if in_turns else None] for x in p.steps)
    if spec.count_instructions:
        steps += sum(instructions.estimate(plan)[1] for plan in counted)
    return total_s, steps


COUNTS = "instruction counts"


def estimate_by_part(spec: CampaignSpec, timed: list[TargetPlan], counted: list[TargetPlan]) -> dict[str, float]:
    """estimate's seconds by part (plan/expand.py estimate_parts, and the instruction counts),
    summed over the targets."""
    in_turns = spec.order == "turns" and len(timed) > 1
    parts: dict[str, float] = {}
    if spec.timed:
        for i, plan in enumerate(timed):
            for part, seconds in estimate_parts(plan, spec, settles=not in_turns or i == 0).items():
                parts[part] = parts.get(part, 0.0) + seconds
    if spec.count_instructions:
        parts[COUNTS] = sum(instructions.estimate(plan)[0] for plan in counted) / counting_lanes(len(counted))
    return parts


def campaign_estimate(spec: CampaignSpec) -> tuple[float, int]:
    """Expected seconds and progress steps of a whole campaign, of any workload, from nothing stored."""
    if spec.workload in ("insert-benchmark", "tpcc"):
        n = len(spec.targets) * (spec.repeats if spec.only_repeats is None else len(spec.only_repeats))
        if spec.workload == "tpcc":
            return tpcc.plan_s(spec) * n, 3 * n
        return ibench.plan_s(spec) * n, ibench.progress_steps(spec) * n
    plans = expand(spec)
    counted = [p for p in plans if instructions.supports(p.target.engine)]
    return estimate(spec, plans, counted)


def counting_lanes(targets: int) -> int:
    """How many targets' instructions are counted at once: one per CPU this process may use."""
    return max(1, min(targets, len(os.sched_getaffinity(0))))


def failure_reason(session: TargetSession, exc: UserError) -> str:
    """Why a target ended early, in a few words for report cells: "server did not start",
    "server died", or what else failed."""
    if not session.started:
        return "server did not start"
    if isinstance(exc, ServerError) and " died" in exc.message:
        return "server died"
    return "driver failed" if isinstance(exc, DriverError) else "server failed"


def machine_facts(steal_window_s: float = 1.0) -> dict:
    """The host facts a campaign stores, without checks (history.host_key reads its identity from them)."""
    return {"hostname": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version(),
            **host.host_facts(steal_window_s=steal_window_s)}


def host_info(support: perf.PerfSupport, placement: cpus.Placement) -> dict:
    """Host facts and checks stored with the campaign (measured before any server starts)."""
    facts = machine_facts(steal_window_s=1.0)
    warnings = host.check(facts)
    if not support.hardware_counters:  # said once per campaign, never a failure
        warnings.append({"kind": "perf", "message": f"perf hardware counters unavailable: {support.reason}",
                         "hint": "instructions per event come from callgrind instead: dbdrift run "
                                 "--count-instructions"})
    return {**facts, "perf": asdict(support), "placement": placement.to_dict(), "warnings": warnings}


class Runner:
    def __init__(self, spec: CampaignSpec, store: Store, resume: bool = False,
                 progress: ProgressSink | None = None) -> None:
        self.spec = spec
        self.store = store
        self.resume = resume
        self.progress = progress or NullProgress()
        self.plans = expand(spec) if spec.workload == "sysbench" else []
        self.perf = perf.probe()
        # A CPU the host does not allow is refused here. "auto" leaves the Insert Benchmark
        # unpinned: its steps are several clients against one server at a time, not turns.
        option = "shared" if spec.workload in ("insert-benchmark", "tpcc") and spec.cpus == "auto" else spec.cpus
        self.placement = cpus.place(option)

    def run(self) -> CampaignOutcome:
        installs = self._resolve_installs()  # every target is checked before any server starts
        outcome = CampaignOutcome(self._campaign_id())
        self._say_placement()
        if self.spec.workload == "insert-benchmark":
            self._insert_benchmark(installs, outcome)
            return outcome
        if self.spec.workload == "tpcc":
            self._tpcc(installs, outcome)
            return outcome
        states = self._all_states = self._states(outcome.campaign_id)
        active = [s for s in states if s.pending]
        for state in states:
            outcome.runs_kept += len({r.key for r in state.plan.runs if not r.warm} - state.pending)
            if not state.pending:
                self.progress.message(f"{state.plan.target.name}: all runs already stored, skipped (--resume)")
        counting = [s for s in states if instructions.supports(s.plan.target.engine)] \
            if self.spec.count_instructions else []
        for state in states:
            if self.spec.count_instructions and state not in counting:
                self.progress.message(f"{state.plan.target.name}: instruction counts are not available for "
                                      f"{state.plan.target.engine}; not counted")
        self.progress.campaign_start(*estimate(self.spec, [s.plan for s in active], [s.plan for s in counting]))
        if self.spec.timed:
            if self.spec.order == "turns" and len(active) > 1:
                self._in_turns(active, installs, outcome)
            else:
                for state in active:
                    self._sequential(state, installs[state.plan.target.name], outcome)
        if counting:
            self._count_all([s for s in counting if s.plan.target.name not in outcome.failed_targets],
                            installs, outcome)
        return outcome

    def _say_placement(self) -> None:
        where = self.placement
        self.progress.message(f"cpus: {where.describe()}")
        threads = {"sysbench": max(self.spec.threads), "tpcc": self.spec.tpcc.clients}.get(self.spec.workload,
                                                                                        self.spec.ibench.clients)
        if where.pinned and threads > len(where.server):
            self.progress.message(f"note: {threads} client threads share {len(where.server)} server CPU(s); "
                                  f"cpus = \"shared\" lets the servers use every CPU (and the driver compete "
                                  f"with them)")

    def _count_all(self, states: list[TargetState], installs: dict[str, InstallInfo],
                   outcome: CampaignOutcome) -> None:
        """Count the targets' instructions, as many at once as this process has CPUs: each
        target's server runs under callgrind pinned to a CPU of its own, and a count does not
        depend on what runs beside it (bench/instructions.py prints counts made both ways).
        Each lane takes the next target when it is done with one, with its own store connection."""
        cpus_free = sorted(os.sched_getaffinity(0))
        lanes = counting_lanes(len(states))
        if lanes <= 1:
            for state in states:
                self._count_instructions(state, installs[state.plan.target.name], outcome, self.store,
                                         self.progress)
            return
        self.progress.message(f"instruction counts: {lanes} targets at once, on CPUs "
                              f"{cpus.format_list(frozenset(cpus_free[:lanes]))}")
        queue, lock, errors = list(states), threading.Lock(), []
        progress = LanesProgress(self.progress, lanes)
        process.CANCELLED.clear()

        def lane(cpu: int) -> None:
            store = self.store.another()
            try:
                while True:
                    with lock:
                        if not queue:
                            return
                        state = queue.pop(0)
                    self._count_instructions(state, installs[state.plan.target.name], outcome, store, progress,
                                             cpu, lock)
            except KeyboardInterrupt:
                pass  # cancelled by the main thread: its servers are stopped, the main thread re-raises
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
                errors.append(exc)
            finally:
                store.close()

        threads = [threading.Thread(target=lane, args=(cpu,), name=f"count-cpu{cpu}", daemon=True)
                   for cpu in cpus_free[:lanes]]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                while thread.is_alive():
                    thread.join(0.2)
        except KeyboardInterrupt:
            process.cancel_all()
            progress.message("interrupted: stopping the servers under callgrind")
            _join_uninterrupted(threads)
            raise
        if errors:
            raise errors[0]

    def _count_instructions(self, state: TargetState, install: InstallInfo, outcome: CampaignOutcome,
                            store: Store, progress: ProgressSink, cpu: int | None = None,
                            lock: threading.Lock | None = None) -> None:
        """A separate server per target, after the timed runs, so callgrind never slows a timed run.
        `lock` guards `outcome` when several targets are counted at once."""
        session = TargetSession(self.spec, state.plan.target, install, state.target_id, store, progress)
        done = store.counted_tests(state.target_id) if self.resume else set()
        before = store.instruction_statuses(state.target_id)
        try:
            instructions.count_target(session, state.plan, skip=done, cpu=cpu)
        except (ServerError, DriverError) as exc:
            with lock or contextlib.nullcontext():
                self._fail(session, exc, outcome, progress)
        finally:
            session.stop()
            after = store.instruction_statuses(state.target_id)
            with lock or contextlib.nullcontext():
                outcome.instructions_ok += after.get("ok", 0) - before.get("ok", 0)
                outcome.instructions_failed += after.get("failed", 0) - before.get("failed", 0)

    # -- the Insert Benchmark and TPROC-C: one target after the other, each on a fresh server ------
    def _insert_benchmark(self, installs: dict[str, InstallInfo], outcome: CampaignOutcome) -> None:
        wanted = set(self.spec.ibench_steps)

        def run(session: TargetSession, install: InstallInfo, target_id: int, repeat: int) -> None:
            self.store.supersede_ibench(target_id, repeat)  # the steps build on each other: all again
            ibench.run_target(session, install, repeat)

        self._one_after_another(installs, outcome, IBENCH_DB, ibench.plan_s(self.spec), ibench.progress_steps(self.spec),
                                len(wanted),
                                lambda tid, rep: self.store.ibench_done(tid, rep) >= wanted,
                                lambda tid, rep: len(self.store.ibench_done(tid, rep)), run)

    def _tpcc(self, installs: dict[str, InstallInfo], outcome: CampaignOutcome) -> None:
        def run(session: TargetSession, install: InstallInfo, target_id: int, repeat: int) -> None:
            tpcc.run_target(session, install, repeat)

        self._one_after_another(installs, outcome, TPCC_DB, tpcc.plan_s(self.spec), 3, 1, self.store.tpcc_done,
                                lambda tid, rep: int(self.store.tpcc_done(tid, rep)), run)

    def _one_after_another(self, installs: dict[str, InstallInfo], outcome: CampaignOutcome, dbname: str,
                           seconds: float, steps: int, runs: int, done, count_done, run) -> None:
        """Each repeat runs every target on a fresh server, the targets in listed order in even
        repeats and reversed in odd ones (A B, B A), so that neither always runs first. `done`
        says whether a target's repeat is stored complete (--resume skips it), `count_done`
        how many of its `runs` units are, `run` measures and stores one."""
        ids = [(target, self.store.ensure_target(outcome.campaign_id, target.name, target.engine, position,
                                                 target.name == self.spec.base.name, target_to_dict(target)))
               for position, target in enumerate(self.spec.targets)]
        pending = []
        repeats = self.spec.only_repeats if self.spec.only_repeats is not None else range(self.spec.repeats)
        for repeat in repeats:
            for target, target_id in (ids if repeat % 2 == 0 else list(reversed(ids))):
                if self.resume and done(target_id, repeat):
                    outcome.runs_kept += runs
                    which = f" of repeat {repeat + 1}" if self.spec.repeats > 1 else ""
                    self.progress.message(f"{target.name}: everything{which} already stored, skipped (--resume)")
                else:
                    pending.append((repeat, target, target_id))
        self.progress.campaign_start(seconds * len(pending), steps * len(pending))
        for repeat, target, target_id in pending:
            if target.name in outcome.failed_targets:
                continue  # its failure is reported once; later repeats of it are not run
            session = TargetSession(self.spec, target, installs[target.name], target_id, self.store,
                                    self.progress, dbname=dbname, placement=self.placement)
            try:
                run(session, installs[target.name], target_id, repeat)
            except (ServerError, DriverError) as exc:
                self._fail(session, exc, outcome)
            finally:
                session.stop()
                outcome.runs_ok += count_done(target_id, repeat)
                outcome.runs_failed += 0 if target.name not in outcome.failed_targets else 1

    # -- validation and bookkeeping --------------------------------------------------------------
    def _resolve_installs(self) -> dict[str, InstallInfo]:
        if self.spec.count_instructions:
            instructions.require_valgrind()
        return {t.name: engines.resolve_install(t, env.cache_dir(), self.progress.message) for t in self.spec.targets}

    def _campaign_id(self) -> int:
        if self.resume:
            existing = self.store.latest_campaign_id(self.spec.name)
            if existing is not None:
                self.progress.message(f"resuming campaign {self.spec.name} (#{existing}) in {self.store.path}")
                return existing
            self.progress.message(f"--resume: no stored campaign named {self.spec.name}; starting it")
        facts = host_info(self.perf, self.placement)
        return self.store.add_campaign(self.spec.name, self.spec.to_dict(), facts, VERSION)

    def _states(self, campaign_id: int) -> list[TargetState]:
        """What each target still has to run. Interleaved tests are all-or-nothing: a test some
        target lacks a run of is rerun for every target, its stored runs superseded."""
        states = []
        for position, plan in enumerate(self.plans):
            target = plan.target
            target_id = self.store.ensure_target(campaign_id, target.name, target.engine, position,
                                                 target.name == self.spec.base.name, target_to_dict(target))
            done = self.store.completed_runs(target_id) if self.resume else set()
            states.append(TargetState(plan, target_id, {r.key for r in plan.runs if not r.warm and r.key not in done}))
        if self.spec.order == "turns" and len(states) > 1:
            groups = {(key[0], key[1]) for s in states for key in s.pending}
            for state in states:
                for name, threads in groups:
                    self.store.supersede(state.target_id, name, threads)
                state.pending = {r.key for r in state.plan.runs if (r.name, r.threads) in groups}
        elif self.resume:  # a run done again replaces its interrupted, failed or skipped rows in reports
            for state in states:
                for key in state.pending:
                    self.store.supersede_unfinished(state.target_id, *key)
        return states

    def _session(self, state: TargetState, install: InstallInfo) -> TargetSession:
        """Timed runs keep the driver and the server on their own CPUs."""
        return TargetSession(self.spec, state.plan.target, install, state.target_id, self.store, self.progress,
                             perf_counters=self.perf.hardware_counters, placement=self.placement)

    def _fail(self, session: TargetSession, exc: UserError, outcome: CampaignOutcome,
              progress: ProgressSink | None = None) -> None:
        say = (progress or self.progress).message
        session.failed = True
        outcome.failed_targets.append(session.name)
        outcome.failures[session.name] = failure_reason(session, exc)
        say(f"error: {exc.message}" + (f"\n  hint: {exc.hint}" if exc.hint else ""))
        say(f"{session.name}: remaining runs skipped ({outcome.failures[session.name]}); the campaign continues")

    def _count(self, sessions: list[TargetSession], outcome: CampaignOutcome) -> None:
        """Store what failed targets did not run as skipped, then add up every session's runs."""
        for session in sessions:
            if session.failed:
                state = next(s for s in self._all_states if s.target_id == session.target_id)
                rest = [r for r in state.plan.runs if not r.warm and r.key in state.pending
                        and r.key not in session.attempted]
                session.skip(rest, f"skipped: {outcome.failures.get(session.name, 'target failed')}")
            outcome.runs_ok += session.runs_ok
            outcome.runs_failed += session.runs_failed
            outcome.runs_skipped += session.runs_skipped

    # -- sequential: one target after the other ---------------------------------------------------
    def _sequential(self, state: TargetState, install: InstallInfo, outcome: CampaignOutcome) -> None:
        session = self._session(state, install)
        try:
            session.start()
            for step in state.plan.steps:
                if isinstance(step, FreshStep):
                    session.reload(step)
                elif isinstance(step, LoadStep):
                    session.load(step)
                elif isinstance(step, SettleStep):
                    work_s = session.settle_work(step)
                    settle_wait(self.progress, session.name, step, work_s)
                    session.settle_end()
                elif step.warm or step.key in state.pending:
                    if restarts_before(self.spec, step):
                        session.restart(step)
                    session.run(step)
        except (ServerError, DriverError) as exc:
            self._fail(session, exc, outcome)
        finally:
            session.stop()
            self._count([session], outcome)

    # -- turns: all targets step by step, taking turns inside each run -------------------------
    def _in_turns(self, states: list[TargetState], installs: dict[str, InstallInfo],
                     outcome: CampaignOutcome) -> None:
        sessions = [self._session(s, installs[s.plan.target.name]) for s in states]
        pending = set().union(*(s.pending for s in states))
        live: list[TargetSession] = []
        try:
            for session in sessions:
                if self._guard(session, session.start, outcome):
                    live.append(session)
            if len(live) > 1 and not turns.can_take_turns(live):
                self.progress.message("note: targets of different engine families cannot take turns inside one "
                                      "driver run; they take whole runs in turn instead")
            for step in states[0].plan.steps:
                live = self._turns_step(step, live, pending, outcome)
                if not live:
                    break
        finally:
            for session in sessions:
                session.stop()
            self._count(sessions, outcome)

    def _turns_step(self, step, live: list[TargetSession], pending: set,
                          outcome: CampaignOutcome) -> list[TargetSession]:
        if isinstance(step, FreshStep):  # all retire, then all start: they trade memory (_cycle_all)
            return self._cycle_all(live, step, lambda s: s.retire(step), lambda s: s.start(), outcome)
        if isinstance(step, LoadStep):
            return [s for s in live if self._guard(s, lambda s=s: s.load(step), outcome)]
        if isinstance(step, SettleStep):
            works: list[float] = []
            kept = [s for s in live if self._guard(s, lambda s=s: works.append(s.settle_work(step)), outcome)]
            settle_wait(self.progress, "all targets", step, max(works, default=0.0))
            return [s for s in kept if self._guard(s, s.settle_end, outcome)]
        if not (step.warm or step.key in pending):
            return live
        if restarts_before(self.spec, step):
            live = self._restart_all(live, step, outcome)
        if turns.can_take_turns(live):
            return turns.run_step(live, step, self.spec.turn_s, lambda s, exc: self._fail(s, exc, outcome))
        order = live if step.repeat % 2 == 0 else list(reversed(live))  # A B, B A: balanced
        dead = {s.name for s in order if not self._guard(s, lambda s=s: s.run(step), outcome)}
        return [s for s in live if s.name not in dead]

    def _restart_all(self, live: list[TargetSession], step, outcome: CampaignOutcome) -> list[TargetSession]:
        """Restart the servers taking turns: every one stops, then every one starts and warms its
        cache, both in one order (_start_order). Memory a process frees is handed out again
        last in, first out, and a server takes its pages as the prewarm touches them, so the
        first to start gets the pages the last to stop gave back and the servers trade their
        physical memory at every restart. Restarted one by one, each would get its own pages
        back and keep for the whole campaign what its first start drew (docs/noise.md, D11,
        E5 and E6)."""
        return self._cycle_all(live, step, lambda s: s.halt(step), lambda s: s.restart(step, stopped=True), outcome)

    def _cycle_all(self, live: list[TargetSession], step, stop, start, outcome: CampaignOutcome) -> list[TargetSession]:
        """`stop` every server, then `start` every one that stopped, both in _start_order;
        returns the servers still live, in listed order."""
        order = self._start_order(live, step.repeat)
        stopped = [s for s in order if self._guard(s, lambda s=s: stop(s), outcome)]
        started = {s.name for s in stopped if self._guard(s, lambda s=s: start(s), outcome)}
        return [s for s in live if s.name in started]

    @staticmethod
    def _start_order(live: list[TargetSession], repeat: int) -> list[TargetSession]:
        """The order in which servers stop and start again before `repeat`: as listed before
        even repeats (and at the first start), reversed before odd ones. The place in the
        order of starting carries an offset of its own: in a fixed order, whichever server
        started second kept one for the whole campaign on some tests (docs/noise.md, D11
        and E8). Alternating puts that place on the repeats'
        parity, where the crossover estimate (analysis/noise.py) takes it out as it does the
        trade of memory. Stopping in the same order keeps the trade."""
        return list(live) if repeat % 2 == 0 else list(reversed(live))

    def _guard(self, session: TargetSession, action, outcome: CampaignOutcome) -> bool:
        """Run a target's action; a server or driver failure ends that target only."""
        try:
            action()
            return True
        except (ServerError, DriverError) as exc:
            self._fail(session, exc, outcome)
            return False


def _join_uninterrupted(threads: list[threading.Thread]) -> None:
    """Wait for threads that are stopping their servers; a further Ctrl-C does not cut that short."""
    for thread in threads:
        while thread.is_alive():
            try:
                thread.join(0.2)
            except KeyboardInterrupt:
                continue
