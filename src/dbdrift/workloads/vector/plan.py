"""Vector search's campaign keys (layer plan): the [vector] table read into its VectorParams, the
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
from dbdrift.workloads.vector.catalog import (INDEXES, RECALLS, TYPES, DatasetSpec, VectorParams, families,
                                              server_settings, setup_text)
from dbdrift.workloads.vector.keys import KEYS

CAPS = repeats_caps("vector search", "drop it; [vector] sets the data set, index builds and searches")

# the campaign `dbdrift demo --workload vector` runs, before its targets; {name}, {label}, {base_version},
# {new_version} and {seconds} are filled in by app/demo.py
DEMO = """\
# dbdrift demo: vector search, HNSW on {base_version} (base) and {new_version}, the
# way ann-benchmarks compares: 20,000 synthetic vectors of 256 dimensions shaped like text
# embeddings, 500 held-out queries, k = 10, recall against QPS over five ef_search settings, one
# client, 3 repeats each on a fresh server. Real campaigns load 100k-1M vectors of 1536 dimensions.
name = "{name}-vector"
workload = "vector"
repeats = 3

[vector]
dataset = "synthetic"
rows = 20000
dim = 256
queries = 500
ef_search = [10, 20, 40, 80, 160]
duration_s = 5
warmup_s = 1
"""

refuse = RefuseTopLevelKeys(
    workload="vector",
    title="vector search",
    hint="vector search's data set, index builds and searches are in [vector] (`dbdrift docs campaign`), and it "
         "runs one target after the other, each on a fresh server (repeats run it again)")

SWEEPS = ("m", "ef_construction", "ef_search", "lists", "probes")  # lists of integers, each in its row's range


def int_list(table: fields.Table, name: str, default: tuple[int, ...]) -> tuple[int, ...]:
    """A list of integers (or one integer) within the key's range (its row in keys.py); never empty."""
    raw = table.data.get(name, list(default))
    values = [raw] if isinstance(raw, int) and not isinstance(raw, bool) else raw
    low, high = (int(n) for n in table.key(name).bounds())
    if not isinstance(values, list) or not values or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise InputError(f"{table.where}: {name} must be a non-empty list of integers, got {brief_repr(raw)}",
                         f"e.g. {name} = {list(default)}")
    bad = [v for v in values if not low <= v <= high]
    if bad:
        raise InputError(f"{table.where}: {name} = {bad[0]} is out of range", f"use {low} to {high}")
    if len(set(values)) != len(values):
        raise InputError(f"{table.where}: {name} lists a value twice", "list each value once")
    return tuple(values)


def parse_vector(spec: CampaignSpec, top: fields.Table) -> CampaignSpec:
    """The [vector] table: the data set, the metric and k, the index and its sweeps, the clients
    and each search setting's window."""
    table = top.subtable("vector", KEYS)
    sizes = table.record(VectorParams)
    raw_types = table.data.get("types", list(VectorParams.types))
    types = fields.str_list([raw_types] if isinstance(raw_types, str) else raw_types, f"{table.where}: types",
                            'e.g. types = ["vector", "halfvec"]')
    unknown = [t for t in types if t not in TYPES]
    if unknown or not types:
        what = f"unknown type {brief_repr(unknown[0])}" if unknown else "empty"
        raise InputError(f"{table.where}: types = {brief_repr(types)}: {what}", f"list column types from {', '.join(TYPES)}")
    sweeps = {name: int_list(table, name, getattr(VectorParams, name)) for name in SWEEPS}
    sizes = replace(sizes, types=tuple(dict.fromkeys(types)), m=sweeps["m"], ef_construction=sweeps["ef_construction"],
                    ef_search=sweeps["ef_search"], lists=sweeps["lists"], probes=sweeps["probes"])
    if sizes.index not in INDEXES:  # the key's choices hold it; kept for a record built by hand
        raise InputError(f"{table.where}: index = {brief_repr(sizes.index)}", f"use one of {', '.join(INDEXES)}")
    if sizes.index == "ivfflat" and max(sizes.probes) > min(sizes.lists):
        raise InputError(f"{table.where}: probes {max(sizes.probes)} is more than lists {min(sizes.lists)}",
                         "an IVFFlat search probes at most every list: keep probes <= lists")
    if sizes.index == "hnsw" and max(sizes.ef_search) < sizes.k:
        raise InputError(f"{table.where}: every ef_search is below k = {sizes.k}",
                         f"HNSW returns at most ef_search rows: give ef_search values of at least {sizes.k}")
    if "dim" in table.data and sizes.dataset != "synthetic":
        raise InputError(f"{table.where}: dim applies to the synthetic data set; {sizes.dataset} has its own",
                         "remove dim")
    if sizes.rows < sizes.k:
        raise InputError(f"{table.where}: rows = {sizes.rows} is fewer than k = {sizes.k}", "load more rows than k")
    try:
        DatasetSpec(sizes.dataset, sizes.rows, sizes.queries, sizes.dim, spec.seed).check()
    except InputError as exc:
        raise InputError(f"{table.where}: {exc.message}", exc.hint) from None
    targets = tuple(replace(t, settings={**server_settings(t.engine, sizes), **t.settings}) for t in spec.targets)
    return replace(spec, params=sizes, test_names=(), order="sequential", targets=targets)


def stored(spec: CampaignSpec) -> JsonObject:
    return {"vector": asdict(params(spec))}


def params(spec: CampaignSpec) -> VectorParams:
    """The campaign's `[vector]` table as read (CampaignSpec.params), typed."""
    return params_of(spec, VectorParams, "vector")


# pgvector comes with Debian's PostgreSQL builds; MariaDB has VECTOR INDEX from 11.7
DEMO_TARGETS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "postgres": (("pg17.12", "postgres", "debian:17.12"), ("pg18.6", "postgres", "debian:18.6")),
    "mariadb": (("pg18.6", "postgres", "debian:18.6"), ("ma11.8.9", "mariadb", "11.8.9")),
}


PLAN = WorkloadPlan(name="vector", table="vector", caps=CAPS, refuse=refuse, parse=parse_vector, settle_s=default_settle_s,
                    stored=stored, demo=DEMO, demo_targets=DEMO_TARGETS, axes=no_axes, keys=KEYS,
                    counts_instructions=counts_no_instructions, counting=refuse_counting,
                    measured_lengths=no_measured_lengths, with_measured_lengths=refuse_measured_lengths,
                    turn_s=refuse_turns, loaded_rows=refuse_turns,
                    threads=no_thread_counts)


def check_lines(spec: CampaignSpec) -> list[str]:
    """What each target runs, as `run --check` says it."""
    sizes = params(spec)
    lines = [f"vector search: {setup_text(spec.to_dict())} per target"]
    for engine in sorted({t.engine for t in spec.targets}):
        fams = families(sizes, engine)
        points = sum(len(f.searches) for f in fams)
        lines.append(f"  {engine}: {len(fams)} index build(s) ({'; '.join(f.label for f in fams)}), "
                     f"{points} search setting(s) of {sizes.warmup_s:g} + {sizes.duration_s:g} s")
    return lines


def judged(spec: CampaignSpec) -> tuple[str, ...]:
    """What gets a verdict: QPS at each compared recall, per family (`detect` plans for them)."""
    return tuple(f"{f.label} @ recall {r:.2f}" for f in families(params(spec), spec.base.engine) for r in RECALLS)
