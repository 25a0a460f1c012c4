"""Options several verbs share, so they read and mean the same everywhere."""
from __future__ import annotations

import argparse
import sys

from dbdrift.errors import UserError
from dbdrift.app.inputs import parse_duration_s
from dbdrift.app.process import open_read_only


def add_tests(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("-t", "--tests", action="append", metavar="LIST",
                        help=f"{what}: microbenchmark names or groups, comma-separated or repeated "
                             "(e.g. --tests point,update-index; default32, all42; `dbdrift catalog` lists them)")


def split_list(values: list[str] | None) -> list[str]:
    """`--tests a,b --tests c` -> [a, b, c]; an empty item is refused."""
    names = [item.strip() for value in values or () for item in value.split(",")]
    if not all(names):
        raise UserError(f"--tests {','.join(values or ())!r} has an empty name",
                        "separate names with single commas, e.g. --tests point,update-index", exit_code=2)
    return names


def add_format(parser: argparse.ArgumentParser, choices: tuple[str, ...], what: str) -> None:
    """--format with its choices and what each gives in the help; text is the default."""
    parser.add_argument("--format", choices=choices, default="text", help=f"{what} (default text)")


def add_color(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="color rQPS <= 0.95 red and >= 1.05 green in the text report (auto: on a terminal, "
                             "unless NO_COLOR is set)")


def add_verbosity(parser: argparse.ArgumentParser) -> None:
    """-q/--quiet and -v/--verbose for the progress lines on stderr (the report on stdout stays)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=-1, default=0,
                       help="no progress: no bar, no line per step (failed steps, notes and errors still show)")
    group.add_argument("-v", "--verbose", dest="verbosity", action="store_const", const=1,
                       help="a line as each step starts, with its expected time, also where stderr is no terminal")


def duration(flag: str, *, positive: bool = True):
    """An argparse type: `90`, `90s`, `2m`, `1.5h`, `500ms` -> seconds, read as a campaign file
    reads its durations (units.parse_duration_s); `positive` refuses 0 (a measured time)."""
    def parse(text: str) -> float:
        try:
            return parse_duration_s(text, flag, positive=positive)
        except UserError as exc:
            raise argparse.ArgumentTypeError(f"{exc.message.removeprefix(flag + ': ')} ({exc.hint})") from None

    parse.__name__ = "duration"
    return parse


def percent(text: str) -> float:
    """An argparse type: `5%`, `5` (a number of 1 or more is read as percent) or `0.05` -> 0.05;
    0% up to, not including, 100%."""
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage (write 2%, 2 or 0.02)") from None
    if text.endswith("%") or value >= 1:
        value /= 100.0
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0% and 100%")
    return value


def open_store(path):
    """The store at `path` opened read-only (app/process.py), its notes shown on stderr."""
    store = open_read_only(path)
    for note in store.notes:
        sys.stderr.write(note + "\n")
    return store
