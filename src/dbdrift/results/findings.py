"""A report's verdicts as findings, one per judged cell of every workload (a timed cell, an
instruction count, an Insert Benchmark step, TPROC-C's NOPM...), each with the measure it comes
from: what `report --fail-on` selects, the HTML findings list and the site's counts read. Each
workload makes its own (sysbench's: workloads/sysbench/results/findings.py)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from dbdrift.analysis.noise import Verdict
from dbdrift.results.targets import PACKAGER_MARK, packager_change

MEASURES = ("timed", "instructions")
"""timed: rQPS from timed runs (higher is better); instructions: instructions per event counted
under callgrind, new / reference (lower is better; deterministic, so no interval and no
detectable change)."""

CAMPAIGN = "campaign"
"""The measure of the one finding about a whole campaign that measured nothing: it belongs to
no measure, so `--fail-by` of either reads it."""

FINDING_KINDS = ("regression", "not-measured", "noisy")
"""What `--fail-on` can name: a regression; a cell not measured (a failed run or count); a cell
whose verdict could not be told (too noisy, or no interval: one repeat)."""

_KIND_VERDICTS = {"regression": (Verdict.REGRESSION,), "not-measured": (Verdict.NOT_MEASURED,),
                  "noisy": (Verdict.TOO_NOISY, Verdict.NO_INTERVAL)}


@dataclass(frozen=True)
class Finding:
    """One compared cell's verdict, timed or counted."""

    measure: str  # one of MEASURES
    test: str
    threads: int | None  # client count of a timed cell; None for a count (one connection)
    target: str
    reference: str
    verdict: Verdict
    ratio: float | None  # rQPS (timed) or instructions per event new / reference
    lower: float | None = None  # the 95% interval of a timed ratio
    upper: float | None = None
    status: str = ""  # why a cell is not measured (failed, skipped: server died)
    detectable: float | None = None  # the detectable change of a timed ratio (Cell.detectable); None for a count
    packagers: tuple[str, str] | None = None  # (the reference's, the target's) when they differ (Cell.packagers)
    # a workload's cell whose measurements (or its reference's) saw foreign load: their figures,
    # `new: foreign CPU 34% (repeat 2)` (analysis/foreign.cell_flags); "" when quiet or not known
    warned: str = ""

    def line(self) -> str:
        """`point-query x1 pg18: regression 0.950 [0.940,0.960] vs pg17` (timed) or
        `point-query instructions pg18: regression 1.035 instructions/event vs pg17`, then
        `; B debian / npm` when the two were built by different packagers and `; ! new: foreign
        CPU 34% (repeat 2)` when its measurements saw foreign load."""
        built = f"; {PACKAGER_MARK} {self.packagers[1]} / {self.packagers[0]}" if self.packagers else ""
        return self._said() + built + (f"; ! {self.warned}" if self.warned else "")

    def _said(self) -> str:
        if self.measure == CAMPAIGN:
            return f"campaign {self.test}: nothing measured ({self.status})"
        where = (f"{self.test} instructions" if self.measure != "timed" else
                 f"{self.test} x{self.threads}" if self.threads is not None else self.test)
        if self.verdict is Verdict.NOT_MEASURED:
            return f"{where} {self.target}: not measured ({self.status or 'failed'})"
        ratio = "" if self.ratio is None else f" {self.ratio:.3f}"
        if self.measure == "timed":
            interval = f" [{self.lower:.3f},{self.upper:.3f}]" if self.lower is not None else ""
            return f"{where} {self.target}: {self.verdict}{ratio}{interval} vs {self.reference}"
        return f"{where} {self.target}: {self.verdict}{ratio} instructions/event vs {self.reference}"


def nothing_measured(campaign: str, why: str = "no run or count succeeded") -> Finding:
    """The finding of a campaign without a single measured value (interrupted before its first
    run, or no server started): a gate must not read an empty report as a pass."""
    return Finding(CAMPAIGN, campaign, None, "", "", Verdict.NOT_MEASURED, None, status=why)


def select(found: list[Finding], kinds: list[str] | tuple[str, ...], measures: tuple[str, ...] = MEASURES
           ) -> list[Finding]:
    """The findings of `kinds` (FINDING_KINDS) among `found`, from the measures chosen (--fail-by)."""
    wanted = {v for k in kinds for v in _KIND_VERDICTS[k]}
    return [f for f in found if (f.measure in measures or f.measure == CAMPAIGN) and f.verdict in wanted]


def warned(found: tuple[Finding, ...], flags: Mapping[tuple[str, str | None], str]) -> tuple[Finding, ...]:
    """`found` with each finding whose target's or reference's measurements of its test saw
    foreign load carrying their figures (flags: analysis/foreign.cell_flags, keyed by (target,
    test), or (target, None) for all of a target's tests)."""
    out = []
    for f in found:
        parts = [f"{t}: {figures}" for t in dict.fromkeys((f.target, f.reference)) if t
                 and (figures := flags.get((t, f.test)) or flags.get((t, None)))]
        out.append(replace(f, warned="; ".join(parts)) if parts else f)
    return tuple(out)


def told(found: tuple[Finding, ...], packagers: Mapping[str, str]) -> tuple[Finding, ...]:
    """`found` with each finding whose target and reference come from different packagers
    saying which (the workloads judged over repeats build their findings without them)."""
    return tuple(replace(f, packagers=packager_change(packagers, f.target, f.reference)) for f in found)
