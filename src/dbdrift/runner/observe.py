"""Everything that watches one timed run beside the driver: steal per interval, 1 s host and
process samples, perf counters (where the CPU has them) and perf record stacks (--flamegraph).

Driven by the driver's lines: `start` names the backends, `warmup` opens the measured window
and each `interval` moves its end. Nothing here can fail a run: a missing tool is a warning.
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args

import psutil

from dbdrift.analysis import foreign
from dbdrift.metrics import flame, host, perf
from dbdrift.metrics.sampler import Sampler
from dbdrift.model import FLAME_CLIENT, EngineEvents, HardwareWindow, JsonObject, PerfCounts
from dbdrift.runner.events import EngineWatch
from dbdrift.runner.steal import StealClock
from dbdrift.store.store import RunRecord

RUN_HOST_CHECKS = ("governor", "swap", "frequency")
"""Host checks that can change from run to run. Load and turbo are checked once per campaign
(our own servers raise the load), steal per interval by run_warnings
(workloads/sysbench/session.py)."""


class RunObservers:
    def __init__(self, sampler: Sampler, run_dir: Path, measured_s: float, round_: int,
                 perf_counters: bool, flamegraph: bool, watch_backends: bool = True, steal: bool = True) -> None:
        """`watch_backends`: perf watches the backend processes the driver names; False when
        those are connection ids (MySQL, MariaDB) and perf watches the server process.
        `steal`: annotate interval lines with host steal (False when the caller does it)."""
        self.facts = host.host_facts(steal_window_s=0)
        self.clock = StealClock() if steal else None
        self.sampler = sampler
        self.counters = perf.StatCollector() if perf_counters else None
        self.flames = flame.FlameRecorder() if flamegraph else None
        self.perf_data = run_dir / "perf.data"
        self.group, self.events = perf.group_for_round(round_)
        self.measured_s = measured_s
        self.watch_backends = watch_backends
        server_pid = sampler.server_pid
        self.pids: list[int] = [] if watch_backends or server_pid is None else [server_pid]
        self.perf_counts: dict[str, float | None] | None = None
        self.flame_result: tuple[Path | None, str] | None = None

    def start(self) -> "RunObservers":
        self.sampler.start()
        return self

    def on_driver_start(self, pid: int) -> None:
        self.sampler.set_client(pid)

    def on_line(self, obj: JsonObject) -> None:
        if self.clock is not None:
            self.clock.on_line(obj)
        kind = obj.get("type")
        if kind in ("warmup", "interval"):  # the measured window's edges, where the driver measured them
            self.sampler.mark("start" if kind == "warmup" else "end", obj.get("mono_s"))
        if kind == "start" and self.watch_backends:
            self.pids.extend(obj.get("backend_pids") or [])
        elif kind == "warmup" and self.pids:
            if self.counters is not None:
                self.counters.start(self.pids, self.events, self.measured_s)
            if self.flames is not None:  # only while the backends live: perf spins on a pid that exits
                self.flames.start(self.pids, self.measured_s, self.perf_data)

    def stop(self) -> None:
        """Always called, also when the driver failed or was interrupted: nothing keeps running."""
        self.sampler.stop()
        if self.counters is not None:
            self.perf_counts = self.counters.finish(timeout_s=2.0)
        if self.flames is not None:
            self.flame_result = self.flames.stop(timeout_s=5.0)

    def attach(self, record: RunRecord, share: float = 1.0) -> None:
        """Put what was observed on the run's record: window totals, samples, host facts and
        the warnings they raise, perf counters and folded stacks. `share` < 1 (targets taking
        turns in one run): the host-wide counters and the driver's CPU are scaled to this
        target's share of the run's time; the server's CPU is its own either way. The 1 s
        samples stay the host's unscaled timeline."""
        window = self.sampler.window()
        whole = window.as_dict() if window else None
        hardware = _scaled(whole, share) if whole else None
        if whole is not None and hardware is not None:
            hardware["device"] = whole["device"] = self.sampler.device
            if self.counters is not None and self.perf_counts is not None:
                hardware["perf"] = PerfCounts(group=self.group, counters=self.perf_counts, error=self.counters.error)
        record.hardware = hardware
        record.samples = [(start_s, d.as_dict()) for start_s, d in self.sampler.samples]  # the host's timeline
        record.host = run_host_facts(self.facts)
        record.warnings += record.host["warnings"]
        record.warnings += [{"kind": kind, "message": message} for kind, message in foreign.judge(whole)]
        self._foreign_per_interval(record.intervals)
        if self.flame_result is not None:
            record.folded = self._folded(*self.flame_result, record)

    def _foreign_per_interval(self, intervals: list[JsonObject]) -> None:
        """Annotate each interval line with the foreign load of its seconds (stored beside its
        steal_pct), its edges placed from the driver's own clock: the warmup line's stamp is
        the origin of start_s and end_s."""
        origin = self.sampler.edges.get("start")
        if origin is None:
            return
        for iv in intervals:
            iv["foreign_cpu_pct"], iv["foreign_kb"] = self.sampler.foreign_between(origin + iv["start_s"],
                                                                                   origin + iv["end_s"])

    @staticmethod
    def _folded(path: Path | None, reason: str, record: RunRecord) -> dict[str, int] | None:
        """Collapse the run's perf.data; a missing flamegraph is a run warning, never a failure."""
        folded, why = flame.collapse_file(path) if path is not None else ({}, reason)
        if path is not None:
            path.unlink(missing_ok=True)
        if not folded:
            record.warnings.append({"kind": "flamegraph", "message": f"no flamegraph: {why}"})
            return None
        return folded


SharedCounter = Literal["elapsed_s", "cs", "reads", "read_kb", "writes", "write_kb", "client_cpu_s", "read_ms",
                        "write_ms", "queue_ms", "discards", "flushes", "flush_ms", "own_cpu_s", "peer_cpu_s",
                        "foreign_cpu_s", "ours_read_kb", "ours_write_kb", "foreign_read_kb", "foreign_write_kb"]
SHARED_COUNTERS: tuple[SharedCounter, ...] = get_args(SharedCounter)
"""Window values scaled to a target's share of a run the targets took turns in: its own time
(so the server's CPU, all spent in its turns, is per its own operations), and the counters that
are host-wide or the driver's."""


def _scaled(window: HardwareWindow, share: float) -> HardwareWindow:
    scaled = window.copy()
    if share != 1.0:
        for k in SHARED_COUNTERS:
            value = window.get(k)
            if value is not None:
                scaled[k] = value * share
    return scaled


def run_host_facts(facts: JsonObject) -> JsonObject:
    keep = ("governor", "turbo", "swap_used_bytes", "load_1min", "cpu_mhz")
    return {**{k: facts.get(k) for k in keep},
            "warnings": [w for w in host.check(facts) if w["kind"] in RUN_HOST_CHECKS]}


class ServerFlame:
    """`perf record` of a server's whole process tree over one Insert Benchmark step or TPROC-C
    run (`flamegraphs`): the postmaster or mysqld and every process it has when the measured
    part starts (backends, autovacuum, checkpointer), the processes it forks later inherited.
    Background work is in it on purpose: a step's dip is often there; so is the driver, once
    set_client names it, as the client's share of the host. A missing or failing perf
    gives a warning, never a failure."""

    def __init__(self, enabled: bool, server_pid: int | None, out: Path) -> None:
        self.recorder = flame.FlameRecorder() if enabled and server_pid is not None else None
        self.server_pid, self.out = server_pid, out
        self.started = False
        self.client_pid: int | None = None

    def set_client(self, pid: int) -> None:
        """The driver's process: recorded too, its stacks named model.FLAME_CLIENT (the
        flamegraph's client area, analysis/flame_areas.py)."""
        self.client_pid = pid

    def start(self, max_s: float) -> None:
        if self.recorder is None or self.started or self.server_pid is None:
            return
        self.started = True
        client = [self.client_pid] if self.client_pid is not None else []
        self.recorder.start(server_tree(self.server_pid) + client, max_s, self.out)

    def stop(self) -> tuple[dict[str, int] | None, str]:
        """(folded stacks, "") or (None, why there are none); "" as well when not asked for."""
        if self.recorder is None:
            return None, ""
        path, reason = self.recorder.stop(timeout_s=0.5) if self.started else (None, "the measured part never started")
        names = {self.client_pid: FLAME_CLIENT} if self.client_pid is not None else None
        folded, why = flame.collapse_file(path, names=names) if path is not None else ({}, reason)
        if path is not None:
            path.unlink(missing_ok=True)
        return (folded, "") if folded else (None, f"no flamegraph: {why}")


class StepWatchers:
    """What watches one Insert Benchmark step or TPROC-C run beside the driver, started together
    and stopped together: the host sampler, the engine's own counters each second and the
    server's stacks (ServerFlame); the step's driver lines mark each one's window."""

    def __init__(self, sampler: Sampler, watch: EngineWatch, flame: ServerFlame) -> None:
        self.sampler, self.watch, self.flame = sampler, watch, flame

    def on_start(self, pid: int) -> None:
        """The driver's process, sampled and recorded."""
        self.sampler.set_client(pid)
        self.flame.set_client(pid)

    def stop(self) -> tuple[EngineEvents | None, dict[str, int] | None, str]:
        """(the engine's counters, the folded stacks, why there are none: "" when there are or none were asked for)."""
        self.sampler.stop()
        engine = self.watch.stop()
        folded, why = self.flame.stop()
        return engine, folded, why


def server_tree(pid: int) -> list[int]:
    """`pid` and every descendant it has now."""
    try:
        return [pid, *(p.pid for p in psutil.Process(pid).children(recursive=True))]
    except psutil.Error:
        return [pid]
