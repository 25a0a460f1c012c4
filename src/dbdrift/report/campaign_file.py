"""A campaign as the TOML file that would hold it (`dbdrift compare --print-campaign`); no I/O."""
from __future__ import annotations

import re

from dbdrift.model import JsonObject


def to_toml(data: JsonObject, verb: str = "compare") -> str:
    """The campaign as a file (the keys `verb` sets; everything else at its default)."""
    lines = [f"# built by `dbdrift {verb}`; `dbdrift docs campaign` lists every key"]
    for key, value in data.items():
        if key != "targets":
            lines.append(f"{key} = {_value(value)}")
    for target in data["targets"]:
        lines += ["", "[[targets]]"] + [f"{k} = {_value(v)}" for k, v in target.items()]
    return "\n".join(lines) + "\n"


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k if re.fullmatch(r'[A-Za-z0-9_-]+', k) else _value(k)} = {_value(v)}"
                                for k, v in value.items()) + " }"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
