"""Parsing and formatting of quantities with units (durations, sizes). No I/O."""
from __future__ import annotations

import math
import re
import reprlib

from dbdrift.errors import InputError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$")
_FACTORS = {None: 1.0, "s": 1.0, "ms": 0.001, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_duration_s(value: object, what: str, *, positive: bool = False) -> float:
    """`60`, `60s`, `1.5m`, `500ms`, `2h` -> seconds. Bare numbers are seconds.

    Always finite and not negative; `positive=True` also refuses 0 (a measured duration).
    NaN, infinities and numbers too large for a float are errors, never returned.
    """
    if isinstance(value, bool):
        raise InputError(f"{what}: expected a duration, got {value!r}", "write e.g. 60 or \"60s\"")
    if isinstance(value, (int, float)):
        seconds = _float(value)
    else:
        match = _DURATION.match(value) if isinstance(value, str) else None
        if not match:
            raise InputError(f"{what}: {brief_repr(value)} is not a duration", "write e.g. 60, \"60s\", \"2m\"")
        seconds = _float(match.group(1)) * _FACTORS[match.group(2)]
    if not math.isfinite(seconds):
        raise InputError(f"{what}: {brief_repr(value)} is not a finite duration",
                         "write a number of seconds or a number with a unit, e.g. 60, \"60s\", \"2h\"")
    if seconds < 0:
        raise InputError(f"{what}: duration must not be negative, got {brief_repr(value)}", "use 0 or more")
    if positive and seconds == 0:
        raise InputError(f"{what}: duration must be more than 0, got {brief_repr(value)}",
                         "this time is measured: write e.g. 60 or \"60s\"")
    return seconds


def parse_share(text: str) -> float:
    """A share written as text, the one reading of a percentage for the command line and campaign
    strings alike: `2%` and `2` (a number of 1 or more is a percent) are 0.02, and so is `0.02`.
    ValueError when it is not a number."""
    body = text.strip()
    value = float(body.rstrip("%").strip())
    if not math.isfinite(value):
        raise ValueError(text)
    return value / 100.0 if body.endswith("%") or value >= 1 else value


def _float(number: int | float | str) -> float:
    """float(), with numbers beyond a float's range as infinity (not OverflowError)."""
    try:
        return float(number)
    except OverflowError:
        return math.inf


def brief_repr(value: object) -> str:
    """A bad value for a message: repr, shortened; integers too long to print as their size."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"<a {value.bit_length()}-bit integer>"
    return reprlib.repr(value)


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
