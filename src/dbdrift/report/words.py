"""The comparison in the posts' words: per compared target and client count, how many tests
regressed and improved and how many could tell nothing (too noisy, no interval, not measured:
a line that left them out would read as if every test had been judged), the median rQPS, the largest and smallest regression and improvement
with their tests, and the median of each group, each change also in basis points (1 bp = 0.01%,
as the posts give small changes), and B with both packagers when the pair's builds come from two.
Text, Markdown and HTML show these lines. Pure."""
from __future__ import annotations

from statistics import median

from dbdrift.analysis.noise import Verdict
from dbdrift.analysis.relative import Cell
from dbdrift.results.data import ReportData
from dbdrift.results.targets import packager_change


def bp(ratio: float) -> str:
    """`-230 bp`: a ratio's change in basis points."""
    return f"{(ratio - 1) * 10_000:+.0f} bp"


def _named(label: str, found: list[tuple[float, str]]) -> str:
    value, test = found[0]
    return f"{label} {test} {value:.3f} ({bp(value)})"


def verdict_tally(cells: list[Cell]) -> str:
    """`3 regression(s) and 1 improvement(s) in 32 tests (11 no significant change, 17 too noisy)`:
    every verdict counted, the ones that tell nothing too (`~ ? x`), so the tests add up."""
    def count(v: Verdict) -> int:
        return sum(1 for c in cells if (c.verdict or Verdict.NO_INTERVAL) is v)
    rest = [f"{n} {v}" for v in (Verdict.NO_CHANGE, Verdict.TOO_NOISY, Verdict.NO_INTERVAL, Verdict.NOT_MEASURED)
            if (n := count(v))]
    return (f"{count(Verdict.REGRESSION)} regression(s) and {count(Verdict.IMPROVEMENT)} improvement(s) in "
            f"{len(cells)} tests" + (f" ({', '.join(rest)})" if rest else ""))


def comparison_lines(data: ReportData) -> list[str]:
    """One line per compared target and client count."""
    comp = data.comparison
    out = []
    for threads in data.thread_counts():
        rows = [r for r in comp.rows if r.threads == threads]
        for target in comp.compared:
            every = [r.cells[target] for r in rows]
            cells = [(r, r.cells[target]) for r in rows if r.cells[target].ratio is not None]
            if not cells:
                continue
            ratios = [c.ratio for _, c in cells if c.ratio is not None]
            worse = sorted((c.ratio, r.test) for r, c in cells if c.verdict is Verdict.REGRESSION and c.ratio)
            better = sorted(((c.ratio, r.test) for r, c in cells if c.verdict is Verdict.IMPROVEMENT and c.ratio),
                            reverse=True)
            reference = comp.references.get(target, "")
            clients = f"{threads} client{'s' if threads != 1 else ''}"
            crossed = packager_change(data.packagers, target, reference)
            built = f" (B: {crossed[1]} / {crossed[0]} builds)" if crossed else ""
            parts = [f"{target} vs {reference}{built}, {clients}: {verdict_tally(every)}; "
                     f"median rQPS {median(ratios):.3f} ({bp(median(ratios))})"]
            if worse:
                parts.append(_named("largest regression", worse))
                if len(worse) > 1:
                    parts.append(_named("smallest", worse[::-1]))
            if better:
                parts.append(_named("largest improvement", better))
                if len(better) > 1:
                    parts.append(_named("smallest", better[::-1]))
            groups = []
            for section in data.sections(threads):
                s = section.summaries.get(target)
                if s is not None and s.median is not None:
                    groups.append(f"{section.title} {s.median:.3f} ({bp(s.median)})")
            if groups:
                parts.append("group medians: " + ", ".join(groups))
            out.append("; ".join(parts))
    return out
