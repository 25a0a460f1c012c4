"""How every report format writes a number: ratios, absolute rates, sizes, fixed decimals and
milliseconds, each rule in one place so text, Markdown, CSV and HTML print the same figure the
same way. Pure string formatting; what a number means is decided by the caller."""
from __future__ import annotations


def fmt_fixed(value: float | None, digits: int, missing: str = "-", thousands: bool = False) -> str:
    """`value` with `digits` decimals (`1,234.5` with `thousands`); `missing` for None."""
    if value is None:
        return missing
    return f"{value:,.{digits}f}" if thousands else f"{value:.{digits}f}"


def fmt_ratio(value: float | None, digits: int = 2) -> str:
    """A ratio (rQPS, value ÷ reference): two decimals, three where counts are deterministic."""
    return fmt_fixed(value, digits)


def fmt_change(value: float | None, missing: str = "-") -> str:
    """A change as a fraction (the detectable change 0.034) in percent with one decimal: `3.4%`."""
    return missing if value is None else f"{100 * value:.1f}%"


def fmt_abs(value: float | None, status: str = "", thousands: bool = False) -> str:
    """An absolute rate (QPS, rows/s): whole from 100, two decimals below; the status ("failed",
    "not run") or "-" when there is none."""
    if value is None:
        return status or "-"
    return fmt_fixed(value, 0 if value >= 100 else 2, thousands=thousands)


def fmt_mb(value: int | None) -> str:
    """Bytes in MB (10^6) with one decimal, as the binary size tables give them."""
    return "-" if value is None else f"{value / 1e6:.1f}"


def fmt_rel(value: float | None, base: float | None) -> str:
    """value / base with two decimals; "-" when either is missing or the base is 0."""
    return "-" if value is None or not base else f"{value / base:.2f}"


def fmt_ms(us: float | None) -> str:
    """Microseconds as milliseconds with two decimals."""
    return "-" if us is None else f"{us / 1000:.2f}"
