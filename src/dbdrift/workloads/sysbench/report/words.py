"""The comparison in the posts' words: per compared target and client count, how many tests
regressed and improved and how many could tell nothing (too noisy, no interval, not measured:
a line that left them out would read as if every test had been judged) and the median rQPS;
then per group its median and, as the posts summarise a group, its largest, smallest and median
regression and improvement, each with its test ("the largest regression is an rQPS drop of 38
basis points for point-query"); B with both packagers when the pair's builds come from two.

Basis points as the posts define them (report/basis_points.py). Text, Markdown and HTML show the lines; JSON carries them with their
figures and JSON and CSV name, per cell, its change in basis points and its place in the words
(`in_words`). Pure."""
from __future__ import annotations

from dataclasses import dataclass
from statistics import median

from dbdrift.analysis.noise import Verdict
from dbdrift.analysis.relative import Cell
from dbdrift.report.basis_points import amount, bp, bp_change
from dbdrift.results.targets import packager_change
from dbdrift.workloads.sysbench.results.data import ReportData, Section


@dataclass(frozen=True)
class Ranked:
    """One of a group's named changes: `largest regression`, `median improvement` ..."""

    rank: str  # largest | smallest | median | only
    kind: str  # regression | improvement
    test: str
    ratio: float

    @property
    def name(self) -> str:
        return f"{self.rank} {self.kind}"

    def phrase(self) -> str:
        """`the largest regression is an rQPS drop of 38 basis points for point-query (0.620)`."""
        change = "drop" if self.kind == "regression" else "gain"
        points = amount(self.ratio)
        return (f"the {self.name} is an rQPS {change} of {points} basis point{'' if points == '1' else 's'} "
                f"for {self.test} ({self.ratio:.3f})")


def ranked(cells: list[tuple[str, Cell]], kind: Verdict) -> list[Ranked]:
    """The largest, smallest and median change of `kind` among (test, cell): the only one when
    there is one, no median below three; the median of an even count is the smaller of the two
    middle changes (it is a test's own change, so it has a test to name)."""
    found = sorted(((c.ratio, t) for t, c in cells if c.verdict is kind and c.ratio is not None),
                   reverse=kind is Verdict.IMPROVEMENT)  # largest change first
    name = "regression" if kind is Verdict.REGRESSION else "improvement"
    if len(found) == 1:
        return [Ranked("only", name, found[0][1], found[0][0])]
    out = [Ranked("largest", name, found[0][1], found[0][0]), Ranked("smallest", name, found[-1][1], found[-1][0])] \
        if found else []
    if len(found) >= 3:
        middle = found[len(found) // 2]
        out.append(Ranked("median", name, middle[1], middle[0]))
    return out


@dataclass(frozen=True)
class GroupWords:
    """A group's words for one compared target and client count."""

    group: str
    title: str
    median: float | None
    changes: tuple[Ranked, ...]

    def line(self) -> str:
        head = f"{self.title}: median rQPS {self.median:.3f} ({bp(self.median)})" if self.median is not None \
            else f"{self.title}: no rQPS"
        said = [", ".join(c.phrase() for c in self.changes if c.kind == kind) for kind in ("regression", "improvement")]
        said = [s for s in said if s]
        return head + "; " + ("; ".join(said) if said else "no regression or improvement")


@dataclass(frozen=True)
class ComparisonWords:
    """The words of one compared target against its reference at one client count."""

    target: str
    reference: str
    threads: int
    head: str
    median: float
    groups: tuple[GroupWords, ...]

    def lines(self) -> list[str]:
        return [self.head, *(g.line() for g in self.groups)]


def _group_words(section: Section, target: str) -> GroupWords:
    cells = [(r.test, r.cells[target]) for r in section.rows]
    summary = section.summaries.get(target)
    return GroupWords(section.group, section.title, summary.median if summary else None,
                      tuple(ranked(cells, Verdict.REGRESSION) + ranked(cells, Verdict.IMPROVEMENT)))


def verdict_tally(cells: list[Cell]) -> str:
    """`3 regression(s) and 1 improvement(s) in 32 tests (11 no significant change, 17 too noisy)`:
    every verdict counted, the ones that tell nothing too (`~ ? x`), so the tests add up."""
    def count(v: Verdict) -> int:
        return sum(1 for c in cells if (c.verdict or Verdict.NO_INTERVAL) is v)
    rest = [f"{n} {v}" for v in (Verdict.NO_CHANGE, Verdict.TOO_NOISY, Verdict.NO_INTERVAL, Verdict.NOT_MEASURED)
            if (n := count(v))]
    return (f"{count(Verdict.REGRESSION)} regression(s) and {count(Verdict.IMPROVEMENT)} improvement(s) in "
            f"{len(cells)} tests" + (f" ({', '.join(rest)})" if rest else ""))


def comparison_words(data: ReportData) -> list[ComparisonWords]:
    """One per compared target and client count that has a ratio, in report order."""
    comp = data.comparison
    out = []
    for threads in data.thread_counts():
        rows = [r for r in comp.rows if r.threads == threads]
        sections = data.sections(threads)
        for target in comp.compared:
            ratios = [r.cells[target].ratio for r in rows if r.cells[target].ratio is not None]
            if not ratios:
                continue
            middle = median(r for r in ratios if r is not None)
            reference = comp.references.get(target, "")
            crossed = packager_change(data.packagers, target, reference)
            built = f" (B: {crossed[1]} / {crossed[0]} builds)" if crossed else ""
            clients = f"{threads} client{'s' if threads != 1 else ''}"
            head = (f"{target} vs {reference}{built}, {clients}: {verdict_tally([r.cells[target] for r in rows])}; "
                    f"median rQPS {middle:.3f} ({bp(middle)})")
            out.append(ComparisonWords(target, reference, threads, head, middle,
                                       tuple(_group_words(s, target) for s in sections)))
    return out


def comparison_lines(data: ReportData) -> list[str]:
    """The words as lines: per comparison its head line, then one line per group indented by two."""
    return [line if i == 0 else f"  {line}" for w in comparison_words(data) for i, line in enumerate(w.lines())]


def cell_ranks(data: ReportData) -> dict[tuple[str, int, str], str]:
    """(test, threads, target) -> its place in the words (`largest regression` ...), for the long
    formats' `in_words` field; a cell the words do not name is not in it."""
    return {(change.test, w.threads, w.target): change.name
            for w in comparison_words(data) for g in w.groups for change in g.changes}


def words_json(data: ReportData) -> list[dict[str, object]]:
    """The words with their figures: each line, each group's median and named changes."""
    def num(value: float | None, digits: int) -> float | None:
        return None if value is None else round(value, digits)
    return [{"target": w.target, "reference": w.reference, "threads": w.threads, "line": w.head,
             "median_rqps": num(w.median, 4), "median_bp": _bp_field(w.median),
             "groups": [{"group": g.group, "title": g.title, "line": g.line(), "median_rqps": num(g.median, 4),
                         "median_bp": _bp_field(g.median) if g.median is not None else None,
                         "changes": [{"rank": c.rank, "kind": c.kind, "test": c.test, "rqps": num(c.ratio, 4),
                                      "bp": _bp_field(c.ratio)} for c in g.changes]}
                        for g in w.groups]}
            for w in comparison_words(data)]


def cell_bp(cell: Cell) -> float | None:
    """A cell's change in basis points (2 decimals), None without a ratio."""
    return None if cell.ratio is None else _bp_field(cell.ratio)


def _bp_field(ratio: float) -> float:
    """The long formats' `bp`: 2 decimals, and no -0.0 for an rQPS of 1.0000."""
    return round(bp_change(ratio), 2) + 0.0
