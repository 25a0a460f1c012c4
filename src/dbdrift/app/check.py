"""`run --check`: validate, find every target's binaries, make every check `run` makes before a
server starts, ask each cached server whether it accepts its settings, and gather the plan.

Starts no server, downloads nothing and writes nothing but a scratch directory in the work
directory for the server's settings check, removed at once (and, when the build cache does not
exist yet, an empty directory where it would be made, to see that it can be). The store is only
read. What it could not check (a build not cached yet, a version without a settings check) it names.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dbdrift import cpus, env
from dbdrift.app import cluster, detect, figures
from dbdrift.errors import UserError
from dbdrift.metrics import callgrind
from dbdrift.plan.campaign import durability_note
from dbdrift.plan.campaign import CampaignSpec, cluster_address
from dbdrift.runner.campaign import placement_option
from dbdrift.server import engines, rundir
from dbdrift.store import guard
from dbdrift.store.store import Store
from dbdrift.workloads.registry import workload_of


@dataclass(frozen=True)
class CheckedPlan:
    """What `run` would do, as --check found it: each target with where its binaries are, the
    workload's own lines, the cluster it would use, the expected time and what went unchecked."""
    spec: CampaignSpec
    note: str | None
    located: tuple[tuple[str, bool, str, str], ...]  # (target, is the base, engine, where)
    workload_lines: tuple[str, ...]
    address: str | None
    cluster_parts: str
    store: Path
    work: Path
    expected_s: float
    time_lines: tuple[str, ...]
    durability: str | None
    unchecked: tuple[str, ...]
    warnings: tuple[str, ...] = ()  # figures that measure little (app/figures.py)


def plan(spec: CampaignSpec, store: Path, cluster_flag: str | None, note: str | None = None,
         resume: bool = False) -> CheckedPlan:
    """Every check `run` makes before a server starts, and the plan; a UserError for the first
    problem found. With `resume`, the plan and its time are what --resume would still run."""
    workload = workload_of(spec)
    work = rundir.work_dir()
    preflight(spec, work)
    check_store(store)
    spec = planned(spec, store)
    if spec.workload_plan.counts_instructions(spec):
        callgrind.require_valgrind()
    located = tuple((t.name, t.name == spec.base.name, t.engine, str(engines.locate(t, env.cache_dir())))
                    for t in spec.targets)
    if any(t.version for t in spec.targets):  # run caches what it fetches there
        env.check_cache_dir(env.cache_dir())
    workload.check_builds(spec, env.cache_dir())
    unchecked = check_server_settings(spec, work)
    address = cluster_address(cluster_flag, "--cluster") if cluster_flag else \
        spec.cluster.address if spec.cluster else None
    if spec.detect is not None:
        detect.refuse_cluster(address)
    if address is not None:
        cluster.require()  # run refuses a cluster without Dask before it makes the store
    expected = spec.detect_plan["expected_s"] if spec.detect_plan else workload.estimate(spec)[0]
    lines, time_lines = workload.check_lines(spec) + detect.check_lines(spec), workload.time_lines(spec)
    if resume:
        left = resumed(spec, store)
        lines.append(left.line)
        if left.expected_s is not None:  # the parts of the whole campaign would not add up to what is left
            expected, time_lines = left.expected_s, []
    return CheckedPlan(spec, note, located, tuple(lines), address, workload.caps.cluster_parts, store, work, expected,
                       tuple(time_lines), durability_note(spec), tuple(unchecked), tuple(figures.warnings(spec)))


@dataclass(frozen=True)
class Resumed:
    """What `run --resume` would still run of a campaign the store holds: a line saying so, and
    its expected seconds (None: nothing stored, the whole campaign runs)."""
    line: str
    expected_s: float | None


def resumed(spec: CampaignSpec, store: Path) -> Resumed:
    """What --resume would run, read from the store read-only, as the runner decides it
    (Workload.resume_left): per target the measured runs it lacks (sysbench), or per target and
    repeat a complete result (the workloads that run whole repeats)."""
    if not store.exists():
        return Resumed(f"--resume: {store} does not exist yet; the whole campaign runs", None)
    opened = Store(store, read_only=True)
    try:
        campaign_id = opened.latest_campaign_id(spec.name)
        if campaign_id is None:
            return Resumed(f"--resume: no campaign {spec.name} in {store}; the whole campaign runs", None)
        line, expected = workload_of(spec).resume_left(opened, campaign_id, spec)
        return Resumed(f"--resume of campaign #{campaign_id}: {line}", expected)
    finally:
        opened.close()


def preflight(spec: CampaignSpec, work: Path | None) -> None:
    """The checks `run` makes before it opens the store or starts a server, each a UserError
    (exit 2): setting names dbdrift owns (from the file or --set); with this host's `work`
    directory (None on a cluster, whose hosts differ), CPUs the host lacks and a work directory
    too long for the servers' socket paths; what the workload refuses without a build
    (Workload.preflight: vector search without numpy, or on MySQL)."""
    try:
        for target in spec.targets:
            engines.check_setting_names(target)
        if work is not None:
            cpus.place(placement_option(spec))
    except UserError as exc:
        raise UserError(exc.message, exc.hint, exit_code=2) from exc
    if work is not None:
        rundir.check_socket_paths(work, spec.name, [(t.name, t.engine) for t in spec.targets])
    workload_of(spec).preflight(spec)


def planned(spec: CampaignSpec, store: Path) -> CampaignSpec:
    """The campaign with its detect plan (app/detect.py), from the store read only; as it is
    without detect."""
    if spec.detect is None:
        return spec
    if not store.exists():
        return detect.planned(spec, None)
    opened = Store(store, read_only=True)
    try:
        return detect.planned(spec, opened)
    finally:
        opened.close()


def check_store(store: Path) -> None:
    """The store must be one `run` can write to: in a folder where its files can be made (a new
    one too), and, where it exists, dbdrift's, intact and of a schema this dbdrift knows (the
    store's own checks, on a read-only open that changes nothing)."""
    if store.is_dir():
        raise UserError(f"store {store} is a directory, not a results store",
                        "give --store a results store, or a path where none exists yet to make a new one",
                        exit_code=2)
    guard.require_writable(store)
    if store.exists():
        Store(store, read_only=True).close()


def check_server_settings(spec: CampaignSpec, work: Path) -> list[str]:
    """Ask each target's server whether it accepts the configuration dbdrift would write (in a
    scratch directory, removed after); a UserError (exit 2) naming every target it rejects and
    the server's own words. Returns what could not be checked, one line per target."""
    rejected, unchecked = [], []
    for target in spec.targets:
        try:  # locate() above already refused what run cannot resolve
            install = engines.cached_install(target, env.cache_dir())
        except UserError as exc:
            if exc.exit_code == 2:  # what run refuses before measuring (a cached server that cannot run)
                raise
            unchecked.append(f"target {target.name}'s settings by the server ({exc.message})")
            continue
        if install is None:
            unchecked.append(f"target {target.name}'s settings by the server ({target.engine} {target.version} "
                             "is not cached; `run` downloads it and its server checks them at start)")
            continue
        scratch = Path(tempfile.mkdtemp(prefix=".check-", dir=work))
        try:
            problems, why_not = engines.make_server(target, install, scratch).check_settings()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        if why_not:
            unchecked.append(f"target {target.name}'s settings by the server ({why_not})")
        rejected += [f"target {target.name} ({install.engine} {install.version}): {p}" for p in problems]
    if rejected:
        raise UserError("the server rejects its settings:\n  " + "\n  ".join(rejected),
                        "fix the setting in the campaign file (or --set); `dbdrift config show` lists each "
                        "setting and where it comes from", exit_code=2)
    return unchecked
