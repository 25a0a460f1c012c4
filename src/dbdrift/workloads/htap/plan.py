"""CH-benCHmark's campaign keys (layer plan): the [htap] table read into its HtapParams, the
campaign's `params`, and read back typed (`params`); what the workload can do, as Capabilities."""
from __future__ import annotations

from dataclasses import asdict, replace

from dbdrift.errors import InputError
from dbdrift.model import JsonObject
from dbdrift.plan import fields
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.plan.lifecycle import default_settle_s
from dbdrift.plan.params import (RefuseTopLevelKeys, counts_no_instructions, no_axes, no_measured_lengths,
                                no_thread_counts, params_of, refuse_counting, refuse_measured_lengths, refuse_turns)
from dbdrift.quantities import brief_repr
from dbdrift.workload import WorkloadPlan, repeats_caps
from dbdrift.workloads.htap.catalog import JUDGED, QUERY_NAMES, WINDOWS, HtapParams, setup_text
from dbdrift.workloads.htap.keys import KEYS

CAPS = repeats_caps("CH-benCHmark", "drop it; [htap] sets CH-benCHmark's sizes and windows")

# the campaign `dbdrift demo --workload htap` runs, before its targets; {name}, {label}, {base_version},
# {new_version} and {seconds} are filled in by app/demo.py
DEMO = """\
# dbdrift demo: CH-benCHmark (TPROC-C's transactions and 22 TPC-H-derived analytical queries on one
# database) on {label} {base_version} (base) and {new_version}: 2 warehouses, 2 virtual users and
# one analytical stream; each repeat measures analytics alone, transactions alone and both together
# in 30 s windows, 3 repeats each on a fresh server. Real campaigns use hundreds of warehouses,
# several streams and windows of 10 minutes or more.
name = "{name}-htap"
workload = "htap"
repeats = 3

[htap]
warehouses = 2
clients = 2
streams = 1
rampup_s = 5
duration_s = 30
"""

refuse = RefuseTopLevelKeys(
    workload="htap",
    title="CH-benCHmark",
    hint="CH-benCHmark's sizes and windows are in [htap] (`dbdrift docs campaign`), and it runs one target after "
         "the other, each on a fresh server (repeats run it again)")


def parse_htap(spec: CampaignSpec, top: fields.Table) -> CampaignSpec:
    """The [htap] table: warehouses, virtual users, analytical streams, the queries and the windows."""
    table = top.subtable("htap", KEYS)
    sizes = table.record(HtapParams)
    raw = table.data.get("queries", list(QUERY_NAMES))
    names = fields.str_list([raw] if isinstance(raw, str) else raw, f"{table.where}: queries",
                            'e.g. queries = ["Q1", "Q6", "Q14"]')
    unknown = [n for n in names if n not in QUERY_NAMES]
    if unknown or not names:
        raise InputError(f"{table.where}: queries = {brief_repr(names)}: "
                         + (f"unknown query {brief_repr(unknown[0])}" if unknown else "empty"),
                         "name CH-benCHmark's queries Q1 to Q22, or leave queries out for all 22")
    if sizes.duration_s <= 0:
        raise InputError(f"{table.where}: duration_s = 0 measures nothing",
                         "give each window's measured length, e.g. duration_s = 300")
    if sizes.clients < 1 or sizes.streams < 1:
        which = "clients" if sizes.clients < 1 else "streams"
        raise InputError(f"{table.where}: {which} must be at least 1",
                         "HTAP runs transactions and analytics together: give both at least one")
    return replace(spec, params=replace(sizes, queries=tuple(dict.fromkeys(names))), test_names=(),
                   order="sequential")


def stored(spec: CampaignSpec) -> JsonObject:
    return {"htap": asdict(params(spec))}


def params(spec: CampaignSpec) -> HtapParams:
    """The campaign's `[htap]` table as read (CampaignSpec.params), typed."""
    return params_of(spec, HtapParams, "htap")


# CH-benCHmark needs no extension: any build of the three engines runs it
PLAN = WorkloadPlan(name="htap", table="htap", caps=CAPS, refuse=refuse, parse=parse_htap, settle_s=default_settle_s,
                    stored=stored, demo=DEMO, demo_targets={}, axes=no_axes, keys=KEYS,
                    counts_instructions=counts_no_instructions, counting=refuse_counting,
                    measured_lengths=no_measured_lengths, with_measured_lengths=refuse_measured_lengths,
                    turn_s=refuse_turns, loaded_rows=refuse_turns,
                    threads=no_thread_counts)

def check_lines(spec: CampaignSpec) -> list[str]:
    """What each target runs, as `run --check` says it."""
    h = params(spec)
    return [f"CH-benCHmark: {setup_text(spec.to_dict())} per target",
            "  windows: " + "; ".join(f"{w}: {vus} virtual user(s), {streams} stream(s)"
                                      for w in WINDOWS for vus, streams in [h.window(w)])]


def judged(spec: CampaignSpec) -> tuple[str, ...]:
    """What gets a verdict (`detect` plans for them)."""
    return JUDGED + tuple(f"{q} latency" for q in params(spec).queries)
