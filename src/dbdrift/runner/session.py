"""One target's server for the length of a campaign, whatever the workload: start it, settle
it, sample it, keep a repeat, stop it.

Owns the side effects on one server and the facts stored of it; it does not decide the order of
targets (the workload's run.py does) nor what runs on the server (sysbench's steps:
workloads/sysbench/session.py; the other workloads' run.py).
"""
from __future__ import annotations

import math
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dbdrift.cpus import Placement, pinned
from dbdrift.driver import process
from dbdrift.errors import DriverError, ServerError, UserError, interrupted_error
from dbdrift.model import InstallInfo, JsonObject, TargetSpec, WorkloadRun
from dbdrift.metrics import binary
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.plan.lifecycle import SETTLE_WORK_S, START_S, SettleStep
from dbdrift.runner import sourcebuild
from dbdrift.runner.dialect import for_engine
from dbdrift.metrics.sampler import Sampler
from dbdrift.runner import events
from dbdrift.runner.events import EngineWatch
from dbdrift.runner.observe import ServerFlame, StepWatchers
from dbdrift.runner.progress import ProgressSink
from dbdrift.server.base import full_disk_hint, live_servers, own_run_dir, release_run_dir
from dbdrift.server import rundir
from dbdrift.server.engines import make_server
from dbdrift.store.guard import StoreFull
from dbdrift.store.store import Store


@dataclass
class RepeatOutcome:
    """How a repeat kept by TargetSession.keep_repeat ended; the block may set a failure it
    found without raising (a window that failed), an exception sets its own."""

    status: str = "ok"  # ok | failed | interrupted
    error: str | None = None


class TargetSession:
    def __init__(self, spec: CampaignSpec, target: TargetSpec, install: InstallInfo, target_id: int,
                 store: Store, progress: ProgressSink, *, dbname: str, perf_counters: bool = False,
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

    def settle_work(self, step: SettleStep, tables: list[str]) -> float:
        """The settle step's work on `tables` (vacuum/analyze and checkpoint, or analyze and
        flushing); returns the seconds it took. The caller sleeps the rest of the settle time
        (once for all targets when they take turns), then calls settle_end."""
        self.server.check_alive()

        def work() -> JsonObject:
            self._settling = self.dialect.settle_start(self.conn, tables)
            return {"settle_total_s": step.total_s, **self._settling}

        return self.timed_step("settle", step.label, work, SETTLE_WORK_S)

    def settle_end(self) -> None:
        """After the settle sleep: restore what the settle step changed (InnoDB flushing)."""
        started, self._settling = self._settling, None
        if started:
            self.dialect.settle_end(self.conn, started)

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
