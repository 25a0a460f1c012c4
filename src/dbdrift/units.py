"""Parsing and formatting of quantities with units (durations, sizes). No I/O."""
from __future__ import annotations

import re

from dbdrift.errors import UserError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$")
_FACTORS = {None: 1.0, "s": 1.0, "ms": 0.001, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_duration_s(value: object, what: str) -> float:
    """`60`, `60s`, `1.5m`, `500ms`, `2h` -> seconds. Bare numbers are seconds."""
    if isinstance(value, bool):
        raise UserError(f"{what}: expected a duration, got {value!r}", "write e.g. 60 or \"60s\"")
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        match = _DURATION.match(str(value))
        if not match:
            raise UserError(f"{what}: {value!r} is not a duration", "write e.g. 60, \"60s\", \"2m\"")
        seconds = float(match.group(1)) * _FACTORS[match.group(2)]
    if seconds < 0:
        raise UserError(f"{what}: duration must not be negative, got {value!r}", "use 0 or more")
    return seconds


def format_duration(seconds: float) -> str:
    """Short human form used in progress lines: 45s, 3m05s, 1h02m."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{sec:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
