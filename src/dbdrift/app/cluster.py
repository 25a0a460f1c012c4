"""A campaign over many hosts (`run --cluster`) and a host serving one (`dbdrift worker`).

Dask is imported only when one of them is used (dbdrift's optional extra cluster).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from dbdrift.errors import UserError
from dbdrift.origin import extra_hint
from dbdrift.plan import fields
from dbdrift.plan.campaign import CampaignSpec, cluster_address
from dbdrift.runner.progress import ProgressSink
from dbdrift.store.store import Store
from dbdrift.workloads.registry import workload_of



def require() -> None:
    """A UserError naming the missing extra when the cluster client cannot be imported (exit 2:
    refused before anything ran, by `run`, `run --check` and `worker` alike)."""
    try:
        importlib.import_module("dbdrift.cluster.client")  # it imports Dask
    except ImportError as exc:
        if (exc.name or "").split(".")[0] in ("distributed", "dask"):
            raise UserError(f"running on a cluster needs Dask distributed, which is not installed ({exc})",
                            extra_hint("cluster", "Dask distributed; `dbdrift docs cluster`",
                                       " on this host and on every worker host"), exit_code=2) from None
        raise


@dataclass(frozen=True)
class ClusterRunSummary:
    """What a campaign on a cluster stored: one campaign per host kind (None: a single kind)."""
    campaigns: dict[str | None, int]
    failed: bool


def run(spec: CampaignSpec, store: Store, address: str, progress: ProgressSink, resume: bool) -> ClusterRunSummary:
    """Run the campaign's units on the workers at `address`, each result stored as it arrives;
    the units that failed and what was stored from which hosts are told through `progress`."""
    require()
    from dbdrift.cluster.client import ClusterRun

    outcome = ClusterRun(spec, store, address, progress, resume=resume,
                                workload=workload_of(spec)).run()
    units = [u for u in outcome.units if u.status != "kept"]  # kept: complete in the store before (--resume)
    ran = {u.unit_id for u in units}
    hosts = sorted({row.hostname for cid in outcome.campaigns.values() for row in store.units(cid)
                    if row.hostname and row.id in ran})
    counts = store.unit_result_counts([u.unit_id for u in units])
    done = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "nothing new"
    progress.message(f"stored {done} from {len(units)} units on {len(hosts)} hosts ({', '.join(hosts)}) "
                     f"in {store.path}")
    for unit in units:
        if unit.status == "failed":
            progress.message(f"{unit.label}: failed: {unit.error}")
    return ClusterRunSummary(dict(outcome.campaigns), outcome.failed)


def serve(address: str, kind: str | None, name: str | None, work_dir: Path | None) -> int:
    """`dbdrift worker`: this host as one benchmark worker of the scheduler at `address`, until Ctrl-C."""
    address = cluster_address(address, "worker address")
    if kind is not None:
        fields.name(kind, "--kind")
    require()
    from dbdrift.cluster import worker

    return worker.serve(address, kind, name, work_dir)
