"""The lines `dbdrift cleanup` prints, one per leftover run directory (app/cleanup.py's Leftovers and
the server's Orphan, read through the protocols below since report/ imports neither); no I/O."""
from __future__ import annotations

from pathlib import Path
from typing import Protocol


class Found(Protocol):
    """What a look at the work directory found (app/cleanup.py's Leftovers)."""

    @property
    def work_dir(self) -> Path: ...
    @property
    def present(self) -> int: ...  # run directories, left behind or not


class Leftover(Protocol):
    """A run directory whose dbdrift is gone (server/rundir.py's Orphan)."""

    @property
    def run_dir(self) -> Path: ...
    @property
    def server_pid(self) -> int | None: ...
    def describe(self) -> str: ...


def nothing_to_clean(leftovers: Found) -> str:
    present = leftovers.present
    why = (f"{present} run director{'y' if present == 1 else 'ies'}, none left by a dbdrift that is gone"
           if present else "no run directories")
    return f"nothing to clean up in {leftovers.work_dir}: {why}\n"


def would_clean(orphan: Leftover) -> str:
    running = f", server running (pid {orphan.server_pid})" if orphan.server_pid else ""
    return f"would clean {orphan.run_dir}: {orphan.describe()}{running}\n"


def cleaned(orphan: Leftover, what: str) -> str:
    return f"{orphan.run_dir}: {what}\n"
