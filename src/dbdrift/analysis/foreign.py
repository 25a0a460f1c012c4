"""Whether a measured window ran beside foreign load, and how much: the stored window's foreign
CPU and I/O (metrics/foreign.py) against the stated thresholds (model.FOREIGN_*), as the words
a run warning, a step's or window's flag and a report's note all use (docs/hardware.md,
"Foreign load").

Pure functions of a stored HardwareWindow. Nothing here drops or changes a measurement: a
flagged window stays in every figure, marked.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dbdrift.model import FOREIGN_CPU_MAX_PCT, FOREIGN_IO_MAX_PCT, FOREIGN_IO_MIN_KB_S

FOREIGN_KINDS = ("foreign_cpu", "foreign_io")  # the run warnings' kinds


def foreign_io_pct(window: Mapping[str, Any]) -> float | None:
    """The share of the device's bytes (read and written) over the window that no process of
    dbdrift's moved; None when not known (no device, /proc/PID/io unreadable, a window stored
    before foreign load was sampled) or when the device moved nothing."""
    parts = [window.get(k) for k in ("foreign_read_kb", "foreign_write_kb", "read_kb", "write_kb")]
    if any(p is None for p in parts):
        return None
    foreign_r, foreign_w, device_r, device_w = (float(p or 0) for p in parts)
    foreign_kb, device_kb = foreign_r + foreign_w, device_r + device_w
    return 100.0 * foreign_kb / device_kb if device_kb > 0 else None


def judge(window: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(kind, message) for each kind of foreign load above its threshold in `window`; [] for a
    quiet window, a missing one, or one stored before foreign load was sampled."""
    if not window:
        return []
    found = []
    cpu = window.get("foreign_cpu_pct")
    if cpu is not None and cpu > FOREIGN_CPU_MAX_PCT:
        found.append(("foreign_cpu", f"foreign load: other processes used {cpu:.0f}% of the host's CPU time "
                                     f"(threshold {FOREIGN_CPU_MAX_PCT:g}%)"))
    pct, elapsed = foreign_io_pct(window), window.get("elapsed_s") or 0.0
    if pct is not None and elapsed > 0:
        rate = (window["foreign_read_kb"] + window["foreign_write_kb"]) / elapsed
        if pct > FOREIGN_IO_MAX_PCT and rate > FOREIGN_IO_MIN_KB_S:
            device = window.get("device") or "the data directory's device"
            found.append(("foreign_io", f"foreign I/O: {pct:.0f}% of {device}'s bytes ({rate / 1024:.1f} MB/s) were "
                                        f"not the servers' (threshold {FOREIGN_IO_MAX_PCT:g}% and "
                                        f"{FOREIGN_IO_MIN_KB_S / 1024:g} MB/s)"))
    return found


def flag(window: Mapping[str, Any] | None) -> str | None:
    """The short figure a flagged cell carries beside its `!`: "foreign CPU 34%", "foreign I/O
    87%", both joined; None for a quiet window."""
    parts = []
    for kind, _ in judge(window):
        if kind == "foreign_cpu" and window is not None:
            parts.append(f"foreign CPU {window['foreign_cpu_pct']:.0f}%")
        elif window is not None:
            parts.append(f"foreign I/O {foreign_io_pct(window):.0f}%")
    return ", ".join(parts) or None


Key = tuple[str, str | None]
"""(target, the test a finding names), or (target, None) for every finding of that target."""


def cell_flags(measured: Iterable[tuple[Key, str, Mapping[str, Any] | None]]) -> dict[Key, str]:
    """Key -> the figures (flag) of each of its measurements that saw foreign load, each with
    what it was (`foreign CPU 34% (repeat 2)`), joined; keys whose measurements were all quiet
    are left out. What a judged cell of a workload's report carries beside its `!`."""
    found: dict[Key, list[str]] = {}
    for key, what, window in measured:
        figure = flag(window)
        if figure:
            found.setdefault(key, []).append(f"{figure} ({what})" if what else figure)
    return {key: ", ".join(figures) for key, figures in found.items()}


def notes(flagged: Iterable[tuple[str, Mapping[str, Any] | None]]) -> tuple[str, ...]:
    """One report note per flagged window: `what` (a step, window or repeat, named by the
    caller) and the judge's messages."""
    out = []
    for what, window in flagged:
        messages = [message for _, message in judge(window)]
        if messages:
            out.append(f"! {what}: {'; '.join(messages)}")
    return tuple(out)


NEIGHBOURS = ("foreign load: {what} ran one repeat, targets one after the other, and {flagged} of its "
              "measurements saw other processes' load (marked !): its ratios may be the neighbours', not the "
              "servers'; run it again on a quiet host, or with repeats = 3 or more (and order = \"turns\" where the "
              "workload has it)")
"""The plain note of a one-repeat sequential campaign under foreign load: nothing pairs its
targets in time, so a neighbour that ran beside one of them moved that one's figures alone."""


def neighbours_note(what: str, flagged: int, repeats: int, turns: bool) -> tuple[str, ...]:
    """NEIGHBOURS for a campaign of one repeat whose targets ran one after the other and whose
    `flagged` measurements (runs, steps, windows) saw foreign load; () otherwise."""
    if flagged <= 0 or repeats > 1 or turns:
        return ()
    return (NEIGHBOURS.format(what=what, flagged=flagged),)


def workload_notes(flagged: Iterable[tuple[str, Mapping[str, Any] | None]], repeats: int) -> tuple[str, ...]:
    """The notes of a workload judged over whole repeats (Insert Benchmark steps, TPROC-C runs,
    vector search settings, CH-benCHmark windows): one `!` line per measurement that saw foreign
    load, then, with one repeat (nothing pairs the targets in time), NEIGHBOURS."""
    flagged = list(flagged)
    marked = notes(flagged)
    return marked + neighbours_note("this campaign", len(marked), repeats, turns=False)
