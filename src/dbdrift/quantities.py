"""Parsing and formatting of quantities with units (durations, percentages, sizes). No I/O."""
from __future__ import annotations

import math
import re
import reprlib
from dataclasses import dataclass
from decimal import Decimal

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


_PERCENT = re.compile(r"^\s*(-?(?:\d+(?:\.\d*)?|\.\d+))\s*(%?)\s*$")
# A bare number below this (and above 0) is refused: until bare numbers were percents, 0.02 meant 2%,
# and read now as 0.02% it would quietly move a threshold a hundredfold (docs/guide.md, "Percentages").
LEAST_BARE_PERCENT = 0.1


@dataclass(frozen=True)
class PercentRange:
    """Where a percentage makes sense, as fractions: from `low` to `high`, each bound itself
    allowed or not (a minimum effect may be 0; an interval no wider than ±0% may not)."""

    low: float = 0.0
    high: float = 1.0
    low_allowed: bool = True
    high_allowed: bool = False

    def holds(self, share: float) -> bool:
        above = share >= self.low if self.low_allowed else share > self.low
        below = share <= self.high if self.high_allowed else share < self.high
        return above and below

    def describe(self) -> str:
        """`0.1% to 50%`, `more than 0% and less than 100%`, `0% or more and less than 100%`."""
        low, high = format_percent(self.low), format_percent(self.high)
        if self.low_allowed and self.high_allowed:
            return f"{low} to {high}"
        return (f"{low} or more" if self.low_allowed else f"more than {low}") + \
            (f" and {high} or less" if self.high_allowed else f" and less than {high}")


def parse_percent(value: object, what: str, span: PercentRange = PercentRange(), example: str = "2%") -> float:
    """A percentage, the one reading of every percentage dbdrift takes (command-line options and
    campaign keys alike) -> a fraction: a number is a percent whether or not it carries `%`, so
    `0.5`, `"0.5%"` and TOML `0.5` are 0.005, and `2`, `"2%"` and TOML `2` are 0.02.

    Refused, each with a hint: what is not a number (`2x`, `nan`, `1e3`), a negative number, a
    bare number above 0 and below LEAST_BARE_PERCENT (it needs its `%`: `0.05%`), and a value
    outside `span`. `example` is a valid value for the hints.
    """
    write = f'bare numbers are percents: write e.g. {example.removesuffix("%")} or "{example}"'
    if isinstance(value, str):
        match = _PERCENT.match(value)
        if not match:
            raise InputError(f"{what}: {brief_repr(value)} is not a percentage", write)
        digits, signed = match.group(1), bool(match.group(2))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        digits, signed = repr(value), False
    else:
        raise InputError(f"{what}: expected a percentage, got {brief_repr(value)}", write)
    number = _float(digits)
    if not math.isfinite(number) and not isinstance(value, str):  # a string too long for a float: out of range
        raise InputError(f"{what}: {brief_repr(value)} is not a finite percentage", write)
    if number < 0:
        raise InputError(f"{what}: {brief_repr(value)} is negative", f"use {span.describe()}, e.g. {example}")
    if not signed and 0 < number < LEAST_BARE_PERCENT:
        raise InputError(f"{what}: {brief_repr(value)} would be {number:g}%: a bare number is a percent, and one "
                         f"below {LEAST_BARE_PERCENT:g} needs its %",
                         f"did you mean {format_percent(number)}? to mean {number:g}%, write \"{number:g}%\"")
    share = float(Decimal(digits).scaleb(-2))  # 0.7 -> 0.007 as written, not 0.7 / 100 = 0.006999...
    if not span.holds(share):
        raise InputError(f"{what}: {brief_repr(value)} is out of range", f"use {span.describe()}, e.g. {example}")
    return share


def format_percent(share: float) -> str:
    """A fraction as a percentage is written (parse_percent reads it back): 0.02 -> `2%`,
    0.005 -> `0.5%`, 0.125 -> `12.5%`; four significant digits at most."""
    return f"{100 * share:.4g}%"


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
