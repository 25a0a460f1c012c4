"""How an Insert Benchmark campaign spreads over a cluster (layer cluster): its repeats dealt out
to units (cluster/units.py); a repeat some target lacks a step of runs again whole."""
from __future__ import annotations

from dbdrift.cluster.units import remaining_repeats
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.store.store import Store
from dbdrift.workloads.ibench.plan import params


def remaining(store: Store, campaign_id: int, spec: CampaignSpec, tests: tuple[str, ...],
              repeats: tuple[int, ...] = ()) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
    """The unit's repeats some target lacks a step of; their stored steps are superseded (the
    steps build on each other, so a repeat runs again from l.i0)."""
    wanted = set(params(spec).steps)

    def complete(ids: dict[str, int], repeat: int) -> bool:
        return all(store.ibench_done(ids[t.name], repeat) >= wanted for t in spec.targets)

    def redo(ids: dict[str, int], repeat: int) -> None:
        for t in spec.targets:
            store.supersede_ibench(ids[t.name], repeat)

    return remaining_repeats(store, campaign_id, spec, repeats, complete, redo)
