"""Every line and bar chart of the reports and the published site, as inline SVG strings:

- ratio_chart: horizontal bars from 1.0 to each ratio, with its interval (the HTML report);
- xy_chart: lines over a continuous x, linear or log on either axis (time_chart: per-interval
  values over the seconds of a run; the vector report's recall against QPS);
- columns_chart: values over ordered columns, versions or campaigns, with intervals, links and
  change points (`dbdrift history` and the published site).

One Plot draws them all: axes, ticks, gridlines, lines, points, change rules and legends, so the
charts share one look and one hover contract: each point names its value in a <title> (read
without scripts), and a line too long for dots carries its values in `data-v`. CHART_SCRIPT and
CHART_CSS, which `page` inlines once in every page that holds a chart, turn those into a crosshair
with a tooltip and let a chart be zoomed (drag a box, or Ctrl/Shift + wheel; double-click resets).

Pure string building (stdlib only): nothing fetched, no fonts or stylesheets, so a chart survives
being copied out of the page. Every text is escaped here; callers pass plain strings."""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from html import escape

FONT = "ui-monospace,Menlo,Consolas,monospace"
CHAR_PX = 7.2  # width of one 12px monospace character
LABEL_SIN, LABEL_COS = 0.643, 0.766  # sin and cos 40°, the slant of column labels


# --- the pieces every chart is made of --------------------------------------------------------


def text(x: float, y: float, s: str, anchor: str = "start", style: str = "", css: str = "",
         transform: str = "") -> str:
    """A <text> at (x, y); `css` its class, `transform` e.g. a rotation."""
    cls = f' class="{css}"' if css else ""
    style_attr = f' style="{style}"' if style else ""
    turn = f' transform="{transform}"' if transform else ""
    return f'<text{cls} x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{turn}{style_attr}>{escape(s, quote=False)}</text>'


def document(width: float, height: float, caption: str, body: Iterable[str], font_size: int, defs: str = "",
             data: str = "") -> str:
    """The <svg> around `body`: `caption` as its accessible name and title, one font; `data` extra
    attributes (the plot's box and units, for the hover script)."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="{width:.0f}" '
            f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" aria-label="{escape(caption)}"{data}>'
            f"<title>{escape(caption)}</title>{defs}"
            f'<g font-family="{FONT}" font-size="{font_size}">' + "".join(body) + "</g></svg>")


def short(value: float) -> str:
    """An axis number: 1.2k, 35k, 2.5M, 0.5, 120."""
    a = abs(value)
    if a >= 1e6:
        return f"{value / 1e6:g}M"
    if a >= 1e3:
        return f"{value / 1e3:g}k"
    return f"{value:g}"


def nice_spacing(span: float, max_ticks: int = 6) -> float:
    """A 1, 2 or 5 × 10^k tick spacing that puts at most `max_ticks` ticks on [0, span]."""
    if span <= 0:
        return 1.0
    raw = span / max(max_ticks - 1, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw - 1e-12)


def steps(lo: float, hi: float, spacing: float) -> list[float]:
    """lo, lo + spacing, … up to hi (rounded, so 0.1 steps print as 0.3, not 0.30000000000000004)."""
    return [round(lo + k * spacing, 9) for k in range(int((hi - lo) / spacing + 1e-6) + 1)]


@dataclass(frozen=True)
class Scale:
    """Data from `lo` to `hi` onto pixels from `start` to `end` (a y scale runs bottom to top),
    clamped to the range; `log`: by log10."""

    lo: float
    hi: float
    start: float
    end: float
    log: bool = False

    def __call__(self, v: float) -> float:
        v = min(max(v, self.lo), self.hi)
        a, b = (math.log10(self.lo), math.log10(self.hi)) if self.log else (self.lo, self.hi)
        at = math.log10(v) if self.log else v
        return self.start + (at - a) / ((b - a) or 1.0) * (self.end - self.start)


@dataclass(frozen=True)
class Point:
    """One value of a line: x in the chart's x units (a column's index on a columns chart),
    its interval, the hover text (the chart makes one when empty) and a link."""

    x: float
    y: float
    tip: str = ""
    lower: float | None = None
    upper: float | None = None
    href: str = ""


@dataclass(frozen=True)
class Rule:
    """A dashed vertical line across the plot at x: a change point, with what it is on hover."""

    x: float
    color: str
    tip: str


@dataclass(frozen=True)
class Series:
    """A line: its points (None breaks it), drawn as one polyline per unbroken run through
    `line` instead when given (a frontier through some of the points), a dot of radius `dot` per
    point (0: none; a line's values are then in `data-v` for the hover script), its change rules."""

    name: str
    color: str
    points: tuple[Point | None, ...]
    line: tuple[Point, ...] | None = None
    width: float = 1.5
    dash: str = ""
    dot: float = 2.5
    rules: tuple[Rule, ...] = ()


@dataclass
class Plot:
    """The plot box of one chart and what is drawn in it, in order."""

    x: Scale
    y: Scale
    left: float
    top: float
    width: float
    height: float
    x_unit: str = ""
    y_unit: str = ""
    body: list[str] = field(default_factory=list)

    @property
    def bottom(self) -> float:
        return self.top + self.height

    @property
    def right(self) -> float:
        return self.left + self.width

    def grid_y(self, ticks: Iterable[tuple[float, str]], strong: float | None = None) -> None:
        """A gridline and its label left of the plot per (value, label); `strong` the value whose line is darker."""
        for v, label in ticks:
            at = self.y(v)
            color = "#999" if strong is not None and abs(v - strong) < 1e-9 else "#e4e4e4"
            self.body.append(f'<line x1="{self.left:.1f}" x2="{self.right:.1f}" y1="{at:.1f}" y2="{at:.1f}" '
                             f'stroke="{color}"/>' + text(self.left - 5, at + 4, label, "end", "fill:#555"))

    def ticks_x(self, ticks: Iterable[tuple[float, str]]) -> None:
        for v, label in ticks:
            self.body.append(text(self.x(v), self.bottom + 14, label, "middle", "fill:#555"))

    def slanted_x(self, labels: Iterable[tuple[float, str]]) -> None:
        """Column labels slanted by 40°, each ending under its column."""
        ly = self.bottom + 12
        for v, label in labels:
            self.body.append(text(self.x(v), ly, label, "end", transform=f"rotate(-40 {self.x(v):.1f} {ly:.1f})"))

    def axes(self, bottom: bool = True) -> None:
        """The y axis line, and the x axis line unless the gridline at the bottom serves."""
        self.body.append(f'<line x1="{self.left:.1f}" x2="{self.left:.1f}" y1="{self.top:.1f}" y2="{self.bottom:.1f}" '
                         'stroke="#999"/>')
        if bottom:
            self.body.append(f'<line x1="{self.left:.1f}" x2="{self.right:.1f}" y1="{self.bottom:.1f}" '
                             f'y2="{self.bottom:.1f}" stroke="#999"/>')

    def y_title(self, title: str) -> None:
        """The y axis title, turned up the left edge."""
        mid = self.top + self.height / 2
        self.body.append(text(12, mid, title, "middle", "fill:#555", "y-title", f"rotate(-90 12 {mid:.1f})"))

    def direction(self, higher_better: bool) -> None:
        """Which way is better and which worse, above the plot's right end."""
        better, worse = ("↑ better", "↓ worse") if higher_better else ("↓ better", "↑ worse")
        self.body.append(f'<text class="direction" x="{self.right - 4:.1f}" y="{self.top - 6:.1f}" text-anchor="end">'
                         f'<tspan class="better" style="fill:#276">{better}</tspan>, '
                         f'<tspan class="worse" style="fill:#a33;font-weight:bold">{worse}</tspan></text>')

    def rule(self, r: Rule) -> None:
        at = self.x(r.x)
        self.body.append(f'<line class="change" x1="{at:.1f}" x2="{at:.1f}" y1="{self.top:.1f}" y2="{self.bottom:.1f}" '
                         f'stroke="{r.color}" stroke-width="1.5" stroke-dasharray="5 3"><title>{escape(r.tip)}</title>'
                         "</line>")

    def series(self, s: Series) -> None:
        """The line (a polyline per unbroken run), its rules, then its dots on top, each with its
        hover text and its link; a line of one point is a ringed dot, so it shows alone."""
        runs = [list(s.line)] if s.line is not None else _runs(s.points)
        dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
        for run in runs if sum(p is not None for p in s.points) > 1 or s.line is not None else []:
            values = "" if s.dot else (f' data-name="{escape(s.name)}" data-v="'
                                       + " ".join(f"{p.x:.6g},{p.y:.6g}" for p in run) + '"')
            self.body.append(f'<polyline fill="none" stroke="{s.color}" stroke-width="{s.width:g}"{dash} points="'
                             + " ".join(f"{self.x(p.x):.1f},{self.y(p.y):.1f}" for p in run) + f'"{values}/>')
        for r in s.rules:
            self.rule(r)
        shown = [p for p in s.points if p is not None]
        if not s.dot or not shown:
            return
        lone = ' stroke="#222" stroke-width="1"' if len(shown) == 1 else ""
        dots = []  # in a group that sets the line's colour once: a chart of 2,000 points stays small
        for p in shown:
            cx = self.x(p.x)
            bar = (f'<path d="M{cx:.1f} {self.y(p.lower):.1f}V{self.y(p.upper):.1f}"/>'
                   if p.lower is not None and p.upper is not None else "")
            tip = p.tip or f"{s.name}: {_value(p.y)} {self.y_unit} at {_value(p.x)} {self.x_unit}".replace("  ", " ")
            dot = (f'{bar}<circle cx="{cx:.1f}" cy="{self.y(p.y):.1f}" r="{s.dot + 1 if lone else s.dot:g}"{lone}>'
                   f"<title>{escape(tip)}</title></circle>")
            dots.append(f'<a href="{escape(p.href)}">{dot}</a>' if p.href else dot)
        self.body.append(f'<g fill="{s.color}" stroke="{s.color}">{"".join(dots)}</g>')

    def svg(self, width: float, height: float, caption: str, font_size: int = 11) -> str:
        box = f' data-plot="{self.left:.1f} {self.top:.1f} {self.width:.1f} {self.height:.1f}"'
        units = "".join(f' data-{axis}-unit="{escape(unit)}"' for axis, unit in (("x", self.x_unit), ("y", self.y_unit))
                        if unit)
        return document(width, height, caption, self.body, font_size, data=box + units)


def _runs(points: tuple[Point | None, ...]) -> list[list[Point]]:
    """The points split at their gaps."""
    runs: list[list[Point]] = [[]]
    for p in points:
        if p is None:
            runs.append([])
        else:
            runs[-1].append(p)
    return [r for r in runs if r]


def _value(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.4g}"


def legend_rows(entries: list[tuple[str, str, str]], x0: float, width: float) -> list[list[tuple[float, str, str, str]]]:
    """(name, colour, dash) entries laid out left to right from x0, wrapped at `width`: rows of
    (x, name, colour, dash)."""
    rows: list[list[tuple[float, str, str, str]]] = [[]]
    x = x0
    for name, color, dash in entries:
        w = CHAR_PX * len(name) + 30
        if rows[-1] and x + w > width:
            rows.append([])
            x = 4.0
        rows[-1].append((x, name, color, dash))
        x += w
    return rows


def legend_key(x: float, y: float, name: str, color: str, dash: str = "") -> str:
    """A legend entry whose baseline is y: a short stretch of the line (its dash too), its name."""
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<line class="legend" x1="{x:.1f}" x2="{x + 16:.1f}" y1="{y - 4:.1f}" y2="{y - 4:.1f}" stroke="{color}" '
            f'stroke-width="3"{dashed}/>' + text(x + 20, y, name))


# --- lines over a continuous x ---------------------------------------------------------------


@dataclass(frozen=True)
class Axis:
    """A continuous axis: its range, ticks as (value, label), title; `log`: by log10."""

    lo: float
    hi: float
    ticks: tuple[tuple[float, str], ...]
    title: str
    log: bool = False


def xy_chart(series: list[Series], caption: str, x: Axis, y: Axis, width: int = 560, height: int = 190,
             units: tuple[str, str] = ("", "")) -> str:
    """Lines over a continuous x: the y title top left, then the legend on the same row (wrapped
    when long), the plot, x ticks and title below; `units` (x, y) name the values on hover."""
    longest = max([len(label) for _, label in y.ticks] + [3])
    left, right, bottom = max(58.0, 14 + CHAR_PX * longest), 12, 34
    rows = legend_rows([(s.name, s.color, s.dash) for s in series], 4 + CHAR_PX * len(y.title) + 16, width - right)
    top = 24 + 16 * (len(rows) - 1)
    height += 16 * (len(rows) - 1)
    plot_w, plot_h = width - left - right, height - top - bottom
    plot = Plot(Scale(x.lo, x.hi, left, left + plot_w, x.log), Scale(y.lo, y.hi, top + plot_h, top, y.log),
                left, top, plot_w, plot_h, *units)
    plot.grid_y(y.ticks)
    plot.ticks_x(x.ticks)
    plot.body.append(text(left + plot_w / 2, height - 4, x.title, "middle", "fill:#555"))
    plot.body.append(text(4, 16, y.title, "start", "fill:#555"))
    plot.axes()
    for n, row in enumerate(rows):
        plot.body += [legend_key(lx, 16 + 16 * n, name, color, dash) for lx, name, color, dash in row]
    for s in series:
        plot.series(s)
    return plot.svg(width, height, caption)


@dataclass(frozen=True)
class Line:
    """One series of a time chart: y per x (seconds); None on either is a gap in the line."""

    name: str
    xs: tuple[float | None, ...]
    ys: tuple[float | None, ...]
    color: str


DOTS_UP_TO = 60  # a time chart marks each point of lines this short


def all_zero(lines: list[Line]) -> bool:
    """Every value of every line is 0 (or missing): a chart of them is a flat line at the bottom
    that says nothing a sentence does not say better (the callers say it instead of drawing)."""
    return not any(y for line in lines for y in line.ys if y is not None)


def time_chart(lines: list[Line], caption: str, unit: str, width: int = 560, height: int = 190) -> str:
    """Lines over seconds since the start of a run, y from 0 (rates and response times are never
    negative), a legend above the plot; an SVG string with `caption` as its accessible title."""
    xs = [x for line in lines for x in line.xs if x is not None]
    ys = [y for line in lines for y in line.ys if y is not None]
    x_hi = max(xs, default=1.0) or 1.0
    y_spacing = nice_spacing(max(ys, default=1.0) or 1.0)
    y_hi = y_spacing * math.ceil((max(ys, default=1.0) or 1.0) / y_spacing - 1e-9)
    x_ticks = tuple((v, short(v)) for v in steps(0.0, x_hi, nice_spacing(x_hi, 8)))
    y_ticks = tuple((v, short(v)) for v in steps(0.0, y_hi, y_spacing))
    series = []
    for line in lines:
        points = tuple(None if x is None or y is None else Point(x, y) for x, y in zip(line.xs, line.ys))
        few = sum(p is not None for p in points) <= DOTS_UP_TO  # few intervals: dots, so that a lone one shows
        series.append(Series(line.name, line.color, points, dot=2.5 if few else 0))
    return xy_chart(series, caption, Axis(0.0, x_hi, x_ticks, "seconds"), Axis(0.0, y_hi, y_ticks, unit), width,
                    height, ("s", unit))


# --- values over ordered columns -------------------------------------------------------------


MAX_X_LABELS = 24  # more columns than this: every k-th label, so slanted labels never overlap
LEFT, RIGHT, TOP, PLOT_H = 64, 14, 26, 200
MIN_SPAN = 0.02  # a fitted y axis spans at least ±2% of the values' middle


def y_range(values: list[float], min_span: float) -> tuple[float, float]:
    """The lowest and highest of `values`, widened evenly to at least ± `min_span` (relative) of
    their middle, so how far a line moves on the plot says how far it moved in fact."""
    if not values:
        return 0.0, 1.0
    lo, hi = min(values), max(values)
    middle = (lo + hi) / 2
    half = max((hi - lo) / 2, abs(middle) * min_span)
    return middle - half, middle + half


def fitted_axis(series: list[Series], min_span: float = MIN_SPAN) -> tuple[float, float, float]:
    """(lo, hi, spacing): y from a nice tick below the lowest value or interval end to one above
    the highest (not from 0: a 3% step must show), yet at least ± `min_span` of the values' middle
    (a 0.2% wobble must not fill the plot as a real step would), never below 0."""
    ends = [v for s in series for p in s.points if p is not None for v in (p.y, p.lower, p.upper) if v is not None]
    lo, hi = y_range(ends, min_span)
    spacing = nice_spacing(max(hi - lo, 1e-9), 6)
    lo, hi = max(0.0, math.floor(lo / spacing) * spacing), math.ceil(hi / spacing) * spacing
    return lo, (hi if hi > lo else lo + spacing), spacing


def columns_chart(columns: list[str], series: list[Series], caption: str, y_title: str, higher_better: bool,
                  y_axis: tuple[float, float, float], tick: Callable[[float], str] = short, strong: float | None = None,
                  width: int = 600, plot_h: int = PLOT_H, legend: str = "", x_title: str = "") -> str:
    """Values over ordered columns (versions, or campaigns in time order): a point's x is its
    column's index (plus a fraction to set points of one column side by side), y on `y_axis`
    (lo, hi, tick spacing) with `tick` labels and a darker line at `strong`; the column labels
    slanted and thinned to at most MAX_X_LABELS, `x_title` under them; which way is better above
    the plot; `legend` "above" (four names a row) or "below" (one a line) names each series."""
    every = max(1, -(-len(columns) // MAX_X_LABELS))
    shown = [(i, c) for i, c in enumerate(columns) if i % every == 0]
    longest = max([len(c) for _, c in shown] + [4]) * CHAR_PX
    # the first slanted label reaches left of its column by its length x cos 40°: the plot starts past it
    left = max(LEFT, longest * LABEL_COS - (width - LEFT - RIGHT) / max(len(columns), 1) / 2 + 6)
    plot_w = width - left - RIGHT
    label_h = longest * LABEL_SIN + 16 + (18 if x_title else 0)
    above = 16 * ((len(series) + 3) // 4) if legend == "above" else 0
    below = 16 * len(series) if legend == "below" else 0
    top = TOP + above
    height = top + plot_h + label_h + below + 8
    lo, hi, spacing = y_axis
    plot = Plot(Scale(-0.5, len(columns) - 0.5, left, left + plot_w), Scale(lo, hi, top + plot_h, top),
                left, top, plot_w, plot_h, y_unit=y_title)
    plot.grid_y(((v, tick(v)) for v in steps(lo, hi, spacing)), strong)
    plot.axes(bottom=False)
    plot.y_title(y_title)
    plot.direction(higher_better)
    plot.slanted_x((float(i), c) for i, c in shown)
    if x_title:
        plot.body.append(text(left + plot_w / 2, top + plot_h + label_h - 6, x_title, "middle", "fill:#555", "x-title"))
    for n, s in enumerate(series):
        plot.series(s)
        lx: float
        ly: float
        if legend == "above":
            lx, ly = left + (n % 4) * (plot_w / 4), TOP + 16 * (n // 4)
        elif legend == "below":
            lx, ly = left, top + plot_h + label_h + 16 * n + 12
        else:
            continue
        plot.body.append(f'<rect class="legend" x="{lx:.1f}" y="{ly - 9:.1f}" width="10" height="10" fill="{s.color}"/>'
                         + text(lx + 14, ly, s.name))
    return plot.svg(width, height, caption)


# --- horizontal ratio bars around 1.0 --------------------------------------------------------


# fill, stroke per bar kind: verdicts of the timed runs, and directions of an instruction ratio
PALETTE = {
    "regression": ("#e8706f", "#a33"), "improvement": ("#4cc46f", "#276"),
    "no significant change": ("#b0b0b0", "#777"), "too noisy": ("url(#{hatch})", "#777"),
    "no interval": ("#eeeeee", "#999"), "more": ("#f0a35e", "#a60"), "fewer": ("#6fb6e0", "#269"),
    "same": ("#b0b0b0", "#777"),
}
BAR_H, BAR_GAP, GROUP_GAP, BAR_TOP, AXIS_H, BAR_PLOT_W = 12, 4, 10, 8, 26, 420
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
    x = Scale(lo, hi, left, left + BAR_PLOT_W)

    body, y = [], BAR_TOP
    for group in groups:
        body.append(text(4, y + BAR_H - 2, group.name, "start", "font-weight:bold"))
        for bar in group.bars:
            body += _bar(bar, x, y, name_w, left + BAR_PLOT_W + 8, digits, chart_id)
            y += BAR_H + BAR_GAP
        y += GROUP_GAP - BAR_GAP
    width, height = left + BAR_PLOT_W + value_w, y + AXIS_H
    grid = _grid(lo, hi, spacing, x, BAR_TOP - 4, y)
    defs = (f'<defs><pattern id="{chart_id}-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
            f'patternTransform="rotate(45)"><rect width="6" height="6" fill="#e4e4e4"/>'
            f'<line x1="0" y1="0" x2="0" y2="6" stroke="#999" stroke-width="2"/></pattern></defs>')
    return document(width, height, caption, grid + body, 12, defs)


def _bar(bar: Bar, x: Scale, y: float, name_w: float, value_x: float, digits: int, chart_id: str) -> list[str]:
    out = [text(name_w, y + BAR_H - 2, bar.label, "start", "fill:#444")]
    tip = f"<title>{escape(bar.title)}</title>" if bar.title else ""
    if bar.value is None or not math.isfinite(bar.value):
        out.append(text(x(1.0) + 4, y + BAR_H - 2, "no value", "start", "fill:#888;font-style:italic"))
        return out
    fill, stroke = PALETTE.get(bar.kind, PALETTE["same"])
    if bar.fill:
        fill, stroke = bar.fill, "#333"
    x0, x1 = sorted((x(1.0), x(bar.value)))
    out.append(f'<rect class="bar {escape(bar.kind.replace(" ", "-"))}" x="{x0:.1f}" y="{y:.1f}" '
               f'width="{max(x1 - x0, 1.0):.1f}" height="{BAR_H}" fill="{fill.format(hatch=chart_id + "-hatch")}" '
               f'stroke="{stroke}">{tip}</rect>')
    value = f"{bar.value:.{digits}f}"
    if bar.lower is not None and bar.upper is not None:
        out += _whisker(bar, x, y + BAR_H / 2, digits)
        value += f" [{bar.lower:.{digits}f}, {bar.upper:.{digits}f}]"
    value += f" {bar.mark}" if bar.mark else ""
    out.append(text(value_x, y + BAR_H - 2, value, "start", "fill:#222"))
    return out


def _whisker(bar: Bar, x: Scale, mid: float, digits: int) -> list[str]:
    """The 95% interval as an error bar; an end past the axis (x clamps it) is drawn as an arrow
    at the axis edge instead of a tick, and the whisker's tooltip gives the interval's true ends."""
    assert bar.lower is not None and bar.upper is not None
    a, b = x(bar.lower), x(bar.upper)
    clipped_low, clipped_high = bar.lower < x.lo - 1e-9, bar.upper > x.hi + 1e-9
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


def _grid(lo: float, hi: float, spacing: float, x: Scale, top: float, bottom: float) -> list[str]:
    out = []
    for tick in grid_ticks(lo, hi, spacing):
        at_one = abs(tick - 1.0) < 1e-9
        color, width, css = ("#222", 1.5, ' class="one"') if at_one else ("#ddd", 1, "")
        out.append(f'<line{css} x1="{x(tick):.1f}" y1="{top:.1f}" x2="{x(tick):.1f}" y2="{bottom:.1f}" '
                   f'stroke="{color}" stroke-width="{width}"/>')
        out.append(text(x(tick), bottom + 16, f"{tick:.{_tick_digits(spacing)}f}", "middle", "fill:#555"))
    return out


def _tick_digits(spacing: float) -> int:
    """Enough decimals that every multiple of `spacing` prints exactly (0.025 -> 3), at least 2 below 1."""
    return 0 if spacing >= 1 else max(2, len(f"{spacing:g}".partition(".")[2]))


# --- hover and zoom in the page --------------------------------------------------------------


CHART_CSS = """
svg.chart{cursor:crosshair;user-select:none}
.chart-tip{position:fixed;z-index:10;pointer-events:none;background:#fffff4;border:1px solid #999;border-radius:3px;
padding:.15rem .45rem;font:12px ui-monospace,Menlo,Consolas,monospace;white-space:pre;box-shadow:0 1px 4px #0003}
.chart-tip small{color:#777}
"""

CHART_SCRIPT = """<script>
(function () {
  var NS = "http://www.w3.org/2000/svg", tip = document.createElement("div");
  tip.className = "chart-tip";
  tip.style.display = "none";
  document.body.appendChild(tip);
  function number(v) { return Number(v).toLocaleString("en-US", {maximumSignificantDigits: 5}); }
  function make(name, attrs) {
    var el = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { el.setAttribute(k, attrs[k]); });
    el.style.display = "none";
    return el;
  }
  function chart(svg) {
    var home = svg.getAttribute("viewBox"), spots = [], drag = null;
    var box = (svg.getAttribute("data-plot") || "").split(" ").map(Number);
    var units = [svg.getAttribute("data-x-unit") || "", svg.getAttribute("data-y-unit") || ""];
    svg.querySelectorAll("title").forEach(function (t) {
      var el = t.parentNode;
      if (el === svg) { return; }
      el.setAttribute("data-tip", t.textContent);
      el.removeChild(t);
      if (el.tagName === "circle") {
        spots.push({x: +el.getAttribute("cx"), y: +el.getAttribute("cy"), text: el.getAttribute("data-tip")});
      }
    });
    svg.querySelectorAll("polyline[data-v]").forEach(function (line) {
      var at = line.getAttribute("points").trim().split(/\\s+/), v = line.getAttribute("data-v").trim().split(/\\s+/);
      at.forEach(function (p, i) {
        var xy = p.split(","), value = (v[i] || ",").split(",");
        spots.push({x: +xy[0], y: +xy[1], text: line.getAttribute("data-name") + ": " + number(value[1]) + " " +
                    units[1] + " at " + number(value[0]) + " " + units[0]});
      });
    });
    var cross = make("line", {"class": "crosshair", stroke: "#555", "stroke-dasharray": "3 3", "pointer-events": "none"});
    var ring = make("circle", {"class": "hover", r: 5, fill: "none", stroke: "#111", "stroke-width": 2,
                               "pointer-events": "none"});
    var area = make("rect", {"class": "zoom", fill: "#4e79a733", stroke: "#4e79a7", "pointer-events": "none"});
    svg.appendChild(cross); svg.appendChild(ring); svg.appendChild(area);
    function at(e) {
      var m = svg.getScreenCTM();
      return m ? new DOMPoint(e.clientX, e.clientY).matrixTransform(m.inverse()) : null;
    }
    function view() { return svg.getAttribute("viewBox").split(" ").map(Number); }
    function zoom(x, y, w) {
      var v = view(), h0 = home.split(" ").map(Number);
      if (w >= h0[2]) { svg.setAttribute("viewBox", home); return; }
      var h = w * v[3] / v[2];
      svg.setAttribute("viewBox", [x, y, w, h].map(function (n) { return n.toFixed(1); }).join(" "));
    }
    function hide() { tip.style.display = cross.style.display = ring.style.display = "none"; }
    svg.addEventListener("mousemove", function (e) {
      var p = at(e);
      if (!p) { return; }
      if (drag) {
        area.setAttribute("x", Math.min(drag.x, p.x)); area.setAttribute("y", Math.min(drag.y, p.y));
        area.setAttribute("width", Math.abs(p.x - drag.x)); area.setAttribute("height", Math.abs(p.y - drag.y));
        area.style.display = "";
        hide();
        return;
      }
      var near = null, best = 16 * view()[2] / svg.getBoundingClientRect().width;
      spots.forEach(function (s) {
        var d = Math.hypot(s.x - p.x, s.y - p.y);
        if (d < best) { best = d; near = s; }
      });
      var hit = e.target.closest ? e.target.closest("[data-tip]") : null;
      var says = near ? near.text : (hit ? hit.getAttribute("data-tip") : "");
      if (near) {  // the other lines at the same x: every target's value at that second
        spots.forEach(function (s) {
          if (s !== near && Math.abs(s.x - near.x) < 0.05) { says += "\\n" + s.text; }
        });
      }
      if (near && box.length === 4) {
        cross.setAttribute("x1", near.x); cross.setAttribute("x2", near.x);
        cross.setAttribute("y1", box[1]); cross.setAttribute("y2", box[1] + box[3]);
        ring.setAttribute("cx", near.x); ring.setAttribute("cy", near.y);
        cross.style.display = ring.style.display = "";
      } else {
        cross.style.display = ring.style.display = "none";
      }
      if (!says) { tip.style.display = "none"; return; }
      tip.textContent = says;
      var hint = document.createElement("small");
      hint.textContent = "\\ndrag: zoom, double-click: whole chart";
      tip.appendChild(hint);
      tip.style.display = "block";
      var x = e.clientX + 14, y = e.clientY + 14;
      if (x + tip.offsetWidth > window.innerWidth) { x = Math.max(0, e.clientX - 14 - tip.offsetWidth); }
      if (y + tip.offsetHeight > window.innerHeight) { y = Math.max(0, e.clientY - 14 - tip.offsetHeight); }
      tip.style.left = x + "px"; tip.style.top = y + "px";
    });
    svg.addEventListener("mouseleave", function () { hide(); drag = null; area.style.display = "none"; });
    svg.addEventListener("mousedown", function (e) {
      if (e.button !== 0) { return; }
      drag = at(e);
      e.preventDefault();
    });
    svg.addEventListener("mouseup", function (e) {
      var p = at(e), from = drag;
      drag = null;
      area.style.display = "none";
      if (!p || !from || Math.abs(p.x - from.x) < 4 * view()[2] / svg.getBoundingClientRect().width) { return; }
      var w = Math.abs(p.x - from.x), v = view();
      zoom(Math.min(p.x, from.x), (p.y + from.y) / 2 - w * v[3] / v[2] / 2, w);
    });
    svg.addEventListener("wheel", function (e) {
      if (!e.ctrlKey && !e.shiftKey) { return; }
      var p = at(e), v = view();
      if (!p) { return; }
      e.preventDefault();
      var k = e.deltaY < 0 ? 0.8 : 1.25;
      zoom(p.x - (p.x - v[0]) * k, p.y - (p.y - v[1]) * k, v[2] * k);
    }, {passive: false});
    svg.addEventListener("dblclick", function () { svg.setAttribute("viewBox", home); });
  }
  document.querySelectorAll("svg.chart").forEach(chart);
})();
</script>"""
"""Per chart: each dot's <title> and each data-v line's values become spots; the pointer's
nearest spot within 16 px gets a crosshair, a ring and a tooltip that also names every other
spot on the crosshair (each target's value at that second; else the tip of what is under
the pointer: a bar, a whisker, a change rule). Zoom sets the SVG's viewBox: a dragged box (its
width, at the chart's aspect), Ctrl/Shift + wheel about the pointer; a double-click, or zooming
out past the whole chart, resets. The plain wheel stays the page's scroll."""
