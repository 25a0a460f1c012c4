"""sysbench's campaign keys (layer plan): the tests, threads, tables, rows, warm-ups, restarts
and turns at the top level of the campaign file (their rows in its keys.py), read into its
SysbenchParams, the campaign's `params`, read back typed (`params`), but for the tests and
order, which the core's CampaignSpec holds; the hooks through which the core asks for the
values it needs of them (PLAN: settle_s, counts_instructions, measured_lengths, threads, ...);
what the workload can do, as Capabilities."""
from __future__ import annotations

from dataclasses import asdict, replace

from dbdrift.errors import InputError, UserError
from dbdrift.model import JsonObject
from dbdrift.plan import fields
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.plan.lifecycle import sized_settle_s
from dbdrift.plan.params import no_axes, params_of
from dbdrift.workload import Capabilities, WorkloadPlan
from dbdrift.workloads.sysbench.catalog import MicrobenchmarkSpec, SysbenchParams, select_tests
from dbdrift.workloads.sysbench.keys import KEYS

CAPS = Capabilities(title="sysbench", per_test_runs=True, takes_turns=True, auto_cpus_shared=False,
                    counts_instructions=True, chain_view=True, cluster_parts="tests",
                    records_flamegraphs=True)


# the campaign `dbdrift demo --workload ...` runs, before its targets; {name}, {label}, {base_version},
# {new_version} and {seconds} are filled in by app/demo.py
DEMO = """\
# dbdrift demo: is {label} {new_version} faster or slower than {base_version} on the 32 default
# microbenchmarks? Small and short so it finishes in minutes; real campaigns use 10M+ rows
# and 300-900 s runs. All servers stay up and take turns of 10 ms inside each run (base new,
# new base, ...), so every rQPS gets a 95% interval from turns paired by round, and a verdict.
# Each target runs {seconds} s per test (shorter with more targets, to stay within 15 minutes).
name = "{name}"
tables = 1
rows = 200000
threads = [1]
warmup_s = 1
read_s = {seconds}
write_s = {seconds}
order = "turns"
scan_warm_s = 2
settle_s = 0
tests = ["default32"]
"""

def refuse(top: fields.Table) -> None:
    """Every top-level key applies to sysbench: nothing to refuse."""


def parse(spec: CampaignSpec, top: fields.Table) -> CampaignSpec:
    """sysbench's top-level keys into its SysbenchParams, in the order a file's mistakes have
    always been named in: the measured lengths and turns, the warm-ups, restarts and statements
    (whose restart `detect` holds to), then the tests, thread counts, sizes and instruction
    counting."""
    write_s = top.duration("write_s")
    own = SysbenchParams(read_s=top.duration("read_s"), write_s=write_s, insert_s=top.duration("insert_s", write_s),
                         turn_s=top.duration("turn_s"), warmup_s=top.duration("warmup_s"),
                         scan_warm_s=top.duration("scan_warm_s"), warm_runs=top.flag("warm_runs"),
                         restart=top.choice("restart"), prepared=top.flag("prepared"))
    if spec.detect is not None and (spec.order, own.restart) != ("turns", "repeat"):
        raise InputError(f'{top.where}: detect needs order = "turns" and restart = "repeat" (it plans server starts '
                         f'of all targets taking turns), not order = "{spec.order}", restart = "{own.restart}"',
                         'remove order and restart (both defaults), or remove detect')
    names = top.data.get("tests", list(CampaignSpec.test_names))
    names = fields.str_list([names] if isinstance(names, str) else names, f"{top.where}: tests",
                      'e.g. tests = ["point-query", "update-index"]')
    if not names:
        raise InputError(f"{top.where}: tests = [] selects no microbenchmark",
                         "list names or groups from `dbdrift catalog` (e.g. tests = [\"point\", \"writes\"]), "
                         "or leave tests out for the default32")
    try:
        tests = select_tests(names)
    except UserError as exc:
        raise InputError(f"{top.where}: tests: {exc.message}", exc.hint) from None
    if not tests:
        raise InputError(f"{top.where}: tests selects no microbenchmark", "list names from `dbdrift catalog`")
    threads = fields.threads(top.data.get("threads", list(SysbenchParams.threads)), top.where, top.key("threads"))
    own = replace(own, threads=threads, tables=top.integer("tables"), rows=top.integer("rows"),
                  count_instructions=top.flag("count_instructions") or top.flag("simulate_cache"),
                  simulate_cache=top.flag("simulate_cache"))
    return replace(spec, params=own, tests=tuple(tests), test_names=tuple(names))


def stored(spec: CampaignSpec) -> JsonObject:
    """Its SysbenchParams, stored as the top-level keys they are (CampaignSpec.to_dict places them)."""
    return asdict(params(spec))


def params(spec: CampaignSpec) -> SysbenchParams:
    """The campaign's top-level keys only sysbench's steps read (CampaignSpec.params), typed."""
    return params_of(spec, SysbenchParams, None)


def counts_instructions(spec: CampaignSpec) -> bool:
    """Whether the campaign counts instructions per event (count_instructions, or simulate_cache)."""
    return params(spec).count_instructions


def counting(spec: CampaignSpec, simulate_cache: bool) -> CampaignSpec:
    """The campaign counting instructions, callgrind simulating the caches too when asked (or when
    the campaign said so): `run --count-instructions` and `--simulate-cache`."""
    own = params(spec)
    return replace(spec, params=replace(own, count_instructions=True,
                                        simulate_cache=own.simulate_cache or simulate_cache))


def measured_lengths(spec: CampaignSpec) -> dict[str, float]:
    """The measured seconds of each kind of test (MicrobenchmarkSpec.duration_kind)."""
    own = params(spec)
    return {"read": own.read_s, "write": own.write_s, "insert": own.insert_s}


def duration_for(spec: CampaignSpec, test: MicrobenchmarkSpec) -> float:
    """The measured seconds of a run of `test`."""
    return measured_lengths(spec)[test.duration_kind]


def with_measured_lengths(spec: CampaignSpec, lengths: dict[str, float]) -> CampaignSpec:
    """The campaign measuring `lengths` (detect's choice, by kind), a kind left out keeping its
    own; insert follows a chosen write length, as insert_s follows write_s in a file."""
    own = params(spec)
    write_s = lengths.get("write", own.write_s)
    insert_s = lengths.get("insert", write_s if "write" in lengths else own.insert_s)
    return replace(spec, params=replace(own, read_s=lengths.get("read", own.read_s), write_s=write_s, insert_s=insert_s))


def settle_s(spec: CampaignSpec) -> float:
    """A settle sized by the campaign's tables and rows (settle_s = "auto")."""
    return sized_settle_s(params(spec))


def loaded_rows(spec: CampaignSpec) -> int:
    """The rows each server holds: tables x rows."""
    own = params(spec)
    return own.tables * own.rows


def threads(spec: CampaignSpec) -> tuple[int, ...]:
    """The client thread counts each test runs at, in order."""
    return params(spec).threads


def turn_s(spec: CampaignSpec) -> float:
    """The seconds of each target's turn inside a driver run."""
    return params(spec).turn_s


# sysbench's keys are top-level keys of the campaign file (its keys.py): no table of its own
PLAN = WorkloadPlan(name="sysbench", table=None, caps=CAPS, refuse=refuse, parse=parse, settle_s=settle_s,
                    stored=stored, demo=DEMO, demo_targets={}, axes=no_axes, keys=KEYS,
                    counts_instructions=counts_instructions, counting=counting, measured_lengths=measured_lengths,
                    with_measured_lengths=with_measured_lengths, turn_s=turn_s,
                    loaded_rows=loaded_rows, threads=threads)


def judged(spec: CampaignSpec) -> tuple[str, ...]:
    """None of sysbench's tests is judged over repeats (its estimates give none): each cell is
    judged over the turns of its runs, and `detect` plans it per cell."""
    return ()
