"""What the core asks of a workload: its capabilities as flags, and its plan part (the hooks the
plan layer calls), typed so that mypy checks each slice's functions against them.

The core never tests a workload's name: it asks `caps.takes_turns`, not whether the workload
is sysbench. Each slice under workloads/<name>/ declares its Capabilities and plan hooks in its
plan.py (layer plan), its sequence in run.py (layer runner), its cluster units in cluster.py
(layer cluster) and its report in results.py and report.py; workloads/registry.py assembles one
Workload per slice. The verbs look a campaign's workload up there and hand it down
(Runner(..., workload=w)); a lower layer never imports the registry. Every hook is required:
a workload that needs nothing of one says so in a function of its slice, never with None.

Where each hook's types live. This is a base module: it imports nothing of dbdrift, not even
under TYPE_CHECKING (the architecture test counts those imports, and a type-only import of a
layer above would be a cycle). So a hook is typed where its argument types are visible:
- the plan part, WorkloadPlan, is generic in the plan layer's types (the campaign spec, the
  campaign file's table, an axis, a stored JSON object): a slice's PLAN binds them by the
  functions it is built from (mypy checks that its parse, settle_s, ... agree on one spec
  type), and plan/campaign.py's Plan binds them to CampaignSpec, Table, Axis and JsonObject;
- the whole Workload, whose hooks take the runner, the store and a report, is the registry's
  (workloads/registry.py sits above every layer a slice's parts belong to), every hook typed
  with the real types;
- a lower layer that is handed a workload states what it asks of it as a Protocol of its own
  (runner/campaign.py's CampaignWorkload, cluster/client.py's UnitWorkload), which mypy checks
  the registry's Workload against where a verb hands it down.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

Spec = TypeVar("Spec")  # plan.campaign.CampaignSpec
Top = TypeVar("Top")  # plan.fields.Table: the campaign file's top-level table
AxisT = TypeVar("AxisT")  # plan.axes.Axis
Json = TypeVar("Json")  # model.JsonObject
KeyT = TypeVar("KeyT")  # plan.keys.Key


@dataclass(frozen=True)
class Capabilities:
    """What a workload does, asked by the core instead of its name."""

    title: str  # as a message names it: "sysbench", "an Insert Benchmark", "TPROC-C"
    per_test_runs: bool  # runs per test x thread count x repeat, split by test on a cluster; else whole repeats
    takes_turns: bool  # targets may run in turns (order = "turns"); else one after the other, each on a fresh server
    auto_cpus_shared: bool  # cpus = "auto" leaves the servers unpinned (several clients against one server)
    counts_instructions: bool  # instruction counts and --tests apply (the catalog's tests)
    chain_view: bool  # a demo of a version chain adds the chain report
    cluster_parts: str  # what a cluster splits into units, as `run --check` says it: "tests" | "repeats"
    sysbench_flags_hint: str = ""  # what to do instead, when a flag of the catalog's tests is given
    records_flamegraphs: bool = False  # `flamegraphs` (--flamegraph) records the server during each run or step

    @property
    def judged_over_repeats(self) -> bool:
        """Each test's verdict is over the campaign's repeats (each a server start running every
        test): what `detect` plans and follows through the workload's `estimates`, and a report of
        the workload's own without the views of cells. Else (the catalog's tests, run per test)
        each cell (test x threads) is judged over the turns of its runs, planned per cell from a
        calibration's turns, and reported as the comparison `report` shapes with --chain,
        --matrix, --metrics."""
        return not self.per_test_runs


def repeats_caps(title: str, sysbench_flags_hint: str, records_flamegraphs: bool = False) -> Capabilities:
    """What a workload of whole repeats can do (every one but sysbench): one target after the
    other, each repeat on fresh servers, several clients against one server (cpus = "auto" leaves
    them unpinned), no catalogue of tests (so no instruction counts nor chain view), split by
    repeat on a cluster."""
    return Capabilities(title=title, per_test_runs=False, takes_turns=False, auto_cpus_shared=True,
                        counts_instructions=False, chain_view=False, cluster_parts="repeats",
                        sysbench_flags_hint=sysbench_flags_hint, records_flamegraphs=records_flamegraphs)


@dataclass(frozen=True)
class WorkloadPlan(Generic[Spec, Top, AxisT, Json, KeyT]):
    """The plan layer's part of a workload (its slice's plan.py): how its keys are read and
    what of them is stored with the campaign."""

    name: str  # the campaign file's `workload` value
    table: str | None  # its own campaign table ("insert_benchmark", "tpcc"); None: top-level keys only
    caps: Capabilities
    refuse: Callable[[Top], None]  # refuse keys of other workloads, before any table is read
    parse: Callable[[Spec, Top], Spec]  # the spec with the workload's keys read
    settle_s: Callable[[Spec], float]  # seconds of a settle when settle_s = "auto"
    # its table as stored with the campaign, or the values of its Params' top-level keys (sysbench's),
    # which the spec's to_dict places among the core's top-level keys
    stored: Callable[[Spec], Json]
    demo: str  # the campaign file `dbdrift demo` runs, with {name}, {label}, {base_version}, ... to fill in
    # the demo's own targets by --engine, (name, engine, version) with the base first, for a workload
    # that some of the engine demos' builds cannot run (vector search needs pgvector or MariaDB 11.7+);
    # empty: the engine demos' targets
    demo_targets: dict[str, tuple[tuple[str, str, str], ...]]
    # the axes the workload's own keys make (TPROC-C's `procedures = [false, true]`), after the
    # campaign's [axes.NAME]
    axes: Callable[[Top], tuple[AxisT, ...]]
    # the rows of its own table (plan/keys.py's Key, declared in its slice's keys.py): what its parse
    # reads the table with and docs/campaign.md documents, found here by whoever lists every table; ()
    # for a workload of top-level keys only
    keys: tuple[KeyT, ...]
    # whether the campaign also counts instructions per event under callgrind (sysbench's
    # count_instructions): what `run` reports and requires valgrind for, and what orders detect's
    # budget; False for a workload that counts none (caps.counts_instructions)
    counts_instructions: Callable[[Spec], bool]
    # (spec, simulate_cache) -> the campaign counting instructions, callgrind simulating the caches too
    # when asked (`run --count-instructions`, `--simulate-cache`); a workload that counts none refuses
    # (its callers ask caps.counts_instructions first)
    counting: Callable[[Spec, bool], Spec]
    # the measured length of each kind of test (a test's duration_kind: read, write, insert), by kind:
    # what detect plans the lengths of and `run` warns of when too short for an interval; {} for a
    # workload whose runs are whole repeats
    measured_lengths: Callable[[Spec], dict[str, float]]
    # (spec, lengths by kind) -> the campaign measuring those (detect's chosen lengths), a kind left out
    # keeping its own; a workload of whole repeats refuses (its callers ask caps.per_test_runs first)
    with_measured_lengths: Callable[[Spec, dict[str, float]], Spec]
    # the seconds of each target's turn inside a driver run (order = "turns"); a workload whose targets
    # do not take turns refuses (its callers ask caps.takes_turns first)
    turn_s: Callable[[Spec], float]
    # the rows the campaign loads into each server (sysbench: tables x rows), what sizes the data each
    # of the servers taking turns keeps resident (runner/memory.py); a workload whose targets do not
    # take turns refuses (its callers ask caps.takes_turns first)
    loaded_rows: Callable[[Spec], int]
    # the client thread counts each of its tests runs at, in order (sysbench's threads): the cells detect
    # plans and the sequential rule follows, and what `run` warns of beyond the host's CPUs; () for a
    # workload whose runs are whole repeats
    threads: Callable[[Spec], tuple[int, ...]]
