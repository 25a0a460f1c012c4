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


def open_store(path):
    """The store at `path` for reading: one that does not exist is an error, never created empty."""
    from dbdrift.store.store import Store

    if not path.exists():
        raise UserError(f"store {path} does not exist",
                        "pass --store PATH, or make one with `dbdrift demo`, `dbdrift compare 17.10 18.4` or "
                        "`dbdrift run FILE`", exit_code=2)
    return Store(path)
