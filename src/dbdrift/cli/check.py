"""`dbdrift run --check CAMPAIGN.toml`: validate, find every target's binaries, print the plan.

Starts no server, downloads nothing and writes nothing (not even the store): a campaign that
passes here fails later only for reasons that need a server (a setting the server rejects).
"""
from __future__ import annotations

import argparse
import sys

from dbdrift import env
from dbdrift.plan.campaign import CampaignSpec, cluster_address
from dbdrift.plan.axes import durability_note
from dbdrift.plan.expand import MEASURED, SETTLES, SETUP, WARM, SettleStep, expand
from dbdrift.runner import instructions
from dbdrift.runner.campaign import COUNTS, campaign_estimate, estimate_by_part
from dbdrift.cli.ibench_report import tpcc_setup_text
from dbdrift.server import engines, rundir
from dbdrift.units import format_duration


def main(spec: CampaignSpec, args: argparse.Namespace, out=None, note: str | None = None) -> int:
    """Print what `run` would do; a UserError for the first problem found."""
    out = out or sys.stdout
    write = lambda line="": out.write(line + "\n")  # noqa: E731
    work = rundir.work_dir()
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
    write("ok: nothing was started (drop --check to run it)")
    return 0


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
