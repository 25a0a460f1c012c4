"""The lines `dbdrift cleanup` prints, one per leftover run directory (app/cleanup.py's Leftovers and
the server's Orphan, read by attribute); no I/O."""
from __future__ import annotations


def nothing_to_clean(leftovers) -> str:
    present = leftovers.present
    why = (f"{present} run director{'y' if present == 1 else 'ies'}, none left by a dbdrift that is gone"
           if present else "no run directories")
    return f"nothing to clean up in {leftovers.work_dir}: {why}\n"


def would_clean(orphan) -> str:
    running = f", server running (pid {orphan.server_pid})" if orphan.server_pid else ""
    return f"would clean {orphan.run_dir}: {orphan.describe()}{running}\n"


def cleaned(orphan, what: str) -> str:
    return f"{orphan.run_dir}: {what}\n"
