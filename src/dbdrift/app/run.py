"""A campaign executed: its command-line overrides applied, every check `--check` makes, the lock,
the store, the runs on this host or a cluster, and each stored campaign handed to the caller for
its report."""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import psutil

from dbdrift.app import check, cluster, detect, figures
from dbdrift.app.inputs import split_list
from dbdrift.errors import UserError
from dbdrift.plan.campaign import durability_note
from dbdrift.plan.campaign import CampaignSpec, with_base
from dbdrift.workloads.registry import load_campaign
from dbdrift.plan.campaign import cluster_address as cluster_address_of
from dbdrift.runner import Runner
from dbdrift.runner.memory import fit_order
from dbdrift.runner.progress import ProgressSink
from dbdrift.server import rundir
from dbdrift.store.lock import campaign_lock
from dbdrift.store.store import Store
from dbdrift.workloads.registry import workload_of

__all__ = ["CampaignSpec", "Overrides", "RunOutcome", "apply_overrides", "base_note", "cluster_address", "execute",
           "load"]


@dataclass(frozen=True)
class Overrides:
    """What the command line changes in a campaign: the tests (each --tests as written, a
    comma-separated list), the measuring flags, the base and the cluster address (--cluster)."""
    tests: tuple[str, ...] = ()
    count_instructions: bool = False
    instructions_only: bool = False
    simulate_cache: bool = False
    flamegraph: bool = False
    base: str | None = None
    cluster: str | None = None


@dataclass(frozen=True)
class RunOutcome:
    """What `execute` did: the exit status (0 all measured, 1 something failed) and the campaigns
    stored, in order, each with its host kind (None: one kind, or this host)."""
    exit_code: int
    campaigns: tuple[tuple[str | None, int], ...] = ()


def load(path: Path, sets: list[str]) -> CampaignSpec:
    return load_campaign(path, sets)


def apply_overrides(spec: CampaignSpec, overrides: Overrides) -> CampaignSpec:
    """The campaign with the command line's overrides; flags of sysbench alone are refused (exit 2)
    on a campaign of another workload."""
    if not spec.caps.counts_instructions:
        sysbench_only = [flag for flag, on in (("--tests", overrides.tests),
                                               ("--count-instructions", overrides.count_instructions),
                                               ("--instructions-only", overrides.instructions_only),
                                               ("--simulate-cache", overrides.simulate_cache),
                                               ("--flamegraph", overrides.flamegraph
                                                and not spec.caps.records_flamegraphs)) if on]
        if sysbench_only:
            raise UserError(f"{sysbench_only[0]} applies to sysbench campaigns; {spec.name} is {spec.caps.title}",
                            spec.caps.sysbench_flags_hint, exit_code=2)
    if overrides.tests:
        names = split_list(list(overrides.tests))
        spec = replace(spec, tests=tuple(workload_of(spec).catalog.select(names)), test_names=tuple(names))
    if overrides.flamegraph:
        spec = replace(spec, flamegraphs=True)
    if overrides.simulate_cache or overrides.count_instructions or overrides.instructions_only:
        spec = spec.workload_plan.counting(spec, overrides.simulate_cache)
    if overrides.count_instructions or overrides.instructions_only:
        spec = replace(spec, timed=not overrides.instructions_only)
    return with_base(spec, overrides.base)


def cluster_address(spec: CampaignSpec, flag: str | None) -> str | None:
    """--cluster (`flag`), else the campaign's [cluster] address; None runs on this host."""
    if flag:
        return cluster_address_of(flag, "--cluster")
    return spec.cluster.address if spec.cluster else None


def base_note(spec: CampaignSpec) -> str | None:
    if spec.caps.per_test_runs and len(spec.targets) > 1 and spec.base_is_implicit:
        return (f"base: {spec.base.name} (the first target; set base = true on a target, or pass --base, "
                "to choose another)")
    return None


def fitted(spec: CampaignSpec, cluster_flag: str | None) -> tuple[CampaignSpec, str | None]:
    """The campaign with its order fitted to this host's memory, and the note saying so; on a
    cluster each unit fits its order to its own host's memory, so the campaign is kept."""
    if cluster_address(spec, cluster_flag) is not None:
        return spec, None
    memory = psutil.virtual_memory()
    return fit_order(spec, memory.total, memory.available)


# The caller's report of a stored campaign: (store, campaign id, host kind), called while the store is open.
Reporter = Callable[[Store, int, "str | None"], None]


def execute(spec: CampaignSpec, store_path: Path, progress: ProgressSink, *, resume: bool = False,
            cluster_flag: str | None = None, order_note: str | None = None,
            report: Reporter | None = None) -> RunOutcome:
    """Run the campaign (already fitted, see `fitted`) into the store at `store_path`, after the
    checks `--check` makes; `report` is called for each stored campaign before the store closes.
    Progress and notes go through `progress`."""
    # what --check refuses, run refuses before the store or a server is touched
    check.preflight(spec, rundir.work_dir() if cluster_address(spec, cluster_flag) is None else None)
    if cluster_address(spec, cluster_flag) is not None:
        cluster.require()  # Dask missing: refused before the store is made, as --check refuses it
    if order_note:
        progress.message(order_note)
    if durability_note(spec):
        progress.message(f"warning: {durability_note(spec)}")
    for line in figures.warnings(spec):
        progress.message(f"warning: {line}")
    with campaign_lock(store_path, spec.name):  # a second run of this campaign refuses here
        rundir.stop_orphans(progress.message)
        store = Store(store_path)
        for note in store.notes:
            progress.message(note)
        if store.imported:
            progress.message(f"imported {store.imported} results kept in {store.journal_path} while the store "
                             "was busy")
        try:
            return _run(spec, store_path, store, progress, resume, cluster_flag, report)
        finally:
            store.close()
            if store.journaled and store.journal_path.exists():
                progress.message(
                    f"the store was locked by another program: {store.journaled} results are kept in "
                    f"{store.journal_path} (hint: the next dbdrift command that opens {store_path} imports them)")
            elif store.journaled:
                progress.message(f"{store.journaled} results were kept in {store.journal_path} while another "
                                 "program locked the store, and are now in the store")


def _run(spec: CampaignSpec, store_path: Path, store: Store, progress: ProgressSink, resume: bool, cluster_flag: str | None,
         report: Reporter | None) -> RunOutcome:
    note = base_note(spec)
    if note:
        progress.message(note)
    address = cluster_address(spec, cluster_flag)
    if spec.detect is not None:
        detect.refuse_cluster(address)
        spec = detect.planned(spec, store)
        for line in detect.check_lines(spec)[:2]:
            progress.message(line.strip())
    if address is not None:
        summary = cluster.run(spec, store, address, progress, resume)
        for kind, campaign_id in summary.campaigns.items():
            if report is not None:
                report(store, campaign_id, kind)
        return RunOutcome(1 if summary.failed else 0, tuple(summary.campaigns.items()))
    workload = workload_of(spec)
    runner = Runner(spec, store, resume=resume, progress=progress, workload=workload,
                    estimates=detect.cell_estimates(store, workload) if spec.detect_plan else None,
                    moved=detect.counts_moved(store, spec.detect) if spec.detect_plan and spec.detect else None)
    try:
        outcome = runner.run()
    except KeyboardInterrupt:  # what was stored before it, the run cut short counted as interrupted
        if runner.outcome is not None and spec.timed:
            progress.message(f"stored {runner.outcome.summary()} in {store_path}")
        raise
    if spec.timed:  # a campaign of counts only ran no timed run: "stored 0 runs" would read as a failure
        progress.message(f"stored {outcome.summary()} in {store_path}")
    if spec.workload_plan.counts_instructions(spec):
        progress.message(f"stored {outcome.instructions_ok} instruction counts "
                         f"({outcome.instructions_failed} failed) in {store_path}")
    if report is not None:
        report(store, outcome.campaign_id, None)
    failed = outcome.failed_targets or outcome.runs_failed or outcome.instructions_failed
    return RunOutcome(1 if failed else 0, ((None, outcome.campaign_id),))
