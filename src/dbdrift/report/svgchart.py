"""Horizontal ratio bar charts as inline SVG strings, drawn around a 1.0 axis, for the HTML report.

Pure string building (stdlib only): no scripts, no external fonts or stylesheets, so a chart
survives being copied out of the page. Every text is escaped here; callers pass plain strings.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

# fill, stroke per bar kind: verdicts of the timed runs, and directions of an instruction ratio
PALETTE = {
    "regression": ("#e8706f", "#a33"), "improvement": ("#4cc46f", "#276"),
    "no significant change": ("#b0b0b0", "#777"), "too noisy": ("url(#{hatch})", "#777"),
    "no interval": ("#eeeeee", "#999"), "more": ("#f0a35e", "#a60"), "fewer": ("#6fb6e0", "#269"),
    "same": ("#b0b0b0", "#777"),
}
CHAR_PX = 7.2  # width of one 12px monospace character
BAR_H, BAR_GAP, GROUP_GAP, TOP, AXIS_H, PLOT_W = 12, 4, 10, 8, 26, 420
SPACINGS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)


@dataclass(frozen=True)
class Bar:
    label: str  # beside the bar, e.g. the target
    value: float | None  # None: drawn as "no value"
    lower: float | None = None  # 95% interval, drawn as an error bar when both ends are known
    upper: float | None = None
    kind: str = "same"  # PALETTE key
    title: str = ""  # tooltip
    fill: str | None = None  # a colour that overrides the kind's (one per target)
    mark: str = ""  # written after the value, e.g. a verdict's mark


@dataclass(frozen=True)
class BarGroup:
    name: str  # e.g. the test; written once, left of its first bar
    bars: tuple[Bar, ...]


def scale(values: list[float], max_ticks: int = 8) -> tuple[float, float, float]:
    """(lo, hi, spacing): a tick spacing from SPACINGS and a range on its multiples that holds 1.0 and every value."""
    lo, hi = min([1.0, *values]), max([1.0, *values])
    span = max(hi - lo, 0.02)
    spacing = next((s for s in SPACINGS if span / s <= max_ticks - 2), None)
    spacing = spacing or 10.0 ** math.ceil(math.log10(span / (max_ticks - 2)))  # ratios past 100x: a power of ten
    lo = math.floor(lo / spacing - 1e-9) * spacing
    hi = math.ceil(hi / spacing + 1e-9) * spacing
    if lo == 1.0:
        lo -= spacing
    if hi == 1.0:
        hi += spacing
    return max(lo, 0.0), hi, spacing


def axis_spacing(lo: float, hi: float, max_ticks: int = 9) -> float:
    """The finest spacing of SPACINGS that puts at most `max_ticks` ticks on [lo, hi]."""
    return next((s for s in SPACINGS if (hi - lo) / s <= max_ticks - 1 + 1e-9), SPACINGS[-1])


def label_columns(groups: list[BarGroup]) -> tuple[float, float]:
    """(name column, label column) widths in px that hold every group name and bar label given:
    pass the page's groups, and every chart of the page puts its plot at one x."""
    name_w = max([len(g.name) for g in groups] + [4]) * CHAR_PX + 12
    label_w = max([len(b.label) for g in groups for b in g.bars] + [4]) * CHAR_PX + 10
    return name_w, label_w


def ratio_chart(groups: list[BarGroup], chart_id: str, caption: str, digits: int = 2,
                axis: tuple[float, float] | None = None, columns: tuple[float, float] | None = None) -> str:
    """One bar per Bar, from 1.0 to its value, error bar on [lower, upper], value text at the right.
    `axis` fixes the range and `columns` the label columns (label_columns of the page's groups), so
    that the charts of one page share one x scale and equal values line up; else both are fitted."""
    numbers = [v for g in groups for b in g.bars for v in (b.value, b.lower, b.upper)
               if v is not None and math.isfinite(v)]
    if axis:
        lo, hi = axis
        spacing = axis_spacing(lo, hi)
    else:
        lo, hi, spacing = scale(numbers)
    name_w, label_w = columns or label_columns(groups)
    left = name_w + label_w
    value_w = (2 * 3 + 16) * CHAR_PX  # room for three digits whatever `digits`: one width for every chart

    def x(v: float) -> float:
        return left + (min(max(v, lo), hi) - lo) / (hi - lo) * PLOT_W

    body, y = [], TOP
    for group in groups:
        body.append(_text(4, y + BAR_H - 2, group.name, "start", "font-weight:bold"))
        for bar in group.bars:
            body += _bar(bar, x, (lo, hi), y, name_w, left + PLOT_W + 8, digits, chart_id)
            y += BAR_H + BAR_GAP
        y += GROUP_GAP - BAR_GAP
    width, height = left + PLOT_W + value_w, y + AXIS_H
    grid = _grid(lo, hi, spacing, x, TOP - 4, y)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="{width:.0f}" '
            f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" aria-label="{escape(caption)}">'
            f"<title>{escape(caption)}</title>"
            f'<defs><pattern id="{chart_id}-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
            f'patternTransform="rotate(45)"><rect width="6" height="6" fill="#e4e4e4"/>'
            f'<line x1="0" y1="0" x2="0" y2="6" stroke="#999" stroke-width="2"/></pattern></defs>'
            f'<g font-family="ui-monospace,Menlo,Consolas,monospace" font-size="12">'
            + "".join(grid + body) + "</g></svg>")


def _bar(bar: Bar, x: Callable[[float], float], axis: tuple[float, float], y: float, name_w: float, value_x: float,
         digits: int, chart_id: str) -> list[str]:
    out = [_text(name_w, y + BAR_H - 2, bar.label, "start", "fill:#444")]
    tip = f"<title>{escape(bar.title)}</title>" if bar.title else ""
    if bar.value is None or not math.isfinite(bar.value):
        out.append(_text(x(1.0) + 4, y + BAR_H - 2, "no value", "start", "fill:#888;font-style:italic"))
        return out
    fill, stroke = PALETTE.get(bar.kind, PALETTE["same"])
    if bar.fill:
        fill, stroke = bar.fill, "#333"
    x0, x1 = sorted((x(1.0), x(bar.value)))
    out.append(f'<rect class="bar {escape(bar.kind.replace(" ", "-"))}" x="{x0:.1f}" y="{y:.1f}" '
               f'width="{max(x1 - x0, 1.0):.1f}" height="{BAR_H}" fill="{fill.format(hatch=chart_id + "-hatch")}" '
               f'stroke="{stroke}">{tip}</rect>')
    text = f"{bar.value:.{digits}f}"
    if bar.lower is not None and bar.upper is not None:
        out += _whisker(bar, x, axis, y + BAR_H / 2, digits)
        text += f" [{bar.lower:.{digits}f}, {bar.upper:.{digits}f}]"
    text += f" {bar.mark}" if bar.mark else ""
    out.append(_text(value_x, y + BAR_H - 2, text, "start", "fill:#222"))
    return out


def _whisker(bar: Bar, x: Callable[[float], float], axis: tuple[float, float], mid: float, digits: int) -> list[str]:
    """The 95% interval as an error bar; an end past the axis (x clamps it) is drawn as an arrow
    at the axis edge instead of a tick, and the whisker's tooltip gives the interval's true ends."""
    assert bar.lower is not None and bar.upper is not None
    a, b = x(bar.lower), x(bar.upper)
    clipped_low, clipped_high = bar.lower < axis[0] - 1e-9, bar.upper > axis[1] + 1e-9
    low = (f"M{a + 6:.1f} {mid - 4:.1f}L{a:.1f} {mid:.1f}L{a + 6:.1f} {mid + 4:.1f}" if clipped_low
           else f"M{a:.1f} {mid - 4:.1f}V{mid + 4:.1f}")
    high = (f"M{b - 6:.1f} {mid - 4:.1f}L{b:.1f} {mid:.1f}L{b - 6:.1f} {mid + 4:.1f}" if clipped_high
            else f"M{b:.1f} {mid - 4:.1f}V{mid + 4:.1f}")
    clipped = clipped_low or clipped_high
    css = "interval clipped" if clipped else "interval"
    tip = (f"<title>95% interval [{bar.lower:.{digits}f}, {bar.upper:.{digits}f}]: the whisker is clipped at the "
           "page's axis (an arrow marks each clipped end)</title>" if clipped else "")
    close = f">{tip}</path>" if tip else "/>"
    return [f'<path class="{css}" d="M{a:.1f} {mid:.1f}H{b:.1f}{low}{high}" stroke="{"#b00" if clipped else "#222"}" '
            f'stroke-width="1.2" fill="none"{close}']


def grid_ticks(lo: float, hi: float, spacing: float) -> list[float]:
    """The ticks on [lo, hi]: 1.0 and its multiples of `spacing` either side, so 1.00 keeps its line
    and label however the axis is widened (an axis from 0.25 by 0.2 would skip it)."""
    first, last = math.ceil((lo - 1.0) / spacing - 1e-9), math.floor((hi - 1.0) / spacing + 1e-9)
    return [round(1.0 + k * spacing, 9) for k in range(first, last + 1)]


def _grid(lo: float, hi: float, spacing: float, x: Callable[[float], float], top: float, bottom: float) -> list[str]:
    out = []
    for tick in grid_ticks(lo, hi, spacing):
        at_one = abs(tick - 1.0) < 1e-9
        color, width, css = ("#222", 1.5, ' class="one"') if at_one else ("#ddd", 1, "")
        out.append(f'<line{css} x1="{x(tick):.1f}" y1="{top:.1f}" x2="{x(tick):.1f}" y2="{bottom:.1f}" '
                   f'stroke="{color}" stroke-width="{width}"/>')
        out.append(_text(x(tick), bottom + 16, f"{tick:.{_tick_digits(spacing)}f}", "middle", "fill:#555"))
    return out


def _tick_digits(spacing: float) -> int:
    """Enough decimals that every multiple of `spacing` prints exactly (0.025 -> 3), at least 2 below 1."""
    return 0 if spacing >= 1 else max(2, len(f"{spacing:g}".partition(".")[2]))


def _text(x: float, y: float, text: str, anchor: str, style: str = "") -> str:
    style_attr = f' style="{style}"' if style else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{style_attr}>{escape(text)}</text>'


# --- time series: per-interval lines over a run ---------------------------------------------


@dataclass(frozen=True)
class Line:
    """One series of a time chart: y per x (seconds); None on either is a gap in the line."""

    name: str
    xs: tuple[float | None, ...]
    ys: tuple[float | None, ...]
    color: str


def nice_spacing(span: float, max_ticks: int = 6) -> float:
    """A 1, 2 or 5 × 10^k tick spacing that puts at most `max_ticks` ticks on [0, span]."""
    if span <= 0:
        return 1.0
    raw = span / max(max_ticks - 1, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw - 1e-12)


DOTS_UP_TO = 60  # a time chart marks each point of lines this short


def all_zero(lines: list[Line]) -> bool:
    """Every value of every line is 0 (or missing): a chart of them is a flat line at the bottom
    that says nothing a sentence does not say better (the callers say it instead of drawing)."""
    return not any(y for line in lines for y in line.ys if y is not None)


def time_chart(lines: list[Line], caption: str, unit: str, width: int = 560, height: int = 190) -> str:
    """Lines over seconds since the start of a run, y from 0 (rates and response times are never
    negative), a legend above the plot; an SVG string with `caption` as its accessible title."""
    left, right, top, bottom = 58, 12, 24, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = [x for line in lines for x in line.xs if x is not None]
    ys = [y for line in lines for y in line.ys if y is not None]
    x_hi = max(xs, default=1.0) or 1.0
    y_spacing = nice_spacing(max(ys, default=1.0) or 1.0)
    y_hi = y_spacing * math.ceil((max(ys, default=1.0) or 1.0) / y_spacing - 1e-9)
    x_spacing = nice_spacing(x_hi, 8)

    def px(x: float) -> float:
        return left + plot_w * x / x_hi

    def py(y: float) -> float:
        return top + plot_h - plot_h * min(y, y_hi) / y_hi

    body = []
    ticks = round(y_hi / y_spacing)
    for i in range(ticks + 1):
        y = i * y_spacing
        body.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="#e4e4e4"/>')
        body.append(_text(left - 5, py(y) + 4, _short(y), "end", "fill:#555"))
    x = 0.0
    while x <= x_hi + 1e-9:
        body.append(_text(px(x), top + plot_h + 14, _short(x), "middle", "fill:#555"))
        x += x_spacing
    body.append(_text(left + plot_w / 2, height - 4, "seconds", "middle", "fill:#555"))
    body.append(_text(4, top - 8, unit, "start", "fill:#555"))
    body.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="#999"/>'
                f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#999"/>')
    legend_x: float = left + plot_w
    for line in reversed(lines):
        label_w = CHAR_PX * len(line.name) + 18
        legend_x -= label_w
        body.append(f'<rect x="{legend_x:.1f}" y="{top - 17}" width="10" height="10" fill="{line.color}"/>'
                    + _text(legend_x + 14, top - 8, line.name, "start"))
        runs = _runs(line)
        for run in runs:
            points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in run)
            body.append(f'<polyline fill="none" stroke="{line.color}" stroke-width="1.5" points="{points}"/>')
        if sum(len(r) for r in runs) <= DOTS_UP_TO:  # few intervals: dots, so that a lone one shows
            body += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" fill="{line.color}"/>'
                     for run in runs for x, y in run]
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" aria-label="{escape(caption)}"><title>{escape(caption)}</title>'
            '<g font-family="ui-monospace,Menlo,Consolas,monospace" font-size="11">' + "".join(body) + "</g></svg>")


def _runs(line: Line) -> list[list[tuple[float, float]]]:
    """The line's points split at its gaps."""
    runs: list[list[tuple[float, float]]] = []
    current: list[tuple[float, float]] = []
    for x, y in zip(line.xs, line.ys):
        if y is None or x is None:
            if current:
                runs.append(current)
            current = []
        else:
            current.append((x, y))
    if current:
        runs.append(current)
    return runs


def _short(value: float) -> str:
    """An axis number: 1.2k, 35k, 2.5M, 0.5, 120."""
    a = abs(value)
    if a >= 1e6:
        return f"{value / 1e6:g}M"
    if a >= 1e3:
        return f"{value / 1e3:g}k"
    return f"{value:g}"
