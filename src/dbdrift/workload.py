"""What the core asks of a workload: its capabilities as flags, and the hooks each layer calls.

The core never tests a workload's name: it asks `caps.takes_turns`, not whether the workload
is sysbench. Each slice under workloads/<name>/ declares its Capabilities and plan hooks in its
plan.py (layer plan), its sequence in run.py (layer runner) and its cluster units in cluster.py
(layer cluster); workloads/registry.py assembles one Workload per slice. The verbs look a
campaign's workload up there and hand it down (Runner(..., workload=w)); a lower layer never
imports the registry. The hooks are typed loosely (Any) because their argument types live in
layers above this base module; the slices' functions carry the real types.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


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


@dataclass(frozen=True)
class WorkloadPlan:
    """The plan layer's part of a workload (its slice's plan.py): how its keys are read and
    what of them is stored with the campaign."""

    name: str  # the campaign file's `workload` value
    table: str | None  # its own campaign table ("insert_benchmark", "tpcc"); None: top-level keys only
    caps: Capabilities
    refuse: Callable[[Any], None]  # (top Table): refuse keys of other workloads, before any table is read
    parse: Callable[[Any, Any], Any]  # (spec, top Table) -> the spec with the workload's keys read
    settle_s: Callable[[Any], float]  # (spec) -> seconds of a settle when settle_s = "auto"
    stored: Callable[[Any], dict[str, Any]]  # (spec) -> its table as stored with the campaign ({} for none)
    demo: str  # the campaign file `dbdrift demo` runs, with {name}, {label}, {base_version}, ... to fill in
    # the demo's own targets by --engine, (name, engine, version) with the base first, for a workload
    # that some of the engine demos' builds cannot run (vector search needs pgvector or MariaDB 11.7+)
    demo_targets: dict[str, tuple[tuple[str, str, str], ...]] | None = None
    # (top Table) -> the axes the workload's own keys make (TPROC-C's `procedures = [false, true]`),
    # after the campaign's [axes.NAME]; None: none
    axes: Callable[[Any], tuple[Any, ...]] | None = None
    # the rows of its own table (plan/keys.py's Key, declared in its slice's keys.py): what its parse
    # reads the table with and docs/campaign.md documents, found here by whoever lists every table; ()
    # for a workload of top-level keys only
    keys: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Workload:
    """One workload as the core sees it: its plan part and the hooks of the layers above plan.
    Every hook is a module-level function, so a Workload pickles (a cluster unit carries it)."""

    plan: WorkloadPlan
    estimate: Callable[[Any], tuple[float, int]]  # (spec) -> expected seconds and progress steps
    run: Callable[[Any, Any, Any], None]  # (runner, installs, outcome): the sequence of a campaign
    clients: Callable[[Any], int]  # (spec) -> the most client threads a server sees at once
    check_lines: Callable[[Any], list[str]]  # (spec) -> `run --check`'s lines on what each target runs
    time_lines: Callable[[Any], list[str]]  # (spec) -> where the expected time goes, by part ([] for none)
    narrow: Callable[..., Any]  # (spec, tests, repeats) -> the campaign of one cluster unit
    split: Callable[[Any, int], list[Any]]  # (spec, units) -> (tests, repeats) of each unit
    remaining: Callable[..., Any]  # (store, campaign_id, spec, tests, repeats) -> what a unit lacks, or None
    store_failed: Callable[..., int]  # (store, campaign_id, spec, tests, reason, unit_id) -> runs stored as failed
    # its report, when it is judged over repeats: (store, campaign_id, base) -> the report's data, and
    # (data, fmt) -> text; None for sysbench, whose report is the comparison `dbdrift report` builds
    # with the views only it has (--chain, --matrix, --metrics)
    build_report: Callable[..., Any] | None = None
    render_report: Callable[[Any, str], str] | None = None
    # (store, campaign_id) -> each judged test's estimates against the base, as its verdicts have
    # them: what `detect` plans from and follows over repeats; None for sysbench, planned per test
    estimates: Callable[..., dict[str, list[Any]]] | None = None
    judged: Callable[[Any], tuple[str, ...]] | None = None  # (spec) -> the tests `estimates` gives, in order
    # (spec, installs by target name): refuse a target the workload cannot run (an engine or build without
    # what it needs), once every build is found and before the campaign is stored or any server starts
    check_installs: Callable[[Any, dict[str, Any]], None] | None = None
    # (spec): refuse what needs no build (a Python package the workload needs, an engine without what the
    # campaign asks for), in `run --check` and in `run` before the store is opened or anything fetched
    preflight: Callable[[Any], None] | None = None
    # (spec, cache dir): check_installs on each target's build as far as it is known before it is fetched
    # (a cached build, else what the catalogue would fetch), in `run --check` and in `run` before fetching
    check_builds: Callable[[Any, Any], None] | None = None
    # (store, campaign_id) -> (part, target, folded stacks or None) of every stored step or run, for
    # `report --flamegraphs`; None for a workload that records none (sysbench's come from its runs)
    stacks: Callable[[Any, int], list[tuple[str, str, dict[str, int] | None]]] | None = None
    # (store, campaign_id) -> (target, measure) -> its value in each ok repeat: the points `history
    # --metric rate` and `publish` follow over versions (a step's rate, NOPM); None: sysbench, whose
    # history reads its runs and counts
    history_values: Callable[[Any, int], dict[tuple[str, str], list[float]]] | None = None
    # (a measure of history_values) -> what its chart on the published site shows (its caption) and
    # its y axis' unit: `rows inserted per second (Insert Benchmark)`, `rows/s`
    history_measure: Callable[[str], tuple[str, str]] | None = None

    @property
    def name(self) -> str:
        return self.plan.name

    @property
    def table(self) -> str | None:
        return self.plan.table

    @property
    def caps(self) -> Capabilities:
        return self.plan.caps
