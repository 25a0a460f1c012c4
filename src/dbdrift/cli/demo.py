"""`dbdrift demo`: small, short campaigns on fetched builds, each a table the posts publish.

- default: PostgreSQL 17.10 (base) vs 18.4 on the default suite (the first run: two npm builds);
- `--newest`: PostgreSQL 17.12 -> 18.6 -> 19rc1, Debian's builds of each, with the chain view;
- `--engine mysql`: MySQL 5.6.14 -> 5.7.22 -> 8.0.33 -> 9.7.4, the adjacent-version chain;
- `--engine mysql --hypergraph`: MySQL 9.7.4 with the hypergraph optimizer against without it;
- `--engine mariadb`: MariaDB 10.2.11 -> 10.5.29 -> 10.11.19 -> 11.4.5 -> 11.8.9 on the same suite;
- `--workload insert-benchmark` / `tpcc`: a small Insert Benchmark or TPROC-C on the two or
  more versions of the engine's demo;
- `--instructions`: the suite's instructions per event only (callgrind, no timed runs), the
  targets counted at once, one per CPU: a verdict that does not drift with the machine."""
from __future__ import annotations

import argparse
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from dbdrift.cli import run as run_cli
from dbdrift.errors import UserError
from dbdrift.plan.campaign import parse_campaign
from dbdrift.plan.overrides import apply_sets
from dbdrift.workloads.registry import WORKLOADS

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
    ("mariadb", None): Demo("demo-mariadb10.2-to-11.8", "MariaDB", (
        ("ma10.2.11", "10.2.11"), ("ma10.5.29", "10.5.29"), ("ma10.11.19", "10.11.19"), ("ma11.4.5", "11.4.5"),
        ("ma11.8.9", "11.8.9"))),
    ("mysql", None): Demo("demo-mysql5.6-to-9.7", "MySQL", (
        ("my5.6.14", "5.6.14"), ("my5.7.22", "5.7.22"), ("my8.0.33", "8.0.33"), ("my9.7.4", "9.7.4"))),
    ("mysql", "hypergraph"): Demo("demo-mysql9.7-hypergraph", "MySQL", (("my9.7.4", "9.7.4"),), HYPERGRAPH,
                                  'config = "z13a"\n'),
}
VARIANTS = {"newest": "postgres", "hypergraph": "mysql"}
SECONDS = {2: 4.5, 3: 3, 4: 3, 5: 2.5}  # seconds per test and target, by the number of servers taking turns


def demo_of(engine: str, variant: str | None = None) -> Demo:
    if variant is not None and VARIANTS[variant] != engine:
        raise UserError(f"--{variant} is a {VARIANTS[variant]} demo, not {engine}'s",
                        f"dbdrift demo --engine {VARIANTS[variant]} --{variant}", exit_code=2)
    return DEMOS[(engine, variant)]


def demo_campaign(engine: str, workload: str = "sysbench", variant: str | None = None) -> str:
    demo = demo_of(engine, variant)
    template = WORKLOADS[workload].plan.demo
    versions = [v.rpartition(":")[2] for _, v in demo.targets]
    if variant == "hypergraph":
        versions = ["without it", "9.7.4 with the hypergraph optimizer"]
    newer = versions[1:]
    servers = len(demo.targets) * (2 if variant == "hypergraph" else 1)
    text = template.format(name=demo.name, label=demo.label, base_version=versions[0], seconds=SECONDS[min(servers, 5)],
                           new_version=", ".join(newer[:-1]) + " and " + newer[-1] if len(newer) > 1 else newer[0])
    text += demo.extra
    for i, (target_name, version) in enumerate(demo.targets):
        text += (TARGET.format(name=target_name, engine=engine, version=version) + demo.target_extra
                 + ("base = true\n" if i == 0 else ""))
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engine", choices=("postgres", "mariadb", "mysql"), default="postgres",
                        help="postgres: 17.10 vs 18.4 (default); mariadb: 10.2.11 -> 10.5.29 -> 10.11.19 -> 11.4.5 -> "
                             "11.8.9; mysql: 5.6.14 -> 5.7.22 -> 8.0.33 -> 9.7.4 (base view, then the chain view)")
    parser.add_argument("--newest", action="store_true",
                        help="PostgreSQL 17.12 -> 18.6 -> 19rc1, Debian's builds of each (the chain view follows)")
    parser.add_argument("--hypergraph", action="store_true",
                        help="with --engine mysql: MySQL 9.7.4 with the hypergraph optimizer against without it")
    parser.add_argument("--workload", choices=tuple(WORKLOADS), default="sysbench",
                        help="the 32 default microbenchmarks (default), a small Insert Benchmark, or TPROC-C "
                             "with 4 warehouses")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions per event of every test under valgrind callgrind instead of "
                             "timing them (deterministic; under ten minutes for PostgreSQL on 2 CPUs); campaign "
                             "<demo name>-instructions")
    parser.add_argument("--print-campaign", action="store_true", help="print the demo campaign file and exit")
    run_cli.add_common(parser, instructions=False)


def main(args: argparse.Namespace) -> int:
    if args.instructions and not WORKLOADS[args.workload].caps.counts_instructions:
        raise UserError("--instructions counts the sysbench demo's microbenchmarks; the Insert Benchmark and TPROC-C "
                        "have no "
                        "instruction counts", "drop --instructions, or --workload", exit_code=2)
    if args.newest and args.hypergraph:
        raise UserError("--newest and --hypergraph are two different demos", "choose one", exit_code=2)
    variant = "newest" if args.newest else "hypergraph" if args.hypergraph else None
    demo = demo_of(args.engine, variant)
    text = demo_campaign(args.engine, args.workload, variant)
    if args.instructions:
        text = ("# instruction counts only: dbdrift run THIS_FILE --instructions-only\n"
                + text.replace(f'name = "{demo.name}"', f'name = "{demo.name}-instructions"'))
    if args.print_campaign:
        sys.stdout.write(text)
        return 0
    spec = parse_campaign(apply_sets(tomllib.loads(text), args.set), "<demo>", Path.cwd(), "demo")
    args.chain_view = len(demo.targets) > 2 and WORKLOADS[args.workload].caps.chain_view
    if args.instructions:  # a campaign of its own name: never mixed with the timed demo's in the store
        args.instructions_only = True
    return run_cli.execute(run_cli.apply_overrides(spec, args), args)
