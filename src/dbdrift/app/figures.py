"""Figures a campaign accepts but that measure little: measured runs too short to give their cells
an interval, more client threads than this host's CPUs can serve. Warned about with the figure
and why (by `--check` and as `run` starts), never refused: a short smoke run or an overloaded
host may be what the user means."""
from __future__ import annotations

from dbdrift import cpus
from dbdrift.plan.campaign import CampaignSpec

PAIRS_PER_BATCH = 4  # analysis/noise.py: a batch of the paired-turns interval holds at least this many pairs
FEW_BATCHES = 10  # fewer batches than this give an interval few degrees of freedom: wide, or none below 3
THREADS_PER_CPU = 4  # more client threads than this per CPU queue for the CPUs with their server connections


def warnings(spec: CampaignSpec, host_cpus: int | None = None) -> list[str]:
    """One line per figure of `spec` that measures little on a host of `host_cpus` CPUs (default:
    those dbdrift may use here): for workloads with per-test runs (sysbench), measured durations
    too short for an interval and a thread count too large for the CPUs."""
    if not spec.caps.per_test_runs or not spec.timed:
        return []
    return _short_runs(spec) + _threads(spec, host_cpus if host_cpus is not None else len(cpus.available()))


def _short_runs(spec: CampaignSpec) -> list[str]:
    """A run in turns gives its interval pairs of turns (one turn of each target of its engine
    family), cut into batches of PAIRS_PER_BATCH; a run one at a time gives reporting intervals,
    cut into batches of one or more (analysis/noise.py). Fewer than FEW_BATCHES batches and
    the cells come out too noisy or without an interval."""
    kinds = {t.duration_kind for t in spec.tests}
    # each kind's key (read_s, write_s, insert_s) and its seconds, as the workload measures them
    lengths = spec.workload_plan.measured_lengths(spec)
    used = {f"{kind}_s": seconds for kind, seconds in lengths.items() if kind in kinds}
    if spec.order == "turns" and len(spec.targets) > 1:
        per_run = max(sum(1 for t in spec.targets if _family(t.engine) == family)
                      for family in {_family(t.engine) for t in spec.targets})
        turn_s = spec.workload_plan.turn_s(spec)
        sample_s, need = turn_s * per_run, FEW_BATCHES * PAIRS_PER_BATCH
        unit = f"pairs of turns (turn_s {_seconds(turn_s)}, {per_run} targets a run)"
    else:
        sample_s, need = spec.interval_s, FEW_BATCHES
        unit = f"reporting intervals (interval_s {_seconds(spec.interval_s)})"
    found = []
    for seconds in sorted(set(used.values())):
        if seconds / sample_s >= need:
            continue
        keys = [key for key, value in used.items() if value == seconds]
        named = keys[0] if len(keys) == 1 else ", ".join(keys[:-1]) + " and " + keys[-1]
        found.append(f"{named} {_seconds(seconds)}: a measured run gives about {seconds / sample_s:.0f} {unit}, "
                     f"fewer than the {need} an interval wants, so its cells come out too noisy or without an "
                     f"interval; measure for {_seconds(need * sample_s)} or more (--duration, or these keys in a "
                     f"campaign file)")
    return found


def _threads(spec: CampaignSpec, host_cpus: int) -> list[str]:
    most = max(spec.workload_plan.threads(spec))
    if most <= THREADS_PER_CPU * max(host_cpus, 1):
        return []
    return [f"threads {most}: {most} client threads on {host_cpus} CPU(s) ({most / max(host_cpus, 1):.0f} per CPU), "
            f"each with a server connection to serve: they queue for the CPUs, so the run measures the host's "
            f"scheduler more than the server and its intervals widen; at most {THREADS_PER_CPU * max(host_cpus, 1)} "
            f"threads on this host, or a host with more CPUs"]


def _family(engine: str) -> str:
    """Targets of one family share a driver run (PostgreSQL; MySQL and MariaDB)."""
    return "postgres" if engine == "postgres" else "mysql"


def _seconds(value: float) -> str:
    return f"{value * 1000:g}ms" if value < 1 else f"{value:g}s"
