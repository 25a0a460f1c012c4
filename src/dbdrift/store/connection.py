"""A connection to a store: recognise, check, create or migrate the file and import its journal
when it is opened; wait out another program's lock with backoff. Keeps no facts itself
(writes.py, reads.py)."""
from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Callable, TypeVar

from dbdrift.errors import UserError
from dbdrift.store import guard, journal
from dbdrift.store.guard import is_busy
from dbdrift.store.schema import MIGRATIONS, SCHEMA_VERSION

T = TypeVar("T")
SQLITE_TIMEOUT_S = 5.0  # one attempt's wait for a lock; _retry tries again until wait_s
DEFAULT_WAIT_S = 120.0

__all__ = ["Connection", "is_busy", "wait_s_from_env", "SQLITE_TIMEOUT_S", "DEFAULT_WAIT_S"]


def wait_s_from_env() -> float:
    try:
        return max(0.0, float(os.environ.get("DBDRIFT_STORE_WAIT_S", DEFAULT_WAIT_S)))
    except ValueError:
        return DEFAULT_WAIT_S


class Connection:
    """An open store. `read_only` opens the file with SQLite's mode=ro and never changes it: a
    store written by an older dbdrift, or with a journal not yet imported, is read through a
    migrated copy in memory (the next writing command migrates and imports the file itself); one
    in a folder this user cannot write is read as _connect says. Writing, it refuses a store it
    could not write before it touches it (guard.require_writable)."""

    def __init__(self, path: Path, wait_s: float | None = None, *, read_only: bool = False,
                 checked: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self.checked = checked  # this process has checked the file already: skip quick_check (it reads every page)
        self.wait_s = wait_s_from_env() if wait_s is None else wait_s
        self.journal_path = path.with_name(path.name + ".journal")
        self.journaled = 0  # facts this process wrote to the journal (the store was busy)
        self.imported = 0  # facts imported from the journal when the store was opened
        self.notes: list[str] = []  # warnings for the command to print (a loose mode, rejected journal lines)
        try:
            self.db = self._open()
        except UserError:
            raise
        except sqlite3.DatabaseError as exc:
            raise guard.as_user_error(exc, path, not read_only) or UserError(
                f"cannot open store {path}: {exc}", self._cannot_open_hint()) from None
        except OSError as exc:
            if guard.is_full(exc):
                raise guard.full(path, "creating the store") from None
            raise UserError(f"cannot open store {path}: {exc}", self._cannot_open_hint()) from None

    def _cannot_open_hint(self) -> str:
        if self.read_only:
            return "check that you may read the store and the files beside it (-wal, -shm), or pass another --store"
        return "pass --store PATH to a writable location"

    def _open(self) -> sqlite3.Connection:
        """Recognise, check and (writing) create or migrate the store; then import its journal."""
        writing = not self.read_only
        if writing:
            guard.require_writable(self.path)
        created = guard.create_private(self.path) if writing else False
        # the file is read only through SQLite: closing any other descriptor of it would drop this
        # process's POSIX locks, which SQLite's other connections here (another()) rely on
        loose = guard.loose_mode_note(self.path) if writing and not created else None
        if loose:
            self.notes.append(loose)
        timeout = min(SQLITE_TIMEOUT_S, max(0.05, self.wait_s))
        self.db = db = self._connect(timeout)
        db.row_factory = sqlite3.Row
        version = self._retry(lambda: guard.recognise(db, self.path, writing), "open")
        if version and not self.checked:
            self._retry(lambda: guard.check_intact(db, self.path, version, writing), "open")
        if writing:
            self._retry(lambda: db.execute("PRAGMA journal_mode=WAL"), "open")
            db.execute("PRAGMA foreign_keys=ON")
            self._retry(self._migrate, "open")
            self.imported = self.import_journal()
        elif version < SCHEMA_VERSION or self.journal_path.exists():
            self.db = db = self._in_memory(db)
            self._migrate()
            self.imported = self.import_journal()
        return db

    def _connect(self, timeout: float) -> sqlite3.Connection:
        if not self.read_only:
            return sqlite3.connect(str(self.path), timeout=timeout)
        uri = "file:" + urllib.parse.quote(str(self.path.resolve()))
        db = sqlite3.connect(uri + "?mode=ro", uri=True, timeout=timeout)
        try:
            db.execute("PRAGMA user_version").fetchone()
            return db
        except sqlite3.OperationalError as exc:
            # a WAL store in a folder this user cannot write (permissions, a read-only mount):
            # SQLite cannot make its -shm, and says "unable to open" or "readonly directory"
            db.close()
            if not guard.is_denied(exc):
                raise
        wal = Path(str(self.path) + "-wal")
        if not wal.exists() or wal.stat().st_size == 0:
            # no -wal: no one can be writing it (that too needs the folder), so the main file
            # alone is the whole store
            return sqlite3.connect(uri + "?mode=ro&immutable=1", uri=True, timeout=timeout)
        return self._copy_with_wal(wal, timeout)

    def _copy_with_wal(self, wal: Path, timeout: float) -> sqlite3.Connection:
        """The store and its -wal (left by a writer that was killed: a live one keeps a -shm
        beside them) copied where SQLite can make the -shm, read into memory, the copy removed
        at once (a reading process of `publish` ends without running finalizers)."""
        with tempfile.TemporaryDirectory(prefix="dbdrift-store-") as scratch:
            copy = Path(scratch) / "store.db"
            shutil.copyfile(self.path, copy)
            shutil.copyfile(wal, Path(f"{copy}-wal"))
            return self._in_memory(sqlite3.connect(str(copy), timeout=timeout))

    def _in_memory(self, db: sqlite3.Connection) -> sqlite3.Connection:
        memory = sqlite3.connect(":memory:")
        memory.row_factory = sqlite3.Row
        db.backup(memory)
        db.close()
        return memory

    def _migrate(self) -> None:
        """Apply the migrations the store lacks (guard.recognise refused a newer one), and mark
        it dbdrift's (application_id) in the same transaction as the first."""
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION and self.db.execute("PRAGMA application_id").fetchone()[0] != guard.APPLICATION_ID:
            with self.db:
                self.db.execute(f"PRAGMA application_id = {guard.APPLICATION_ID}")
        for number in range(version, SCHEMA_VERSION):
            with self.db:
                self.db.executescript(MIGRATIONS[number])
                self.db.execute(f"PRAGMA user_version = {number + 1}")
                self.db.execute(f"PRAGMA application_id = {guard.APPLICATION_ID}")
            # each migration rewrites the schema's pages into the WAL: fold them into the file as
            # it goes (a new store's WAL would otherwise grow to ~0.5 MB of superseded pages)
            try:
                self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.OperationalError:
                pass  # a busy store keeps its WAL; SQLite checkpoints it later

    def import_journal(self) -> int:
        """The facts of the journal written into the store (journal.import_into); how many."""
        imported, note = journal.import_into(self.db, self.journal_path, self.path, self.read_only)
        if note:
            self.notes.append(note)
        return imported

    def close(self) -> None:
        if self.journaled:
            self.import_journal()  # the lock may be gone by now
        self.db.close()

    def _retry(self, action: Callable[[], T], doing: str) -> T:
        """`action` until no other program holds the store's lock, with backoff, for at most
        wait_s; then a UserError naming the store."""
        deadline, delay = time.monotonic() + self.wait_s, 0.1
        while True:
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if guard.is_full(exc):
                    raise guard.full(self.path, doing) from None
                if not is_busy(exc):
                    raise
                if time.monotonic() >= deadline:
                    raise UserError(
                        f"store {self.path} is locked by another program ({doing}: {exc}; waited "
                        f"{self.wait_s:g} s)",
                        "end the program holding it (e.g. a sqlite3 shell inside a transaction), or pass "
                        "another --store; DBDRIFT_STORE_WAIT_S sets how long dbdrift waits") from None
                time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
                delay = min(delay * 2, 5.0)
