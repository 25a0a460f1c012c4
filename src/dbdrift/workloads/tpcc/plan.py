"""TPROC-C's campaign keys (layer plan): the [tpcc] table read into its TpccParams, the campaign's
`params`, and read back typed (`params`); what the workload can do, as Capabilities."""
from __future__ import annotations

from dataclasses import asdict, replace

from dbdrift.errors import InputError
from dbdrift.model import ENGINES, JsonObject, TargetSpec
from dbdrift.plan import fields
from dbdrift.plan.axes import Axis
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.plan.lifecycle import default_settle_s
from dbdrift.plan.params import (RefuseTopLevelKeys, counts_no_instructions, no_measured_lengths, no_thread_counts,
                                params_of, refuse_counting, refuse_measured_lengths, refuse_turns)
from dbdrift.quantities import brief_repr
from dbdrift.workload import WorkloadPlan, repeats_caps
from dbdrift.workloads.tpcc.catalog import TpccParams, setup_text
from dbdrift.workloads.tpcc.keys import KEYS

CAPS = repeats_caps("TPROC-C", "drop it; [tpcc] sets TPROC-C's sizes", records_flamegraphs=True)


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
refuse = RefuseTopLevelKeys(
    workload="tpcc",
    title="TPROC-C",
    hint="TPROC-C's sizes and durations are in [tpcc] (`dbdrift docs campaign`), and it runs one target after the "
         "other, each on a fresh server (repeats run it again)")


PROCEDURES_AXIS = "sp"
"""The axis `procedures = [false, true]` makes: variants sp0 (statements sent by the driver) and
sp1 (stored procedures), as the posts name the two settings."""


def procedures_axis(top: fields.Table) -> tuple[Axis, ...]:
    """`procedures = [false, true]` in [tpcc]: an axis of every engine whose levels set no server
    option but how the transactions run, so each target runs both ways as two variants of one
    report (the posts' sp0 and sp1 side by side); a single boolean makes none."""
    raw = top.data.get("tpcc")
    values = raw.get("procedures") if isinstance(raw, dict) else None
    if not isinstance(values, list):
        return ()
    where = f"{top.where}: [tpcc]"
    if len(values) != 2 or not all(isinstance(v, bool) for v in values) or values[0] == values[1]:
        raise InputError(f"{where}: procedures = {brief_repr(values)} is neither a boolean nor both of them",
                         "write procedures = [false, true] to run every target both ways (variants sp0 and sp1, "
                         "the first the base), or procedures = true")
    axes = top.data.get("axes")
    if isinstance(axes, dict) and PROCEDURES_AXIS in axes:
        raise InputError(f"{where}: procedures = {values} makes the axis {PROCEDURES_AXIS}, which [axes.sp] "
                         "names too", "rename the axis [axes.sp], or set procedures to one boolean")
    levels = tuple("1" if v else "0" for v in values)
    return (Axis(PROCEDURES_AXIS, levels, {lv: {e: {} for e in ENGINES} for lv in levels}, ENGINES),)


def procedures_of(target: TargetSpec, sizes: TpccParams) -> bool:
    """Whether `target` runs the transactions as stored procedures: its sp level when
    `procedures` is an axis, else the campaign's one value."""
    level = next((lv for lv in target.levels if lv.axis == PROCEDURES_AXIS), None)
    return sizes.procedures if level is None else level.name == "1"


def parse_tpcc(spec: CampaignSpec, top: fields.Table) -> CampaignSpec:
    """The [tpcc] table: warehouses, virtual users, loaders, ramp-up and measured window,
    procedures (one boolean, or both as an axis: procedures_axis)."""
    table = top.subtable("tpcc", KEYS)
    both = table.data.get("procedures")
    if isinstance(both, list):  # the axis (procedures_axis); the sizes keep the base's value
        table = replace(table, data={**table.data, "procedures": both[0]})
    sizes = table.record(TpccParams)
    if sizes.duration_s <= 0:
        raise InputError(f"{table.where}: duration_s = 0 measures nothing",
                         "give the measured window, e.g. duration_s = 300")
    return replace(spec, params=sizes, test_names=(), order="sequential")


def stored(spec: CampaignSpec) -> JsonObject:
    return {"tpcc": asdict(params(spec))}


def params(spec: CampaignSpec) -> TpccParams:
    """The campaign's `[tpcc]` table as read (CampaignSpec.params), typed."""
    return params_of(spec, TpccParams, "tpcc")


# settle_s: TPROC-C has no settle step of its own; settle_s = "auto" means what it means for sysbench
PLAN = WorkloadPlan(name="tpcc", table="tpcc", caps=CAPS, refuse=refuse, parse=parse_tpcc, settle_s=default_settle_s,
                    stored=stored, demo=DEMO, axes=procedures_axis, demo_targets={}, keys=KEYS,
                    counts_instructions=counts_no_instructions, counting=refuse_counting,
                    measured_lengths=no_measured_lengths, with_measured_lengths=refuse_measured_lengths,
                    turn_s=refuse_turns, loaded_rows=refuse_turns,
                    threads=no_thread_counts)


def check_lines(spec: CampaignSpec) -> list[str]:
    """What each target runs, as `run --check` says it."""
    return [f"TPROC-C: {setup_text(spec.to_dict())} per target"]


def judged(spec: CampaignSpec) -> tuple[str, ...]:
    """What gets a verdict: NOPM (`detect` plans for it)."""
    return ("NOPM",)
