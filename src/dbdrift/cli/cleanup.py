"""`dbdrift cleanup`: stop servers left running by a dbdrift process that is gone (kill -9,
a closed terminal) and remove the run directories such processes left behind.

`run` already stops such servers when it starts; this also clears what failed targets left
for inspection (their logs are kept beside their store first).
"""
from __future__ import annotations

import argparse
import sys

from dbdrift.server import rundir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true", help="only list what would be stopped and removed")


def main(args: argparse.Namespace) -> int:
    work = rundir.work_dir()
    orphans = rundir.find_orphans(work)
    if not orphans:
        try:
            present = sum(1 for entry in work.iterdir() if entry.is_dir())
        except OSError:  # no work dir yet
            present = 0
        why = f"{present} run director{'y' if present == 1 else 'ies'}, none left by a dbdrift that is gone" if present else "no run directories"
        sys.stdout.write(f"nothing to clean up in {work}: {why}\n")
        return 0
    for orphan in orphans:
        running = f", server running (pid {orphan.server_pid})" if orphan.server_pid else ""
        if args.dry_run:
            sys.stdout.write(f"would clean {orphan.run_dir}: {orphan.describe()}{running}\n")
        else:
            sys.stdout.write(f"{orphan.run_dir}: {rundir.stop_orphan(orphan, remove=True)}\n")
    return 0
