"""Options several verbs share, so they read and mean the same everywhere."""
from __future__ import annotations

import argparse

from dbdrift.errors import UserError


def add_tests(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--tests", action="append", metavar="LIST",
                        help=f"{what}: microbenchmark names or groups, comma-separated or repeated "
                             "(e.g. --tests point,update-index; default32, all42; `dbdrift catalog` lists them)")


def split_list(values: list[str] | None) -> list[str]:
    """`--tests a,b --tests c` -> [a, b, c]; an empty item is refused."""
    names = [item.strip() for value in values or () for item in value.split(",")]
    if not all(names):
        raise UserError(f"--tests {','.join(values or ())!r} has an empty name",
                        "separate names with single commas, e.g. --tests point,update-index", exit_code=2)
    return names
