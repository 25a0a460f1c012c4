"""TPROC-C's campaign keys (layer plan): the [tpcc] table read into a CampaignSpec; what the
workload can do, as Capabilities."""
from __future__ import annotations

from dataclasses import asdict, replace
from typing import TYPE_CHECKING

from dbdrift.errors import InputError
from dbdrift.model import JsonObject
from dbdrift.plan import fields
from dbdrift.workload import Capabilities, WorkloadPlan
from dbdrift.workloads.sysbench.plan import RefuseSysbenchKeys, settle_s
from dbdrift.workloads.tpcc.catalog import TpccSizes, setup_text

if TYPE_CHECKING:  # plan/campaign.py imports this module: the type only, for the checker
    from dbdrift.plan.campaign import CampaignSpec

CAPS = Capabilities(title="TPROC-C", per_test_runs=False, takes_turns=False, auto_cpus_shared=True,
                    counts_instructions=False, chain_view=False, cluster_parts="repeats", records_flamegraphs=True,
                    sysbench_flags_hint="drop it; [tpcc] sets TPROC-C's sizes")


# the campaign `dbdrift demo --workload ...` runs, before its targets; {name}, {label}, {base_version},
# {new_version} and {seconds} are filled in by app/demo.py
DEMO = """\
# dbdrift demo: TPROC-C (HammerDB's TPC-C derivative, no keying or think time) on {label}
# {base_version} (base) and {new_version}: 4 warehouses, 2 virtual users, 15 s ramp-up and a
# 60 s measured window, 3 repeats each on a fresh server (ABBA order), so relative NOPM gets a
# 95% interval. Real campaigns use hundreds of warehouses and 5-60 minute windows.
name = "{name}-tpcc"
workload = "tpcc"
repeats = 3

[tpcc]
warehouses = 4
clients = 2
rampup_s = 15
duration_s = 60
"""

# the sysbench keys TPROC-C has no use for: refused rather than silently ignored
refuse = RefuseSysbenchKeys(
    workload="tpcc",
    title="TPROC-C",
    hint="TPROC-C's sizes and durations are in [tpcc] (`dbdrift docs campaign`), and it runs one target after the "
         "other, each on a fresh server (repeats run it again)")


def parse_tpcc(spec: CampaignSpec, top: fields.Table) -> CampaignSpec:
    """The [tpcc] table: warehouses, virtual users, loaders, ramp-up and measured window, procedures."""
    table = top.subtable("tpcc")
    sizes = table.record(TpccSizes)
    if sizes.duration_s <= 0:
        raise InputError(f"{table.where}: duration_s = 0 measures nothing",
                         "give the measured window, e.g. duration_s = 300")
    return replace(spec, tpcc=sizes, test_names=(), order="sequential")


def stored(spec: CampaignSpec) -> JsonObject:
    return {"tpcc": asdict(spec.tpcc)}


# settle_s: TPROC-C has no settle step of its own; settle_s = "auto" means what it means for sysbench
PLAN = WorkloadPlan(name="tpcc", table="tpcc", caps=CAPS, refuse=refuse, parse=parse_tpcc, settle_s=settle_s,
                    stored=stored, demo=DEMO)


def check_lines(spec: CampaignSpec) -> list[str]:
    """What each target runs, as `run --check` says it."""
    return [f"TPROC-C: {setup_text(spec.to_dict())} per target"]


def judged(spec: CampaignSpec) -> tuple[str, ...]:
    """What gets a verdict: NOPM (`detect` plans for it)."""
    return ("NOPM",)
