"""Absolute values over ordered columns (versions, or campaigns in time order) as an inline SVG
string, for the published site: one line per series, each point with its 95% interval as an
error bar and a link to the page of the campaign that measured it, change points as dashed
lines between the columns they fall between. Pure string building; no analysis, no scripts."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

from dbdrift.report.svgchart import CHAR_PX, nice_spacing, _short

MAX_X_LABELS = 24  # more columns than this: every k-th label, so slanted labels never overlap
LEFT, RIGHT, TOP, PLOT_H = 64, 14, 26, 200
LABEL_SIN, LABEL_COS = 0.643, 0.766  # sin and cos 40°, the x labels' slant
MIN_SPAN = 0.02  # the y axis spans at least ±2% of the values' middle


@dataclass(frozen=True)
class TrendPoint:
    column: int  # index into the chart's columns
    value: float
    lower: float | None
    upper: float | None
    href: str  # the page of the campaign that measured it ("" for none)
    tip: str  # the tooltip: what the point is, its value, its campaigns


@dataclass(frozen=True)
class TrendChange:
    column: int  # the change lies between column - 1 and column
    tip: str
    regression: bool


@dataclass(frozen=True)
class TrendLine:
    name: str
    color: str
    points: tuple[TrendPoint, ...]
    changes: tuple[TrendChange, ...] = ()


def trend_chart(columns: list[str], lines: list[TrendLine], caption: str, y_title: str, higher_better: bool,
                width: int = 600, legend: bool = False, min_span: float = MIN_SPAN) -> str:
    """The chart: y from a nice tick below the lowest interval end to one above the highest (not
    from 0: a 3% step must show), yet at least ± `min_span` of the values' middle (a 0.2% wobble
    must not fill the plot as a real step would), x the columns in order, slanted labels thinned
    to at most MAX_X_LABELS; `legend` names each line above the plot (a chart of several lines)."""
    every = max(1, -(-len(columns) // MAX_X_LABELS))
    shown = [c for i, c in enumerate(columns) if i % every == 0]
    longest = max([len(c) for c in shown] + [4]) * CHAR_PX
    # the first slanted label reaches left of its column by its length x cos 40°: the plot starts past it
    left = max(LEFT, longest * LABEL_COS - (width - LEFT - RIGHT) / max(len(columns), 1) / 2 + 6)
    plot_w = width - left - RIGHT
    ends = [v for line in lines for p in line.points for v in (p.value, p.lower, p.upper) if v is not None]
    lo, hi = y_range(ends, min_span)
    spacing = nice_spacing(max(hi - lo, 1e-9), 6)
    lo, hi = max(0.0, math.floor(lo / spacing) * spacing), math.ceil(hi / spacing) * spacing
    if hi <= lo:
        hi = lo + spacing
    label_h = longest * LABEL_SIN + 16
    legend_h = 16 * ((len(lines) + 3) // 4) if legend else 0
    top = TOP + legend_h
    height = top + PLOT_H + label_h + 8
    column_w = plot_w / max(len(columns), 1)

    def x(i: float) -> float:
        return left + column_w * (i + 0.5)

    def y(v: float) -> float:
        return top + PLOT_H - (min(max(v, lo), hi) - lo) / (hi - lo) * PLOT_H

    body = []
    tick = lo
    while tick <= hi + spacing * 1e-6:
        body.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#e4e4e4"/>'
                    f'<text x="{left - 5}" y="{y(tick) + 4:.1f}" text-anchor="end" style="fill:#555">'
                    f"{escape(_short(round(tick, 9)))}</text>")
        tick += spacing
    body.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + PLOT_H}" stroke="#999"/>')
    mid = top + PLOT_H / 2
    body.append(f'<text x="12" y="{mid:.1f}" text-anchor="middle" transform="rotate(-90 12 {mid:.1f})" '
                f'style="fill:#555">{escape(y_title)}</text>')
    worse, better = ("↓ worse", "↑ better") if higher_better else ("↑ worse", "↓ better")
    body.append(f'<text x="{left + plot_w - 4}" y="{top - 6}" text-anchor="end" style="fill:#555">'
                f"{escape(better)}, {escape(worse)}</text>")
    for i, c in enumerate(columns):
        if i % every == 0:
            ly = top + PLOT_H + 12
            body.append(f'<text x="{x(i):.1f}" y="{ly}" text-anchor="end" transform="rotate(-40 {x(i):.1f} {ly})">'
                        f"{escape(c)}</text>")
    for n, line in enumerate(lines):
        body += _line(line, x, y, top)
        if legend:
            lx, ly = left + (n % 4) * (plot_w / 4), TOP + 16 * (n // 4)
            body.append(f'<rect x="{lx:.1f}" y="{ly - 9}" width="10" height="10" fill="{line.color}"/>'
                        f'<text x="{lx + 14:.1f}" y="{ly}">{escape(line.name)}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="{width}" '
            f'height="{height:.0f}" viewBox="0 0 {width} {height:.0f}" aria-label="{escape(caption)}">'
            f'<title>{escape(caption)}</title><g font-family="ui-monospace,Menlo,Consolas,monospace" font-size="11">'
            + "".join(body) + "</g></svg>")


def y_range(values: list[float], min_span: float) -> tuple[float, float]:
    """The lowest and highest of `values`, widened evenly to at least ± `min_span` (relative) of
    their middle, so how far a line moves on the plot says how far it moved in fact."""
    if not values:
        return 0.0, 1.0
    lo, hi = min(values), max(values)
    middle = (lo + hi) / 2
    half = max((hi - lo) / 2, abs(middle) * min_span)
    return middle - half, middle + half


def _line(line: TrendLine, x: Callable[[float], float], y: Callable[[float], float], top: float) -> list[str]:
    """A line's polyline, its change points, then its points (on top, so each stays clickable)."""
    out = []
    if len(line.points) > 1:
        out.append(f'<polyline fill="none" stroke="{line.color}" stroke-width="1.5" points="'
                   + " ".join(f"{x(p.column):.1f},{y(p.value):.1f}" for p in line.points) + '"/>')
    for c in line.changes:
        cx = x(c.column - 0.5)
        color = "#a33" if c.regression else "#276"
        out.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{top}" y2="{top + PLOT_H}" stroke="{color}" '
                   f'stroke-width="1.5" stroke-dasharray="5 3"><title>{escape(c.tip)}</title></line>')
    dots = []  # in a group that sets the line's colour once: a chart of 2,000 points stays small
    for p in line.points:
        cx = x(p.column)
        bar = (f'<path d="M{cx:.1f} {y(p.lower):.1f}V{y(p.upper):.1f}"/>'
               if p.lower is not None and p.upper is not None else "")
        dot = f'{bar}<circle cx="{cx:.1f}" cy="{y(p.value):.1f}" r="3"><title>{escape(p.tip)}</title></circle>'
        dots.append(f'<a href="{escape(p.href)}">{dot}</a>' if p.href else dot)
    out.append(f'<g fill="{line.color}" stroke="{line.color}">{"".join(dots)}</g>')
    return out
