"""Run CH-benCHmark (docs/methodology.md) for one target: a fresh server, the driver's TPROC-C load
of W warehouses and the three CH-benCHmark tables, then three measured windows of one length:
the analytical streams alone, TPROC-C's virtual users alone, and both together, each with its own
ramp-up and the host sampled over it; then TPC-C's consistency conditions. One repeat of a target
is one stored run (store.add_workload_run), kept whole as soon as it ends, whatever its status:
the windows measured before a failure or Ctrl-C are kept.

The driver runs both sides (`dbdrift-driver tpcc` with `analytics`, docs/protocol.md): it
cancels the analytical queries still running when a window ends, so a window lasts its length.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from dbdrift.driver import process
from dbdrift.errors import DriverError, ServerError, interrupted_error
from dbdrift.model import InstallInfo, JsonObject
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.runner.campaign import CampaignOutcome, Runner, target_repeats
from dbdrift.runner.detect import planned_repeats
from dbdrift.runner.session import TargetSession
from dbdrift.workloads.htap.catalog import WINDOW_TITLES, WINDOWS, load_statements, queries_for
from dbdrift.workloads.tpcc import catalog as tpcc
from dbdrift.workloads.htap.plan import params
from dbdrift.workloads.tpcc.run import WindowPace, check_consistency, load, sampled_run

WORKLOAD = "htap"
CH_LOAD_S = 5.0  # the three small tables (an ETA)


def plan_s(spec: CampaignSpec) -> float:
    """Expected seconds of one target's repeat: load, the three windows and the checks."""
    h = params(spec)
    return 5.0 + tpcc.load_estimate_s(h.tpcc()) + CH_LOAD_S + len(WINDOWS) * (h.rampup_s + h.duration_s + 2.0) + 10.0


PROGRESS_STEPS = 3 + len(WINDOWS)  # the start, the load, CH-benCHmark's tables, each window (the checks ride along)


def driver_spec(session: TargetSession, window: str, repeat: int) -> JsonObject:
    """The driver's `tpcc` run spec of one window: its virtual users and streams."""
    h, engine = params(session.spec), session.install.engine
    vus, streams = h.window(window)
    spec: JsonObject = {"backend": session.dialect.backend, "connection": session.conn,
                        "seed": session.spec.seed + repeat, "phase": "run", "warehouses": h.warehouses,
                        "procedures": False, "clients": vus, "rampup_s": h.rampup_s, "duration_s": h.duration_s,
                        "interval_s": session.spec.interval_s}
    if streams:
        spec["analytics"] = {"streams": streams, "queries": queries_for(engine, h.queries, repeat)}
    return spec


def run_target(session: TargetSession, install: InstallInfo, repeat: int = 0) -> None:
    """Load, the three windows and the checks on a fresh server; stores the repeat, then raises
    ServerError/DriverError when the target failed, KeyboardInterrupt when interrupted."""
    h = params(session.spec)
    record: JsonObject = {"engine": install.engine, "queries": [q["name"] for q in queries_for(
        install.engine, h.queries, repeat)], "windows": {}, "consistency": []}
    suffix = f", repeat {repeat + 1}/{session.spec.repeats}" if session.spec.repeats > 1 else ""
    with session.keep_repeat(WORKLOAD, record, repeat) as outcome:
        session.start()
        loaded: JsonObject = {}

        def load() -> JsonObject:
            loaded.update(_load(session, repeat))
            return loaded
        record["load_s"] = session.timed_step("load", f"load {h.warehouses} warehouse(s){suffix}", load,
                                              tpcc.load_estimate_s(h.tpcc()))
        record["load"] = loaded
        record["ch_load_s"] = session.timed_step("load", f"load supplier, nation and region{suffix}",
                                                 lambda: _load_ch(session), CH_LOAD_S)
        for window in WINDOWS:
            result = _window(session, window, repeat, suffix)
            record["windows"][window] = result
            if result.get("status") != "ok":
                outcome.status, outcome.error = str(result.get("status")), str(result.get("error"))
                break
        if outcome.status == "ok" and h.consistency_checks:
            record["consistency"], failed = check_consistency(session.conn, session.dialect.backend)
            if failed:
                outcome.status, outcome.error = "failed", "consistency check failed: " + "; ".join(failed)
    status, error = outcome.status, outcome.error
    if status == "interrupted":
        raise KeyboardInterrupt
    if status != "ok":
        session.raise_if_dead()
        raise DriverError(f"{session.name}: CH-benCHmark {error}",
                          "the repeat is stored with what it measured; see the server log" if "consistency" not in
                          (error or "") else "the violations are stored with the run (dbdrift report --format json)")


def _load(session: TargetSession, repeat: int) -> JsonObject:
    h = params(session.spec)
    spec = {**driver_spec(session, "transactions", repeat), "phase": "load",
            "clients": h.tpcc().loaders(os.cpu_count() or 1)}
    return load(session, spec, tpcc.load_estimate_s(h.tpcc()))


def _load_ch(session: TargetSession) -> JsonObject:
    """supplier, nation and region, then statistics for the planner; then every query is planned
    (EXPLAIN), so a query the engine cannot take is said before any window runs."""
    statements = load_statements(session.spec.seed)
    analyze = ["ANALYZE"] if session.install.engine == "postgres" else [
        "ANALYZE TABLE warehouse, district, customer, history, new_order, orders, order_line, item, stock, "
        "supplier, nation, region"]
    try:
        process.exec_jobs(session.conn, [[{"sql": s}] for s in statements + analyze], timeout_s=1800,
                          backend=session.dialect.backend, what="CH-benCHmark's tables")
    except (DriverError, ServerError) as exc:
        session.raise_if_dead()
        raise DriverError(f"{session.name}: load supplier, nation and region: {exc.message}",
                          exc.hint or "see the server log") from None
    for q in queries_for(session.install.engine, params(session.spec).queries):
        try:  # every query planned once here, so one the engine cannot run fails before any window
            process.query(session.conn, "EXPLAIN " + q["sql"], timeout_s=300, backend=session.dialect.backend)
        except (DriverError, ServerError) as exc:
            session.raise_if_dead()
            raise DriverError(f"{session.name}: CH-benCHmark's {q['name']} cannot be planned: {exc.message}",
                              f"{session.install.engine} {session.install.version} does not take the query as "
                              "written; leave it out with [htap] queries") from None
    return {"statements": len(statements)}


def _window(session: TargetSession, window: str, repeat: int, suffix: str) -> JsonObject:
    """One window through the driver, the host sampled over it; returns what it measured, with
    its status."""
    session.server.check_alive()
    h = params(session.spec)
    vus, streams = h.window(window)
    label = f"{WINDOW_TITLES[window]}: {vus} VU(s), {streams} stream(s){suffix}"
    session.progress.step_start(session.name, label, h.rampup_s + h.duration_s)
    pace = WindowPace(session, label, h.rampup_s + h.duration_s, clients=vus, streams=streams)
    out, window_hw, engine, _ = sampled_run(session, driver_spec(session, window, repeat), h.rampup_s + h.duration_s,
                                            pace.read)
    summary = out.output.summary or {}
    analytics = summary.get("analytics") or {}
    result: JsonObject = {
        "status": "ok", "error": None, "clients": vus, "streams": streams,
        "elapsed_s": float(summary.get("elapsed_s") or 0.0), "nopm": float(summary.get("nopm") or 0.0),
        "tpm": float(summary.get("tpm") or 0.0), "new_orders": int(summary.get("new_orders") or 0),
        "transactions": int(summary.get("transactions") or 0), "by_type": summary.get("by_type") or {},
        "analytics": analytics,
        "intervals": [{k: v for k, v in iv.items() if k not in ("type", "mono_s")} for iv in out.output.intervals],
        "hardware": window_hw.as_dict() if window_hw else None, "events": engine}
    if out.interrupted:
        result.update(status="interrupted", error=interrupted_error())
    elif out.exit_code != 0 or not summary:
        result.update(status="failed", error=process.fatal_message(out, f"{session.name}: {label}"))
    if result["status"] == "ok":
        parts = [f"{result['nopm']:,.0f} NOPM"] if vus else []
        parts += [f"{analytics.get('qph') or 0:,.0f} queries/h ({analytics.get('completed') or 0} done, "
                  f"{analytics.get('cancelled') or 0} cut at the end)"] if streams else []
        session.progress.step_end(session.name, label, "ok", ", ".join(parts))
    else:
        session.progress.step_end(session.name, label, str(result["status"]), str(result["error"]))
    return result


# -- the hooks of the Workload (workloads/registry.py) -------------------------------------------
def run(runner: Runner, installs: dict[str, InstallInfo], outcome: CampaignOutcome) -> None:
    """Every target once per repeat, one after the other, each on a fresh server."""
    store = runner.store

    def one(session: TargetSession, install: InstallInfo, target_id: int, repeat: int) -> None:
        run_target(session, install, repeat)

    done: Callable[[int, int], bool] = store.workload_done
    runner.one_after_another(installs, outcome, tpcc.DBNAME, plan_s(runner.spec), PROGRESS_STEPS, 1, done,
                             lambda tid, rep: int(store.workload_done(tid, rep)), one,
                             planned_repeats(runner, outcome))


def estimate(spec: CampaignSpec) -> tuple[float, int]:
    n = target_repeats(spec)
    return plan_s(spec) * n, PROGRESS_STEPS * n


def clients(spec: CampaignSpec) -> int:
    h = params(spec)
    return max(h.clients + h.streams, h.tpcc().loaders(os.cpu_count() or 1))


# -- the checks of the Workload (workloads/registry.py): CH-benCHmark
def preflight(spec: CampaignSpec) -> None:
    """Nothing to refuse before anything is fetched: the driver runs its transactions and queries
    and needs no Python package, and every engine runs them."""


def check_builds(spec: CampaignSpec, cache_dir: Path) -> None:
    """Nothing to refuse in a build before it is fetched: CH-benCHmark needs no extension: every
    build of the three engines runs it."""


def check_installs(spec: CampaignSpec, installs: dict[str, InstallInfo]) -> None:
    """Nothing to refuse in a found build: CH-benCHmark needs no extension: every build of the three
    engines runs it."""
