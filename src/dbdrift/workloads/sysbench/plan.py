"""sysbench's campaign keys (layer plan): the tests, threads, tables and rows at the top level of
the campaign file, read into a CampaignSpec; what the workload can do, as Capabilities."""
from __future__ import annotations

from dataclasses import replace

from dbdrift.errors import InputError, UserError
from dbdrift.plan import fields, keys
from dbdrift.workload import Capabilities, WorkloadPlan
from dbdrift.workloads.sysbench.catalog import select_tests

CAPS = Capabilities(title="sysbench", per_test_runs=True, takes_turns=True, auto_cpus_shared=False,
                    counts_instructions=True, chain_view=True, cluster_parts="tests")


def refuse(top: fields.Table) -> None:
    """Every top-level key applies to sysbench: nothing to refuse."""


def parse(spec, top: fields.Table):
    names = top.data.get("tests", list(keys.default("top", "tests")))
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
    threads = fields.threads(top.data.get("threads", list(keys.default("top", "threads"))), top.where)
    return replace(spec, tests=tuple(tests), test_names=tuple(names), tables=top.integer("tables"),
                   rows=top.integer("rows"), threads=threads,
                   count_instructions=top.flag("count_instructions") or top.flag("simulate_cache"),
                   simulate_cache=top.flag("simulate_cache"), flamegraphs=top.flag("flamegraphs"))


def settle_s(spec) -> float:
    """A settle long enough for the tables' purge and checkpoint: a minute plus a second per
    million rows, at most 20 minutes."""
    return min(1200.0, 60.0 + spec.tables * spec.rows / 1e6)


def stored(spec) -> dict:
    return {}  # its keys are top-level keys, stored as such


PLAN = WorkloadPlan(name="sysbench", table=None, caps=CAPS, refuse=refuse, parse=parse, settle_s=settle_s,
                    stored=stored)
