"""The plan `run --check` prints: the campaign, each target and where its binaries come from, the
workload's own lines, the cluster, the store, the expected time and what went unchecked."""
from __future__ import annotations

from dbdrift.quantities import format_duration


def check_lines(plan) -> list[str]:
    """The lines of an app.check.CheckedPlan, the last one saying nothing was started."""
    spec = plan.spec
    lines = [f"campaign {spec.name} ({spec.source}): {spec.workload}, order {spec.order}"
             + (f", round_order {spec.round_order}" if len(spec.targets) > 2 or spec.round_order != "balanced" else "")]
    if plan.note:
        lines.append(f"  {plan.note}")
    if spec.axes:
        sizes = " x ".join(f"{a.name} ({len(a.levels)}: {', '.join(a.levels)})" for a in spec.axes)
        lines.append(f"  axes: {sizes}; {sum(1 for t in spec.targets if t.variant)} variants")
    for name, is_base, engine, where in plan.located:
        lines.append(f"  target {name}{' (base)' if is_base else ''}: {engine}, {where}")
    if spec.base_is_implicit and len(spec.targets) > 1:
        lines.append(f"  base: {spec.base.name} is the first target; set base = true on a target, or pass --base, "
                     "to choose another")
    lines += [f"  {line}" for line in plan.workload_lines]
    if plan.address:
        kinds = ", ".join(spec.cluster.hosts) if spec.cluster and spec.cluster.hosts else None
        units = spec.cluster.units if spec.cluster and spec.cluster.units else "one per worker"
        lines.append(f"  cluster {plan.address}: the {plan.cluster_parts} split into units ({units})"
                     + (f", the whole campaign per host kind: {kinds}" if kinds else "")
                     + "; each worker fetches and runs in its own cache and work directory")
    lines.append(f"  store: {plan.store}; servers in {plan.work}")
    lines.append(f"  expected time: about {format_duration(plan.expected_s)}"
                 + (" for the whole campaign, by part:" if plan.time_lines else ""))
    lines += [f"    {line}" for line in plan.time_lines]
    if plan.durability:
        lines.append(f"  warning: {plan.durability}")
    lines += [f"  warning: {line}" for line in plan.warnings]
    lines += [f"  not checked: {line}" for line in plan.unchecked]
    lines.append("ok: nothing was started (drop --check to run it)")
    return lines
