"""How a vector search campaign spreads over a cluster (layer cluster): its repeats dealt out to
units (cluster/units.py); a repeat some target lacks a stored run of runs again."""
from __future__ import annotations

from dbdrift.cluster.units import remaining_repeats
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.store.store import Store


def remaining(store: Store, campaign_id: int, spec: CampaignSpec, tests: tuple[str, ...],
              repeats: tuple[int, ...] = ()) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
    """The unit's repeats some target lacks a stored run of."""
    def complete(ids: dict[str, int], repeat: int) -> bool:
        return all(store.workload_done(ids[t.name], repeat) for t in spec.targets)

    return remaining_repeats(store, campaign_id, spec, repeats, complete)
