"""What a runner hands the store to keep: the records of a sysbench run and of an instruction
count, as stored. Holds no SQL (facts.py writes them)."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Literal, Mapping

from dbdrift.model import HardwareWindow, JsonObject


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class RunRecord:
    """One microbenchmark run of one target as stored (status ok, failed, interrupted, or
    skipped: not run because its target had failed)."""

    test: str
    test_group: str
    threads: int
    repeat: int
    status: str
    warmup_s: float
    duration_s: float
    metric: str
    driver_spec: JsonObject
    started_at: str = field(default_factory=now_iso)
    measured_s: float | None = None
    events: int | None = None
    statements: int | None = None
    rows: int | None = None
    errors: dict[str, int] = field(default_factory=dict)  # error class -> count
    value: float | None = None
    qps: float | None = None
    tps: float | None = None
    latency: Mapping[str, object] = field(default_factory=dict)  # driver.protocol LatencySummary
    client_cpu_user_s: float | None = None
    client_cpu_sys_s: float | None = None
    warnings: list[JsonObject] = field(default_factory=list)  # {"kind", "message"[, "hint"]}
    error: str | None = None
    server_log_tail: str | None = None
    intervals: list[JsonObject] = field(default_factory=list)
    hardware: HardwareWindow | None = None  # sampler totals over the measured window (metrics/sampler.Delta)
    host: JsonObject | None = None  # host facts and warnings when the run started
    samples: list[tuple[float, HardwareWindow]] = field(default_factory=list)  # (start_s, Delta) every second
    folded: dict[str, int] | None = None  # perf record stacks of the backends (`--flamegraph`)
    position: int | None = None  # its place in its repeat's order when targets take whole runs in turn


@dataclass
class InstructionRecord:
    """Instructions per event of one microbenchmark on one target, counted under callgrind."""

    test: str
    status: str
    n1: int
    n2: int
    elapsed_s: float
    ir: list[list[int]] = field(default_factory=list)  # [Ir(n1), Ir(n2)] per repetition
    ir_per_event: float | None = None
    spread_pct: float | None = None
    self_per_event: dict[str, float] = field(default_factory=dict)
    inclusive_per_event: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    started_at: str = field(default_factory=now_iso)
    simulated_per_event: dict[str, float] = field(default_factory=dict)  # callgrind cache/branch events
    phases: dict[str, float] = field(default_factory=dict)  # seconds per phase (workloads/sysbench/instructions.py PHASES)


SampleColumn = Literal["elapsed_s", "cpu_user_pct", "cpu_sys_pct", "cpu_iowait_pct", "cpu_steal_pct", "cs", "reads",
                       "read_kb", "writes", "write_kb", "server_cpu_s", "client_cpu_s", "server_rss_bytes"]
SAMPLE_COLUMNS: tuple[SampleColumn, ...] = ("elapsed_s", "cpu_user_pct", "cpu_sys_pct", "cpu_iowait_pct", "cpu_steal_pct", "cs", "reads",
                  "read_kb", "writes", "write_kb", "server_cpu_s", "client_cpu_s", "server_rss_bytes")
