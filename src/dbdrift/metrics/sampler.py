"""Host and process samplers that run beside the driver (docs/hardware.md; /proc via psutil).

Owns reading cumulative counters (host CPU, context switches, block I/O of the data
directory's device, CPU and I/O of the server's process tree, of the other servers of the run,
of the driver and of dbdrift itself) once a second, and placing the measured window's edges
between those readings at the instants the driver stamped (docs/protocol.md, "Clock stamps").
It stores nothing and computes no per-operation figure.
"""
from __future__ import annotations

import bisect
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from dbdrift.metrics import foreign
from dbdrift.metrics.procstat import CPU_FIELDS, context_switches, cpu_jiffies, procs_running
from dbdrift.metrics.roles import FOREGROUND, role_of
from dbdrift.model import WINDOW_DISK, HardwareWindow, ServerRoles

SECTOR_BYTES = 512


@dataclass
class Counters:
    """Cumulative counters read at one moment; differences of two of these are what we report."""

    t: float  # time.monotonic(): CLOCK_MONOTONIC, the clock the driver stamps its lines with
    cpu_jiffies: dict[str, float]
    ctxt: float
    disk: dict[str, float] | None  # reads, read_bytes, writes, write_bytes; None when no block device
    server_cpu_s: float
    client_cpu_s: float
    server_rss_bytes: int
    server_roles: dict[str, float] = field(default_factory=dict)  # role -> CPU s (metrics/roles.py)
    own_cpu_s: float = 0.0  # dbdrift's own process and its helpers (perf), not servers or driver
    peer_cpu_s: float = 0.0  # the other servers of a run in turns
    ours_io: tuple[float, float] | None = None  # (read, write) bytes of all the above; None: not readable
    dirty_bytes: float | None = None  # the host's page cache waiting to be written (Dirty + Writeback)
    runnable_s: float | None = None  # the runnable count (vmstat's r) summed over time since the first reading


@dataclass
class Delta:
    """What happened between two Counters: the unit stored per sample and per measured window."""

    elapsed_s: float
    cpu_user_pct: float
    cpu_sys_pct: float
    cpu_iowait_pct: float
    cpu_steal_pct: float
    cs: float  # counts are whole numbers at readings, fractional at an interpolated edge
    reads: float | None
    read_kb: float | None
    writes: float | None
    write_kb: float | None
    server_cpu_s: float
    client_cpu_s: float
    server_rss_bytes: int
    disk: dict[str, float] = field(default_factory=dict)  # WINDOW_DISK' counts where the kernel gives them
    background: dict[str, float] | None = None  # background role -> server CPU s; None: not split
    own_cpu_s: float = 0.0
    peer_cpu_s: float = 0.0
    foreign_cpu_s: float = 0.0  # host CPU busy in no process of dbdrift's (metrics/foreign.py)
    foreign_cpu_pct: float = 0.0  # ... in percent of all the host's CPU time
    ours_read_kb: float | None = None  # what dbdrift's processes read and wrote (/proc/PID/io)
    ours_write_kb: float | None = None
    runnable: float | None = None  # mean runnable count (vmstat's r); None: not read
    foreign_read_kb: float | None = None  # the device's KB that they did not: None when not known
    foreign_write_kb: float | None = None

    def as_dict(self) -> HardwareWindow:
        window = HardwareWindow(
            elapsed_s=self.elapsed_s, cpu_user_pct=self.cpu_user_pct, cpu_sys_pct=self.cpu_sys_pct,
            cpu_iowait_pct=self.cpu_iowait_pct, cpu_steal_pct=self.cpu_steal_pct, cs=self.cs, reads=self.reads,
            read_kb=self.read_kb, writes=self.writes, write_kb=self.write_kb, server_cpu_s=self.server_cpu_s,
            client_cpu_s=self.client_cpu_s, server_rss_bytes=self.server_rss_bytes)
        for key in WINDOW_DISK:
            if key in self.disk:
                window[key] = self.disk[key]
        if self.background is not None:
            window["server_bg_cpu_s"] = round(sum(self.background.values()), 6)
            window["background"] = {k: round(v, 6) for k, v in sorted(self.background.items())}
        window["own_cpu_s"], window["peer_cpu_s"] = self.own_cpu_s, self.peer_cpu_s
        window["foreign_cpu_s"], window["foreign_cpu_pct"] = self.foreign_cpu_s, self.foreign_cpu_pct
        window["ours_read_kb"], window["ours_write_kb"] = self.ours_read_kb, self.ours_write_kb
        window["foreign_read_kb"], window["foreign_write_kb"] = self.foreign_read_kb, self.foreign_write_kb
        if self.runnable is not None:
            window["runnable"] = self.runnable
        return window


def delta(a: Counters, b: Counters, split: bool = False) -> Delta:
    """b - a; `split`: with the server's background CPU per role (metrics/roles.py)."""
    d = {k: b.cpu_jiffies[k] - a.cpu_jiffies[k] for k in CPU_FIELDS}
    total = sum(d.values()) or 1

    def pct(*keys: str) -> float:
        return round(100.0 * sum(d[k] for k in keys) / total, 3)

    disk = None
    if a.disk is not None and b.disk is not None:
        disk = {k: b.disk[k] - a.disk[k] for k in b.disk if k in a.disk}
    server_s, client_s = b.server_cpu_s - a.server_cpu_s, b.client_cpu_s - a.client_cpu_s
    own_s, peer_s = b.own_cpu_s - a.own_cpu_s, b.peer_cpu_s - a.peer_cpu_s
    foreign_s, foreign_pct = foreign.cpu(a.cpu_jiffies, b.cpu_jiffies, server_s + client_s + own_s + peer_s)
    ours = (b.ours_io[0] - a.ours_io[0], b.ours_io[1] - a.ours_io[1]) \
        if a.ours_io is not None and b.ours_io is not None else None
    return Delta(
        elapsed_s=round(b.t - a.t, 4),
        cpu_user_pct=pct("user", "nice"), cpu_sys_pct=pct("system", "irq", "softirq"),
        cpu_iowait_pct=pct("iowait"), cpu_steal_pct=pct("steal"),
        cs=b.ctxt - a.ctxt,
        reads=disk["reads"] if disk else None, read_kb=disk["read_bytes"] / 1024 if disk else None,
        writes=disk["writes"] if disk else None, write_kb=disk["write_bytes"] / 1024 if disk else None,
        server_cpu_s=round(b.server_cpu_s - a.server_cpu_s, 6),
        client_cpu_s=round(b.client_cpu_s - a.client_cpu_s, 6),
        server_rss_bytes=max(a.server_rss_bytes, b.server_rss_bytes),
        disk={k: v for k, v in (disk or {}).items() if k in WINDOW_DISK},
        background={role: round(cpu - a.server_roles.get(role, 0.0), 6) for role, cpu in b.server_roles.items()
                    if role != FOREGROUND} if split else None,
        own_cpu_s=round(own_s, 6), peer_cpu_s=round(peer_s, 6), foreign_cpu_s=foreign_s, foreign_cpu_pct=foreign_pct,
        ours_read_kb=round(ours[0] / 1024, 3) if ours else None, ours_write_kb=round(ours[1] / 1024, 3) if ours else None,
        foreign_read_kb=foreign.io_kb(disk["read_bytes"] if disk else None, ours[0] if ours else None),
        foreign_write_kb=foreign.io_kb(disk["write_bytes"] - foreign.drained(a.dirty_bytes, b.dirty_bytes)
                                       if disk else None, ours[1] if ours else None),
        runnable=round((b.runnable_s - a.runnable_s) / (b.t - a.t), 3)
        if a.runnable_s is not None and b.runnable_s is not None and b.t > a.t else None)


def interpolate(readings: list[Counters], t: float) -> Counters:
    """The counters at instant `t`, linear between the two readings around it (the nearest
    reading when `t` is outside them): a window's edge falls where the driver measured it, not
    at the moment a reading happened to be taken. Cumulative counters grow about evenly within
    a second of steady load; a server's largest RSS is the later reading's."""
    if not readings:
        raise ValueError("no readings to interpolate")
    if t <= readings[0].t:
        return readings[0]
    if t >= readings[-1].t:
        return readings[-1]
    i = bisect.bisect_right([r.t for r in readings], t)  # readings[i - 1].t <= t < readings[i].t
    a, b = readings[i - 1], readings[i]
    return _between(a, b, (t - a.t) / (b.t - a.t) if b.t > a.t else 1.0, t)


def _between(a: Counters, b: Counters, f: float, t: float) -> Counters:
    def at(x: float, y: float) -> float:
        return x + f * (y - x)

    def each(x: dict[str, float], y: dict[str, float]) -> dict[str, float]:
        return {k: at(x.get(k, 0.0), v) for k, v in y.items()}

    return Counters(
        t=t, cpu_jiffies=each(a.cpu_jiffies, b.cpu_jiffies), ctxt=at(a.ctxt, b.ctxt),
        disk=each(a.disk, b.disk) if a.disk is not None and b.disk is not None else None,
        server_cpu_s=at(a.server_cpu_s, b.server_cpu_s), client_cpu_s=at(a.client_cpu_s, b.client_cpu_s),
        server_rss_bytes=b.server_rss_bytes, server_roles=each(a.server_roles, b.server_roles),
        own_cpu_s=at(a.own_cpu_s, b.own_cpu_s), peer_cpu_s=at(a.peer_cpu_s, b.peer_cpu_s),
        ours_io=(at(a.ours_io[0], b.ours_io[0]), at(a.ours_io[1], b.ours_io[1]))
        if a.ours_io is not None and b.ours_io is not None else None,
        dirty_bytes=at(a.dirty_bytes, b.dirty_bytes) if a.dirty_bytes is not None and b.dirty_bytes is not None
        else None,
        runnable_s=at(a.runnable_s, b.runnable_s) if a.runnable_s is not None and b.runnable_s is not None
        else None)


def block_device_of(path: Path, sys_root: Path = Path("/sys")) -> str | None:
    """Kernel name of the block device holding `path` (a partition maps to itself: its own
    counters are exactly the data directory's device). None for tmpfs, overlay and the like."""
    try:
        dev = os.stat(path).st_dev
    except OSError:
        return None
    link = sys_root / "dev" / "block" / f"{os.major(dev)}:{os.minor(dev)}"
    try:
        return link.resolve(strict=True).name
    except OSError:
        return None


DISK_FIELDS = (("reads", 3, 1), ("read_bytes", 5, SECTOR_BYTES), ("read_ms", 6, 1), ("writes", 7, 1),
               ("write_bytes", 9, SECTOR_BYTES), ("write_ms", 10, 1), ("queue_ms", 13, 1),
               ("discards", 14, 1), ("flushes", 18, 1), ("flush_ms", 19, 1))
"""/proc/diskstats columns (0-based, after major, minor and name come 3..): completed reads,
sectors read, ms reading, completed writes, sectors written, ms writing, weighted ms in queue
(iostat's aqu-sz is its rate), discards (kernel 4.18+), flushes and ms flushing (5.5+)."""


def read_diskstats(device: str, path: Path = Path("/proc/diskstats")) -> dict[str, int] | None:
    """DISK_FIELDS of one device, bytes for sectors; a field the kernel does not give is absent."""
    try:
        with path.open() as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 10 and parts[2] == device:
                    return {name: int(parts[col]) * scale for name, col, scale in DISK_FIELDS if col < len(parts)}
    except OSError:
        return None
    return None


class ProcessTreeCpu:
    """CPU seconds of a process and all its descendants, monotone across child exits, and the
    part of it each role used (metrics/roles.py) when `roles` is given.

    A child's last seen CPU time is kept after it exits (PostgreSQL backends come and go), so
    only the CPU it used after the last sample is lost. A process's or thread's role is decided
    the first time it is seen with a name, and kept: its CPU moves to no other role later.

    With `roles`, a single-threaded process's and each thread's CPU is read from its schedstat
    (nanoseconds, task_cpu_s) rather than /proc's clock ticks: a background process that runs a
    few milliseconds in a window (PostgreSQL's walwriter over a 4 s TPROC-C run) reads as those
    milliseconds, not as 0 or 10 ms. A multi-threaded process's total keeps the kernel's
    process-wide count, which includes its exited threads.
    """

    def __init__(self, pid: int | None, roles: ServerRoles | None = None,
                 exclude: Callable[[], set[int]] | None = None) -> None:
        """`exclude`: processes of the tree counted elsewhere (dbdrift's own tree holds its
        servers and driver, which have trackers of their own)."""
        self.root = _process(pid)
        self.roles = roles
        self.exclude = exclude
        self.last: dict[int, float] = {}
        self.rss_bytes = 0
        self.unit_role: dict[int, str] = {}  # pid (processes) or tid (threads) -> role
        self.unit_cpu: dict[int, float] = {}  # the same keys -> CPU seconds last seen
        self.last_io: dict[int, tuple[int, int]] = {}  # pid -> (read_bytes, write_bytes) last seen
        self.io_error: str | None = None  # why some process's /proc/PID/io could not be read

    def read(self) -> float:
        if self.root is None:
            return 0.0
        procs = [self.root]
        try:
            procs += self.root.children(recursive=True)
        except psutil.Error:
            pass
        skip = self.exclude() if self.exclude is not None else set()
        rss = 0
        for proc in procs:
            if proc.pid in skip:
                continue
            try:
                with proc.oneshot():
                    t = proc.cpu_times()
                    cpu = t.user + t.system
                    rss = max(rss, proc.memory_info().rss)
                    if self.roles is not None:
                        cpu = self._read_roles(proc, cpu)
                self.last[proc.pid] = cpu
            except psutil.Error:
                continue
            self._read_io(proc)
        self.rss_bytes = max(self.rss_bytes, rss)
        return sum(self.last.values())

    def io_bytes(self) -> tuple[float, float] | None:
        """(read, write) bytes the tree made the kernel move to or from storage so far, monotone
        across exits as its CPU is; None when some process's /proc/PID/io was not readable."""
        if self.io_error is not None:
            return None
        return (float(sum(r for r, _ in self.last_io.values())), float(sum(w for _, w in self.last_io.values())))

    def pids(self) -> set[int]:
        """Every process this tracker has counted."""
        return set(self.last)

    def _read_io(self, proc: psutil.Process) -> None:
        try:
            io = proc.io_counters()
        except psutil.AccessDenied:
            self.io_error = f"/proc/{proc.pid}/io is not readable by this user"
            return
        except (psutil.Error, AttributeError):  # gone, or a platform without I/O counters
            return
        self.last_io[proc.pid] = (io.read_bytes, io.write_bytes)

    def by_role(self) -> dict[str, float]:
        """CPU seconds so far per role (units not yet named are left out until they are)."""
        out: dict[str, float] = {}
        for unit, cpu in self.unit_cpu.items():
            role = self.unit_role.get(unit)
            if role is not None:
                out[role] = out.get(role, 0.0) + cpu
        return out

    def _read_roles(self, proc: psutil.Process, ticks_cpu: float) -> float:
        """Record `proc`'s CPU per unit (process or thread); returns the process's CPU to count
        in the total: its schedstat when it has one thread and the kernel gives one, else
        `ticks_cpu`."""
        assert self.roles is not None and self.root is not None
        if not self.roles.threads:
            if proc.pid not in self.unit_role:
                role = role_of(self.roles, proc.pid, proc.pid, " ".join(proc.cmdline()), proc.pid == self.root.pid)
                if role is not None:
                    self.unit_role[proc.pid] = role
            precise = task_cpu_s(proc.pid) if proc.num_threads() == 1 else None
            cpu = ticks_cpu if precise is None else precise
            self.unit_cpu[proc.pid] = cpu
            return cpu
        for thread in proc.threads():
            if thread.id not in self.unit_role:
                self.unit_role[thread.id] = role_of(self.roles, proc.pid, thread.id, _thread_name(proc.pid, thread.id),
                                                          False) or FOREGROUND
            precise = task_cpu_s(proc.pid, thread.id)
            self.unit_cpu[thread.id] = thread.user_time + thread.system_time if precise is None else precise
        return ticks_cpu


def task_cpu_s(pid: int, tid: int | None = None) -> float | None:
    """CPU seconds a task (a process's main thread, or thread `tid`) has run, to the nanosecond,
    from the first field of its schedstat (the scheduler's sum_exec_runtime); None where the
    kernel has no schedstat (CONFIG_SCHED_INFO off) or the task is gone."""
    path = f"/proc/{pid}/schedstat" if tid is None else f"/proc/{pid}/task/{tid}/schedstat"
    try:
        with open(path) as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def _thread_name(pid: int, tid: int) -> str:
    try:
        return Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
    except OSError:
        return ""


def _process(pid: int | None) -> psutil.Process | None:
    if pid is None:
        return None
    try:
        return psutil.Process(pid)
    except psutil.Error:
        return None


@dataclass
class Sampler:
    """Samples counters every `period_s` in a thread; `mark()` places the window's edges.

    Use: start() before the driver, set_client(pid) once it runs, mark("start", at) when warmup
    ends, mark("end", at) with each interval, stop(). `at` is the driver's CLOCK_MONOTONIC
    stamp of the instant (a line's `mono_s`); without one, the moment mark() is called.
    `samples` are 1 s Deltas with their start time relative to the "start" edge; `window()` is
    the Delta over the measured window, its edges interpolated between the readings around
    them (interpolate). `peers`: the other servers of a run the targets take turns in, whose
    CPU and I/O are dbdrift's too, not foreign load.
    """

    server_pid: int | None
    data_dir: Path
    roles: ServerRoles | None = None  # split the server's CPU by role (metrics/roles.py)
    period_s: float = 1.0
    peers: tuple[int, ...] = ()
    samples: list[tuple[float, Delta]] = field(default_factory=list)
    edges: dict[str, float] = field(default_factory=dict)  # "start"/"end" -> time.monotonic() instant

    def __post_init__(self) -> None:
        self.device = block_device_of(self.data_dir)
        self.server = ProcessTreeCpu(self.server_pid, self.roles)
        self.others = [ProcessTreeCpu(pid) for pid in self.peers if pid != self.server_pid]
        self.client = ProcessTreeCpu(None)
        self.own = ProcessTreeCpu(os.getpid(), exclude=self._counted_elsewhere)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="dbdrift-sampler", daemon=True)
        self._raw: list[Counters] = []
        self._running = 0  # the runnable count at the last reading

    def read(self) -> Counters:
        with self._lock:
            jiffies = cpu_jiffies()  # metrics/procstat.py
            if jiffies is None:  # the loop skips this sample; start() and mark() fail
                raise OSError("no aggregate cpu line in /proc/stat")
            ctxt = context_switches() or 0
            disk = read_diskstats(self.device) if self.device else None
            server = self.server.read()
            peers = sum(p.read() for p in self.others)
            client = self.client.read()
            own = self.own.read()  # after the others: it leaves out every process they counted
            now = time.monotonic()
            return Counters(now, {k: float(v) for k, v in jiffies.items()}, ctxt,
                            {k: float(v) for k, v in disk.items()} if disk is not None else None, server, client,
                            self.server.rss_bytes, self.server.by_role(), own, peers, self._ours_io(),
                            foreign.dirty_bytes(), self._runnable_s(now))

    def _runnable_s(self, now: float) -> float | None:
        """The runnable count summed over time up to `now`, each reading's count held until the
        next (vmstat reads it as an instant too); None once a reading fails, for the whole run."""
        running = procs_running()
        last = self._raw[-1] if self._raw else None
        if running is None or (last is not None and last.runnable_s is None):
            return None
        total = 0.0 if last is None else last.runnable_s + self._running * (now - last.t)  # type: ignore[operator]
        self._running = running
        return total

    def io_note(self) -> str | None:
        """Why the I/O of dbdrift's processes is not known (foreign I/O then is not either)."""
        return next((t.io_error for t in (self.server, *self.others, self.client, self.own) if t.io_error), None)

    def start(self) -> "Sampler":
        self._raw.append(self.read())
        self._thread.start()
        return self

    def set_client(self, pid: int) -> None:
        with self._lock:
            self.client = ProcessTreeCpu(pid)
        self.client.read()

    def mark(self, name: str, at: float | None = None) -> None:
        """Place edge `name` at `at` (time.monotonic() seconds: a driver line's `mono_s`), or now."""
        self.edges[name] = float(at) if at is not None else time.monotonic()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self._raw.append(self.read())
        origin = self.edges.get("start", self._raw[0].t)
        split = self.roles is not None
        self.samples = [(round(a.t - origin, 3), delta(a, b, split)) for a, b in zip(self._raw, self._raw[1:])]

    def at(self, t: float) -> Counters:
        """The counters at instant `t` (interpolate over this run's readings)."""
        return interpolate(self._raw, t)

    def foreign_between(self, t0: float, t1: float, min_s: float = 1.0) -> tuple[float, float | None]:
        """(foreign CPU %, foreign KB read and written) from instant t0 to t1, over at least
        `min_s` around their middle: /proc/stat counts 10 ms ticks, too coarse for a turn of
        10 ms, so a short interval gets the share of the second it falls in."""
        if t1 - t0 < min_s:
            middle = (t0 + t1) / 2
            t0, t1 = middle - min_s / 2, middle + min_s / 2
        d = delta(self.at(t0), self.at(t1))
        known = d.foreign_read_kb is not None and d.foreign_write_kb is not None
        return d.foreign_cpu_pct, round((d.foreign_read_kb or 0) + (d.foreign_write_kb or 0), 3) if known else None

    def window(self) -> Delta | None:
        if "start" not in self.edges or "end" not in self.edges or not self._raw:
            return None
        return delta(self.at(self.edges["start"]), self.at(self.edges["end"]), self.roles is not None)

    def _counted_elsewhere(self) -> set[int]:
        pids = self.server.pids() | self.client.pids()
        for peer in self.others:
            pids |= peer.pids()
        return pids

    def _ours_io(self) -> tuple[float, float] | None:
        parts = [t.io_bytes() for t in (self.server, *self.others, self.client, self.own)]
        if any(p is None for p in parts):
            return None
        return (sum(p[0] for p in parts if p), sum(p[1] for p in parts if p))

    def _loop(self) -> None:
        while not self._stop.wait(self.period_s):
            try:
                self._raw.append(self.read())
            except OSError:
                continue
