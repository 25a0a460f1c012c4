"""Units of a cluster campaign: what spreads across hosts, and the split of a workload that runs
whole repeats.

All targets of one comparison run in the same unit, so they share a host and take turns as
they do locally. How a campaign splits is its workload's (Workload.split, narrow, remaining,
store_failed; workloads/<name>/cluster.py): the sysbench tests into units of about equal
expected time; the Insert Benchmark's and TPROC-C's repeats with the helpers here (each repeat
runs every target on one host, and its ratios are paired by repeat). With host kinds, each kind
runs the whole campaign.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from dbdrift.plan.campaign import CampaignSpec
from dbdrift.store.store import Store


@dataclass
class Unit:
    number: int  # 1.. within its host kind's campaign
    host_kind: str | None
    tests: tuple[str, ...]  # sysbench test names; () for a workload without tests
    repeats: tuple[int, ...]  # an Insert Benchmark or TPROC-C unit's repeats; () for a sysbench unit
    campaign_id: int
    unit_id: int = 0  # its row in the client's store
    attempts: int = 0
    status: str = "queued"  # queued | running | done | failed | interrupted | kept
    worker: str | None = None  # the name of the worker running it (or that ran it last)
    address: str | None = None  # that worker's address
    attempt: str | None = None  # the id of the attempt whose lines count (a lost one's late lines do not)
    error: str | None = None

    @property
    def measured_by(self) -> str | None:
        """The worker of the attempt running now, as the store names it ("name address", the
        units table's worker): each result it streams is stored with it."""
        return f"{self.worker} {self.address}" if self.worker else None

    @property
    def label(self) -> str:
        return f"unit {self.number}" + (f"@{self.host_kind}" if self.host_kind else "")


def campaign_name(spec: CampaignSpec, host_kind: str | None) -> str:
    """Each host kind's results form a campaign of their own: `<name>@<kind>`."""
    return spec.name if host_kind is None else f"{spec.name}@{host_kind}"


def target_ids(store: Store, campaign_id: int) -> dict[str, int]:
    return {row.name: row.id for row in store.targets(campaign_id)}


def narrow_repeats(spec: CampaignSpec, tests: tuple[str, ...] | list[str] = (),
                   repeats: tuple[int, ...] | list[int] = ()) -> CampaignSpec:
    """The campaign with only `repeats` (empty: all); a workload of whole repeats has no tests."""
    return replace(spec, only_repeats=tuple(repeats)) if repeats else spec


def split_repeats(spec: CampaignSpec, units: int) -> list[tuple[tuple[str, ...], tuple[int, ...]]]:
    """(tests, repeats) of each unit: the repeats dealt out (1 3 5 to one unit, 2 4 6 to the other)."""
    n = max(1, min(units, spec.repeats))
    return [((), tuple(r for r in range(spec.repeats) if r % n == i)) for i in range(n)]


RepeatDone = Callable[[Store, CampaignSpec, int, int], bool]
"""(store, spec, target_id, repeat) -> whether the workload's repeat of a target is stored whole:
what a cluster unit still lacks and what `run --resume` still runs, asked alike."""


def run_stored(store: Store, spec: CampaignSpec, target_id: int, repeat: int) -> bool:
    """A repeat the store keeps as one run (workload_runs: TPROC-C, vector search, CH-benCHmark)
    is whole when that run is stored ok."""
    return store.workload_done(target_id, repeat)


def no_redo(store: Store, target_id: int, repeat: int) -> None:
    """A repeat kept as one run replaces nothing when it runs again: a failed one stored no result."""


@dataclass(frozen=True)
class RemainingRepeats:
    """The repeats of a unit some target lacks, as (tests, repeats), or None when it is complete
    (Workload.remaining of a workload of whole repeats): `done` says whether a target's repeat is
    stored whole, `redo` supersedes what a repeat run again replaces (the Insert Benchmark's
    steps, which build on each other)."""

    done: RepeatDone
    redo: Callable[[Store, int, int], None] = no_redo

    def __call__(self, store: Store, campaign_id: int, spec: CampaignSpec, tests: tuple[str, ...],
                 repeats: tuple[int, ...] = ()) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
        ids = target_ids(store, campaign_id)
        left = []
        for r in repeats or range(spec.repeats):
            if not all(self.done(store, spec, ids[t.name], r) for t in spec.targets):
                left.append(r)
                for t in spec.targets:
                    self.redo(store, ids[t.name], r)
        return ((), tuple(left)) if left else None


def no_failed_runs(store: Store, campaign_id: int, spec: CampaignSpec, tests: tuple[str, ...], reason: str,
                   unit_id: int) -> int:
    """A workload of whole repeats stores no planned runs as failed: its report names the missing
    repeats from what is stored."""
    return 0


@dataclass(frozen=True)
class RepeatsLeft:
    """What `run --resume` would still run of a stored campaign of whole repeats (Workload.resume_left):
    the (target, repeat) pairs not stored whole, as the workload's `done` says it (the test its
    cluster units are asked too); a line saying so and its expected seconds, the workload's
    `estimate` shared by its repeats."""

    done: RepeatDone
    estimate: Callable[[CampaignSpec], tuple[float, int]]

    def __call__(self, store: Store, campaign_id: int, spec: CampaignSpec) -> tuple[str, float]:
        ids = target_ids(store, campaign_id)
        repeats = spec.only_repeats if spec.only_repeats is not None else range(spec.repeats)
        units = [(t.name, r) for r in repeats for t in spec.targets]
        to_run = sum(1 for name, repeat in units
                     if (target_id := ids.get(name)) is None or not self.done(store, spec, target_id, repeat))
        expected = self.estimate(spec)[0] * to_run / len(units) if units else 0.0
        return f"{len(units) - to_run} of {len(units)} (target, repeat) runs stored, {to_run} to run", expected
