"""Run a campaign: validate and fetch every target, store the campaign with its host facts,
then hand the sequence to the campaign's workload (Workload.run, in workloads/<name>/run.py).

Owns what every workload shares: the CPU placement, the installs, the campaign row, a target's
failure, and the one-after-another loop of the workloads that run each repeat on fresh servers.
It knows no workload by name; the workload object is handed in by the verb that looked it up.
"""
from __future__ import annotations

import os
import platform
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from dbdrift import cpus, env
from dbdrift.analysis.noise import Estimate
from dbdrift.version import __version__
from dbdrift.errors import DriverError, ServerError, UserError
from dbdrift.model import InstallInfo, JsonObject
from dbdrift.plan import rounds
from dbdrift.plan.campaign import CampaignSpec, target_to_dict
from dbdrift.metrics import fsync, host, perf
from dbdrift.runner.progress import NullProgress, ProgressSink, Tally
from dbdrift.runner.session import TargetSession
from dbdrift.server import engines, rundir
from dbdrift.store.store import Store

VERSION = __version__  # stored with each campaign


@dataclass
class CampaignOutcome:
    campaign_id: int
    runs_ok: int = 0
    runs_failed: int = 0
    runs_interrupted: int = 0  # cut short by Ctrl-C or SIGTERM (stored as "interrupted"; --resume runs them)
    runs_skipped: int = 0  # not run because their target failed (stored as "skipped")
    runs_kept: int = 0  # already in the store (--resume)
    instructions_ok: int = 0
    instructions_failed: int = 0
    failed_targets: list[str] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)  # target -> why it ended early

    def summary(self) -> str:
        """`12 runs (1 failed, 20 skipped: pg18 server died)`; `, 1 interrupted` after a Ctrl-C."""
        parts = [f"{self.runs_failed} failed"]
        if self.runs_interrupted:
            parts.append(f"{self.runs_interrupted} interrupted")
        if self.runs_skipped:
            why = "; ".join(f"{t} {w}" for t, w in self.failures.items())
            parts.append(f"{self.runs_skipped} skipped: {why}" if why else f"{self.runs_skipped} skipped")
        if self.runs_kept:
            parts.append(f"{self.runs_kept} already stored")
        return f"{self.runs_ok} runs ({', '.join(parts)})"


def failure_reason(session: TargetSession, exc: UserError) -> str:
    """Why a target ended early, in a few words for report cells: "server did not start",
    "server died", or what else failed."""
    if not session.started:
        return "server did not start"
    if isinstance(exc, ServerError) and " died" in exc.message:
        return "server died"
    return "driver failed" if isinstance(exc, DriverError) else "server failed"


def machine_facts(steal_window_s: float = 1.0) -> JsonObject:
    """The host facts a campaign stores, without checks (hosts.host_key reads its identity from them)."""
    return {"hostname": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version(),
            **host.host_facts(steal_window_s=steal_window_s)}


def host_info(support: perf.PerfSupport, placement: cpus.Placement) -> JsonObject:
    """Host facts and checks stored with the campaign (measured before any server starts)."""
    facts = machine_facts(steal_window_s=1.0)
    warnings = host.check(facts)
    if not support.hardware_counters:  # said once per campaign, never a failure
        warnings.append({"kind": "perf", "message": f"perf hardware counters unavailable: {support.reason}",
                         "hint": "instructions per event come from callgrind instead: dbdrift run "
                                 "--count-instructions"})
    return {**facts, "perf": asdict(support), "placement": placement.to_dict(), "warnings": warnings,
            "fsync": fsync.measure(rundir.work_dir())}


def placement_option(spec: CampaignSpec) -> str | tuple[str, str]:
    """The `cpus` option servers are placed by: "auto" leaves a workload that runs several
    clients against one server at a time, not turns, unpinned (caps.auto_cpus_shared)."""
    return "shared" if spec.caps.auto_cpus_shared and spec.cpus == "auto" else spec.cpus


def target_repeats(spec: CampaignSpec) -> int:
    """How many (target, repeat) runs a workload that runs whole repeats makes: every target once
    per repeat (of a cluster unit's repeats, when it has some)."""
    return len(spec.targets) * (spec.repeats if spec.only_repeats is None else len(spec.only_repeats))


# (campaign id, test, threads) -> the rQPS estimates of that stored cell, one per compared target
CellEstimates = Callable[[int, str, int], list[Estimate]]


class Repeats(Protocol):
    """Which repeats a campaign planned to detect runs (runner/detect.py: Planned)."""

    def repeats(self) -> int: ...
    def wants_repeat(self, repeat: int) -> bool: ...
    def after_repeat(self, repeat: int) -> None: ...


class CampaignWorkload(Protocol):
    """What the runner asks of the campaign's workload (workloads/registry.py's Workload is one,
    handed in by the verb): its checks before anything is fetched and before a server starts,
    its client threads and its sequence."""

    @property
    def check_builds(self) -> Callable[[CampaignSpec, Path], None]:
        """(spec, cache dir): refuse a target whose build, as far as it is known before it is
        fetched, cannot run the workload."""

    @property
    def check_installs(self) -> Callable[[CampaignSpec, dict[str, InstallInfo]], None]:
        """(spec, installs by target name): refuse a target the workload cannot run, once every
        build is found and before the campaign is stored or any server starts."""

    @property
    def clients(self) -> Callable[[CampaignSpec], int]:
        """(spec) -> the most client threads a server sees at once."""

    @property
    def run(self) -> Callable[[Runner, dict[str, InstallInfo], CampaignOutcome], None]:
        """(runner, installs, outcome): the sequence of a campaign."""


class Runner:
    def __init__(self, spec: CampaignSpec, store: Store, resume: bool = False,
                 progress: ProgressSink | None = None, *, workload: CampaignWorkload,
                 estimates: CellEstimates | None = None, moved: Callable[[int], set[str]] | None = None) -> None:
        self.spec = spec
        self.estimates = estimates  # a campaign planned to detect: each stored cell's rQPS estimates
        self.moved = moved  # and, counting instructions first, the tests whose counts moved (runner/sequential.py)
        self.store = store
        self.resume = resume
        self.progress = progress or NullProgress()
        self.workload = workload
        self.perf = perf.probe()
        self.placement = cpus.place(placement_option(spec))  # a CPU the host does not allow is refused here
        self.outcome: CampaignOutcome | None = None  # what run() did so far, also when Ctrl-C ended it

    def run(self) -> CampaignOutcome:
        self.workload.check_builds(self.spec, env.cache_dir())  # before anything is fetched
        installs = self._resolve_installs()  # every target is checked before any server starts
        self.workload.check_installs(self.spec, installs)
        outcome = self.outcome = CampaignOutcome(self._campaign_id())  # kept for the caller when interrupted
        self._say_placement()
        self.workload.run(self, installs, outcome)
        return outcome

    def _say_placement(self) -> None:
        where = self.placement
        self.progress.message(f"cpus: {where.describe()}")
        threads = self.workload.clients(self.spec)
        if where.server is not None and threads > len(where.server):
            self.progress.message(f"note: {threads} client threads share {len(where.server)} server CPU(s); "
                                  f"cpus = \"shared\" lets the servers use every CPU (and the driver compete "
                                  f"with them)")

    def one_after_another(self, installs: dict[str, InstallInfo], outcome: CampaignOutcome, dbname: str,
                          seconds: float, steps: int, runs: int, done: Callable[[int, int], bool],
                          count_done: Callable[[int, int], int],
                          run: Callable[[TargetSession, InstallInfo, int, int], None],
                          planned: Repeats | None = None) -> None:
        """Each repeat runs every target on a fresh server, the targets in the order of that
        repeat's round (plan/rounds.repeat_order: with two, A B then B A), so that no target
        always runs first or after the same one; each run stores its place in it. `done`
        says whether a target's repeat is stored complete (--resume skips it), `count_done`
        how many of its `runs` units are, `run` measures and stores one. A campaign planned to
        detect (`planned`, runner/detect.py) asks it before each repeat whether to run it, and
        tells it when one is stored."""
        ids = [(target, self.store.ensure_target(outcome.campaign_id, target.name, target.engine, position,
                                                 target.name == self.spec.base.name, target_to_dict(target)))
               for position, target in enumerate(self.spec.targets)]
        pending = []
        repeats = self.spec.only_repeats if self.spec.only_repeats is not None else range(self.spec.repeats)
        for repeat in repeats:
            for place, k in enumerate(rounds.repeat_order(repeat, len(ids), self.spec.round_order)):
                target, target_id = ids[k]
                if self.resume and done(target_id, repeat):
                    outcome.runs_kept += runs
                    which = f" of repeat {repeat + 1}" if self.spec.repeats > 1 else ""
                    self.progress.message(f"{target.name}: everything{which} already stored, skipped (--resume)")
                else:
                    pending.append((repeat, place, target, target_id))
        counted = [p for p in pending if planned is None or p[0] < planned.repeats()]
        self.progress.campaign_start(seconds * len(counted), steps * len(counted))
        tally = Tally(self.progress)  # each (target, repeat) credits what of its estimate its steps did not
        current: int | None = None
        for repeat, place, target, target_id in pending:
            if planned is not None and repeat != current:
                if current is not None:
                    planned.after_repeat(current)
                if not planned.wants_repeat(repeat):
                    current = None
                    break
                current = repeat
            if target.name in outcome.failed_targets:
                tally.settle(seconds, steps)
                continue  # its failure is reported once; later repeats of it are not run
            session = TargetSession(self.spec, target, installs[target.name], target_id, self.store,
                                    tally, dbname=dbname, placement=self.placement)
            session.position = place
            try:
                run(session, installs[target.name], target_id, repeat)
            except (ServerError, DriverError) as exc:
                self.fail(session, exc, outcome)
            except KeyboardInterrupt:
                outcome.runs_interrupted += 1  # its repeat is stored interrupted (TargetSession.keep_repeat)
                raise
            finally:
                session.stop()
                outcome.runs_ok += count_done(target_id, repeat)
                outcome.runs_failed += 0 if target.name not in outcome.failed_targets else 1
            tally.settle(seconds, steps)
        if planned is not None and current is not None:
            planned.after_repeat(current)

    # -- validation and bookkeeping --------------------------------------------------------------
    def _resolve_installs(self) -> dict[str, InstallInfo]:
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

    def fail(self, session: TargetSession, exc: UserError, outcome: CampaignOutcome,
             progress: ProgressSink | None = None) -> None:
        """A target ends early: said once, and its remaining runs are not run; the campaign goes on."""
        say = (progress or self.progress).message
        session.failed = True
        outcome.failed_targets.append(session.name)
        outcome.failures[session.name] = failure_reason(session, exc)
        say(f"error: {exc.message}" + (f"\n  hint: {exc.hint}" if exc.hint else ""))
        say(f"{session.name}: remaining runs skipped ({outcome.failures[session.name]}); the campaign continues")

