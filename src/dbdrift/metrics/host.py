"""Host facts (CPU, memory, cpufreq, turbo, THP, swap, load, steal) and the warnings they raise.

Reads text files under a root directory (default "/") so tests can point it at a fixture
tree (/proc/stat through metrics/procstat.py, psutil for "/"); a missing or unreadable file
gives None, never an exception. Changes nothing on the host.
"""
from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, TypedDict

from dbdrift.metrics.procstat import busy_pct, cpu_jiffies, steal_pct
from dbdrift.model import STEAL_MAX_PCT

HostFacts = dict[str, Any]  # HostInfo as JSON (host_facts), as stored with a campaign and read back

CPU_DIR = "sys/devices/system/cpu"
FREQUENCY_SPREAD_PCT = 5.0  # cores (or two readings) further apart than this make a warning
TURBO_KNOBS = (  # (file, value that means turbo is on)
    (f"{CPU_DIR}/intel_pstate/no_turbo", "0"),
    (f"{CPU_DIR}/cpufreq/boost", "1"),
)


@dataclass(frozen=True)
class HostInfo:
    """What the host looked like before a run; None where the kernel does not say."""

    cpu_model: str | None = None
    cores: int | None = None  # logical CPUs
    physical_cores: int | None = None
    memory_bytes: int | None = None
    kernel: str | None = None
    os: str | None = None
    governor: str | None = None  # None: no cpufreq (typical of VMs); "a,b" if cores differ
    cpufreq_driver: str | None = None
    turbo: bool | None = None
    turbo_knob: str | None = None  # the sysfs file that switches turbo, absolute path
    thp: str | None = None
    swap_total_bytes: int | None = None
    swap_used_bytes: int | None = None
    load_1min: float | None = None
    cpu_mhz: list[float] = field(default_factory=list)
    cpu_mhz_after: list[float] = field(default_factory=list)  # second reading, after the window
    steal_pct: float | None = None
    busy_pct: float | None = None  # CPU time busy (not idle, iowait or stolen) over the steal window
    steal_window_s: float = 0.0
    virtualized: bool | None = None  # "hypervisor" CPU flag


def read_text(root: str | Path, rel: str) -> str | None:
    try:
        return (Path(root) / rel).read_text()
    except (OSError, UnicodeDecodeError):
        return None


def cpuinfo_blocks(root: str | Path = "/") -> list[dict[str, str]]:
    """/proc/cpuinfo as one {field: value} dict per logical CPU."""
    text = read_text(root, "proc/cpuinfo") or ""
    blocks = []
    for chunk in text.split("\n\n"):
        pairs = (line.split(":", 1) for line in chunk.splitlines() if ":" in line)
        block = {k.strip(): v.strip() for k, v in pairs}
        if "processor" in block:
            blocks.append(block)
    return blocks


def cpu_mhz(blocks: list[dict[str, str]]) -> list[float]:
    return [float(b["cpu MHz"]) for b in blocks if "cpu MHz" in b]


def meminfo_bytes(root: str | Path = "/") -> dict[str, int]:
    found = {}
    for line in (read_text(root, "proc/meminfo") or "").splitlines():
        match = re.match(r"^(\w+):\s+(\d+)\s*kB", line)
        if match:
            found[match.group(1)] = int(match.group(2)) * 1024
    return found


def os_pretty_name(root: str | Path = "/") -> str | None:
    for rel in ("etc/os-release", "usr/lib/os-release"):
        for line in (read_text(root, rel) or "").splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip("\"'")
    return None


def governor(root: str | Path = "/", name: str = "scaling_governor") -> str | None:
    """The cpufreq governor (or driver) of every CPU, joined if they differ; None without cpufreq."""
    values = set()
    for path in Path(root, CPU_DIR).glob(f"cpu[0-9]*/cpufreq/{name}"):
        text = read_text(path.parent, name)
        if text and text.strip():
            values.add(text.strip())
    return ",".join(sorted(values)) or None


def turbo(root: str | Path = "/") -> tuple[bool | None, str | None]:
    """(turbo enabled, knob path) from intel_pstate/no_turbo or cpufreq/boost; (None, None) if neither."""
    for rel, on_value in TURBO_KNOBS:
        text = read_text(root, rel)
        if text is not None and text.strip():
            return text.strip() == on_value, "/" + rel
    return None, None


def thp(root: str | Path = "/") -> str | None:
    match = re.search(r"\[(\w+)\]", read_text(root, "sys/kernel/mm/transparent_hugepage/enabled") or "")
    return match.group(1) if match else None


def load_1min(root: str | Path = "/") -> float | None:
    fields = (read_text(root, "proc/loadavg") or "").split()
    return float(fields[0]) if fields else None


def physical_cores(blocks: list[dict[str, str]]) -> int | None:
    """Distinct (physical id, core id) pairs; None where cpuinfo lacks them (many ARM kernels)."""
    pairs = {(b.get("physical id"), b.get("core id")) for b in blocks}
    return len(pairs) if blocks and all(None not in p for p in pairs) else None


def virtualized(blocks: list[dict[str, str]]) -> bool | None:
    flags = blocks[0].get("flags") if blocks else None
    return None if flags is None else "hypervisor" in flags.split()


def read_host_info(root: str | Path = "/", steal_window_s: float = 1.0, sleep: Callable[[float], None] = time.sleep) -> HostInfo:
    """Read every fact; with steal_window_s > 0, /proc/stat and cpu MHz are read again after it."""
    blocks = cpuinfo_blocks(root)
    mem = meminfo_bytes(root)
    turbo_on, knob = turbo(root)
    before = cpu_jiffies(root)
    if steal_window_s > 0:
        sleep(steal_window_s)
    after = cpu_jiffies(root) if steal_window_s > 0 else None
    swap_total = mem.get("SwapTotal")
    return HostInfo(
        cpu_model=blocks[0].get("model name") if blocks else None,
        cores=len(blocks) or None,
        physical_cores=physical_cores(blocks),
        memory_bytes=mem.get("MemTotal"),
        kernel=(read_text(root, "proc/sys/kernel/osrelease") or "").strip() or None,
        os=os_pretty_name(root),
        governor=governor(root),
        cpufreq_driver=governor(root, "scaling_driver"),
        turbo=turbo_on,
        turbo_knob=knob,
        thp=thp(root),
        swap_total_bytes=swap_total,
        swap_used_bytes=None if swap_total is None else swap_total - mem.get("SwapFree", swap_total),
        load_1min=load_1min(root),
        cpu_mhz=cpu_mhz(blocks),
        cpu_mhz_after=cpu_mhz(cpuinfo_blocks(root)),
        steal_pct=steal_pct(before, after) if steal_window_s > 0 else None,
        busy_pct=busy_pct(before, after) if steal_window_s > 0 else None,
        steal_window_s=steal_window_s,
        virtualized=virtualized(blocks),
    )


def host_facts(root: str | Path = "/", steal_window_s: float = 1.0, sleep: Callable[[float], None] = time.sleep) -> HostFacts:
    """JSON-serialisable host facts: stored with each campaign, some of them with each run
    (runner/observe.py), and printed by `dbdrift system check`."""
    return asdict(read_host_info(root, steal_window_s, sleep))


# -- warnings: pure functions of the facts dict, one per kind -------------------------------

class HostWarning(TypedDict):
    """A condition of the host that makes timings less trustworthy, stored with the campaign and each run."""

    kind: str  # governor, turbo, swap, steal, frequency, thp, load
    message: str
    hint: str


def warning(kind: str, message: str, hint: str) -> HostWarning:
    return HostWarning(kind=kind, message=message, hint=hint)


def check_governor(facts: HostFacts) -> HostWarning | None:
    gov = facts.get("governor")
    if gov is None or gov == "performance":
        return None
    return warning("governor", f"CPU frequency governor is {gov!r}, not 'performance': the clock follows the load, "
                   "so the first seconds of each run are slower", "cpupower frequency-set -g performance")


def check_turbo(facts: HostFacts) -> HostWarning | None:
    if not facts.get("turbo"):
        return None
    knob = facts.get("turbo_knob") or f"/{TURBO_KNOBS[0][0]}"
    off_value = "1" if knob.endswith("no_turbo") else "0"
    return warning("turbo", "turbo boost is enabled: the clock rises and falls with temperature and with how many "
                   "cores are busy, so results vary between runs", f"echo {off_value} > {knob}")


def check_swap(facts: HostFacts) -> HostWarning | None:
    used = facts.get("swap_used_bytes") or 0
    if used <= 0:
        return None
    return warning("swap", f"{used / 2**20:.0f} MiB of swap in use: server pages can be swapped out mid-run",
                   "swapoff -a (needs enough free memory), or stop what filled the memory")


def check_steal(facts: HostFacts, steal_threshold_pct: float) -> HostWarning | None:
    steal = facts.get("steal_pct")
    if steal is None or steal <= steal_threshold_pct:
        return None
    return warning("steal", f"CPU steal was {steal:.1f}% over {facts.get('steal_window_s', 0):g} s (threshold "
                   f"{steal_threshold_pct:g}%): the hypervisor is giving these vCPUs to other guests",
                   "use an instance type with dedicated vCPUs or a bare-metal host; noisy intervals are "
                   "filtered, but the noise floor rises")


def spread_pct(values: list[float]) -> float:
    """(max - min) / min in percent; 0 for fewer than two values or a zero minimum."""
    if len(values) < 2 or min(values) <= 0:
        return 0.0
    return 100.0 * (max(values) - min(values)) / min(values)


def check_frequency(facts: HostFacts) -> HostWarning | None:
    before, after = facts.get("cpu_mhz") or [], facts.get("cpu_mhz_after") or []
    hint = "set the performance governor and switch turbo off (see the hints above); on a laptop, plug in AC power"
    if spread_pct(before) > FREQUENCY_SPREAD_PCT:
        return warning("frequency", f"cpu MHz differs by {spread_pct(before):.0f}% across cores "
                       f"({min(before):.0f}-{max(before):.0f} MHz)", hint)
    moved = [spread_pct([a, b]) for a, b in zip(before, after) if len(before) == len(after)]
    if moved and max(moved) > FREQUENCY_SPREAD_PCT:
        return warning("frequency", f"cpu MHz of a core changed by {max(moved):.0f}% between two readings "
                       f"{facts.get('steal_window_s', 0):g} s apart", hint)
    return None


def check_thp(facts: HostFacts) -> HostWarning | None:
    if facts.get("thp") != "always":
        return None
    return warning("thp", "transparent huge pages are 'always': compaction and khugepaged can add latency "
                   "variance (informational)", "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled")


BUSY_MAX_PCT = 25.0  # a quarter of all CPUs running something else while dbdrift is about to measure


def check_load(facts: HostFacts) -> HostWarning | None:
    """Something else running: the CPUs' busy share over the steal window where it was measured
    (a campaign that has just ended leaves a high load average but idle CPUs), otherwise the
    1-minute load average above half the CPUs."""
    load, cores, busy = facts.get("load_1min"), facts.get("cores"), facts.get("busy_pct")
    hint = "find it with `top -o %CPU` and stop it, or wait for the load to drop"
    if busy is not None:
        if busy <= BUSY_MAX_PCT:
            return None
        return warning("load", f"the CPUs were {busy:.0f}% busy over {facts.get('steal_window_s', 0):g} s "
                       f"(above {BUSY_MAX_PCT:g}%): something else is running", hint)
    if load is None or not cores or load <= 0.5 * cores:
        return None
    return warning("load", f"1-minute load average is {load:.2f} on {cores} CPUs (above {0.5 * cores:g}): "
                   "something else is running", hint)


def check(facts: HostFacts, *, steal_threshold_pct: float = STEAL_MAX_PCT) -> list[HostWarning]:
    """Warnings about the host, each {"kind", "message", "hint"}; the kinds are governor, turbo,
    swap, steal, frequency, thp and load. No cpufreq (VMs) is a fact, not a warning."""
    found = [check_governor(facts), check_turbo(facts), check_swap(facts),
             check_steal(facts, steal_threshold_pct), check_frequency(facts), check_thp(facts), check_load(facts)]
    return [w for w in found if w is not None]
