"""What a file must be before dbdrift reads or writes it as a store: recognised as dbdrift's
(application_id, schema version), intact (quick_check, every table), private (0600), writable
where a command writes it, and what to say when its disk is full. Owns no schema and no facts
(schema.py, store.py)."""
from __future__ import annotations

import errno
import os
import sqlite3
import tempfile
from functools import lru_cache
from pathlib import Path

from dbdrift import disk
from dbdrift.errors import UserError
from dbdrift.origin import upgrade_hint
from dbdrift.store.schema import MIGRATIONS, SCHEMA_VERSION

APPLICATION_ID = int.from_bytes(b"dbdr", "big")  # PRAGMA application_id of every dbdrift store
DAMAGE_WORDS = ("malformed", "no such table", "not a database", "no such column", "corrupt")


class StoreFull(UserError):
    """A fact could not be written: the disk under the store is full."""


def recover_hint(path: Path) -> str:
    new = path.with_name(path.stem + "-recovered.db")
    return (f"recover what it holds with `sqlite3 {path} \".recover\" | sqlite3 {new}` and pass --store {new}, "
            "or pass a new --store")


def damaged(path: Path, reason: str, writing: bool) -> UserError:
    """One line naming the store and SQLite's first words on the damage (its page list, one
    problem a line, would run over the screen); the hint says how to see them all."""
    started = "; nothing was started" if writing else ""
    problems = [line.strip() for line in reason.splitlines() if line.strip() and not line.startswith("***")]
    shown = problems[0] if problems else reason.strip()
    more = f", and {len(problems) - 1} more" if len(problems) > 1 else ""
    return UserError(f"store {path} is damaged ({shown}{more}){started}",
                     f"{recover_hint(path)}; `sqlite3 {path} \"PRAGMA quick_check\"` lists the damage", exit_code=2)


def foreign(path: Path, what: str) -> UserError:
    return UserError(f"store {path} is not a dbdrift store ({what}); it was left untouched",
                     "pass another --store (a new path makes a new store)", exit_code=2)


def is_busy(exc: BaseException) -> bool:
    """SQLite's "database is locked" / "database is busy": another connection holds a lock."""
    return isinstance(exc, sqlite3.OperationalError) and any(w in str(exc) for w in ("locked", "busy"))


def is_full(exc: BaseException) -> bool:
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    return isinstance(exc, sqlite3.OperationalError) and "disk is full" in str(exc)


def full(path: Path, doing: str) -> StoreFull:
    """The error of a fact that found the disk full and could not be journalled either."""
    mount = disk.mount_point(path.parent)
    free = disk.free_text(mount)
    return StoreFull(f"the disk holding store {path} is full ({doing}; {mount}: {free}); the campaign stops, "
                     "what was stored before stays",
                     f"free space on {mount} (the store's disk), or pass --store PATH on another disk, then "
                     "`--resume` runs what is missing")


def as_user_error(exc: sqlite3.DatabaseError, path: Path, writing: bool) -> UserError | None:
    """The error a store's SQLite error means to the user (damage, a full disk), or None (a bug)."""
    if is_full(exc):
        return full(path, "writing")
    if is_denied(exc):
        return denied(path, exc, writing)
    if any(word in str(exc) for word in DAMAGE_WORDS):
        return damaged(path, str(exc), writing)
    return None


# -- where the store can be written ----------------------------------------------------------------
SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_PERM = 8, 14, 3  # primary result codes (the low byte)


def is_denied(exc: BaseException) -> bool:
    """SQLite could not open or write the file for want of permission (a read-only file, folder
    or mount), not because of anything in it."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.DatabaseError) and code is not None and code & 0xFF in (
        SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_PERM)


def denied(path: Path, exc: sqlite3.DatabaseError, writing: bool) -> UserError:
    """A store SQLite may not open as asked: read-only where a command writes, else unreadable."""
    why = unwritable(path) if writing else None
    if why:
        return read_only(path, why)
    return UserError(f"cannot open store {path}: {exc}", "check that you may read the file and the files beside it "
                     "(-wal, -shm), or pass another --store", exit_code=2)


def folder_of(path: Path) -> Path:
    """The folder SQLite writes the store's -wal and -shm in (beside its real file), and dbdrift
    its journal and campaign locks."""
    return Path(os.path.realpath(path)).parent


def unwritable(path: Path) -> str | None:
    """Why a command cannot write the store at `path` and the files beside it, or None. The
    folder is probed by creating a file there and removing it at once: a read-only mount,
    /proc, a folder the user may not write, and root alike answer only to that."""
    folder = folder_of(path)
    existing = folder
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    if path.is_dir():
        return "it is a folder, not a results store"
    try:
        fd, probe = tempfile.mkstemp(prefix=".dbdrift-probe-", dir=existing)
    except OSError as exc:
        where = "its folder" if existing == folder else "the folder it would be made in"
        return f"no file can be created in {where} {existing}: {exc.strerror}"
    os.close(fd)
    os.unlink(probe)
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is read-only to you"
    return None


def read_only(path: Path, why: str, hint: str = "") -> UserError:
    """The error of a command that writes the store where it cannot (exit 2: nothing started)."""
    readers = "; report, campaigns, history and publish read this one where it is" if path.is_file() else ""
    return UserError(f"store {path} cannot be written ({why}); nothing was started",
                     hint or f"pass --store PATH in a folder you can write (a new path makes a new store){readers}",
                     exit_code=2)


def require_writable(path: Path, hint: str = "") -> None:
    """Refuse, before anything starts, a store a writing command could not write."""
    why = unwritable(path)
    if why:
        raise read_only(path, why, hint)


# -- creating ----------------------------------------------------------------------------------
def create_private(path: Path) -> bool:
    """Create an empty store file 0600 (SQLite makes its -wal and -shm with the same mode);
    False when it exists already."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        return False
    return True


def loose_mode_note(path: Path) -> str | None:
    """A store others can read: left as it is (a shared team directory may want it), said once
    per writing command."""
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        return None
    if mode & 0o077:
        return (f"note: store {path} is readable by other users (mode {mode:o}): it holds server settings, host "
                f"facts and server-log tails; `chmod 600 {path}` keeps them private")
    return None


# -- recognising -------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def expected_tables(version: int) -> frozenset[str]:
    """The tables a store of schema `version` has (its migrations applied to an empty database)."""
    db = sqlite3.connect(":memory:")
    for script in MIGRATIONS[:version]:
        db.executescript(script)
    names = frozenset(r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                               "AND name NOT LIKE 'sqlite_%'"))
    db.close()
    return names


def tables(db: sqlite3.Connection) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                     "AND name NOT LIKE 'sqlite_%'")}


def recognise(db: sqlite3.Connection, path: Path, writing: bool) -> int:
    """The schema version of the dbdrift store `db` (0: empty, to be created); refuses another
    program's database, a store newer than this dbdrift. A store made before dbdrift set its
    application_id is known by its tables."""
    try:
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        version: int = db.execute("PRAGMA user_version").fetchone()[0]
        names = tables(db)
    except sqlite3.DatabaseError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise
        if "file is not a database" in str(exc):  # SQLite's header is not there
            raise foreign(path, "not a SQLite database") from None
        if is_denied(exc):
            raise denied(path, exc, writing) from None
        raise damaged(path, str(exc), writing) from None
    if app_id not in (0, APPLICATION_ID):
        raise foreign(path, f"its application_id is {app_id:#x}")
    if app_id == 0 and not (version == 0 and not names) and not (version and names >= expected_tables(version)):
        shown = ", ".join(sorted(names)[:5]) + (", ..." if len(names) > 5 else "")
        raise foreign(path, f"tables {shown}" if names else f"user_version {version} and no tables")
    if version > SCHEMA_VERSION:
        raise UserError(f"store {path} has schema version {version}, newer than this dbdrift reads "
                        f"({SCHEMA_VERSION}); it was left untouched",
                        f"upgrade dbdrift: {upgrade_hint()}; or pass another --store", exit_code=2)
    return version


def check_intact(db: sqlite3.Connection, path: Path, version: int, writing: bool) -> None:
    """PRAGMA quick_check (reads every page: damage deep in the file shows now, not mid-campaign)
    and every table the schema version has."""
    try:
        problems = [r[0] for r in db.execute("PRAGMA quick_check(5)")]
        names = tables(db)
    except sqlite3.DatabaseError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise
        if is_denied(exc):
            raise denied(path, exc, writing) from None
        raise damaged(path, str(exc), writing) from None
    if problems != ["ok"]:
        raise damaged(path, "\n".join(problems), writing)
    missing = sorted(expected_tables(version) - names)
    if missing:
        raise damaged(path, f"no table {', '.join(missing)}", writing)
