"""The sysbench sequence (layer runner): every target's tests in run order, with loads, settles
and warm-ups, either one target after the other or all targets up at once taking turns inside
each measured run; then the instruction counts, on servers of their own.

Sequential: one server at a time, each target runs all its steps (the scripts' way).
In turns: all servers up and loaded at once; every measured step is one driver run in which
the targets take turns of `turn_s` in a balanced order (A B, B A, ...; turns.py),
so drift and bursts of steal hit every target alike and turns can be paired round by round.
Targets of different engine families cannot share a driver run: they take whole runs in turn.
"""
from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from dbdrift import cpus
from dbdrift.driver import process
from dbdrift.errors import DriverError, ServerError
from dbdrift.metrics.callgrind import require_valgrind
from dbdrift.model import InstallInfo
from dbdrift.plan import rounds
from dbdrift.plan.campaign import CampaignSpec, target_to_dict
from dbdrift.plan.lifecycle import RESTART_S, SettleStep
from dbdrift.runner.campaign import CampaignOutcome, Runner
from dbdrift.runner.detect import Planned, follow
from dbdrift.runner.sequential import Sequential
from dbdrift.runner.progress import LanesProgress, ProgressSink, Tally
from dbdrift.runner.session import settle_wait
from dbdrift.workloads.sysbench import instructions, turns
from dbdrift.workloads.sysbench.plan import measured_lengths, params
from dbdrift.workloads.sysbench.session import SysbenchSession
from dbdrift.workloads.sysbench.expand import (MEASURED, RUN_OVERHEAD_S, SETTLES, SETUP, WARM, FreshStep, LoadStep,
                                              RunStep, Step, TargetPlan, estimate_parts, expand, restarts_before,
                                              run_cost_s, within_starts)
from dbdrift.store.store import Store
from dbdrift.quantities import format_duration


@dataclass
class TargetState:
    plan: TargetPlan
    target_id: int
    pending: set[tuple[str, int, int]]  # RunStep.key of the runs still to do


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
    if params(spec).count_instructions:
        steps += instructions.estimate_counts(spec, counted)[1]
    return total_s, steps


COUNTS = "instruction counts"


def estimate_by_part(spec: CampaignSpec, timed: list[TargetPlan], counted: list[TargetPlan]) -> dict[str, float]:
    """estimate's seconds by part (expand.py estimate_parts, and the instruction counts),
    summed over the targets."""
    in_turns = spec.order == "turns" and len(timed) > 1
    parts: dict[str, float] = {}
    if spec.timed:
        for i, plan in enumerate(timed):
            for part, seconds in estimate_parts(plan, spec, settles=not in_turns or i == 0).items():
                parts[part] = parts.get(part, 0.0) + seconds
    if params(spec).count_instructions:
        parts[COUNTS] = instructions.estimate_counts(spec, counted)[0] / counting_lanes(len(counted))
    return parts


def estimate_campaign(spec: CampaignSpec) -> tuple[float, int]:
    """Expected seconds and progress steps of a whole sysbench campaign, from nothing stored."""
    plans = expand(spec)
    counted = [p for p in plans if instructions.supports(p.target.engine)]
    return estimate(spec, plans, counted)


def counts_first(spec: CampaignSpec) -> bool:
    """Whether the instruction counts run before the timed runs: in a campaign planned to detect
    with the sequential rule, where their verdicts give the timed budget its order."""
    return bool(params(spec).count_instructions and spec.timed and spec.detect_plan
                and spec.detect_plan.get("sequential"))


def counting_lanes(targets: int) -> int:
    """How many targets' instructions are counted at once: one per CPU this process may use."""
    return max(1, min(targets, len(os.sched_getaffinity(0))))


def check_lines(spec: CampaignSpec) -> list[str]:
    """What each target runs, as `run --check` says it: tests, threads and repeats, and the
    instruction counts."""
    plans = expand(spec)
    counted = [p for p in plans if instructions.supports(p.target.engine)]
    runs = sum(1 for p in plans for r in p.runs if not r.warm) if spec.timed else 0
    lines = [f"tests: {len(spec.tests)} ({', '.join(spec.test_names)}), threads {list(params(spec).threads)}, "
             f"repeats {spec.repeats}: {runs} timed runs"]
    if params(spec).count_instructions:
        lines.append(f"instruction counts: {sum(len(instructions.tests_in_run_order(p)) for p in counted)} "
                     "(test, target) pairs under callgrind")
    return lines


def time_lines(spec: CampaignSpec) -> list[str]:
    """Where a sysbench campaign's expected time goes, and which key bounds each part: read_s
    and write_s (compare's --duration) bound the measured and warm-up runs, settle_s the settles.
    A campaign planned to detect counts each test's expected starts, not the most it may get."""
    plans = expand(spec)
    if spec.detect_plan:
        plans = within_starts(plans, {(t["test"], t["threads"]): t["starts"] for t in spec.detect_plan["tests"]})
    counted = [p for p in plans if instructions.supports(p.target.engine)]
    parts = estimate_by_part(spec, plans, counted)
    kinds = {t.duration_kind for t in spec.tests}
    each = " / ".join(f"{kind}_s {seconds:g}s" for kind, seconds in measured_lengths(spec).items() if kind in kinds)
    warm = sorted({r.name for p in plans[:1] for r in p.runs if r.warm})
    settles = sum(isinstance(x, SettleStep) for x in plans[0].steps) if plans else 0
    together = spec.order == "turns" and len(plans) > 1
    lines = []
    if parts.get(MEASURED):
        lines.append(f"{MEASURED} {format_duration(parts[MEASURED])}: {each} each, plus warmup_s {params(spec).warmup_s:g}s")
    if parts.get(WARM):
        lines.append(f"{WARM} {format_duration(parts[WARM])}: {', '.join(warm)} per target, not reported "
                     f"(read_s {params(spec).read_s:g}s each" + (f"; scan.warm scan_warm_s {params(spec).scan_warm_s:g}s)"
                                                           if "scan.warm" in warm else ")"))
    if parts.get(SETTLES):
        lines.append(f"{SETTLES} {format_duration(parts[SETTLES])}: {settles} of settle_s "
                     f"{spec.settle_total_s():.0f}s" + (", all targets resting together" if together else " per target"))
    if parts.get(SETUP):
        lines.append(f"{SETUP} {format_duration(parts[SETUP])}")
    if parts.get(COUNTS):
        lines.append(f"{COUNTS} {format_duration(parts[COUNTS])}")
    if parts.get(WARM) or parts.get(SETTLES):
        lines.append("compare's --duration sets read_s and write_s, so it bounds the measured and warm-up runs; the "
                     "settles (settle_s) and scan.warm (scan_warm_s) do not follow it: --set settle_s=10 shortens "
                     "the settles, --set warm_runs=false drops the warm-ups (both change what is measured: "
                     "`dbdrift docs methodology`)")
    if parts.get(WARM, 0.0) > parts.get(MEASURED, 0.0):
        scan = "scan_warm_s, " if "scan.warm" in warm else ""
        lines.append(f"note: the warm-up runs take longer than the measured runs: they last read_s ({params(spec).read_s:g}s)"
                     + (f" and scan_warm_s ({params(spec).scan_warm_s:g}s)" if scan else "")
                     + f", whatever write_s is; a shorter read_s, {scan}or warm_runs = false shortens them")
    return lines


def pending_runs(spec: CampaignSpec, plans: list[TargetPlan],
                 done: dict[str, set[tuple[str, int, int]]]) -> list[set[tuple[str, int, int]]]:
    """The keys of the measured runs each plan's target still has to run, given the keys `done`
    (stored complete) by target name: what --resume runs and `run --resume --check` counts. In
    turns a test some target lacks runs again for every target (its runs stay paired)."""
    pending = [{r.key for r in p.runs if not r.warm and r.key not in done.get(p.target.name, set())} for p in plans]
    if spec.order == "turns" and len(plans) > 1:
        groups = {(key[0], key[1]) for keys in pending for key in keys}
        pending = [{r.key for r in p.runs if not r.warm and (r.name, r.threads) in groups} for p in plans]
    return pending


def resume_left(store: Store, campaign_id: int, spec: CampaignSpec) -> tuple[str, float]:
    """What `run --resume` would still run of the stored campaign, as the sequence decides it (the
    measured runs each target lacks, pending_runs; the targets whose counts are missing): a line
    saying so and its expected seconds (`run --resume --check`)."""
    ids = {t.name: t.id for t in store.targets(campaign_id)}
    plans = expand(spec)
    done = {name: store.completed_runs(target_id) for name, target_id in ids.items()}
    pending = pending_runs(spec, plans, done)
    left = [replace(p, steps=tuple(s for s in p.steps if not isinstance(s, RunStep) or s.warm or s.key in keys))
            for p, keys in zip(plans, pending) if keys]
    counted = [p for p in plans if params(spec).count_instructions and instructions.supports(p.target.engine)
               and set(spec.test_names) - store.counted_tests(ids.get(p.target.name, -1))]
    runs = sum(1 for p in plans for r in p.runs if not r.warm) if spec.timed else 0
    to_run = sum(len(keys) for keys in pending) if spec.timed else 0
    expected = estimate(spec, left if spec.timed else [], counted)[0]
    return (f"{runs - to_run} of {runs} timed runs stored, {to_run} to run"
            + (f", {len(counted)} target(s) to count" if params(spec).count_instructions else ""), expected)


def detect_costs(spec: CampaignSpec) -> tuple[float, float]:
    """What detect's plan adds to the runs it chooses the lengths of: the seconds a campaign takes
    besides its measured runs (starts, loads, settles and warm-up runs), and the seconds each
    measured run adds beyond its length (its warm-up, the driver's setup, a restart)."""
    once = replace(spec, repeats=1, params=replace(params(spec), count_instructions=False))
    parts = estimate_by_part(once, expand(once), [])
    return sum(parts.values()) - parts.get(MEASURED, 0.0), params(spec).warmup_s + RUN_OVERHEAD_S + RESTART_S


def to_run(state: TargetState) -> TargetPlan:
    """A target's plan without the measured runs that are not pending (stored, for --resume):
    what it runs, so the progress estimate counts only that."""
    return replace(state.plan, steps=tuple(s for s in state.plan.steps
                                           if not isinstance(s, RunStep) or s.warm or s.key in state.pending))


def run(runner: Runner, installs: dict[str, InstallInfo], outcome: CampaignOutcome) -> None:
    """The campaign's timed runs, then its instruction counts (Workload.run)."""
    Sequence(runner).run(installs, outcome)


def clients(spec: CampaignSpec) -> int:
    return max(params(spec).threads)


class Sequence:
    """One sysbench campaign's walk through its plans, on the runner's store, progress and CPUs."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.spec, self.store, self.resume, self.progress = runner.spec, runner.store, runner.resume, runner.progress
        self.perf, self.placement = runner.perf, runner.placement
        self.plans = expand(self.spec)
        self.planned: Planned | Sequential | None = None  # a campaign planned to detect: which starts still run

    def run(self, installs: dict[str, InstallInfo], outcome: CampaignOutcome) -> None:
        states = self._all_states = self._states(outcome.campaign_id)
        active = [s for s in states if s.pending]
        for state in states:
            outcome.runs_kept += len({r.key for r in state.plan.runs if not r.warm} - state.pending)
            if not state.pending:
                self.progress.message(f"{state.plan.target.name}: all runs already stored, skipped (--resume)")
        counting = [s for s in states if instructions.supports(s.plan.target.engine)] \
            if params(self.spec).count_instructions else []
        for state in states:
            if params(self.spec).count_instructions and state not in counting:
                self.progress.message(f"{state.plan.target.name}: instruction counts are not available for "
                                      f"{state.plan.target.engine}; not counted")
        timed = [to_run(state) for state in active]  # --resume: the runs the store lacks, nothing more
        self.progress.campaign_start(*estimate(self.spec, timed, [s.plan for s in counting]))
        tally = self.progress = Tally(self.runner.progress)  # each part credits the estimate its steps did not
        first = counts_first(self.spec)
        if counting and first:  # their verdicts decide which tests the timed budget goes to first
            self.progress.message("detect: instruction counts first: the timed budget goes first to the tests "
                                  "whose counts moved and to those they cannot see (writes, I/O, locks)")
            self._count_all([s for s in counting if s.plan.target.name not in outcome.failed_targets],
                            installs, outcome)
            whole, runs = estimate(self.spec, timed, [s.plan for s in counting]), estimate(self.spec, timed, [])
            tally.settle(whole[0] - runs[0], whole[1] - runs[1])
        self.planned = follow(self.runner, outcome.campaign_id)  # the budget's clock starts with the timed runs
        if self.planned is not None:
            self.planned.progress = self.progress
        if self.spec.timed:
            if self.spec.order == "turns" and len(active) > 1:
                self._in_turns(active, installs, outcome)
                tally.settle(*estimate(self.spec, timed, []))
            else:
                for state, plan in zip(active, timed):
                    self._sequential(state, installs[state.plan.target.name], outcome)
                    tally.settle(*estimate(self.spec, [plan], []))
        if counting and not first:
            self._count_all([s for s in counting if s.plan.target.name not in outcome.failed_targets],
                            installs, outcome)
            whole, runs = estimate(self.spec, timed, [s.plan for s in counting]), estimate(self.spec, timed, [])
            tally.settle(whole[0] - runs[0], whole[1] - runs[1])

    def _states(self, campaign_id: int) -> list[TargetState]:
        """What each target still has to run. Interleaved tests are all-or-nothing: a test some
        target lacks a run of is rerun for every target, its stored runs superseded."""
        states, done = [], {}
        for position, plan in enumerate(self.plans):
            target = plan.target
            target_id = self.store.ensure_target(campaign_id, target.name, target.engine, position,
                                                 target.name == self.spec.base.name, target_to_dict(target))
            done[target.name] = self.store.completed_runs(target_id) if self.resume else set()
            states.append(TargetState(plan, target_id, set()))
        for state, keys in zip(states, pending_runs(self.spec, self.plans, done)):
            state.pending = keys
        if self.spec.order == "turns" and len(states) > 1:
            groups = {(key[0], key[1]) for s in states for key in s.pending}
            for state in states:
                for name, threads in groups:
                    self.store.supersede(state.target_id, name, threads)
        elif self.resume:  # a run done again replaces its interrupted, failed or skipped rows in reports
            for state in states:
                for key in state.pending:
                    self.store.supersede_unfinished(state.target_id, *key)
        return states

    def _session(self, state: TargetState, install: InstallInfo) -> SysbenchSession:
        """Timed runs keep the driver and the server on their own CPUs."""
        return SysbenchSession(self.spec, state.plan.target, install, state.target_id, self.store, self.progress,
                             perf_counters=self.perf.hardware_counters, placement=self.placement)

    def _count(self, sessions: list[SysbenchSession], outcome: CampaignOutcome) -> None:
        """Store what failed targets did not run as skipped, then add up every session's runs."""
        for session in sessions:
            if session.failed:
                state = next(s for s in self._all_states if s.target_id == session.target_id)
                rest = [r for r in state.plan.runs if not r.warm and r.key in state.pending
                        and r.key not in session.attempted]
                session.skip(rest, f"skipped: {outcome.failures.get(session.name, 'target failed')}")
            outcome.runs_ok += session.runs_ok
            outcome.runs_failed += session.runs_failed
            outcome.runs_interrupted += session.runs_interrupted
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
            self.runner.fail(session, exc, outcome)
        finally:
            session.stop()
            self._count([session], outcome)

    # -- turns: all targets step by step, taking turns inside each run -------------------------
    def _in_turns(self, states: list[TargetState], installs: dict[str, InstallInfo],
                     outcome: CampaignOutcome) -> None:
        sessions = [self._session(s, installs[s.plan.target.name]) for s in states]
        pending = set().union(*(s.pending for s in states))
        live: list[SysbenchSession] = []
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

    def _turns_step(self, step: Step, live: list[SysbenchSession], pending: set[tuple[str, int, int]],
                          outcome: CampaignOutcome) -> list[SysbenchSession]:
        if isinstance(step, FreshStep):  # all retire, then all start: they trade memory (_cycle_all)
            return self._cycle_all(live, step, lambda s: s.retire(step), lambda s: s.start(), outcome)
        if isinstance(step, LoadStep):
            return [s for s in live if self._guard(s, lambda: s.load(step), outcome)]
        if isinstance(step, SettleStep):
            works: list[float] = []
            kept = [s for s in live if self._guard(s, lambda: works.append(s.settle_work(step)), outcome)]
            settle_wait(self.progress, "all targets", step, max(works, default=0.0))
            return [s for s in kept if self._guard(s, s.settle_end, outcome)]
        if not (step.warm or step.key in pending):
            return live
        if self.planned is not None and not step.warm and not self.planned.wants(step):
            self.progress.advance(len(live) * run_cost_s(self.spec, step))
            return live
        live = self._measure(step, live, outcome)
        if self.planned is not None and not step.warm:
            self.planned.after(step)
        return live

    def _measure(self, step: RunStep, live: list[SysbenchSession], outcome: CampaignOutcome) -> list[SysbenchSession]:
        """One run of every live target, in turns inside one driver run where they can, else whole
        runs in turn; the servers restart before it where the campaign says so."""
        if restarts_before(self.spec, step):
            live = self._restart_all(live, step, outcome)
        if turns.can_take_turns(live):
            return turns.run_step(live, step, params(self.spec).turn_s, self.spec.round_order,
                                  lambda s, exc: self.runner.fail(s, exc, outcome))
        order = self._start_order(live, step.repeat)  # whole runs in turn, in the order servers start in
        for place, session in enumerate(order):
            session.position = place
        dead = {s.name for s in order if not self._guard(s, lambda: s.run(step), outcome)}
        return [s for s in live if s.name not in dead]

    def _restart_all(self, live: list[SysbenchSession], step: RunStep, outcome: CampaignOutcome
                     ) -> list[SysbenchSession]:
        """Restart the servers taking turns: every one stops, then every one starts and warms its
        cache, both in one order (_start_order). Memory a process frees is handed out again
        last in, first out, and a server takes its pages as the prewarm touches them, so the
        first to start gets the pages the last to stop gave back and the servers trade their
        physical memory at every restart. Restarted one by one, each would get its own pages
        back and keep for the whole campaign what its first start drew (docs/noise.md, D11,
        E5 and E6)."""
        return self._cycle_all(live, step, lambda s: s.halt(step), lambda s: s.restart(step, stopped=True), outcome)

    def _cycle_all(self, live: list[SysbenchSession], step: RunStep | FreshStep,
                   stop: Callable[[SysbenchSession], None], start: Callable[[SysbenchSession], None],
                   outcome: CampaignOutcome) -> list[SysbenchSession]:
        """`stop` every server, then `start` every one that stopped, both in _start_order;
        returns the servers still live, in listed order."""
        order = self._start_order(live, step.repeat)
        stopped = [s for s in order if self._guard(s, lambda: stop(s), outcome)]
        started = {s.name for s in stopped if self._guard(s, lambda: start(s), outcome)}
        return [s for s in live if s.name in started]

    def _start_order(self, live: list[SysbenchSession], repeat: int) -> list[SysbenchSession]:
        """The order in which servers stop and start again before `repeat` (plan/rounds.repeat_order;
        the first start is repeat 0's). The place in the order of starting carries an offset of
        its own: in a fixed order, whichever server started second kept one for the whole
        campaign on some tests (docs/noise.md, D11 and E8). With two targets the order
        alternates, which puts that place on the repeats' parity, where the crossover estimate
        (analysis/noise.py) takes it out as it does the trade of memory; with more, every n
        repeats give each target each place once. Stopping in the same order keeps the trade."""
        return [live[k] for k in rounds.repeat_order(repeat, len(live), self.spec.round_order)]

    def _guard(self, session: SysbenchSession, action: Callable[[], object], outcome: CampaignOutcome) -> bool:
        """Run a target's action; a server or driver failure ends that target only."""
        try:
            action()
            return True
        except (ServerError, DriverError) as exc:
            self.runner.fail(session, exc, outcome)
            return False


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
        session = SysbenchSession(self.spec, state.plan.target, install, state.target_id, store, progress)
        done = store.counted_tests(state.target_id) if self.resume else set()
        before = store.instruction_statuses(state.target_id)
        try:
            instructions.count_target(session, state.plan, skip=done, cpu=cpu)
        except (ServerError, DriverError) as exc:
            with lock or contextlib.nullcontext():
                self.runner.fail(session, exc, outcome, progress)
        finally:
            session.stop()
            after = store.instruction_statuses(state.target_id)
            with lock or contextlib.nullcontext():
                outcome.instructions_ok += after.get("ok", 0) - before.get("ok", 0)
                outcome.instructions_failed += after.get("failed", 0) - before.get("failed", 0)


def _join_uninterrupted(threads: list[threading.Thread]) -> None:
    """Wait for threads that are stopping their servers; a further Ctrl-C does not cut that short."""
    for thread in threads:
        while thread.is_alive():
            try:
                thread.join(0.2)
            except KeyboardInterrupt:
                continue


# -- the checks of the Workload (workloads/registry.py): sysbench
def preflight(spec: CampaignSpec) -> None:
    """Nothing to refuse before anything is fetched: the driver runs the catalog's tests, and they
    need no Python package."""


def check_builds(spec: CampaignSpec, cache_dir: Path) -> None:
    """Nothing to refuse in a build before it is fetched: every build of the three engines runs the
    catalog's tests (no extension). Counting instructions needs valgrind, refused here before
    anything is fetched."""
    if params(spec).count_instructions:
        require_valgrind()


def check_installs(spec: CampaignSpec, installs: dict[str, InstallInfo]) -> None:
    """Nothing to refuse in a found build: every build of the three engines runs the catalog's tests
    (no extension)."""
