"""The journal beside a store (`<store>.journal`): one JSON object per fact a busy or full store
could not take. Appends a fact, reads and checks its lines, imports them into the store (each
kind as facts.KINDS writes it) and sets aside those no store could import."""
from __future__ import annotations

import fcntl
import json
import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dbdrift.model import JsonObject
from dbdrift.store import facts, guard


def problem(entry: object) -> str | None:
    """Why a parsed line cannot be a fact, or None."""
    if not isinstance(entry, dict):
        return f"not an object ({type(entry).__name__})"
    kind = entry.get("kind")
    if kind not in facts.KINDS:
        return f"unknown kind {kind!r}"
    fields = facts.KINDS[kind].fields
    missing = [f for f in fields if f not in entry]
    if missing:
        return f"{kind} without {', '.join(missing)}"
    if kind == "streamed":
        if not isinstance(entry.get("worker"), (str, type(None))):
            return "streamed whose worker is not a string"
        return problem(entry["fact"]) if entry["fact"] is not None else "streamed without a fact"
    if "record" in fields and not isinstance(entry["record"], dict):
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


def append(journal: Path, entry: JsonObject) -> None:
    """One fact as one line, synced, under the journal's lock; a write cut short leaves no half line."""
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a") as out:
        fcntl.flock(out, fcntl.LOCK_EX)
        size = os.fstat(out.fileno()).st_size
        try:
            out.write(json.dumps(entry) + "\n")
            out.flush()
            os.fsync(out.fileno())
        except OSError:
            os.ftruncate(out.fileno(), size)  # no half line for the next import to reject
            raise


def import_into(db: sqlite3.Connection, journal: Path, store: Path, read_only: bool) -> tuple[int, str | None]:
    """Write the facts kept in the journal into the store `db` (one transaction) and empty it:
    (facts imported, a note for the command to print or None); 0 when there is none or the store
    is still busy. A line that is no fact (cut short by a kill, not an object, an unknown kind,
    missing fields) or that the store refuses is moved to `<journal>.rejected-<time>`, with a
    note; the others are imported. A read-only store imports into its copy in memory and leaves
    the journal as it is."""
    try:
        handle = journal.open("r" if read_only else "r+")
    except FileNotFoundError:
        return 0, None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_SH if read_only else fcntl.LOCK_EX)
        good, bad = parse(handle.read())
        try:
            db.execute("BEGIN IMMEDIATE")
            imported = 0
            for line, entry in good:
                db.execute("SAVEPOINT fact")
                try:
                    facts.apply(db, entry)
                    imported += 1
                except sqlite3.OperationalError as exc:
                    if guard.is_busy(exc) or guard.is_full(exc):
                        raise
                    db.execute("ROLLBACK TO fact")
                    bad.append((line, f"refused by the store: {exc}"))
                except (KeyError, TypeError, ValueError, AttributeError, sqlite3.DatabaseError) as exc:
                    db.execute("ROLLBACK TO fact")
                    bad.append((line, f"refused by the store: {type(exc).__name__}: {exc}"))
                db.execute("RELEASE fact")
            db.commit()
        except sqlite3.OperationalError as exc:
            db.rollback()
            if guard.is_busy(exc):
                return 0, None
            if guard.is_full(exc):
                raise guard.full(store, f"importing {journal}") from None
            raise
        if read_only:
            return imported, note(journal, bad, None) if bad else None
        kept = set_aside(journal, [line for line, _ in bad]) if bad else None
        handle.seek(0)
        handle.truncate()
    journal.unlink(missing_ok=True)
    return imported, note(journal, bad, kept) if bad else None
