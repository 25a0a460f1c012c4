"""The journal beside a store (`<store>.journal`): one JSON object per fact a busy or full store
could not take. Reads and checks its lines, and sets aside those no store could import; the
store (store.py) writes them."""
from __future__ import annotations

import fcntl
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

# kind -> the fields its line must carry (store.Store._apply writes each kind)
FIELDS = {
    "run": ("target_id", "record"),
    "instructions": ("target_id", "record"),
    "tpcc run": ("target_id", "record"),
    "workload run": ("target_id", "record"),
    "ibench step": ("target_id", "record", "driver_spec"),
    "step": ("target_id", "step_kind", "label", "status", "started_at", "elapsed_s", "detail", "error"),
    "plan": ("target_id", "test", "statement", "sql", "plan_json", "shape", "error"),
    "target facts": ("target_id", "install", "server"),
    "streamed": ("fact", "unit_id"),  # and "worker" (schema 18); a line written before has none
}


def problem(entry: object) -> str | None:
    """Why a parsed line cannot be a fact, or None."""
    if not isinstance(entry, dict):
        return f"not an object ({type(entry).__name__})"
    kind = entry.get("kind")
    if kind not in FIELDS:
        return f"unknown kind {kind!r}"
    missing = [f for f in FIELDS[kind] if f not in entry]
    if missing:
        return f"{kind} without {', '.join(missing)}"
    if kind == "streamed":
        if not isinstance(entry.get("worker"), (str, type(None))):
            return "streamed whose worker is not a string"
        return problem(entry["fact"]) if entry["fact"] is not None else "streamed without a fact"
    if "record" in FIELDS[kind] and not isinstance(entry["record"], dict):
        return f"{kind} whose record is not an object"
    return None


def parse(text: str) -> tuple[list[tuple[str, dict[str, Any]]], list[tuple[str, str]]]:
    """(line, entry) of each good line; (line, reason) of each line that is not JSON or not a fact."""
    good, bad = [], []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            bad.append((line, "not JSON (a write cut short?)"))
            continue
        reason = problem(entry)
        if reason:
            bad.append((line, reason))
        else:
            good.append((line, entry))
    return good, bad


def set_aside(journal: Path, lines: list[str]) -> Path:
    """Write rejected lines, as they were, to `<journal>.rejected-<UTC time>` (0600): fixed by
    hand they can be appended to the journal again."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    path = journal.with_name(f"{journal.name}.rejected-{stamp}")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a") as out:
        fcntl.flock(out, fcntl.LOCK_EX)
        out.write("\n".join(lines) + "\n")
    return path


def note(journal: Path, rejected: list[tuple[str, str]], kept: Path | None) -> str:
    reasons = list(dict.fromkeys(reason for _, reason in rejected))
    where = f"moved to {kept}" if kept else f"left in {journal}"
    return (f"warning: {len(rejected)} line{'s' if len(rejected) != 1 else ''} of {journal} could not be imported "
            f"({'; '.join(reasons[:5])}{'; ...' if len(reasons) > 5 else ''}); {where}")
