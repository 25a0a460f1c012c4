"""What every verb's process shares: the version, SIGTERM read as Ctrl-C, every server stopped
at exit, what a SQLite error escaping a verb means, and a store opened for reading."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from dbdrift.errors import UserError
from dbdrift.server.base import sigterm_as_ctrl_c, stop_all
from dbdrift.store.guard import as_user_error
from dbdrift.store.store import Store
from dbdrift.version import __version__

__all__ = ["__version__", "open_read_only", "sigterm_as_ctrl_c", "stop_all", "store_error"]


def store_error(exc: sqlite3.DatabaseError, store: Path | None, writing: bool) -> BaseException:
    """The UserError a store's damage or full disk means (store/guard.py); any other error is a
    bug and is returned as it is."""
    error = as_user_error(exc, store, writing) if store is not None else None
    return error or exc


def open_read_only(path: Path) -> Store:
    """The store at `path` for reading, opened read-only: one that does not exist is an error,
    never created empty; another program's file is refused untouched (store/guard.py). Its
    notes (a loose file mode) are in `store.notes` for the caller to show."""
    if not path.exists():
        raise UserError(f"store {path} does not exist",
                        "pass --store PATH, or make one with `dbdrift demo`, `dbdrift compare 17.10 18.4` or "
                        "`dbdrift run FILE`", exit_code=2)
    return Store(path, read_only=True)
