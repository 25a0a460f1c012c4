"""The noise of each test on one host, learned from the campaigns the store already holds of it:
A/A calibrations (`dbdrift calibrate`) and the spread of the repeats of any campaign whose
repeats are server starts. What `detect` plans from (app/detect.py) once a host has history, so
that a separate calibration is needed only on a new host. Reads the store, writes nothing.

Each campaign of the host and workload is one piece of evidence: per (test, threads) the noise
of ln rQPS of its targets against its base over its starts (analysis/planning.py: noise_of,
repeat_noise). The true ratio of a build against another does not change from one start to the
next, so the starts' spread about their mean is noise whether the targets are identical (A/A) or
not (repeats). The newest HISTORY_CAMPAIGNS pieces are pooled per cell (planning.pooled); the
pool refreshes itself, since it is read from the store every time a campaign is planned.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbdrift.analysis import planning
from dbdrift.analysis.planning import TestNoise
from dbdrift.model import JsonObject
from dbdrift.results.measurements import measurements_of
from dbdrift.results.hosts import host_key
from dbdrift.results.microbenchmarks import duration_kind
from dbdrift.results.twins import twin_of
from dbdrift.store.store import Store
from dbdrift.workloads.registry import SYSBENCH, Workload

HISTORY_STARTS = 8  # a test's history is enough from this many starts pooled: a calibration's worth (docs/noise.md E21)
HISTORY_CAMPAIGNS = 20  # the newest campaigns of a host whose noise is pooled: older ones may be another host state

Cell = tuple[str, int]  # (test, threads); threads 0 for a workload judged over whole repeats


@dataclass(frozen=True)
class Evidence:
    """One stored campaign's part of a host's noise: the campaign, whether it was an A/A
    calibration or repeats of a campaign comparing builds, its starts, and each cell's noise."""

    campaign_id: int
    name: str
    created_at: str
    kind: str  # "A/A" (a calibration) | "repeats" (any other campaign with starts) | "repeats with an A/A twin"
    starts: int
    noise: dict[Cell, TestNoise]

    def label(self, n: int) -> str:
        """`[1] calibrate-pg17 (#4, 2026-11-27 10:02, A/A, 8 starts)`."""
        return (f"[{n}] {self.name} (#{self.campaign_id}, {self.created_at[:16].replace('T', ' ')}, {self.kind}, "
                f"{self.starts} starts)")


@dataclass(frozen=True)
class History:
    """A host's pooled noise per cell, with the evidence it comes from (newest first, numbered
    from 1 in `labels`) and, per cell, which of it and how many starts (`sources`)."""

    evidence: tuple[Evidence, ...]
    noise: dict[Cell, TestNoise]
    sources: dict[Cell, str]  # cell -> "[1, 3], 13 starts"

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(e.label(n) for n, e in enumerate(self.evidence, 1))

    def of(self, cell: Cell) -> tuple[TestNoise | None, str]:
        """A cell's noise and source: its own, else its test's at any client count (the most starts)."""
        if cell in self.noise:
            return self.noise[cell], self.sources[cell]
        same = [c for c in self.noise if c[0] == cell[0]]
        if not same:
            return None, ""
        best = max(same, key=lambda c: self.noise[c].starts)
        return self.noise[best], f"{self.sources[best]} (of x{best[1]})" if best[1] else self.sources[best]

    def enough(self, cells: list[Cell]) -> list[Cell]:
        """The cells whose history has HISTORY_STARTS or more starts."""
        return [c for c in cells if (n := self.of(c)[0]) is not None and n.starts >= HISTORY_STARTS]

    def summary(self) -> str:
        """`the history of this host: 3 campaigns, 2026-11-27 to 2026-11-29`, for the plan's first line."""
        days = sorted(e.created_at[:10] for e in self.evidence)
        span = days[0] if days[0] == days[-1] else f"{days[0]} to {days[-1]}"
        kinds = sorted({e.kind for e in self.evidence})
        return (f"the history of this host: {len(self.evidence)} campaign{'s' if len(self.evidence) != 1 else ''} "
                f"({' and '.join(kinds)}), {span}")


def host_history(store: Store, workload: Workload[Any], here: str, limit: int = HISTORY_CAMPAIGNS) -> History:
    """The newest `limit` campaigns of host `here` (results.hosts.host_key) and `workload` that
    give noise, pooled per cell."""
    found: list[Evidence] = []
    for row in reversed(store.campaigns()):
        if len(found) >= limit:
            break
        campaign = store.campaign(int(row["id"]))
        spec = campaign.spec
        if spec.get("workload", SYSBENCH.name) != workload.name:
            continue
        if host_key(campaign.host) != here:
            continue  # another machine's noise says nothing of this one's
        piece = evidence_of(store, int(row["id"]), spec, workload)
        if piece is not None:
            found.append(piece)
    return pooled_history(found)


def pooled_history(found: list[Evidence]) -> History:
    """The evidence (newest first) pooled per cell, each cell citing the pieces it pools."""
    cells: dict[Cell, list[tuple[int, TestNoise]]] = {}
    for n, piece in enumerate(found, 1):
        for cell, noise in piece.noise.items():
            cells.setdefault(cell, []).append((n, noise))
    pool = {cell: planning.pooled([x for _, x in pieces]) for cell, pieces in cells.items()}
    sources = {cell: f"[{', '.join(str(n) for n, _ in pieces)}], {pool[cell].starts} starts"
               for cell, pieces in cells.items()}
    return History(tuple(found), pool, sources)


def evidence_of(store: Store, campaign_id: int, spec: JsonObject, workload: Workload[Any]) -> Evidence | None:
    """A campaign's noise per cell, None when it gives none: fewer than 2 targets, repeats that
    are not server starts (`restart = "never"`), a sysbench campaign not in turns, or fewer
    starts than an interval over them needs."""
    targets = store.targets(campaign_id)
    if len(targets) < 2 or spec.get("restart", "repeat") == "never":
        return None
    if workload.caps.judged_over_repeats:  # the tests' threads are the campaign's
        repeats = planning.repeat_noise(workload.estimates(store, campaign_id))
        noise = {(test, 0): n for test, n in repeats.items()}
    else:
        if spec.get("order") != "turns":
            return None
        base = next((t.name for t in targets if t.is_base), targets[0].name)
        measurements = measurements_of(store, workload.catalog, campaign_id)
        seconds = run_lengths(spec)
        noise = planning.noise_of(measurements, base, {m.test: seconds.get(duration_kind(workload.catalog, m.test), 0.0)
                                                       for m in measurements})
    if not noise:
        return None
    row = store.campaign(campaign_id)
    kind = "A/A" if spec.get("calibration") else "repeats with an A/A twin" if twin_of(targets) else "repeats"
    return Evidence(campaign_id, row.name, row.created_at, kind, max(n.starts for n in noise.values()), noise)


def run_lengths(spec: JsonObject) -> dict[str, float]:
    """A stored sysbench campaign's run length per duration kind."""
    write = float(spec.get("write_s") or 0.0)
    return {"read": float(spec.get("read_s") or 0.0), "write": write, "insert": float(spec.get("insert_s") or write)}

