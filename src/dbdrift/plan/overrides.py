"""`--set key=value`: change a campaign's keys from the command line before it is validated.

A key is a top-level campaign key (`rows=100000`), a key of a table (`insert_benchmark.query_s=60`)
or a key of one target (`targets.pg18.settings.shared_buffers="1GB"`; `targets.*.` for every target;
what follows `settings.` is one server setting, dots included). The value is read as a TOML value
(`17`, `1.5`, `true`, `["point", "writes"]`, `"text"`); a value that is not valid TOML is taken as
a string, so `order=sequential` works without quotes. The campaign is then validated as if the
file had said it.
"""
from __future__ import annotations

import copy
import tomllib

from dbdrift.errors import InputError
from dbdrift.plan.fields import TomlTable

SET_HINT = "write --set KEY=VALUE, e.g. --set rows=100000 or --set targets.pg18.settings.jit=false"


def parse_value(text: str) -> object:
    """A TOML value, else the text itself as a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return text


def apply_sets(data: TomlTable, assignments: list[str] | tuple[str, ...]) -> dict[str, object]:
    """A copy of the campaign's TOML data with each KEY=VALUE applied in order."""
    if not assignments:
        return dict(data)
    copied = dict(copy.deepcopy(data))
    for assignment in assignments:
        key, sep, raw = assignment.partition("=")
        path = [part.strip() for part in key.split(".")]
        if not sep or not all(path):
            raise InputError(f"--set {assignment!r} is not KEY=VALUE", SET_HINT)
        value = parse_value(raw.strip())
        if path[0] == "targets":
            _set_target(copied, path[1:], value, assignment)
        else:
            _set(copied, path, value, assignment)
    return copied


def _set_target(data: TomlTable, path: list[str], value: object, assignment: str) -> None:
    targets = data.get("targets")
    if len(path) < 2 or not isinstance(targets, list):
        raise InputError(f"--set {assignment!r}: name a target and its key, as targets.NAME.KEY=VALUE",
                         "e.g. --set targets.pg18.settings.jit=false, or targets.*.KEY for every target")
    names = [t.get("name") for t in targets if isinstance(t, dict)]
    # target names may hold dots (pg18.4): the longest leading part that names a target is the name
    cut = next((i for i in range(len(path) - 1, 0, -1) if ".".join(path[:i]) in names + ["*"]), None)
    if cut is None:
        raise InputError(f"--set {assignment!r}: no target named {path[0]!r}",
                         f"targets: {', '.join(map(str, names))}, or * for all")
    name = ".".join(path[:cut])
    for target in targets:
        if isinstance(target, dict) and name in ("*", target.get("name")):
            _set(target, path[cut:], value, assignment)


def _set(table: dict[str, object], path: list[str], value: object, assignment: str) -> None:
    if "settings" in path[:-1]:  # server setting names hold dots (auto_explain.log_min_duration): one key
        at = path.index("settings") + 1
        path = path[:at] + [".".join(path[at:])]
    for part in path[:-1]:
        inner = table.setdefault(part, {})
        if not isinstance(inner, dict):
            raise InputError(f"--set {assignment!r}: {part} is a value, not a table", SET_HINT)
        table = inner
    table[path[-1]] = value
