"""`-o/--output FILE`: what a verb prints on stdout (its report, listing or plan) written to FILE
instead, checked before the verb starts and written only once the verb has finished, so a
refusal or an error leaves no half-written file behind."""
from __future__ import annotations

import argparse
import contextlib
import io
import os
from collections.abc import Iterator
from pathlib import Path

from dbdrift.errors import InputError, UserError

# The verbs whose stdout is a report: `report` and `history`, the report each measuring verb prints
# when it ends (compare, run, demo, calibrate, recheck), bisect's answer, and the listings and
# tables of campaigns, bloat, versions, catalog and system check. Not publish (a site, --out DIR),
# config (its actions print configuration files), docs, cleanup (what it did) or worker (a service).
VERBS = ("report", "history", "compare", "run", "demo", "calibrate", "recheck", "bisect", "campaigns", "bloat",
         "versions", "catalog", "system")


def add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", type=Path, metavar="FILE",
                        help="write what this verb prints on stdout to FILE instead, once the verb has finished "
                             "(nothing is written when it fails); FILE's folder must exist")


def check(path: Path, no_report: bool = False) -> None:
    """Refuse, before anything runs, a FILE that cannot be written: a directory, or one in a
    folder that does not exist or cannot be written; and -o beside --no-report, which would
    leave FILE empty (InputError, exit status 2)."""
    if no_report:
        raise InputError(f"-o {path} and --no-report: there would be no report to write",
                         "drop --no-report to write the report to the file, or -o to print none")
    folder = path.parent
    if path.is_dir():
        raise InputError(f"-o {path} is a directory", f"give -o a file, e.g. -o {path / 'report.txt'}")
    if not folder.exists():
        raise InputError(f"-o {path}: folder {folder} does not exist",
                         f"make it first (mkdir -p {folder}), or give -o a file in a folder that exists")
    if not folder.is_dir():
        raise InputError(f"-o {path}: {folder} is a file, not a folder", "give -o a file in a folder")
    probe = _scratch(path)
    try:
        probe.open("x").close()  # as the write at the end will (os.access does not see a read-only mount for root)
        probe.unlink()
    except OSError as exc:
        raise InputError(f"-o {path}: cannot write in {folder}: {exc.strerror}",
                         "give -o a file in a folder you can write (or print to stdout without -o)") from None


def _scratch(path: Path) -> Path:
    """Where FILE is written first, renamed to FILE once complete."""
    return path.with_name(f".{path.name}.{os.getpid()}.part")


@contextlib.contextmanager
def captured(path: Path | None) -> Iterator[None]:
    """Within the block, stdout is kept; when the block ends without an exception it is written to
    `path` in one step (a scratch file beside it, then renamed). Without a path, stdout stays."""
    if path is None:
        yield
        return
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        yield
    write(path, text.getvalue())


def write(path: Path, text: str) -> None:
    scratch = _scratch(path)
    try:
        scratch.write_text(text, encoding="utf-8")
        os.replace(scratch, path)
    except OSError as exc:
        scratch.unlink(missing_ok=True)
        raise UserError(f"cannot write {path}: {exc.strerror}",
                        "give -o a file in a writable folder with room, or print to stdout without -o") from None
