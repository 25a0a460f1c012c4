"""`dbdrift cleanup`: stop servers left running by a dbdrift process that is gone (kill -9,
a closed terminal) and remove the run directories such processes left behind.

`run` already stops such servers when it starts; this also clears what failed targets left
for inspection (their logs are kept beside their store first).
"""
from __future__ import annotations

import argparse
import sys

from dbdrift.app import cleanup as use_case
from dbdrift.report import cleanup as render


EXAMPLES = """\
examples:
  dbdrift cleanup --dry-run                     what would be stopped and removed
  dbdrift cleanup                               stop those servers, remove those run directories

exit status: 0 done (or nothing to clean up), 1 an error
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("--dry-run", action="store_true", help="only list what would be stopped and removed")


def main(args: argparse.Namespace) -> int:
    found = use_case.find()
    if not found.orphans:
        sys.stdout.write(render.nothing_to_clean(found))
    for orphan in found.orphans:  # each line as its orphan is done: a slow stop shows what came before it
        if args.dry_run:
            sys.stdout.write(render.would_clean(orphan))
        else:
            sys.stdout.write(render.cleaned(orphan, use_case.clean(orphan)))
    return 0
