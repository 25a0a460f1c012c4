"""Run TPROC-C (docs/methodology.md) for one target: a fresh server, the driver's load of W
warehouses, a ramp-up, the measured window with the host sampled over it, then the consistency
conditions of TPC-C clause 3.3.2. The run is stored as soon as it ends, whatever its status.

A violated condition fails the run loudly (stored with the violations, the campaign exits
non-zero): a result from a database the transactions left inconsistent is not a result.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from dbdrift.workloads.tpcc import catalog as tpcc
from dbdrift.driver import process
from dbdrift.errors import DriverError, ServerError, interrupted_error
from dbdrift.metrics.sampler import Delta
from dbdrift.model import EngineEvents, InstallInfo, JsonObject, TpccResult
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.runner.campaign import CampaignOutcome, Runner, target_repeats
from dbdrift.runner.detect import planned_repeats
from dbdrift.runner.session import TargetSession
from dbdrift.workloads.tpcc.plan import params, procedures_of

MAX_VIOLATIONS = 5  # kept per condition: enough to see the pattern


def plan_s(spec: CampaignSpec) -> float:
    """Expected seconds of one target's load, ramp-up and window."""
    sizes = params(spec)
    return tpcc.load_estimate_s(sizes) + sizes.rampup_s + sizes.duration_s + 10.0


def driver_spec(session: TargetSession, phase: str, repeat: int = 0) -> JsonObject:
    sizes = params(session.spec)
    # Both phases carry every field (the driver has no defaults); load ignores the windows.
    clients = sizes.loaders(os.cpu_count() or 1) if phase == "load" else sizes.clients
    return {"backend": session.dialect.backend, "connection": session.conn, "seed": session.spec.seed + repeat,
            "phase": phase, "warehouses": sizes.warehouses, "procedures": procedures_of(session.target, sizes),
            "clients": clients,
            "rampup_s": sizes.rampup_s, "duration_s": sizes.duration_s, "interval_s": session.spec.interval_s}


def run_target(session: TargetSession, install: InstallInfo, repeat: int = 0) -> TpccResult:
    """Load, run and check on a fresh server; raises ServerError/DriverError when the target fails
    (its run stored first), KeyboardInterrupt after storing an interrupted run."""
    sizes = params(session.spec)
    session.start()
    suffix = f", repeat {repeat + 1}/{session.spec.repeats}" if session.spec.repeats > 1 else ""
    load_s = session.timed_step("load", f"load {sizes.warehouses} warehouse(s){suffix}",
                                lambda: _load(session, repeat), tpcc.load_estimate_s(sizes))
    result = run_window(session, repeat, load_s, suffix)
    if result.status == "ok" and sizes.consistency_checks:
        result = check(session, result)
    session.store.add_tpcc_run(session.target_id, result)
    _report_end(session, result, suffix)
    if result.status == "interrupted":
        raise KeyboardInterrupt
    if result.status != "ok":
        session.raise_if_dead()
        raise DriverError(f"{session.name}: TPROC-C {result.error}",
                          "the run is stored with the reason; see the server log" if "consistency" not in
                          (result.error or "") else "the violations are stored with the run (dbdrift report "
                          "--format json); a server that commits inconsistent data has a bug worth reporting")
    return result


def _load(session: TargetSession, repeat: int) -> JsonObject:
    return load(session, driver_spec(session, "load", repeat), tpcc.load_estimate_s(params(session.spec)))


def load(session: TargetSession, spec: JsonObject, expected_s: float) -> JsonObject:
    """The driver's TPROC-C load of `spec` (phase "load"); raises DriverError when it fails."""
    return process.run_load("tpcc", spec, expected_s, session.placement.driver, f"{session.name}: TPROC-C load",
                            "see the server log; a full disk or too small a server configuration are common causes")


def run_window(session: TargetSession, repeat: int, load_s: float | None, suffix: str = "") -> TpccResult:
    """Ramp-up and the measured window through the driver; the host is sampled from the line that
    opens the window to the one that closes it."""
    session.server.check_alive()
    sizes = params(session.spec)
    label = f"TPROC-C {sizes.clients} VU(s), {sizes.warehouses} warehouse(s){suffix}"
    session.progress.step_start(session.name, label, sizes.rampup_s + sizes.duration_s)
    pace = WindowPace(session, label, sizes.rampup_s + sizes.duration_s, clients=sizes.clients)
    out, window, engine, folded = sampled_run(session, driver_spec(session, "run", repeat),
                                              sizes.rampup_s + sizes.duration_s, pace.read)
    summary = out.output.summary or {}
    status, error = "ok", None
    if out.interrupted:
        status, error = "interrupted", interrupted_error()
    elif out.exit_code != 0 or not summary:
        status, error = "failed", process.fatal_message(out, "run")
    return TpccResult(
        target=session.name, status=status, warehouses=sizes.warehouses, clients=sizes.clients,
        procedures=procedures_of(session.target, sizes), elapsed_s=float(summary.get("elapsed_s") or 0.0),
        new_orders=int(summary.get("new_orders") or 0), transactions=int(summary.get("transactions") or 0),
        nopm=float(summary.get("nopm") or 0.0), tpm=float(summary.get("tpm") or 0.0),
        by_type=summary.get("by_type") or {},
        intervals=[{k: v for k, v in iv.items() if k not in ("type", "mono_s")} for iv in out.output.intervals],
        hardware=window.as_dict() if window else None, load_s=load_s, error=error, repeat=repeat,
        position=session.position, events=engine, folded=folded)


def sampled_run(session: TargetSession, spec: JsonObject, window_s: float,
                on_interval: Callable[[JsonObject], None] | None = None) -> tuple[process.DriverResult, Delta | None,
                                                                                EngineEvents | None,
                                                                                dict[str, int] | None]:
    """The driver's `tpcc` run of `spec` (ramp-up and window: `window_s`), the host sampled from
    the line that opens the measured window to the one that closes it, and the engine's own
    counters each second from the start of the ramp-up (its t_sec 0); each interval line is
    handed to `on_interval` (the step's progress, WindowPace)."""
    watchers = session.step_watchers()

    def on_line(obj: JsonObject) -> None:
        if obj.get("type") == "interval" and on_interval is not None:
            on_interval(obj)
        if obj.get("type") == "phase" and obj.get("phase") == "rampup":
            watchers.watch.mark_start()
        elif obj.get("type") == "phase" and obj.get("phase") == "measure":
            watchers.flame.start(window_s + 60)
            watchers.sampler.mark("start", obj.get("mono_s"))
        elif obj.get("type") == "phase" and obj.get("phase") == "end":
            watchers.sampler.mark("end", obj.get("mono_s"))

    try:
        out = process.run_driver("tpcc", spec, timeout_s=max(600.0, 3 * window_s + 300), on_line=on_line,
                                 on_start=watchers.on_start, cpus=session.placement.driver)
    finally:
        engine, folded, why = watchers.stop()
    if why:
        session.progress.message(f"{session.name}: {why}")
    return out, watchers.sampler.window(), engine, folded


class WindowPace:
    """A TPROC-C or CH-benCHmark run's progress, from its interval lines (docs/protocol.md `tpcc`):
    how far into the ramp-up and window (t_sec, from the ramp-up's start) and the rate now, NOPM
    of the virtual users and the analytical queries that ended in the interval; handed to the
    step `label` of `session`."""

    def __init__(self, session: TargetSession, label: str, window_s: float, clients: int, streams: int = 0) -> None:
        self.session, self.label, self.window_s = session, label, window_s
        self.clients, self.streams = clients, streams

    def read(self, obj: JsonObject) -> None:
        self.session.progress.step_progress(self.session.name, self.label, *self.now(obj))

    def now(self, interval: JsonObject) -> tuple[float, str]:
        fraction = float(interval.get("t_sec") or 0.0) / self.window_s if self.window_s else 1.0
        parts = [f"{float(interval.get('nopm') or 0.0):,.0f} NOPM"] if self.clients else []
        if self.streams:
            parts.append(f"{int(interval.get('queries') or 0)} queries in {float(interval.get('i_sec') or 0.0):g}s")
        if interval.get("phase") == "rampup":
            parts.append("ramp-up")
        return fraction, ", ".join(parts)


def check(session: TargetSession, result: TpccResult) -> TpccResult:
    """The consistency conditions after the run; any violation fails the run."""
    result.consistency, failed = check_consistency(session.conn, session.dialect.backend)
    if failed:
        result.status = "failed"
        result.error = "consistency check failed: " + "; ".join(failed)
    return result


def check_consistency(conn: JsonObject, backend: str) -> tuple[list[JsonObject], list[str]]:
    """Each condition of tpcc.CONSISTENCY on the database at `conn`: (one dict per condition
    with its name, clause, ok and up to MAX_VIOLATIONS violating rows; one line per failure)."""
    checks, failed = [], []
    for cond in tpcc.CONSISTENCY:
        try:
            rows = process.query(conn, cond.sql, timeout_s=600, backend=backend)
        except (DriverError, ServerError) as exc:
            checks.append({"name": cond.name, "clause": cond.clause, "ok": False, "error": exc.message})
            failed.append(f"{cond.clause} could not be checked: {exc.message}")
            continue
        checks.append({"name": cond.name, "clause": cond.clause, "ok": not rows,
                       "violations": [list(r) for r in rows[:MAX_VIOLATIONS]], "violating": len(rows)})
        if rows:
            failed.append(f"{cond.clause} {cond.name}: {len(rows)} violation(s), e.g. {rows[0]}")
    return checks, failed


def _report_end(session: TargetSession, result: TpccResult, suffix: str) -> None:
    label = f"TPROC-C {result.clients} VU(s), {result.warehouses} warehouse(s){suffix}"
    if result.status == "ok":
        text = (f"{result.nopm:,.0f} NOPM, {result.tpm:,.0f} TPM in {result.elapsed_s:.0f}s; "
                f"consistency checks passed ({len(result.consistency)})")
    else:
        text = result.error or result.status
    session.progress.step_end(session.name, label, result.status, text)


# -- the hooks of the Workload (workloads/registry.py) -------------------------------------------
PROGRESS_STEPS = 3  # load, ramp-up and measured window, checks


def run(runner: Runner, installs: dict[str, InstallInfo], outcome: CampaignOutcome) -> None:
    """Every target once per repeat, one after the other, each on a fresh server."""
    store = runner.store

    def one(session: TargetSession, install: InstallInfo, target_id: int, repeat: int) -> None:
        run_target(session, install, repeat)

    runner.one_after_another(installs, outcome, tpcc.DBNAME, plan_s(runner.spec), PROGRESS_STEPS, 1, store.workload_done,
                             lambda tid, rep: int(store.workload_done(tid, rep)), one, planned_repeats(runner, outcome))


def estimate(spec: CampaignSpec) -> tuple[float, int]:
    n = target_repeats(spec)
    return plan_s(spec) * n, PROGRESS_STEPS * n


def clients(spec: CampaignSpec) -> int:
    return params(spec).clients


# -- the checks of the Workload (workloads/registry.py): TPROC-C
def preflight(spec: CampaignSpec) -> None:
    """Nothing to refuse before anything is fetched: the driver runs its transactions and needs no
    Python package, and every engine runs them."""


def check_builds(spec: CampaignSpec, cache_dir: Path) -> None:
    """Nothing to refuse in a build before it is fetched: every build of the three engines runs
    TPROC-C (no extension)."""


def check_installs(spec: CampaignSpec, installs: dict[str, InstallInfo]) -> None:
    """Nothing to refuse in a found build: every build of the three engines runs TPROC-C (no
    extension)."""
