"""The Insert Benchmark's campaign keys (layer plan): the [insert_benchmark] table read into its
IBenchParams, the campaign's `params`, and read back typed (`params`); what the workload can do,
as Capabilities."""
from __future__ import annotations

from dataclasses import asdict, replace

from dbdrift.errors import InputError
from dbdrift.model import IBENCH_STEPS, JsonObject
from dbdrift.plan import fields
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.plan.keys import INT64_MAX
from dbdrift.plan.params import (RefuseTopLevelKeys, counts_no_instructions, no_axes, no_measured_lengths,
                                no_thread_counts, params_of, refuse_counting, refuse_measured_lengths, refuse_turns)
from dbdrift.quantities import brief_repr
from dbdrift.workload import WorkloadPlan, repeats_caps
from dbdrift.workloads.ibench.catalog import IBenchParams, io_bound_settings, settle_seconds
from dbdrift.workloads.ibench.catalog import steps as ibench_steps
from dbdrift.workloads.ibench.keys import KEYS

CAPS = repeats_caps("an Insert Benchmark", "choose Insert Benchmark steps with `steps = [...]` in its "
                    "[insert_benchmark] table", records_flamegraphs=True)


# the campaign `dbdrift demo --workload ...` runs, before its targets; {name}, {label}, {base_version},
# {new_version} and {seconds} are filled in by app/demo.py
DEMO = """\
# dbdrift demo: the Insert Benchmark (every step: l.i0, l.x, l.i1, l.i2, settle, qr100 ... qp1000)
# on {label} {base_version} (base) and {new_version}, tiny: real campaigns load tens of millions
# of rows per client and run each query step for 1800-3600 s. One client, one table; l.i1 and
# l.i2 run about half a minute each so that their per-second charts have a shape.
name = "{name}-ibench"
workload = "insert-benchmark"
settle_s = 10
interval_s = 1

[insert_benchmark]
clients = 1
rows_l_i0 = 500000
rows_l_i1 = 1500000
rows_l_i2 = 400000
query_s = 25
"""

# the sysbench keys the Insert Benchmark has no use for: refused rather than silently ignored
refuse = RefuseTopLevelKeys(
    workload="insert-benchmark",
    title="the Insert Benchmark",
    hint="the Insert Benchmark's sizes and durations are in [insert_benchmark] (`dbdrift docs campaign`), and it runs "
         "one target after the other, every step of a target on one server (repeats run them all again)")


def parse_insert_benchmark(spec: CampaignSpec, top: fields.Table) -> CampaignSpec:
    """The [insert_benchmark] table: clients (dop), rows of l.i0, l.i1 and l.i2 for all clients,
    seconds per query step, deletes, one shared table, and optionally a subset of the steps."""
    table = top.subtable("insert_benchmark", KEYS)
    raw, label = table.data, table.where
    sizes = table.record(IBenchParams)
    if "rows_l_i2" not in raw:
        sizes = replace(sizes, rows_l_i2=max(1, sizes.rows_l_i1 // 4))
    if sizes.shared_table and sizes.deletes and sizes.clients > 1:
        raise InputError(f"{label}: shared_table with deletes and several clients",
                         "clients deleting the oldest rows of one table would delete each other's: "
                         "set deletes = false or shared_table = false")
    names = raw.get("steps", list(IBENCH_STEPS))
    names = fields.str_list([names] if isinstance(names, str) else names, f"{label}: steps", 'e.g. steps = ["l.i0", "l.x"]')
    unknown = [n for n in names if n not in IBENCH_STEPS]
    if unknown:
        raise InputError(f"{label}: unknown step {brief_repr(unknown[0])}", f"steps are {', '.join(IBENCH_STEPS)}")
    if not names:
        raise InputError(f"{label}: steps = [] selects no step",
                         f"list steps from {', '.join(IBENCH_STEPS)}, or leave steps out for all of them")
    sizes = replace(sizes, steps=tuple(n for n in IBENCH_STEPS if n in names))
    inserted = sum(s.rows_per_client for s in ibench_steps(sizes) if not s.create_indexes) * sizes.clients
    if inserted > INT64_MAX:
        raise InputError(f"{label}: the steps would insert {inserted} rows, more than transactionid (BIGINT) "
                         f"can number ({INT64_MAX})", "use fewer rows_l_i0, rows_l_i1 and rows_l_i2")
    targets = spec.targets
    if sizes.io_bound:
        targets = tuple(replace(t, settings={**io_bound_settings(t.engine, sizes), **t.settings}) for t in targets)
    return replace(spec, params=sizes, test_names=(), order="sequential", targets=targets)


def settle_s(spec: CampaignSpec) -> float:
    return settle_seconds(params(spec))


def stored(spec: CampaignSpec) -> JsonObject:
    return {"insert_benchmark": {**asdict(params(spec)), "steps": list(params(spec).steps)}}


def params(spec: CampaignSpec) -> IBenchParams:
    """The campaign's `[insert_benchmark]` table as read (CampaignSpec.params), typed."""
    return params_of(spec, IBenchParams, "insert_benchmark")


PLAN = WorkloadPlan(name="insert-benchmark", table="insert_benchmark", caps=CAPS, refuse=refuse,
                    parse=parse_insert_benchmark, settle_s=settle_s, stored=stored, demo=DEMO, demo_targets={},
                    axes=no_axes, keys=KEYS,
                    counts_instructions=counts_no_instructions, counting=refuse_counting,
                    measured_lengths=no_measured_lengths, with_measured_lengths=refuse_measured_lengths,
                    turn_s=refuse_turns, loaded_rows=refuse_turns,
                    threads=no_thread_counts)


def check_lines(spec: CampaignSpec) -> list[str]:
    """What each target runs, as `run --check` says it."""
    times = ("" if spec.repeats < 2 else f", up to {spec.repeats} times (repeats, as detect plans them)"
             if spec.detect_plan else f", {spec.repeats} times (repeats)")
    return [f"steps: {', '.join(params(spec).steps)} per target{times}"]


def judged(spec: CampaignSpec) -> tuple[str, ...]:
    """The steps that get a verdict: every step the campaign runs (`detect` plans for them)."""
    return params(spec).steps
