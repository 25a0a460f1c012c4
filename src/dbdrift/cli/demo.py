"""`dbdrift demo`: PostgreSQL 17.10 (base) vs 18.4 on the default suite, small and short;
`--engine mariadb`: MariaDB 10.11.5 (base) vs 11.4.5 on the same suite;
`--engine mysql`: MySQL 5.7.22 (base) → 8.0.15 → 8.0.31, with the chain view after the base view;
`--workload insert-benchmark`: a small Insert Benchmark on the same two versions;
`--workload tpcc`: TPROC-C with 4 warehouses on the same two versions, 3 repeats (about 9 minutes);
`--instructions`: the suite's instructions per event only (callgrind, no timed runs), the
targets counted at once, one per CPU: a verdict that does not drift with the machine."""
from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

from dbdrift.cli import run as run_cli
from dbdrift.errors import UserError
from dbdrift.plan.campaign import parse_campaign
from dbdrift.plan.overrides import apply_sets

DEMO_CAMPAIGN = """\
# dbdrift demo: is {label} {new_version} faster or slower than {base_version} on the 32 default
# microbenchmarks? Small and short so it finishes in minutes; real campaigns use 10M+ rows
# and 300-900 s runs. All servers stay up and take turns of 10 ms inside each run (base new,
# new base, ...), so every rQPS gets a 95% interval from turns paired by round, and a verdict.
name = "{name}"
tables = 1
rows = 200000
threads = [1]
warmup_s = 1
read_s = 4.5
write_s = 4.5
order = "turns"
scan_warm_s = 2
settle_s = 0
tests = ["default32"]
"""
IBENCH_CAMPAIGN = """\
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
TPCC_CAMPAIGN = """\
# dbdrift demo: TPROC-C (HammerDB's TPC-C derivative, no keying or think time) on {label}
# {base_version} (base) and {new_version}: 4 warehouses, 2 virtual users, 15 s ramp-up and a
# 60 s measured window, 3 repeats each on a fresh server (ABBA order), so relative NOPM gets a
# 95% interval. Real campaigns use hundreds of warehouses and 5-60 minute windows.
name = "{name}-tpcc"
workload = "tpcc"
repeats = 3

[tpcc]
warehouses = 4
clients = 2
rampup_s = 15
duration_s = 60
"""
TARGET = """
[[targets]]
name = "{name}"
engine = "{engine}"
version = "{version}"
"""
# engine -> campaign name, (target name, version) of each target, the base first, and a label
DEMOS = {
    "postgres": ("demo-pg17-vs-pg18", (("pg17.10", "17.10"), ("pg18.4", "18.4")), "PostgreSQL"),
    "mariadb": ("demo-mariadb10.11-vs-11.4", (("ma10.11", "10.11.5"), ("ma11.4", "11.4.5")), "MariaDB"),
    "mysql": ("demo-mysql5.7-to-8.0", (("my5.7.22", "5.7.22"), ("my8.0.15", "8.0.15"), ("my8.0.31", "8.0.31")),
              "MySQL"),
}


def demo_campaign(engine: str, workload: str = "sysbench") -> str:
    name, targets, label = DEMOS[engine]
    template = {"insert-benchmark": IBENCH_CAMPAIGN, "tpcc": TPCC_CAMPAIGN}.get(workload, DEMO_CAMPAIGN)
    versions = [v for _, v in targets]
    text = template.format(name=name, label=label, base_version=versions[0],
                           new_version=" and ".join(versions[1:]) if len(versions) > 2 else versions[1])
    for i, (target_name, version) in enumerate(targets):
        text += TARGET.format(name=target_name, engine=engine, version=version) + ("base = true\n" if i == 0 else "")
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engine", choices=tuple(DEMOS), default="postgres",
                        help="postgres: 17.10 vs 18.4 (default); mariadb: 10.11.5 vs 11.4.5; "
                             "mysql: 5.7.22 -> 8.0.15 -> 8.0.31 (base view, then the chain view)")
    parser.add_argument("--workload", choices=("sysbench", "insert-benchmark", "tpcc"), default="sysbench",
                        help="the 32 default microbenchmarks (default), a small Insert Benchmark, or TPROC-C "
                             "with 4 warehouses")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions per event of every test under valgrind callgrind instead of "
                             "timing them (deterministic; under ten minutes for PostgreSQL on 2 CPUs); campaign "
                             "<demo name>-instructions")
    parser.add_argument("--print-campaign", action="store_true", help="print the demo campaign file and exit")
    run_cli.add_common(parser)


def main(args: argparse.Namespace) -> int:
    if args.instructions and args.workload != "sysbench":
        raise UserError("--instructions counts the sysbench demo's microbenchmarks; the Insert Benchmark and TPROC-C "
                        "have no "
                        "instruction counts", "drop --instructions, or --workload")
    text = demo_campaign(args.engine, args.workload)
    if args.instructions:
        name = DEMOS[args.engine][0]
        text = ("# instruction counts only: dbdrift run THIS_FILE --instructions-only\n"
                + text.replace(f'name = "{name}"', f'name = "{name}-instructions"'))
    if args.print_campaign:
        sys.stdout.write(text)
        return 0
    spec = parse_campaign(apply_sets(tomllib.loads(text), args.set), "<demo>", Path.cwd(), "demo")
    args.chain_view = len(DEMOS[args.engine][1]) > 2 and args.workload == "sysbench"
    if args.instructions:  # a campaign of its own name: never mixed with the timed demo's in the store
        args.instructions_only = True
    return run_cli.execute(run_cli.apply_overrides(spec, args), args)
