"""Why a cell is a regression or an improvement, in one line, from what is already stored: the
rQPS and its interval, then what moved with it: server and client CPU per operation, context
switches per operation (sequential runs only: in runs in turns they are the host's, shared),
instructions per event with the functions that moved most, the query plan, host warnings; first,
when the change came in bursts (noise.Estimate.bursty), the typical turn's ratio beside the
throughput's.

`update-index x1 pg18 vs pg17: 0.96 [0.94, 0.98] -: server CPU/op +4.1%, instructions/event
+2.8% (LWLockReleaseInternal +1,497, heap_update +320), plan unchanged`
"""
from __future__ import annotations

from typing import TypeGuard

from dbdrift.analysis.hardware import MetricsRow
from dbdrift.analysis.instructions import InstructionRow
from dbdrift.analysis.relative import Cell, RelativeRow


BACKGROUND_SHARE = 10.0
"""The server's background work (bg%) is named in a why line where it is at least this share of
the server's CPU on either side; below it, its ratio swings on a few milliseconds."""


def explanation(row: RelativeRow, cell: Cell, metrics: MetricsRow | None, instructions: InstructionRow | None,
                plan: tuple[str, str] | None, planned: bool, per_target_host: bool) -> tuple[str, str]:
    """(head, what moved) for one compared cell; the line reads `head: what moved`. `plan`: (reference shape, shape) of the first statement
    whose plan differs; `planned`: the cell's plans were compared with its reference's; `per_target_host`: host-wide
    counters (cs/o) belong to this target alone (sequential runs)."""
    est = cell.estimate
    interval = f" [{est.lower:.2f}, {est.upper:.2f}]" if est and est.lower is not None else ""
    mark = cell.verdict.mark if cell.verdict else ""
    head = f"{row.test} x{row.threads} {cell.target} vs {cell.reference}: {cell.ratio:.2f}{interval} {mark}"
    parts = []
    if est is not None and est.bursty and est.typical is not None:
        parts.append(f"in bursts (stalls): the typical turn {est.typical:.2f}, the throughput {cell.ratio:.2f}")
    relative = metrics.relative.get(cell.target, {}) if metrics else {}
    for key, label in (("srv_us/o", "server CPU/op"), ("cli_us/o", "client CPU/op")):
        value = relative.get(key)
        if _finite(value):
            parts.append(f"{label} {_pct(value)}")
    shares = [(metrics.absolute.get(t) or {}).get("bg%") for t in (cell.target, cell.reference or "")] if metrics else []
    background = relative.get("bg_us/o")
    if _finite(background) and any(v is not None and v >= BACKGROUND_SHARE for v in shares):
        parts.append(f"background CPU/op {_pct(background)}")
    switches = relative.get("cs/o")
    if per_target_host and _finite(switches):
        parts.append(f"cs/o {_pct(switches)}")
    ratio = instructions.relative.get(cell.target) if instructions else None
    if instructions and _finite(ratio):
        text = f"instructions/event {_pct(ratio)}"
        delta = instructions.deltas.get(cell.target)
        if delta:
            top = delta["self"]["grew" if delta["total_delta"] > 0 else "shrank"][:3]
            if top:
                text += " (" + ", ".join(f"{f['function']} {f['delta']:+,.0f}" for f in top) + ")"
        parts.append(text)
    if plan:
        parts.append(f"plan changed: {plan[0]} -> {plan[1]}")
    elif planned:
        parts.append("plan unchanged")
    reference = row.cells.get(cell.reference) if cell.reference else None
    warnings = list(cell.warnings) + [f"{cell.reference}: {w}" for w in (reference.warnings if reference else ())]
    if warnings:
        parts.append(f"{len(warnings)} host or run warning(s), listed under warnings (!)")
    return head, ", ".join(parts) if parts else "nothing else stored moved with it"


def _finite(value: float | None) -> TypeGuard[float]:
    return value is not None and value != float("inf")


def _pct(ratio: float) -> str:
    return f"{(ratio - 1) * 100:+.1f}%"
