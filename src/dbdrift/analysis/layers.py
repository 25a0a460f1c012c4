"""The layer that got slower: per-statement against per-row cost, from test families that differ
only in the rows each statement reads.

random-points_range=10/100/1000 send one statement of 10, 100 or 1000 keys per event;
read-only_range=10/100/10000 send the same 16 statements per event (begin, 10 point selects, 4
ranges, commit) with ranges of 10, 100 or 10,000 rows. Within a family the cost of an event is
modelled as

    cost(event) = S * per_statement + R * per_row

with S statements and R rows per event (S the same for every member, R not), a straight line in
R: its intercept over S is what a statement costs whatever it reads (parse, plan, the network
round trip, executor set-up, locks: "above the storage engine"), its slope what each row costs
(the storage engine's lookup and the executor's per-row work). A change that moves the intercept
and not the slope is above the storage engine, as the posts infer from a regression that is
larger for the shorter range; this module makes that inference from the numbers.

The line is fitted by weighted least squares over the family's members (three points), each
weighted by 1/cost², since a cost's error is a fraction of it. Costs arrive as
instructions per event (callgrind counts, each with its repeatability) or as seconds per event
per repeat (timed runs at one client); pure arithmetic, no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from statistics import fmean

from dbdrift.analysis.noise import JUDGING, Estimate, Judging, Verdict, relative_over_repeats

PARTS = ("per statement", "per row")


def pct(ratio: float) -> str:
    """`+7.0%`: a ratio's change, never `-0.0%`."""
    return f"{round((ratio - 1) * 100, 1) + 0.0:+.1f}%"


@dataclass(frozen=True)
class Member:
    """One test of a family: statements and rows per event."""

    test: str
    statements: float
    rows: float


@dataclass(frozen=True)
class Line:
    """A target's fitted costs of one family: per statement and per row, in the unit of the
    costs given, and how far the line misses its worst point (a fraction of that point)."""

    per_statement: float
    per_row: float
    misfit: float


def _solve(points: list[tuple[float, float]]) -> tuple[float, float, list[float], list[float]] | None:
    """Weighted least squares of y = a + b·x with weights 1/y² (each cost's error is relative:
    a count's spread, a run's noise, are fractions of it, so the 10-row point weighs as much as
    the 10,000-row one): (a, b, each y's weight in a, each y's weight in b); None without two
    distinct x or with a cost that is not positive."""
    if len({x for x, _ in points}) < 2 or any(y <= 0 for _, y in points):
        return None
    w = [1 / y ** 2 for _, y in points]
    sw = sum(w)
    mx = sum(wi * x for wi, (x, _) in zip(w, points)) / sw
    my = sum(wi * y for wi, (_, y) in zip(w, points)) / sw
    sxx = sum(wi * (x - mx) ** 2 for wi, (x, _) in zip(w, points))
    slope_w = [wi * (x - mx) / sxx for wi, (x, _) in zip(w, points)]
    slope = sum(c * y for c, (_, y) in zip(slope_w, points))
    int_w = [wi / sw - mx * c for wi, c in zip(w, slope_w)]
    return my - slope * mx, slope, int_w, slope_w


def fit(members: list[Member], costs: dict[str, float]) -> Line | None:
    """The line through the members with a cost (_solve); None when it cannot be drawn."""
    used = [m for m in members if costs.get(m.test) is not None]
    solved = _solve([(m.rows, costs[m.test]) for m in used])
    if solved is None:
        return None
    intercept, slope, _, _ = solved
    misfit = max(abs(intercept + slope * m.rows - costs[m.test]) / costs[m.test] for m in used)
    return Line(intercept / used[0].statements, slope, misfit)


def _weights(members: list[Member], costs: dict[str, float]) -> tuple[list[float], list[float]]:
    """Each member's cost's weight in the intercept and in the slope (as fit draws the line)."""
    solved = _solve([(m.rows, costs[m.test]) for m in members])
    assert solved is not None  # fit drew it
    return solved[2], solved[3]


@dataclass(frozen=True)
class Part:
    """One part (per statement or per row) of one target against its reference."""

    base: float | None
    new: float | None
    ratio: float | None  # new ÷ base (a cost: above 1 is more expensive)
    lower: float | None = None
    upper: float | None = None
    verdict: Verdict = Verdict.NOT_MEASURED
    status: str = ""


@dataclass(frozen=True)
class LayerRow:
    """A family of one target against its reference, for one measure ("instructions": counted
    per event; "time": seconds per event at one client)."""

    family: str
    measure: str
    target: str
    reference: str
    parts: dict[str, Part]  # PARTS -> Part
    misfit: float | None  # the worse of the two lines' misfits
    tests: tuple[str, ...] = ()  # the family's tests the lines are fitted to

    def line(self) -> str:
        """`random-points pg18: per statement +7.0% [+5%, +9%] regression, per row = (+0.3%)`."""
        bits = []
        for name in PARTS:
            p = self.parts[name]
            if p.ratio is None:
                bits.append(f"{name} not measured" + (f" ({p.status})" if p.status else ""))
                continue
            interval = f" [{pct(p.lower)}, {pct(p.upper)}]" if p.lower is not None and p.upper is not None else ""
            bits.append(f"{name} {pct(p.ratio)}{interval} {p.verdict}")
        return f"{self.family} {self.target} vs {self.reference} ({self.measure}): " + ", ".join(bits)


def brief(row: LayerRow) -> str:
    """`per-statement cost +7.0%, per-row cost = (+0.3%) (instructions, random-points family)`:
    what a cell's why line adds, the posts' "above the storage engine" in numbers."""
    bits = []
    for name in PARTS:
        p = row.parts[name]
        label = f"{name.replace(' ', '-')} cost"
        if p.ratio is None:
            bits.append(f"{label} not measured")
        elif p.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT):
            bits.append(f"{label} {pct(p.ratio)}")
        else:
            bits.append(f"{label} {p.verdict.mark} ({pct(p.ratio)})")
    return ", ".join(bits) + f" ({row.measure}, {row.family} family)"


def _verdict(ratio: float, lower: float, upper: float, judging: Judging) -> Verdict:
    """A cost's verdict (above 1: more work per statement or per row, a regression), by the
    rules of an rQPS cell turned over: the interval must leave 1 and the change reach the
    minimum effect; an interval that holds 1 and is wider than ±the noisy width is too noisy."""
    if lower > 1 and ratio >= 1 + judging.min_effect:
        return Verdict.REGRESSION
    if upper < 1 and ratio <= 1 - judging.min_effect:
        return Verdict.IMPROVEMENT
    if lower <= 1 <= upper and (upper - lower) / 2 > judging.noisy_width:
        return Verdict.TOO_NOISY
    return Verdict.NO_CHANGE


def counted(family: str, members: list[Member], base: str, target: str,
            counts: dict[str, dict[str, tuple[float, float | None]]], judging: Judging = JUDGING) -> LayerRow:
    """Instructions: `counts` is target -> test -> (instructions per event, spread %, the
    repeatability of the count). Each part's bounds carry every member's spread through the
    least-squares weights (the most the fitted value can move if each count moved by its spread)."""
    lines, bounds = {}, {}
    for t in (base, target):
        mine = {test: c for test, (c, _) in counts.get(t, {}).items()}
        used = [m for m in members if mine.get(m.test) is not None]
        lines[t] = fit(used, mine)
        if lines[t] is not None:
            w_int, w_slope = _weights(used, mine)
            spread = [mine[m.test] * (counts[t][m.test][1] or 0.0) / 100 for m in used]
            bounds[t] = (sum(abs(w) * s for w, s in zip(w_int, spread)) / used[0].statements,
                         sum(abs(w) * s for w, s in zip(w_slope, spread)))
    return replace(_row(family, "instructions", base, target, lines, bounds, judging),
                   tests=tuple(m.test for m in members))


def _row(family: str, measure: str, base: str, target: str, lines: dict[str, Line | None],
         bounds: dict[str, tuple[float, float]], judging: Judging) -> LayerRow:
    parts = {}
    b, n = lines.get(base), lines.get(target)
    for i, name in enumerate(PARTS):
        if b is None or n is None:
            parts[name] = Part(None, None, None, status=f"no line for {base if b is None else target}")
            continue
        vb, vn = (b.per_statement, n.per_statement) if i == 0 else (b.per_row, n.per_row)
        if vb <= 0 or vn <= 0:
            parts[name] = Part(vb, vn, None, status="the line's value is not positive: the family's points are "
                                                    "not on a line")
            continue
        db, dn = bounds[base][i], bounds[target][i]
        lower = (vn - dn) / (vb + db) if vn > dn else None
        upper = (vn + dn) / (vb - db) if vb > db else None
        ratio = vn / vb
        verdict = _verdict(ratio, lower, upper, judging) if lower is not None and upper is not None \
            else Verdict.NO_INTERVAL
        parts[name] = Part(vb, vn, ratio, lower, upper, verdict)
    misfits = [x.misfit for x in (b, n) if x is not None]
    return LayerRow(family, measure, target, base, parts, max(misfits) if misfits else None)


def timed(family: str, members: list[Member], base: str, target: str,
          seconds: dict[str, dict[int, dict[str, float]]], judging: Judging = JUDGING) -> LayerRow:
    """Time: `seconds` is target -> repeat -> test -> seconds per event (1 / events per second at
    one client). A line is fitted per repeat; each part's ratio and interval are those of the
    per-repeat values, paired by repeat (noise.relative_over_repeats, as TPROC-C's NOPM)."""
    per_repeat: dict[str, dict[int, Line]] = {}
    for t in (base, target):
        per_repeat[t] = {r: line for r, costs in seconds.get(t, {}).items()
                         if (line := fit(members, costs)) is not None}
    shared = sorted(per_repeat[base].keys() & per_repeat[target].keys())
    parts = {}
    for i, name in enumerate(PARTS):
        def value(line: Line) -> float:
            return line.per_statement if i == 0 else line.per_row
        if not shared:
            parts[name] = Part(None, None, None, status="no repeat of both")
            continue
        vb = fmean(value(per_repeat[base][r]) for r in shared)
        vn = fmean(value(per_repeat[target][r]) for r in shared)
        if any(value(per_repeat[t][r]) <= 0 for t in (base, target) for r in shared):
            parts[name] = Part(vb, vn, None, status="the line's value is not positive in a repeat: the family's "
                                                    "points are not on a line")
            continue
        # relative_over_repeats(new, base) is new's rate ÷ base's; with rates = 1 / cost, the base's
        # rate ÷ the target's is the target's cost ÷ the base's
        est: Estimate = relative_over_repeats([(r, 1 / value(per_repeat[base][r]), 1.0) for r in shared],
                                              [(r, 1 / value(per_repeat[target][r]), 1.0) for r in shared])
        ratio = est.value if est.value is not None else vn / vb
        lower, upper = est.lower, est.upper
        parts[name] = Part(vb, vn, ratio, lower, upper, _verdict(ratio, lower, upper, judging)
                           if lower is not None and upper is not None else Verdict.NO_INTERVAL)
    misfits = [line.misfit for t in (base, target) for line in per_repeat[t].values()]
    return LayerRow(family, "time", target, base, parts, max(misfits) if misfits else None,
                    tuple(m.test for m in members))
