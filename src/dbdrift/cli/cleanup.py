"""`dbdrift cleanup`: stop servers left running by a dbdrift process that is gone (kill -9,
a closed terminal) and remove the run directories such processes left behind.

`run` already stops such servers when it starts; this also clears what failed targets left
for inspection (their logs are kept beside their store first).
"""
from __future__ import annotations

import argparse
import sys

from dbdrift.app import cleanup as use_case


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true", help="only list what would be stopped and removed")


def main(args: argparse.Namespace) -> int:
    found = use_case.find()
    if not found.orphans:
        present = found.present
        why = (f"{present} run director{'y' if present == 1 else 'ies'}, none left by a dbdrift that is gone"
               if present else "no run directories")
        sys.stdout.write(f"nothing to clean up in {found.work_dir}: {why}\n")
        return 0
    for orphan in found.orphans:  # each line as its orphan is done: a slow stop shows what came before it
        running = f", server running (pid {orphan.server_pid})" if orphan.server_pid else ""
        if args.dry_run:
            sys.stdout.write(f"would clean {orphan.run_dir}: {orphan.describe()}{running}\n")
        else:
            sys.stdout.write(f"{orphan.run_dir}: {use_case.clean(orphan)}\n")
    return 0
