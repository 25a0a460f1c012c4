"""Servers left running by a dbdrift process that is gone (kill -9, a closed terminal) and the run
directories such processes left behind: found, then stopped and removed one by one."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dbdrift.server import rundir
from dbdrift.server.rundir import Orphan


@dataclass(frozen=True)
class Leftovers:
    """The work directory, the run directories in it whose dbdrift is gone, and how many run
    directories it holds in all."""
    work_dir: Path
    orphans: list[Orphan]
    present: int


def find() -> Leftovers:
    work = rundir.work_dir()
    orphans = rundir.find_orphans(work)
    try:
        present = sum(1 for entry in work.iterdir() if entry.is_dir())
    except OSError:  # no work dir yet
        present = 0
    return Leftovers(work, orphans, present)


def clean(orphan: Orphan) -> str:
    """Stop the orphan's server and remove its run directory (its log is kept beside its store
    first); one line saying what was done."""
    return rundir.stop_orphan(orphan, remove=True)
