"""The A/A twin of a campaign's base (the campaign key aa_twin): the same build and configuration
under another name, whose every verdict against the base that is a regression or an improvement
is false by construction. What a report says of it (its false verdicts and their rate over its
cells), and its findings kept apart from the gate. Reads findings, writes nothing.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Iterable, Protocol, TypeVar

from dbdrift.analysis.noise import Verdict
from dbdrift.model import JsonObject
from dbdrift.store.stored import TargetRecord
from dbdrift.results.findings import Finding

Z95 = 1.959964  # the normal quantile of a 95% Wilson interval
SHOWN = 5  # false verdicts named in a report's note; the rest are counted


@dataclass(frozen=True)
class TwinRate:
    """A campaign's A/A twin: how many of its timed cells against the base got a verdict (an
    interval: regression, improvement, no change or too noisy) and how many of those were false
    (a regression or an improvement), with the false ones as finding lines."""

    twin: str
    base: str
    cells: int
    false: int
    named: tuple[str, ...] = ()

    @property
    def rate(self) -> float | None:
        return self.false / self.cells if self.cells else None

    def interval(self) -> tuple[float, float] | None:
        """The rate's 95% Wilson score interval (the cells taken as independent, which cells of one
        campaign are not quite: a campaign draws one offset for all, docs/noise.md D17)."""
        if not self.cells:
            return None
        n, p = self.cells, self.false / self.cells
        center = (p + Z95 ** 2 / (2 * n)) / (1 + Z95 ** 2 / n)
        half = Z95 * math.sqrt(p * (1 - p) / n + Z95 ** 2 / (4 * n * n)) / (1 + Z95 ** 2 / n)
        return max(0.0, center - half), min(1.0, center + half)

    def note(self) -> str:
        """`A/A twin pg17-aa (pg17's build and config): 1 false verdict in 32 cells (3.1%, 95% 0.6–15.7%): ...`."""
        if not self.cells:
            return (f"A/A twin {self.twin} ({self.base}'s build and config): no cell with an interval, so no rate of "
                    "false verdicts")
        low, high = self.interval() or (0.0, 0.0)
        shown = "; ".join(self.named[:SHOWN]) + (f"; and {len(self.named) - SHOWN} more" if len(self.named) > SHOWN
                                                  else "")
        return (f"A/A twin {self.twin} ({self.base}'s build and config): {self.false} false verdict"
                f"{'s' if self.false != 1 else ''} in {self.cells} cells ({self.rate:.1%}, 95% {low:.1%}–{high:.1%}); "
                "each regression or improvement of the twin is false, its cells are left out of --fail-on"
                + (f": {shown}" if self.named else ""))

    def to_dict(self) -> JsonObject:
        interval = self.interval()
        return {"twin": self.twin, "base": self.base, "cells": self.cells, "false_verdicts": self.false,
                "rate": None if self.rate is None else round(self.rate, 4),
                "rate_lower": None if interval is None else round(interval[0], 4),
                "rate_upper": None if interval is None else round(interval[1], 4),
                "false": list(self.named)}


def twin_of(targets: Iterable[TargetRecord]) -> str | None:
    """The name of the campaign's A/A twin among its stored targets (their spec says `twin`), None without."""
    for t in targets:
        if t.spec.get("twin"):
            return t.name
    return None


def twin_rate(findings: Iterable[Finding], twin: str, base: str) -> TwinRate:
    """The twin's timed verdicts against the base, counted (instruction counts are left out: a
    count has no interval, and its spread rule is another question)."""
    judged = [f for f in findings if f.target == twin and f.reference == base and f.measure != "instructions"
              and f.verdict not in (Verdict.NO_INTERVAL, Verdict.NOT_MEASURED)]
    false = [f for f in judged if f.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT)]
    return TwinRate(twin, base, len(judged), len(false), tuple(f.line() for f in false))


def without_twin(findings: Iterable[Finding], twin: str | None) -> list[Finding]:
    """The findings a gate reads: the twin's are false by construction, so none of them fails a job."""
    return [f for f in findings if twin is None or f.target != twin]


def with_twin_meta(meta: JsonObject, rate: TwinRate | None) -> dict[str, Any]:
    """The report's `meta` with the twin's rate (`aa_twin`), which JSON and CSV carry; as it is without."""
    return meta if rate is None else {**meta, "aa_twin": rate.to_dict()}


class Noted(Protocol):
    """A report as with_twin takes it: a dataclass with notes and meta (ReportData, WorkloadReport)."""

    @property
    def notes(self) -> tuple[str, ...]: ...

    @property
    def meta(self) -> JsonObject: ...


R = TypeVar("R", bound=Noted)


def with_twin(report: R, findings: Iterable[Finding], twin: str | None, base: str) -> R:
    """A report (ReportData or a workload's, both with `notes` and `meta`) with its twin's note
    and rate; as it is without a twin."""
    if twin is None:
        return report
    rate = twin_rate(findings, twin, base)
    changed: R = replace(report, notes=(*report.notes, rate.note()),  # type: ignore[type-var]
                         meta=with_twin_meta(report.meta, rate))
    return changed


@dataclass(frozen=True)
class TwinPoint:
    """One campaign's twin rate on a host, as history and the published site follow it over time."""

    host: str  # results.hosts.host_key of its host
    campaign_id: int
    campaign: str
    created_at: str
    workload: str
    rate: TwinRate


@dataclass(frozen=True)
class HostTwins:
    """A host's twin rates over time (oldest first), and all of them pooled: the false verdicts
    over all the twins' cells."""

    host: str
    points: tuple[TwinPoint, ...]

    @property
    def total(self) -> TwinRate:
        rates = [p.rate for p in self.points]
        return TwinRate("", "", sum(r.cells for r in rates), sum(r.false for r in rates))


def by_host(points: Iterable[TwinPoint]) -> list[HostTwins]:
    """The points per host (hosts by name), each host's oldest first."""
    hosts: dict[str, list[TwinPoint]] = {}
    for p in points:
        hosts.setdefault(p.host, []).append(p)
    return [HostTwins(h, tuple(sorted(found, key=lambda p: (p.created_at, p.campaign_id))))
            for h, found in sorted(hosts.items())]


def rate_of(meta: JsonObject) -> TwinRate | None:
    """The twin's rate a report's meta carries (with_twin_meta), None without a twin."""
    twin = meta.get("aa_twin")
    if not twin:
        return None
    return TwinRate(twin["twin"], twin["base"], int(twin["cells"]), int(twin["false_verdicts"]),
                    tuple(twin.get("false") or ()))
