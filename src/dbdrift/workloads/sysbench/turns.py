"""Turns: the targets take turns inside one driver run (order = "turns"; docs/protocol.md "Turns").

Every driver thread holds a connection per target and all threads switch target together every
`turn_s` (the campaign key, plan/keys.py; slow events get turns of TURN_EVENTS events) in rounds of one turn
per target, in a cycle of rounds balanced so that every target follows every other equally
often (plan/rounds.py; with two targets A B, B A, ...). Noise on this kind of host comes in
bursts from well under a second to several seconds (steal, neighbours); turns of 10 ms put
both sides of a pair inside the same burst, so the round-by-round ratios cancel it where
slices of seconds could not. The servers stay up and loaded, and no turn pays a restart,
reconnect or re-prepare.

Each target still gets its own stored run: its turns become its intervals (with `round`), its
server's CPU is its own, and the counters that are host-wide or the driver's are scaled to its
share of the run's time (runner/observe.py).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from dbdrift.driver import process
from dbdrift.driver.protocol import DriverOutput
from dbdrift.errors import ServerError
from dbdrift.model import JsonObject
from dbdrift.plan import rounds
from dbdrift.workloads.sysbench.expand import RunStep, run_s
from dbdrift.workloads.sysbench.plan import params
from dbdrift.runner.observe import RunObservers
from dbdrift.workloads.sysbench.session import RunPace, SysbenchSession
from dbdrift.runner.steal import WindowedSteal

Fail = Callable[[SysbenchSession, ServerError], None]

# Events each driver thread should finish in a turn. Slow events (a range of 10,000 rows, a
# scan) would otherwise leave most 10 ms turns without an event started in them, and too few
# rounds with both targets in them to pair; the driver stretches their turns after the warm-up
# (docs/protocol.md "Turns"). Fast events keep turn_s.
TURN_EVENTS = 10


def can_take_turns(sessions: list[SysbenchSession]) -> bool:
    """One driver run speaks one protocol: targets of different engine families cannot take
    turns in it (the campaign then runs them one after the other, order flipping per repeat)."""
    return len({s.dialect.backend for s in sessions}) == 1


def run_step(sessions: list[SysbenchSession], step: RunStep, turn_s: float, round_order: str,
             fail: Fail) -> list[SysbenchSession]:
    """Run one measured step with every live target taking turns; store a run per target.

    A server that died before or during the run gets its run stored as failed and is handed to
    `fail` (which ends that target); the others then run the step again without it, so what
    they store is a complete run. Returns the targets still alive. Raises KeyboardInterrupt
    after storing every target's interrupted run.
    """
    live = []
    for session in sessions:
        try:
            session.check_ready(step, session.driver_spec(step))
            live.append(session)
        except ServerError as exc:
            fail(session, exc)
    while len(live) >= 2:
        spec, result, observers = _take_turns(live, step, turn_s, round_order)
        dead = _dead(live) if result.exit_code != 0 and not result.interrupted else {}
        shares, stored = _busy_shares(result, len(live)), _with_turn(spec, result)
        for i, session in enumerate(live):
            if dead and session not in dead:
                continue  # run again below without the dead server; nothing of this run is kept
            session.conclude(step, stored, _share(result, i, shares[i]), observers[i], share=shares[i])
        if result.interrupted:
            raise KeyboardInterrupt
        if not dead:
            return live
        for session, death in dead.items():
            fail(session, death)
        live = [s for s in live if s not in dead]
    if live:
        try:
            live[0].run(step)
        except ServerError as exc:
            fail(live[0], exc)
            return []
    return live


def _take_turns(live: list[SysbenchSession], step: RunStep, turn_s: float,
                round_order: str) -> tuple[JsonObject, process.DriverResult, list[RunObservers]]:
    n = len(live)
    # Each target gets warmup_s and duration_s of its own turns, as a sequential run would.
    # A scan takes seconds: its turns are at least one second (a turn is never shorter than an event).
    turn_s = max(turn_s, 1.0) if step.test.metric == "krps" else turn_s
    spec = dict(live[0].driver_spec(step), warmup_s=step.warmup_s * n, duration_s=step.duration_s * n,
                turns={"connections": [s.conn for s in live], "turn_s": turn_s, "turn_events": TURN_EVENTS,
                       "rounds": [list(r) for r in rounds.rounds_for(n, round_order)]})
    spec.pop("connection", None)
    total_s = (step.warmup_s + step.duration_s) * n
    for session in live:  # each target's run ends with its own step_end, which takes its share of the ETA
        session.progress.step_start(session.name, step.label, run_s(step), run_s(step) * n)
    observers = [s.observers(step, step.duration_s * n, steal=False).start() for s in live]
    clock = WindowedSteal()
    pace = TurnsPace(live, step)

    def on_line(obj: JsonObject) -> None:
        clock.on_line(obj)
        kind = obj.get("type")
        pace.read(obj)
        if kind == "interval" and isinstance(obj.get("target"), int) and 0 <= obj["target"] < n:
            observers[obj["target"]].on_line(obj)
        elif kind == "start":
            pids = obj.get("target_pids") or [[] for _ in live]
            for i, o in enumerate(observers):
                o.on_line(dict(obj, backend_pids=pids[i] if i < len(pids) else []))
        else:
            for o in observers:
                o.on_line(obj)

    def on_start(pid: int) -> None:
        for o in observers:
            o.on_driver_start(pid)

    try:
        result = process.run_driver("run", spec, timeout_s=total_s + 120, on_line=on_line, on_start=on_start,
                                    cpus=live[0].placement.driver)
    finally:
        clock.close()
        for o in observers:
            o.stop()
    return spec, result, observers


def _dead(live: list[SysbenchSession]) -> dict[SysbenchSession, ServerError]:
    """The targets whose server is gone after a failed run (each looked at with a grace period)."""
    dead = {}
    for session in live:
        try:
            session.raise_if_dead()
        except ServerError as exc:
            dead[session] = exc
    return dead


def _with_turn(spec: JsonObject, result: process.DriverResult) -> JsonObject:
    """The spec as stored with each run, with the turn length the driver settled on."""
    measured = (result.output.warmup or {}).get("turn_s")
    if measured is None:
        return spec
    return dict(spec, turns=dict(spec["turns"], measured_turn_s=measured))


def _share(result: process.DriverResult, i: int, share: float) -> process.DriverResult:
    """Target i's part of the driver's result: its turns as intervals, its latencies (turns carry
    none; the summary has each target's histogram), its `share` of client CPU."""
    out = result.output
    summary = out.summary
    targets = (summary or {}).get("targets") or []
    if summary is not None and i < len(targets):
        summary = dict(summary, **targets[i])
    mine = DriverOutput(start=out.start, warmup=out.warmup,
                        intervals=[iv for iv in out.intervals if iv.get("target") == i],
                        summary=summary, fatal=out.fatal, unparsed=out.unparsed)
    return replace(result, output=mine, rusage_user_s=result.rusage_user_s * share,
                   rusage_sys_s=result.rusage_sys_s * share)


def _busy_shares(result: process.DriverResult, n: int) -> list[float]:
    """Each of the n targets' part of the time all spent in their turns (1/n when none ran)."""
    busy = [0.0] * n
    for iv in result.output.intervals:
        target = iv.get("target")
        if isinstance(target, int) and 0 <= target < n:
            busy[target] += max(0.0, iv["end_s"] - iv["start_s"])
    total = sum(busy)
    return [b / total for b in busy] if total > 0 else [1.0 / n] * n


class TurnsPace:
    """Each target's progress in a run in turns, from the driver's turn lines: how far the run is
    (the warm-up of every target's turns, then the turns' end) and each target's rate over its
    turns of about the last interval_s, handed to its progress as the interval lines of a run
    of its own would be."""

    def __init__(self, live: list[SysbenchSession], step: RunStep) -> None:
        self.live, self.step, self.n = live, step, len(live)
        self.paces = [RunPace(step, params(s.spec).rows) for s in live]
        self.every_s = live[0].spec.interval_s
        self._clear()

    def _clear(self) -> None:
        self.busy = [0.0] * self.n
        self.events = [0] * self.n
        self.statements = [0] * self.n

    def read(self, obj: JsonObject) -> None:
        step, n = self.step, self.n
        whole = (step.warmup_s + step.duration_s) * n
        if obj.get("type") == "warmup":
            for session in self.live:
                session.progress.step_progress(session.name, step.label, step.warmup_s * n / whole if whole else 0.0,
                                               "warm-up done")
            return
        target = obj.get("target")
        if obj.get("type") != "interval" or not isinstance(target, int) or not 0 <= target < n:
            return
        self.busy[target] += max(0.0, float(obj.get("end_s", 0.0)) - float(obj.get("start_s", 0.0)))
        self.events[target] += int(obj.get("events", 0))
        self.statements[target] += int(obj.get("statements", 0))
        if sum(self.busy) < self.every_s:
            return
        fraction = (step.warmup_s * n + float(obj.get("end_s", 0.0))) / whole if whole else 1.0
        for i, session in enumerate(self.live):
            rate = self.paces[i].rate({"events": self.events[i], "statements": self.statements[i]}, self.busy[i])
            session.progress.step_progress(session.name, step.label, fraction, rate)
        self._clear()
