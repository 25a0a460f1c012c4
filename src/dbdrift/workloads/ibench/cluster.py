"""How an Insert Benchmark campaign spreads over a cluster (layer cluster): its repeats dealt out
to units (cluster/units.py); a repeat some target lacks a step of runs again whole."""
from __future__ import annotations

from dbdrift.cluster.units import RemainingRepeats
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.store.store import Store
from dbdrift.workloads.ibench.plan import params


def repeat_done(store: Store, spec: CampaignSpec, target_id: int, repeat: int) -> bool:
    """A target's repeat is whole when every step the campaign runs is stored ok."""
    return store.ibench_done(target_id, repeat) >= set(params(spec).steps)


def supersede(store: Store, target_id: int, repeat: int) -> None:
    """A repeat that runs again runs from l.i0 (the steps build on each other): its stored steps
    are superseded."""
    store.supersede_ibench(target_id, repeat)


remaining = RemainingRepeats(repeat_done, supersede)
