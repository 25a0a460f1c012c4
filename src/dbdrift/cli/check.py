"""`dbdrift run --check CAMPAIGN.toml`: validate, find every target's binaries, make every check
`run` makes before a server starts, ask each cached server whether it accepts its settings, and
print the plan.

Starts no server, downloads nothing and writes nothing but a scratch directory in the work
directory for the server's settings check, removed at once (the store is only read). What it
could not check (a build not cached yet, a version without a settings check) it names.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from dbdrift import cpus, env
from dbdrift.errors import UserError
from dbdrift.plan.campaign import CampaignSpec, cluster_address
from dbdrift.store.store import Store
from dbdrift.plan.axes import durability_note
from dbdrift.plan.expand import MEASURED, SETTLES, SETUP, WARM, SettleStep, expand
from dbdrift.runner import instructions
from dbdrift.runner.campaign import COUNTS, campaign_estimate, estimate_by_part
from dbdrift.workloads.tpcc.results import tpcc_setup_text
from dbdrift.server import engines, rundir
from dbdrift.units import format_duration


def main(spec: CampaignSpec, args: argparse.Namespace, out=None, note: str | None = None) -> int:
    """Print what `run` would do; a UserError for the first problem found."""
    out = out or sys.stdout
    write = lambda line="": out.write(line + "\n")  # noqa: E731
    work = rundir.work_dir()
    preflight(spec, work)
    check_store(args.store)
    if spec.count_instructions:
        instructions.require_valgrind()
    write(f"campaign {spec.name} ({spec.source}): {spec.workload}, order {spec.order}")
    if note:
        write(f"  {note}")
    if spec.axes:
        sizes = " x ".join(f"{a.name} ({len(a.levels)}: {', '.join(a.levels)})" for a in spec.axes)
        write(f"  axes: {sizes}; {sum(1 for t in spec.targets if t.variant)} variants")
    for target in spec.targets:
        where = engines.locate(target, env.cache_dir())
        role = " (base)" if target.name == spec.base.name else ""
        write(f"  target {target.name}{role}: {target.engine}, {where}")
    unchecked = check_server_settings(spec, work)
    if spec.base_is_implicit and len(spec.targets) > 1:
        write(f"  base: {spec.base.name} is the first target; set base = true on a target, or pass --base, "
              "to choose another")
    if spec.workload == "insert-benchmark":
        write(f"  steps: {', '.join(spec.ibench_steps)} per target" + (
            f", {spec.repeats} times (repeats)" if spec.repeats > 1 else ""))
    elif spec.workload == "tpcc":
        write(f"  TPROC-C: {tpcc_setup_text(spec.to_dict())} per target")
    else:
        plans = expand(spec)
        counted = [p for p in plans if instructions.supports(p.target.engine)]
        runs = sum(1 for p in plans for r in p.runs if not r.warm) if spec.timed else 0
        write(f"  tests: {len(spec.tests)} ({', '.join(spec.test_names)}), threads {list(spec.threads)}, "
              f"repeats {spec.repeats}: {runs} timed runs")
        if spec.count_instructions:
            write(f"  instruction counts: {sum(len(instructions.tests_in_run_order(p)) for p in counted)} "
                  "(test, target) pairs under callgrind")
    address = cluster_address(args.cluster, "--cluster") if getattr(args, "cluster", None) else \
        spec.cluster.address if spec.cluster else None
    if address:
        kinds = ", ".join(spec.cluster.hosts) if spec.cluster and spec.cluster.hosts else None
        units = spec.cluster.units if spec.cluster and spec.cluster.units else "one per worker"
        what = "tests" if spec.workload == "sysbench" else "repeats"
        write(f"  cluster {address}: the {what} split into units ({units})"
              + (f", the whole campaign per host kind: {kinds}" if kinds else "")
              + "; each worker fetches and runs in its own cache and work directory")
    write(f"  store: {args.store}; servers in {work}")
    write(f"  expected time: about {format_duration(campaign_estimate(spec)[0])}"
          + (" for the whole campaign, by part:" if spec.workload == "sysbench" else ""))
    if spec.workload == "sysbench":
        for line in time_lines(spec):
            write(f"    {line}")
    durability = durability_note(spec)
    if durability:
        write(f"  warning: {durability}")
    for line in unchecked:
        write(f"  not checked: {line}")
    write("ok: nothing was started (drop --check to run it)")
    return 0


def placement_option(spec: CampaignSpec) -> str | tuple[str, str]:
    """The `cpus` option the runner places servers by: "auto" leaves the Insert Benchmark and
    TPROC-C unpinned (several clients against one server at a time, not turns)."""
    return "shared" if spec.workload in ("insert-benchmark", "tpcc") and spec.cpus == "auto" else spec.cpus


def preflight(spec: CampaignSpec, work: Path | None) -> None:
    """The checks `run` makes before it opens the store or starts a server, each a UserError
    (exit 2): setting names dbdrift owns (from the file or --set); with this host's `work`
    directory (None on a cluster, whose hosts differ), CPUs the host lacks and a work directory
    too long for the servers' socket paths."""
    try:
        for target in spec.targets:
            engines.check_setting_names(target)
        if work is not None:
            cpus.place(placement_option(spec))
    except UserError as exc:
        raise UserError(exc.message, exc.hint, exit_code=2) from exc
    if work is not None:
        rundir.check_socket_paths(work, spec.name, [(t.name, t.engine) for t in spec.targets])


def check_store(store: Path) -> None:
    """A store that exists must be one `run` can write to: dbdrift's, intact and of a schema this
    dbdrift knows (the store's own checks, on a read-only open that changes nothing)."""
    if not store.exists():
        return
    if store.is_dir():
        raise UserError(f"store {store} is a directory, not a results store",
                        "give --store a results store, or a path where none exists yet to make a new one",
                        exit_code=2)
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


def time_lines(spec: CampaignSpec) -> list[str]:
    """Where a sysbench campaign's expected time goes, and which key bounds each part: read_s
    and write_s (compare's --duration) bound the measured and warm-up runs, settle_s the settles."""
    plans = expand(spec)
    counted = [p for p in plans if instructions.supports(p.target.engine)]
    parts = estimate_by_part(spec, plans, counted)
    kinds = {t.duration_kind for t in spec.tests}
    each = " / ".join(f"{kind}_s {getattr(spec, f'{kind}_s'):g}s" for kind in ("read", "write", "insert")
                      if kind in kinds)
    warm = sorted({r.name for p in plans[:1] for r in p.runs if r.warm})
    settles = sum(isinstance(x, SettleStep) for x in plans[0].steps) if plans else 0
    together = spec.order == "turns" and len(plans) > 1
    lines = []
    if parts.get(MEASURED):
        lines.append(f"{MEASURED} {format_duration(parts[MEASURED])}: {each} each, plus warmup_s {spec.warmup_s:g}s")
    if parts.get(WARM):
        lines.append(f"{WARM} {format_duration(parts[WARM])}: {', '.join(warm)} per target, not reported "
                     f"(read_s {spec.read_s:g}s each" + (f"; scan.warm scan_warm_s {spec.scan_warm_s:g}s)"
                                                           if "scan.warm" in warm else ")"))
    if parts.get(SETTLES):
        lines.append(f"{SETTLES} {format_duration(parts[SETTLES])}: {settles} of settle_s "
                     f"{spec.settle_total_s():.0f}s" + (", all targets resting together" if together else " per target"))
    if parts.get(SETUP):
        lines.append(f"{SETUP} {format_duration(parts[SETUP])}")
    if parts.get(COUNTS):
        lines.append(f"{COUNTS} {format_duration(parts[COUNTS])}")
    if parts.get(WARM) or parts.get(SETTLES):
        lines.append("compare's --duration sets read_s and write_s, so it bounds the measured and warm-up runs; the "
                     "settles (settle_s) and scan.warm (scan_warm_s) do not follow it: --set settle_s=10 shortens "
                     "the settles, --set warm_runs=false drops the warm-ups (both change what is measured: "
                     "`dbdrift docs methodology`)")
    if parts.get(WARM, 0.0) > parts.get(MEASURED, 0.0):
        lines.append(f"note: the warm-up runs take longer than the measured runs: they last read_s ({spec.read_s:g}s), "
                     "whatever write_s is; a shorter read_s or warm_runs = false shortens them")
    return lines
