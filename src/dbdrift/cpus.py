"""Which CPUs the load driver and the servers run on (campaign key `cpus`).

On a small host the driver and the server otherwise share every CPU, and where the scheduler
puts each backend relative to the driver changes from server to server and from second to
second: two servers of one build then differ by 1-2% for a whole run, and under outside load
one of two servers taking turns can lose a quarter of its turns. Keeping the driver on one set
of CPUs and every server process on the other removes that placement (docs/noise.md).

Affinity is inherited through fork and exec, so a server pinned when it starts keeps every
backend, thread and helper process it creates on its set; the driver is pinned the same way.
Only the calling thread's mask is changed while a child is started (Linux: pid 0 is the
calling thread), so other threads of dbdrift (the sampler) are not moved.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from dbdrift.errors import UserError

_LIST = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")
MODES = ("auto", "shared")


@dataclass(frozen=True)
class Placement:
    """CPU sets for the driver and for every server process; None: no pinning."""

    driver: frozenset[int] | None = None
    server: frozenset[int] | None = None

    @property
    def pinned(self) -> bool:
        return self.driver is not None

    def describe(self) -> str:
        """Where each runs. dbdrift's own process (the sampler, the engine watch, the store) is
        never pinned: on either set it would take CPU from what it measures, so its CPU is
        counted instead, as dbdrift's and not as foreign load (docs/hardware.md)."""
        if not self.pinned:
            return "shared (driver, servers and dbdrift itself on every CPU)"
        return (f"driver on CPU {format_list(self.driver)}, servers on CPU {format_list(self.server)}, "
                "dbdrift itself unpinned (its CPU counted, not foreign load)")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Placement":
        if not data.get("pinned"):
            return cls()
        return cls(parse_list(data["driver"], "driver"), parse_list(data["server"], "server"))

    def to_dict(self) -> dict[str, Any]:
        if not self.pinned:
            return {"pinned": False}
        return {"pinned": True, "driver": format_list(self.driver), "server": format_list(self.server)}


def parse_list(text: str, what: str) -> frozenset[int]:
    """`0`, `1-3`, `0,2-3` -> CPU numbers (the kernel's cpulist format)."""
    cleaned = str(text).replace(" ", "")
    if not _LIST.match(cleaned):
        raise UserError(f"{what}: {text!r} is not a CPU list", 'write CPU numbers and ranges, e.g. "0" or "1-3,5"')
    cpus: set[int] = set()
    for part in cleaned.split(","):
        low, _, high = part.partition("-")
        first, last = int(low), int(high or low)
        if last < first:
            raise UserError(f"{what}: range {part!r} runs backwards", f'write "{last}-{first}"')
        cpus.update(range(first, last + 1))
    return frozenset(cpus)


def format_list(cpus: frozenset[int] | None) -> str:
    """The kernel's compact form: {0, 1, 2, 5} -> "0-2,5"."""
    if not cpus:
        return ""
    ordered, parts = sorted(cpus), []
    start = prev = ordered[0]
    for cpu in ordered[1:] + [None]:
        if cpu is not None and cpu == prev + 1:
            prev = cpu
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if cpu is not None:
            start = prev = cpu
    return ",".join(parts)


def available() -> frozenset[int]:
    return frozenset(os.sched_getaffinity(0))


def place(option: str | tuple[str, str], allowed: frozenset[int] | None = None) -> Placement:
    """The placement for a campaign's `cpus` option on this host.

    "auto": with two or more usable CPUs the driver gets a quarter of them (at least one, the
    lowest numbers) and the servers the rest; with one CPU nothing is pinned. "shared": nothing
    is pinned. A (driver, server) pair of CPU lists: exactly those, which must be usable here.
    """
    allowed = allowed if allowed is not None else available()
    if option == "shared" or (option == "auto" and len(allowed) < 2):
        return Placement()
    if option == "auto":
        ordered = sorted(allowed)
        k = max(1, len(ordered) // 4)
        return Placement(frozenset(ordered[:k]), frozenset(ordered[k:]))
    if isinstance(option, str):
        raise ValueError(f"cpus = {option!r}: not auto, shared or a (driver, server) pair")
    driver_text, server_text = option
    driver = parse_list(driver_text, "cpus.driver")
    server = parse_list(server_text, "cpus.server")
    for label, cpus in (("driver", driver), ("server", server)):
        missing = cpus - allowed
        if missing:
            raise UserError(f"cpus.{label} = {format_list(cpus)!r} names CPU {format_list(frozenset(missing))}, "
                            f"which this host does not let dbdrift use",
                            f"usable CPUs here: {format_list(allowed)}; or write cpus = \"auto\"")
    return Placement(driver, server)


@contextmanager
def pinned(cpus: frozenset[int] | None) -> Iterator[None]:
    """Children started inside this block inherit `cpus`; the calling thread's mask is restored."""
    if not cpus:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)
