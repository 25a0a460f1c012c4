"""How a sysbench campaign spreads over a cluster (layer cluster): its tests split into units of
about equal expected time, every target of a test in the same unit, and what a unit still lacks."""
from __future__ import annotations

from dataclasses import asdict, replace

from dbdrift.cluster.units import target_ids
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.workloads.sysbench.expand import expand
from dbdrift.workloads.sysbench import instructions
from dbdrift.workloads.sysbench.plan import params
from dbdrift.workloads.sysbench.session import new_record
from dbdrift.store.store import Store
from dbdrift.workloads.sysbench.run import estimate_campaign


def narrow(spec: CampaignSpec, tests: tuple[str, ...] | list[str], repeats: tuple[int, ...] | list[int] = ()
           ) -> CampaignSpec:
    """The campaign with only `tests`; empty: all (a sysbench unit runs every repeat)."""
    if not tests:
        return spec
    wanted = set(tests)
    return replace(spec, tests=tuple(t for t in spec.tests if t.name in wanted), test_names=tuple(tests))


def split(spec: CampaignSpec, units: int) -> list[tuple[tuple[str, ...], tuple[int, ...]]]:
    """(tests, repeats) of each unit: the tests split by expected time."""
    return [(tests, ()) for tests in split_tests(spec, units)]


def split_tests(spec: CampaignSpec, units: int) -> list[tuple[str, ...]]:
    """The campaign's tests in `units` groups of about equal expected time (longest first onto
    the least loaded group), each group in catalog order. Fewer groups when there are fewer tests."""
    order = [t.name for t in spec.tests]
    seconds = {name: estimate_campaign(narrow(spec, [name]))[0] for name in order}
    groups: list[list[str]] = [[] for _ in range(max(1, min(units, len(order))))]
    loads = [0.0] * len(groups)
    for name in sorted(order, key=lambda n: -seconds[n]):
        i = loads.index(min(loads))
        groups[i].append(name)
        loads[i] += seconds[name]
    return sorted((tuple(sorted(g, key=order.index)) for g in groups if g), key=lambda g: order.index(g[0]))


def remaining(store: Store, campaign_id: int, spec: CampaignSpec, tests: tuple[str, ...],
              repeats: tuple[int, ...] = ()) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
    """What a unit still has to run, as (tests, repeats), or None when it is complete. A test
    some target lacks a result of runs again whole (its stored runs are superseded), on one host."""
    ids = target_ids(store, campaign_id)
    left = []
    runs = {target_id: store.completed_runs(target_id) for target_id in ids.values()}  # read once, not per test
    counted = {target_id: store.counted_tests(target_id) for target_id in ids.values()} \
        if params(spec).count_instructions else {}
    for name in tests:
        plans = expand(narrow(spec, [name]))
        missing = False
        for plan in plans:
            target_id = ids[plan.target.name]
            if spec.timed and {r.key for r in plan.runs if not r.warm} - runs[target_id]:
                missing = True
            if params(spec).count_instructions and instructions.supports(plan.target.engine) \
                    and name not in counted[target_id]:
                missing = True
        if missing:
            left.append(name)
            for plan in plans:
                for threads in params(spec).threads:
                    store.supersede(ids[plan.target.name], name, threads)
    return (tuple(left), ()) if left else None


def store_failed(store: Store, campaign_id: int, spec: CampaignSpec, tests: tuple[str, ...], reason: str,
                 unit_id: int) -> int:
    """Store a failed unit's runs as failed, with the reason, so reports name what is missing
    and why (--resume runs them). Returns how many were stored."""
    if not spec.timed:
        return 0
    ids, count = target_ids(store, campaign_id), 0
    for plan in expand(narrow(spec, tests)):
        done = store.completed_runs(ids[plan.target.name])
        for step in plan.runs:
            if step.warm or step.key in done:
                continue
            record = new_record(step, {}, "failed")
            record.error = reason
            store.add_streamed({"kind": "run", "target_id": ids[plan.target.name],
                                "record": asdict(record)}, unit_id)
            count += 1
    return count
