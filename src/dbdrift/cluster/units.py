"""Units of a cluster campaign: what spreads across hosts and what a unit still lacks.

All targets of one comparison run in the same unit, so they share a host and take turns as
they do locally. A sysbench campaign's tests are split into units of about equal expected time;
an Insert Benchmark or TPROC-C campaign's repeats are (each repeat runs every target on one
host, and its ratios are paired by repeat). With host kinds, each kind runs the whole campaign.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from dbdrift.plan.campaign import CampaignSpec
from dbdrift.plan.expand import expand
from dbdrift.runner import instructions
from dbdrift.runner.campaign import campaign_estimate
from dbdrift.runner.session import new_record
from dbdrift.store.store import Store


@dataclass
class Unit:
    number: int  # 1.. within its host kind's campaign
    host_kind: str | None
    tests: tuple[str, ...]  # sysbench test names; () for a workload without tests
    repeats: tuple[int, ...]  # an Insert Benchmark or TPROC-C unit's repeats; () for a sysbench unit
    campaign_id: int
    unit_id: int = 0  # its row in the client's store
    attempts: int = 0
    status: str = "queued"  # queued | running | done | failed | interrupted | kept
    worker: str | None = None  # the name of the worker running it (or that ran it last)
    attempt: str | None = None  # the id of the attempt whose lines count (a lost one's late lines do not)
    error: str | None = None

    @property
    def label(self) -> str:
        return f"unit {self.number}" + (f"@{self.host_kind}" if self.host_kind else "")


def campaign_name(spec: CampaignSpec, host_kind: str | None) -> str:
    """Each host kind's results form a campaign of their own: `<name>@<kind>`."""
    return spec.name if host_kind is None else f"{spec.name}@{host_kind}"


def narrow(spec: CampaignSpec, tests: tuple[str, ...] | list[str], repeats: tuple[int, ...] | list[int] = ()
           ) -> CampaignSpec:
    """The campaign with only `tests` (sysbench) or only `repeats` (the others); empty: all."""
    if spec.workload != "sysbench":
        return replace(spec, only_repeats=tuple(repeats)) if repeats else spec
    if not tests:
        return spec
    wanted = set(tests)
    return replace(spec, tests=tuple(t for t in spec.tests if t.name in wanted), test_names=tuple(tests))


def split(spec: CampaignSpec, units: int) -> list[tuple[tuple[str, ...], tuple[int, ...]]]:
    """(tests, repeats) of each unit: the tests split by expected time, or the repeats dealt out
    (1 3 5 to one unit, 2 4 6 to the other)."""
    if spec.workload == "sysbench":
        return [(tests, ()) for tests in split_tests(spec, units)]
    n = max(1, min(units, spec.repeats))
    return [((), tuple(r for r in range(spec.repeats) if r % n == i)) for i in range(n)]


def split_tests(spec: CampaignSpec, units: int) -> list[tuple[str, ...]]:
    """The campaign's tests in `units` groups of about equal expected time (longest first onto
    the least loaded group), each group in catalog order. Fewer groups when there are fewer tests."""
    if spec.workload != "sysbench":
        return [()]
    order = [t.name for t in spec.tests]
    seconds = {name: campaign_estimate(narrow(spec, [name]))[0] for name in order}
    groups: list[list[str]] = [[] for _ in range(max(1, min(units, len(order))))]
    loads = [0.0] * len(groups)
    for name in sorted(order, key=lambda n: -seconds[n]):
        i = loads.index(min(loads))
        groups[i].append(name)
        loads[i] += seconds[name]
    return sorted((tuple(sorted(g, key=order.index)) for g in groups if g), key=lambda g: order.index(g[0]))


def target_ids(store: Store, campaign_id: int) -> dict[str, int]:
    return {row["name"]: row["id"] for row in store.targets(campaign_id)}


def remaining(store: Store, campaign_id: int, spec: CampaignSpec, tests: tuple[str, ...],
              repeats: tuple[int, ...] = ()) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
    """What a unit still has to run, as (tests, repeats), or None when it is complete. A test
    some target lacks a result of runs again whole (its stored runs are superseded), on one host;
    so does a repeat of an Insert Benchmark or TPROC-C unit."""
    ids = target_ids(store, campaign_id)
    if spec.workload in ("insert-benchmark", "tpcc"):
        left = []
        for r in repeats or range(spec.repeats):
            if spec.workload == "tpcc":
                complete = all(store.tpcc_done(ids[t.name], r) for t in spec.targets)
            else:
                complete = all(store.ibench_done(ids[t.name], r) >= set(spec.ibench_steps) for t in spec.targets)
            if not complete:
                left.append(r)
                if spec.workload == "insert-benchmark":
                    for t in spec.targets:
                        store.supersede_ibench(ids[t.name], r)
        return ((), tuple(left)) if left else None
    left = []
    runs = {target_id: store.completed_runs(target_id) for target_id in ids.values()}  # read once, not per test
    counted = {target_id: store.counted_tests(target_id) for target_id in ids.values()} \
        if spec.count_instructions else {}
    for name in tests:
        plans = expand(narrow(spec, [name]))
        missing = False
        for plan in plans:
            target_id = ids[plan.target.name]
            if spec.timed and {r.key for r in plan.runs if not r.warm} - runs[target_id]:
                missing = True
            if spec.count_instructions and instructions.supports(plan.target.engine) \
                    and name not in counted[target_id]:
                missing = True
        if missing:
            left.append(name)
            for plan in plans:
                for threads in spec.threads:
                    store.supersede(ids[plan.target.name], name, threads)
    return (tuple(left), ()) if left else None


def store_failed(store: Store, campaign_id: int, spec: CampaignSpec, tests: tuple[str, ...], reason: str,
                 unit_id: int) -> int:
    """Store a failed unit's runs as failed, with the reason, so reports name what is missing
    and why (--resume runs them). Returns how many were stored."""
    if spec.workload != "sysbench" or not spec.timed:
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

