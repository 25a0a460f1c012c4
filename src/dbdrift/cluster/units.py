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


def remaining_repeats(store: Store, campaign_id: int, spec: CampaignSpec, repeats: tuple[int, ...],
                      complete: Callable[[dict[str, int], int], bool],
                      redo: Callable[[dict[str, int], int], None] | None = None) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
    """The repeats of a unit some target lacks, as (tests, repeats), or None when it is complete:
    `complete(ids, repeat)` says whether one is stored whole for every target (ids: target name ->
    id), `redo(ids, repeat)` supersedes what a repeat run again replaces."""
    ids = target_ids(store, campaign_id)
    left = []
    for r in repeats or range(spec.repeats):
        if not complete(ids, r):
            left.append(r)
            if redo is not None:
                redo(ids, r)
    return ((), tuple(left)) if left else None


def remaining_workload_runs(store: Store, campaign_id: int, spec: CampaignSpec, tests: tuple[str, ...],
                            repeats: tuple[int, ...] = ()) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
    """The unit's repeats some target lacks a stored run of, for a workload whose repeats the
    store keeps whole (workload_runs: vector search, CH-benCHmark)."""
    def complete(ids: dict[str, int], repeat: int) -> bool:
        return all(store.workload_done(ids[t.name], repeat) for t in spec.targets)

    return remaining_repeats(store, campaign_id, spec, repeats, complete)


def no_failed_runs(store: Store, campaign_id: int, spec: CampaignSpec, tests: tuple[str, ...], reason: str,
                   unit_id: int) -> int:
    """A workload of whole repeats stores no planned runs as failed: its report names the missing
    repeats from what is stored."""
    return 0


@dataclass(frozen=True)
class RepeatsLeft:
    """What `run --resume` would still run of a stored campaign of whole repeats (Workload.resume_left):
    per target and repeat a complete result, in whichever table the workload keeps its repeats (a
    repeat kept as steps, the Insert Benchmark's, is done when every step it judges is stored); a
    line saying so and its expected seconds, the workload's `estimate` shared by its repeats."""

    judged: Callable[[CampaignSpec], tuple[str, ...]]
    estimate: Callable[[CampaignSpec], tuple[float, int]]

    def __call__(self, store: Store, campaign_id: int, spec: CampaignSpec) -> tuple[str, float]:
        ids = target_ids(store, campaign_id)
        repeats = spec.only_repeats if spec.only_repeats is not None else range(spec.repeats)
        units = [(t.name, r) for r in repeats for t in spec.targets]
        wanted = set(self.judged(spec))

        def done(name: str, repeat: int) -> bool:
            target_id = ids.get(name)
            return target_id is not None and (store.tpcc_done(target_id, repeat)
                                              or store.workload_done(target_id, repeat)
                                              or store.ibench_done(target_id, repeat) >= wanted)

        to_run = sum(1 for name, repeat in units if not done(name, repeat))
        expected = self.estimate(spec)[0] * to_run / len(units) if units else 0.0
        return f"{len(units) - to_run} of {len(units)} (target, repeat) runs stored, {to_run} to run", expected
