"""The results store: a SQLite file (WAL), one transaction per finished run.

Writes facts only; reports read them back. A measured fact is never lost to a busy store:
writes wait for another program's lock with backoff (`DBDRIFT_STORE_WAIT_S`, default 120 s)
and, if it is still held, go to a journal beside the store (`<store>.journal`, one JSON line
per fact) that the next open of the store imports.

Store is its parts, one concern a module: opening, migrating and waiting (connection.py), the
journal (journal.py), the kinds of fact and how each is written (facts.py), writing (writes.py)
and reading (reads.py); records.py holds the records a runner hands it.
"""
from __future__ import annotations

from dbdrift.store.connection import DEFAULT_WAIT_S, SQLITE_TIMEOUT_S, is_busy, wait_s_from_env
from dbdrift.store.reads import Reads
from dbdrift.store.records import SAMPLE_COLUMNS, InstructionRecord, RunRecord, SampleColumn, now_iso
from dbdrift.store.writes import Writes

__all__ = ["Store", "RunRecord", "InstructionRecord", "SAMPLE_COLUMNS", "SampleColumn", "now_iso", "is_busy",
           "wait_s_from_env", "DEFAULT_WAIT_S", "SQLITE_TIMEOUT_S"]


class Store(Writes, Reads):
    """A dbdrift store, open for reading and (unless `read_only`) writing (connection.Connection
    says how it is opened)."""

    def another(self) -> "Store":
        """A second connection to this store, for another thread (checked when this one was opened)."""
        return type(self)(self.path, self.wait_s, checked=True)
