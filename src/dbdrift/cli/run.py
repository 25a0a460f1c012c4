"""`dbdrift run CAMPAIGN.toml`: validate, run every target, store, then print the report."""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import psutil

from dbdrift.app import cluster
from dbdrift.workloads.sysbench.catalog import select_tests
from dbdrift.cli import check, options
from dbdrift.cli import report as report_cli
from dbdrift.cli.options import add_common, add_variants, campaign_sets
from dbdrift.cli.progress import ConsoleProgress
from dbdrift.errors import UserError
from dbdrift.plan.axes import durability_note
from dbdrift.plan.campaign import CampaignSpec, load_campaign, with_base
from dbdrift.plan.campaign import cluster_address as cluster_address_of
from dbdrift.runner.memory import fit_order
from dbdrift.results.build import build_report
from dbdrift.runner import Runner
from dbdrift.server import rundir
from dbdrift.store.lock import campaign_lock
from dbdrift.store.store import Store
from dbdrift.workloads.registry import workload_of


EXAMPLES = """\
examples:
  dbdrift run pg18.toml --check                 validate, locate binaries, print the plan and ETA; start nothing
  dbdrift run pg18.toml                         run it; the report follows
  dbdrift run pg18.toml --resume                after Ctrl-C or a crash: only what the store lacks
  dbdrift run pg18.toml --tests point,writes --set rows=100000 --set repeats=3
  dbdrift run pg18.toml --instructions-only     instructions per event under valgrind, no timed runs
  dbdrift run matrix.toml --variants 'bl1_*'    only some variants of the campaign's axes
  dbdrift run pg18.toml --cluster tcp://sched:8786   its tests split over the hosts running `dbdrift worker`

exit status: 0 all measured, 1 some run or target failed (the rest is stored) or an error,
2 input refused before anything ran (a campaign key, test, target or version), 130 interrupted
by Ctrl-C or SIGTERM (rerun with --resume). `dbdrift docs campaign` lists the campaign keys.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("campaign", type=Path, help="campaign file (TOML)")
    add_common(parser)
    add_variants(parser)


def apply_overrides(spec: CampaignSpec, args: argparse.Namespace) -> CampaignSpec:
    if not spec.caps.counts_instructions:
        sysbench_only = [flag for flag, on in (("--tests", args.tests),
                                               ("--count-instructions", getattr(args, "count_instructions", False)),
                                               ("--instructions-only", getattr(args, "instructions_only", False)),
                                               ("--simulate-cache", getattr(args, "simulate_cache", False)),
                                               ("--flamegraph", getattr(args, "flamegraph", False))) if on]
        if sysbench_only:
            raise UserError(f"{sysbench_only[0]} applies to sysbench campaigns; {spec.name} is {spec.caps.title}",
                            spec.caps.sysbench_flags_hint, exit_code=2)
    if args.tests:
        names = options.split_list(args.tests)
        spec = replace(spec, tests=tuple(select_tests(names)), test_names=tuple(names))
    if getattr(args, "flamegraph", False):
        spec = replace(spec, flamegraphs=True)
    if getattr(args, "simulate_cache", False):
        spec = replace(spec, count_instructions=True, simulate_cache=True)
    if getattr(args, "count_instructions", False) or getattr(args, "instructions_only", False):
        spec = replace(spec, count_instructions=True, timed=not getattr(args, "instructions_only", False))
    return with_base(spec, getattr(args, "base", None))


def execute(spec: CampaignSpec, args: argparse.Namespace) -> int:
    memory = psutil.virtual_memory()
    order_note = None
    if cluster_address(spec, args) is None:  # on a cluster each unit fits its order to its own host's memory
        spec, order_note = fit_order(spec, memory.total, memory.available)
    if getattr(args, "check", False):
        return check.main(spec, args, note=order_note)
    # what --check refuses, run refuses before the store or a server is touched
    check.preflight(spec, rundir.work_dir() if cluster_address(spec, args) is None else None)
    progress = ConsoleProgress(verbosity=args.verbosity)
    if order_note:
        progress.message(order_note)
    if durability_note(spec):
        progress.message(f"warning: {durability_note(spec)}")
    with campaign_lock(args.store, spec.name):  # a second run of this campaign refuses here
        rundir.stop_orphans(progress.message)
        store = Store(args.store)
        for note in store.notes:
            progress.message(note)
        if store.imported:
            progress.message(f"imported {store.imported} results kept in {store.journal_path} while the store "
                             "was busy")
        try:
            return _run(spec, args, store, progress)
        finally:
            store.close()
            if store.journaled and store.journal_path.exists():
                progress.message(
                    f"the store was locked by another program: {store.journaled} results are kept in "
                    f"{store.journal_path} (hint: the next dbdrift command that opens {args.store} imports them)")
            elif store.journaled:
                progress.message(f"{store.journaled} results were kept in {store.journal_path} while another "
                                 "program locked the store, and are now in the store")


def base_note(spec: CampaignSpec) -> str | None:
    if spec.caps.per_test_runs and len(spec.targets) > 1 and spec.base_is_implicit:
        return (f"base: {spec.base.name} (the first target; set base = true on a target, or pass --base, "
                "to choose another)")
    return None


def cluster_address(spec: CampaignSpec, args: argparse.Namespace) -> str | None:
    """--cluster, else the campaign's [cluster] address; None runs on this host."""
    if getattr(args, "cluster", None):
        return cluster_address_of(args.cluster, "--cluster")
    return spec.cluster.address if spec.cluster else None


def _run(spec: CampaignSpec, args: argparse.Namespace, store: Store, progress: ConsoleProgress) -> int:
    if base_note(spec):
        progress.message(base_note(spec))
    address = cluster_address(spec, args)
    if address is not None:
        return _run_on_cluster(spec, args, store, progress, address)
    outcome = Runner(spec, store, resume=args.resume, progress=progress, workload=workload_of(spec)).run()
    progress.message(f"stored {outcome.summary()} in {args.store}")
    if spec.count_instructions:
        progress.message(f"stored {outcome.instructions_ok} instruction counts "
                         f"({outcome.instructions_failed} failed) in {args.store}")
    if not args.no_report:
        print_report(spec, store, outcome.campaign_id, args)
    return 1 if outcome.failed_targets or outcome.runs_failed or outcome.instructions_failed else 0


def _run_on_cluster(spec: CampaignSpec, args: argparse.Namespace, store: Store, progress: ConsoleProgress,
                    address: str) -> int:
    summary = cluster.run(spec, store, address, progress, args.resume)
    if not args.no_report:
        for kind, campaign_id in summary.campaigns.items():
            if kind is not None and args.format in ("text", "markdown"):
                sys.stdout.write(f"\n## host kind {kind} (campaign {spec.name}@{kind})\n\n")
            print_report(spec, store, campaign_id, args)
    return 1 if summary.failed else 0


def print_report(spec: CampaignSpec, store: Store, campaign_id: int, args: argparse.Namespace) -> None:
    workload = workload_of(spec)
    if workload.build_report is not None:
        sys.stdout.write(report_cli.workload_report(store, campaign_id, workload, args.format))
    else:
        data = build_report(store, str(campaign_id), None, False, noise_floor="auto")
        sys.stdout.write(report_cli.render(data, args.format, report_cli.use_color(args.color)))
        if getattr(args, "chain_view", False) and args.format == "text":  # demo of a version chain
            data = build_report(store, str(campaign_id), None, True, noise_floor="auto")
            sys.stdout.write("\n" + report_cli.render(data, args.format, report_cli.use_color(args.color)))


def main(args: argparse.Namespace) -> int:
    spec = apply_overrides(load_campaign(args.campaign, campaign_sets(args)), args)
    return execute(spec, args)
