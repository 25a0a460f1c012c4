"""The client end of `dbdrift run --cluster`: plan the units, send them to the cluster, and
write what they stream back into the one store as it arrives.

Every unit goes to a worker with the `dbdrift` resource (and its host kind's), one per host at
a time. A unit whose worker is lost is re-queued once on another eligible worker (it runs only
what the store still lacks) and stored as failed with the reason after a second loss. Ctrl-C
sets the cluster's stop event: every unit stores what it measured and stops its servers, and
the client keeps writing until they have ended.
"""
from __future__ import annotations

import pickle
import signal
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from distributed import Client, Event, Future, Queue

from dbdrift.cluster import units as plan
from dbdrift.cluster import worker as remote
from dbdrift.cluster.units import Unit
from dbdrift.errors import UserError
from dbdrift.model import JsonObject
from dbdrift.plan.campaign import CampaignSpec, target_to_dict
from dbdrift.runner.campaign import VERSION, CampaignWorkload, machine_facts
from dbdrift.runner.progress import LanesProgress, ProgressSink
from dbdrift.store.store import Store, now_iso
from dbdrift.quantities import format_duration

Message = JsonObject  # a line a unit sent, decoded from JSON: which keys it has depends on its "type"
UnitKey = tuple[str | None, int]  # (host kind, unit number)
UnitResult = dict[str, object]  # what worker.run_unit returns

MAX_ATTEMPTS = 2  # a unit runs again once after its worker is lost
STOP_WAIT_S = 300.0  # after Ctrl-C: how long units get to store and stop their servers


@dataclass
class ClusterOutcome:
    campaigns: dict[str | None, int] = field(default_factory=dict)  # host kind -> campaign id
    units: list[Unit] = field(default_factory=list)
    interrupted: bool = False

    @property
    def failed(self) -> bool:
        return any(u.status in ("failed", "done with failures") for u in self.units)


def connect(address: str) -> Client:
    """A client of the scheduler; waits Dask's connect timeout (distributed.comm.timeouts.connect,
    30 s unless configured, e.g. DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=5s)."""
    try:
        return Client(address, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise UserError(f"cannot reach the Dask scheduler at {address}: {exc}",
                        "start one with `dask scheduler` on a host every worker and this client can reach, "
                        f"then `dbdrift worker {address}` on each benchmark host (`dbdrift docs cluster`)") from None


def eligible(client: Client, kind: str | None) -> list[JsonObject]:
    """The workers that can take a unit of `kind` (they have its resources)."""
    wanted = remote.resources(kind)
    return [w for w in client.scheduler_info(n_workers=-1)["workers"].values()
            if all(w.get("resources", {}).get(k, 0) >= v for k, v in wanted.items())]


def wait_for_workers(client: Client, kind: str | None, wait_s: float, say: Callable[[str], None]
                     ) -> list[JsonObject]:
    deadline, told = time.monotonic() + wait_s, False
    while True:
        workers = eligible(client, kind)
        if workers:
            return workers
        if time.monotonic() >= deadline:
            what = f"of kind {kind} (resource {remote.kind_resource(kind)})" if kind else "with dbdrift"
            raise UserError(f"no worker {what} joined the cluster in {format_duration(wait_s)}",
                            "start one on each benchmark host: dbdrift worker ADDRESS"
                            + (f" --kind {kind}" if kind else "") + " (`dbdrift docs cluster`); [cluster] wait_s "
                            "sets how long to wait")
        if not told:
            say(f"waiting for a worker{' of kind ' + kind if kind else ''} to join the cluster "
                f"(up to {format_duration(wait_s)})")
            told = True
        time.sleep(1.0)


def shared_hosts(workers: list[JsonObject]) -> list[str]:
    """Workers that run on one machine: their measurements would disturb each other."""
    by_host: dict[str, list[str]] = {}
    for w in workers:
        by_host.setdefault(w.get("host") or w["id"], []).append(str(w.get("name", w["id"])))
    return [f"{host} ({', '.join(names)})" for host, names in by_host.items() if len(names) > 1]


class UnitWorkload(CampaignWorkload, Protocol):
    """What a cluster campaign asks of its workload (workloads/registry.py's Workload is one):
    how the campaign splits into units, what each lacks and costs, and what the runner of a
    unit asks (the workload is pickled whole to each unit)."""

    @property
    def estimate(self) -> Callable[[CampaignSpec], tuple[float, int]]:
        """(spec) -> expected seconds and progress steps."""

    @property
    def narrow(self) -> Callable[[CampaignSpec, tuple[str, ...], tuple[int, ...]], CampaignSpec]:
        """(spec, tests, repeats) -> the campaign of one unit."""

    @property
    def split(self) -> Callable[[CampaignSpec, int], list[tuple[tuple[str, ...], tuple[int, ...]]]]:
        """(spec, units) -> (tests, repeats) of each unit."""

    @property
    def remaining(self) -> Callable[[Store, int, CampaignSpec, tuple[str, ...], tuple[int, ...]],
                                    tuple[tuple[str, ...], tuple[int, ...]] | None]:
        """(store, campaign_id, spec, tests, repeats) -> what a unit lacks, None when nothing."""

    @property
    def store_failed(self) -> Callable[[Store, int, CampaignSpec, tuple[str, ...], str, int], int]:
        """(store, campaign_id, spec, tests, reason, unit_id) -> how many planned runs it stored as failed."""


class ClusterRun:
    def __init__(self, spec: CampaignSpec, store: Store, address: str, progress: ProgressSink,
                 resume: bool = False, *, workload: UnitWorkload) -> None:
        self.spec, self.store, self.address, self.resume = spec, store, address, resume
        self.workload = workload  # how the campaign splits into units, and what each unit runs
        self.console = progress
        self.token = f"dbdrift-{uuid.uuid4().hex[:12]}"
        self.outcome = ClusterOutcome()
        self.units: dict[UnitKey, Unit] = {}
        self.ids: dict[int, dict[str, int]] = {}  # campaign id -> target name -> target id
        self.host_set: set[int] = set()  # campaigns whose host facts came from a worker already

    # -- planning ------------------------------------------------------------------------------
    def _campaign(self, kind: str | None) -> int:
        name = plan.campaign_name(self.spec, kind)
        campaign_id = self.store.latest_campaign_id(name) if self.resume else None
        if campaign_id is not None:
            self.console.message(f"resuming campaign {name} (#{campaign_id}) in {self.store.path}")
            self.host_set.add(campaign_id)
        else:
            facts = {**machine_facts(steal_window_s=0.2), "cluster": {"address": self.address, "host_kind": kind,
                                                                      "client": True}}
            campaign_id = self.store.add_campaign(name, {**self.spec.to_dict(), "name": name}, facts, VERSION)
        for position, target in enumerate(self.spec.targets):
            self.store.ensure_target(campaign_id, target.name, target.engine, position,
                                     target.name == self.spec.base.name, target_to_dict(target))
        self.ids[campaign_id] = plan.target_ids(self.store, campaign_id)
        return campaign_id

    def _plan(self, kind: str | None, workers: int) -> list[Unit]:
        campaign_id = self._campaign(kind)
        self.outcome.campaigns[kind] = campaign_id
        count = self.spec.cluster.units if self.spec.cluster and self.spec.cluster.units else workers
        planned = []
        for number, (tests, repeats) in enumerate(self.workload.split(self.spec, count), start=1):
            unit = Unit(number, kind, tests, repeats, campaign_id)
            unit.unit_id = self.store.add_unit(campaign_id, number, kind, list(tests), list(repeats))
            if self.resume and self.workload.remaining(self.store, campaign_id, self.spec, tests, repeats) is None:
                unit.status = "kept"
                self.store.update_unit(unit.unit_id, status="kept")
            planned.append(unit)
            self.units[(kind, number)] = unit
        return planned

    # -- running -------------------------------------------------------------------------------
    def run(self) -> ClusterOutcome:
        client = connect(self.address)
        try:
            return self._run(client)
        finally:
            if getattr(self, "events", None) is not None:
                self.events.close()
            client.close()

    def _run(self, client: Client) -> ClusterOutcome:
        kinds = list(self.spec.cluster.hosts) if self.spec.cluster and self.spec.cluster.hosts else [None]
        wait_s = self.spec.cluster.wait_s if self.spec.cluster else 600.0
        workers = {kind: wait_for_workers(client, kind, wait_s, self.console.message) for kind in kinds}
        everyone = {w["id"]: w for ws in workers.values() for w in ws}
        for shared in shared_hosts(list(everyone.values())):
            self.console.message(f"warning: workers share a machine: {shared}; their units run at the same "
                                 "time and disturb each other's measurements (one dbdrift worker per host)")
        todo = []
        for kind in kinds:
            todo += [u for u in self._plan(kind, len(workers[kind])) if u.status != "kept"]
        self.outcome.units = list(self.units.values())
        kept = len(self.units) - len(todo)
        lanes = max(1, len(everyone))
        estimates = [self.workload.estimate(self.workload.narrow(self.spec, u.tests, u.repeats)) for u in todo]
        seconds, steps = sum(e[0] for e in estimates), sum(e[1] for e in estimates)
        self.console.message(f"cluster {self.address}: {len(todo)} units on {len(everyone)} workers"
                             + (f" ({kept} already stored, skipped: --resume)" if kept else ""))
        self.console.campaign_start(seconds / lanes, steps)  # no unit has started: nothing else reports yet
        self.progress: ProgressSink = LanesProgress(self.console, lanes)
        events, stop = Queue(remote.events_name(self.token), client=client), Event(remote.stop_name(self.token),
                                                                                     client=client)
        spec_bytes = pickle.dumps((self.spec, self.workload))
        futures = {(u.host_kind, u.number): client.submit(
            remote.run_unit, self.token, u.number, u.host_kind, spec_bytes, VERSION, resources=remote.resources(
                u.host_kind), key=f"{self.token}-{u.host_kind or 'all'}-unit{u.number}", pure=False)
            for u in todo}
        self.client, self.events = client, events
        interrupts: list[float] = []
        previous = signal.signal(signal.SIGINT, lambda *_: interrupts.append(time.monotonic()))
        try:  # Ctrl-C is a flag the loop reads between facts: a fact being written is never cut short
            self._follow(futures, lambda: bool(interrupts))
            if interrupts:
                self.outcome.interrupted = True
                self.console.message(f"interrupted: stopping the units on the cluster (their servers stop; what "
                                     f"they measured is stored); waiting up to {format_duration(STOP_WAIT_S)}")
                stop.set()
                deadline = time.monotonic() + STOP_WAIT_S
                self._follow(futures, lambda: len(interrupts) > 1 or time.monotonic() > deadline)
                if len(interrupts) > 1:
                    self.console.message("interrupted again: leaving the units to stop on their own")
                client.cancel(list(futures.values()))
                for unit in todo:
                    if unit.status in ("queued", "running"):
                        self._set(unit, "interrupted", error="interrupted")
        finally:
            signal.signal(signal.SIGINT, previous)
        if self.outcome.interrupted:
            raise KeyboardInterrupt
        return self.outcome

    def _follow(self, futures: dict[UnitKey, Future[UnitResult]], enough: Callable[[], bool]) -> None:
        """Write what the units send until every one has ended, or `enough()`."""
        waiting_since: dict[str | None, float] = {}  # host kind -> since when no worker could take its units
        while not enough():
            self._drain()
            open_ = {key: f for key, f in futures.items() if self.units[key].status in ("queued", "running")}
            if not open_:
                return
            for key, future in open_.items():
                if future.status in ("error", "cancelled"):
                    self._drain()  # what it sent before it failed comes first
                    if self.units[key].status in ("queued", "running"):
                        self._ended_early(self.units[key], _future_error(future))
                elif future.status == "finished" and self.units[key].status in ("queued", "running"):
                    result = future.result()
                    self._drain()
                    if self.units[key].status in ("queued", "running"):
                        self._ended_early(self.units[key], f"ended without a result: {result}")
            self._watch_eligible(open_, waiting_since)

    def _watch_eligible(self, open_: dict[UnitKey, Future[UnitResult]], waiting_since: dict[str | None, float]) -> None:
        """A unit that no worker can take for wait_s fails (e.g. every worker of its host kind is gone)."""
        wait_s = self.spec.cluster.wait_s if self.spec.cluster else 600.0
        for kind in {key[0] for key in open_}:
            if eligible(self.client, kind):
                waiting_since.pop(kind, None)
                continue
            since = waiting_since.setdefault(kind, time.monotonic())
            if time.monotonic() - since > wait_s:
                for key, future in open_.items():
                    if key[0] == kind:
                        self.client.cancel(future)
                        self._fail(self.units[key], f"no worker{' of kind ' + kind if kind else ''} for "
                                                    f"{format_duration(wait_s)}")

    def _drain(self) -> None:
        """Write what the units sent; wait a little when nothing came (a queue get with a
        timeout would log an error on the scheduler each time it expires)."""
        messages = self.events.get(batch=True)
        for message in messages:
            self._handle(message)
        if not messages:
            time.sleep(0.3)

    # -- messages from the units ---------------------------------------------------------------
    def _handle(self, m: Message) -> None:
        unit = self.units.get((m.get("kind"), m["unit"]))  # every line a worker sends names its unit
        if unit is None:
            return
        kind = m["type"]
        if kind == "start":
            self._start(unit, m)
        elif kind == "refused":
            self._fail(unit, m["reason"])
        elif m.get("attempt") != unit.attempt:
            return  # a lost attempt's late line: its facts are superseded by the attempt running now
        elif kind == "fact":
            fact = dict(m["fact"])
            fact["target_id"] = self.ids[unit.campaign_id][m["target"]]
            self.store.add_streamed(fact, unit.unit_id, unit.measured_by)  # this attempt's worker measured it
        elif kind == "progress":
            self._progress(unit, m["call"], m["args"])
        elif kind == "host":
            facts = m["facts"]
            self.store.update_unit(unit.unit_id, host=facts, hostname=facts.get("hostname"))
            if unit.campaign_id not in self.host_set:  # the campaign's host: the first that measured it
                self.host_set.add(unit.campaign_id)
                self.store.set_campaign_host(unit.campaign_id, {**facts, "cluster": {
                    "address": self.address, "host_kind": unit.host_kind}})
        elif kind == "error":
            unit.error = m["message"] + (f" (hint: {m['hint']})" if m.get("hint") else "")
            self.console.message(f"{unit.worker}: {unit.label}: error: {m['message']}"
                                 + (f"\n  hint: {m['hint']}" if m.get("hint") else ""))
        elif kind == "end":
            self._end(unit, m)

    def _start(self, unit: Unit, m: Message) -> None:
        answers = Queue(remote.reply_name(self.token, m["attempt"]), client=self.client)
        try:
            self._answer(unit, m, answers.put)
        finally:
            answers.close()

    def _answer(self, unit: Unit, m: Message, reply: Callable[[JsonObject], None]) -> None:
        """Tell a unit that starts what to run (or to stop): the store's lacks, in order with
        everything the units sent before."""
        if self.outcome.interrupted:
            reply({"refuse": "interrupted"})
            self._set(unit, "interrupted", error="interrupted")
            return
        if unit.status not in ("queued", "running"):
            reply({"refuse": f"{unit.label} is {unit.status}"})
            return
        unit.attempts += 1
        if unit.attempts > MAX_ATTEMPTS:
            reply({"refuse": "lost its worker twice"})
            self._fail(unit, f"lost its worker twice (last {unit.worker}); not run a third time")
            return
        if unit.attempts > 1:
            self.console.message(f"{unit.label}: worker {unit.worker} was lost; re-queued on {m['name']} "
                                 f"({m['worker']}): it runs what the store lacks")
        left = self.workload.remaining(self.store, unit.campaign_id, self.spec, unit.tests, unit.repeats)
        if left is None:
            reply({"refuse": "complete"})
            self._set(unit, "done")
            return
        unit.attempt, unit.worker, unit.address = m["attempt"], m["name"], m["worker"]
        self._set(unit, "running", attempts=unit.attempts, worker=unit.measured_by,
                  hostname=m["hostname"], started_at=now_iso())
        tests, repeats = left
        reply({"tests": list(tests), "repeats": list(repeats)})
        what = (f"{len(tests)} tests" if tests else "repeats " + ", ".join(str(r + 1) for r in repeats)
                if repeats and self.spec.repeats > 1 else "the whole campaign")
        self.console.message(f"{unit.label} ({what}) started on {m['name']} ({m['hostname']}, {m['worker']})")

    def _end(self, unit: Unit, m: Message) -> None:
        code = m["code"]
        if code == 0:
            self._set(unit, "done")
        elif code == 1 and not unit.error:
            self._set(unit, "done with failures")
        elif code == 130 or self.outcome.interrupted:
            self._set(unit, "interrupted", error="interrupted")
        else:
            self._fail(unit, unit.error or f"its process exited with {code}: {m.get('log_tail', '')[-500:]}")
        self.console.message(f"{unit.label} on {unit.worker}: {unit.status}")

    def _progress(self, unit: Unit, call: str, args: list[Any]) -> None:
        where = f"{unit.worker}"
        if call == "campaign_start":
            return  # the client planned the ETA of all units
        if call == "message":
            self.progress.message(f"{where}: {args[0]}")
        elif call in ("step_start", "step_progress", "step_end"):
            getattr(self.progress, call)(f"{where} {args[0]}", *args[1:])
        elif call == "advance":
            self.progress.advance(*args)

    def _set(self, unit: Unit, status: str, **values: object) -> None:
        unit.status = status
        ended = {"ended_at": now_iso()} if status not in ("running", "queued") else {}
        self.store.update_unit(unit.unit_id, status=status, **values, **ended)

    def _ended_early(self, unit: Unit, reason: str) -> None:
        """A unit that ended without running to its end: interrupted after Ctrl-C, else failed."""
        if self.outcome.interrupted:
            self._set(unit, "interrupted", error="interrupted")
        else:
            self._fail(unit, reason)

    def _fail(self, unit: Unit, reason: str) -> None:
        unit.error = reason
        stored = self.workload.store_failed(self.store, unit.campaign_id, self.spec, unit.tests, reason, unit.unit_id)
        self._set(unit, "failed", error=reason)
        self.console.message(f"{unit.label}: failed: {reason}" + (f" ({stored} runs stored as failed; "
                                                                    "--resume runs them)" if stored else ""))


def _future_error(future: Future[UnitResult]) -> str:
    try:
        exc = future.exception(timeout=5)
    except Exception as error:  # noqa: BLE001 - cancelled or unreachable: say so
        return f"{type(error).__name__}: {error}"
    name = type(exc).__name__
    if name == "KilledWorker":
        return f"its workers kept dying ({exc})"
    return f"{name}: {exc}"
