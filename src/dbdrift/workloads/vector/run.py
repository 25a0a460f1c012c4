"""Run vector search (docs/methodology.md) for one target: a fresh server, then per column type
the driver's load of the data set, and per index build the build (timed), the table's and the
index's size and one driver search per search setting, the host sampled over each search's
window. One repeat of a target is one stored run, kept whole (store.add_workload_run) as soon
as it ends, whatever its status: what was measured before a failure or Ctrl-C is kept.

Before anything is fetched, numpy and each target's engine and build are checked for vector
support (preflight, check_builds: `run --check` makes the same checks); before any server
starts, each fetched build again (check_installs), and the data set is made or found in the
cache with its exact neighbours (dataset.prepare).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from dbdrift.driver import process
from dbdrift.errors import DriverError, ServerError, UserError, interrupted_error
from dbdrift.model import InstallInfo, JsonObject
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.runner.campaign import CampaignOutcome, Runner, target_repeats
from dbdrift.runner.detect import planned_repeats
from dbdrift.runner.session import TargetSession
from dbdrift.server import engines
from dbdrift.workloads.vector import catalog, dataset
from dbdrift.workloads.vector.catalog import (Family, VectorParams, families, refuse_build, refuse_engine, refuse_install,
                                              size_sql, sql)
from dbdrift.workloads.vector.plan import params

WORKLOAD = "vector"
LOAD_VALUES_PER_S = 3_000_000  # float values a load writes per second per loader (an ETA, not a measurement)
BUILD_VALUES_PER_S = 400_000  # float values an HNSW build indexes per second (an ETA)


def data_spec(spec: CampaignSpec) -> catalog.DatasetSpec:
    v = params(spec)
    return catalog.DatasetSpec(v.dataset, v.rows, v.queries, v.dim, spec.seed)


# --- expected time ---------------------------------------------------------------------------
def load_s(sizes: VectorParams) -> float:
    return sizes.rows * sizes.dimension / (LOAD_VALUES_PER_S * sizes.loaders(os.cpu_count() or 1))


def build_s(sizes: VectorParams) -> float:
    return sizes.rows * sizes.dimension / BUILD_VALUES_PER_S


def plan_s(spec: CampaignSpec) -> float:
    """Expected seconds of one target's repeat (the slowest engine's sweep)."""
    sizes = params(spec)
    worst = 0.0
    for engine in {t.engine for t in spec.targets}:
        fams = families(sizes, engine)
        searches = sum(len(f.searches) for f in fams) * (sizes.warmup_s + sizes.duration_s + 1.0)
        worst = max(worst, 5.0 + len(sizes.types) * load_s(sizes) + len(fams) * build_s(sizes) + searches)
    return worst


def progress_steps(spec: CampaignSpec) -> int:
    """Per target and repeat: the start, each load, each build and each search setting."""
    fams = families(params(spec), spec.base.engine)
    return 1 + len(params(spec).types) + len(fams) + sum(len(f.searches) for f in fams)


# --- one target ------------------------------------------------------------------------------
class Partial:
    """What a repeat has measured so far: stored whole, also when it ends early."""

    def __init__(self, data: dataset.Dataset, engine: str) -> None:
        self.record: JsonObject = {"dataset": {"key": data.spec.key, "source": data.source_text,
                                               "fingerprint": data.fingerprint, "rows": data.rows,
                                               "queries": data.queries, "dim": data.dim},
                                   "engine": engine, "loads": [], "families": []}


def run_target(session: TargetSession, install: InstallInfo, data: dataset.Dataset, repeat: int = 0) -> None:
    """Every family's build and searches on a fresh server; stores the repeat, then raises
    ServerError/DriverError when the target failed, KeyboardInterrupt when interrupted."""
    sizes = params(session.spec)
    engine = install.engine
    partial = Partial(data, engine)
    with session.keep_repeat(WORKLOAD, partial.record, repeat):
        session.start()
        for statement in sql(families(sizes, engine)[0], sizes, engine).setup:
            _sql(session, statement, "set up vector search")
        for type_ in sizes.types:
            _one_type(session, data, [f for f in families(sizes, engine) if f.type == type_], partial, repeat)


def _one_type(session: TargetSession, data: dataset.Dataset, fams: list[Family], partial: Partial,
              repeat: int) -> None:
    sizes, engine = params(session.spec), session.install.engine
    first = sql(fams[0], sizes, engine)
    suffix = f", repeat {repeat + 1}/{session.spec.repeats}" if session.spec.repeats > 1 else ""
    _sql(session, first.create_table, "create the vector table")
    loaded: JsonObject = {}

    def load() -> JsonObject:
        loaded.update(_load(session, data, first.load_value, repeat))
        return loaded

    seconds = session.timed_step("load", f"load {data.rows:,} vectors as {fams[0].type}{suffix}", load,
                                 load_s(sizes))
    partial.record["loads"].append({"type": fams[0].type, "rows": loaded.get("rows"), "elapsed_s": seconds})
    for fam in fams:
        statements = sql(fam, sizes, engine)
        build = session.timed_step("index", f"build {fam.label}{suffix}",
                                   lambda: _sql(session, statements.create_index, f"build {fam.label}",
                                                timeout_s=max(3600.0, 50 * build_s(sizes))), build_s(sizes))
        table_bytes, index_bytes = _sizes(session, engine)
        entry: JsonObject = {"number": fam.number, "label": fam.label, "type": fam.type, "index": fam.index,
                             "build": dict(fam.build), "search_key": fam.search_key, "build_s": build,
                             "table_bytes": table_bytes, "index_bytes": index_bytes, "points": []}
        partial.record["families"].append(entry)
        for n in fam.searches:
            entry["points"].append(_search(session, data, fam, statements, n, repeat, suffix))
        _sql(session, statements.drop_index, "drop the index")
    _sql(session, first.drop_table, "drop the vector table")


def _sql(session: TargetSession, statement: str, what: str, timeout_s: float = 600.0) -> JsonObject:
    session.server.check_alive()
    try:
        process.query(session.conn, statement, timeout_s=timeout_s, backend=session.dialect.backend)
    except (DriverError, ServerError) as exc:
        session.raise_if_dead()
        raise DriverError(f"{session.name}: {what}: {exc.message}", exc.hint or "see the server log") from None
    return {"sql": statement}


def _sizes(session: TargetSession, engine: str) -> tuple[int | None, int | None]:
    statement = size_sql(engine)
    if statement is None:
        return catalog.file_sizes(session.server.data_dir, session.dbname)
    rows = process.query(session.conn, statement, backend=session.dialect.backend)
    try:
        return int(rows[0][0] or 0), int(rows[0][1] or 0)
    except (IndexError, TypeError, ValueError):
        return None, None


def _common(session: TargetSession, data: dataset.Dataset, phase: str, repeat: int) -> JsonObject:
    sizes = params(session.spec)
    truth_k = min(catalog.TRUTH_K, data.rows)
    return {"backend": session.dialect.backend, "connection": session.conn, "seed": session.spec.seed + repeat,
            "phase": phase, "dim": data.dim, "table": catalog.TABLE, "rows": data.rows,
            "base_path": str(data.base_path), "load_value": "$VECTOR", "queries_path": str(data.queries_path),
            "queries": data.queries, "truth_path": str(data.truth_path(sizes.metric)), "truth_k": truth_k,
            "k": sizes.k, "query_sql": "", "session_sql": [], "clients": sizes.clients,
            "warmup_s": sizes.warmup_s, "duration_s": 0.0, "interval_s": session.spec.interval_s}


def _load(session: TargetSession, data: dataset.Dataset, load_value: str, repeat: int) -> JsonObject:
    sizes = params(session.spec)
    spec = {**_common(session, data, "load", repeat), "load_value": load_value,
            "clients": sizes.loaders(os.cpu_count() or 1)}
    return process.run_load("vector", spec, load_s(sizes), session.placement.driver, f"{session.name}: vector load",
                            "see the server log; a full disk or too small max_allowed_packet (MariaDB) are common "
                            "causes")


def _search(session: TargetSession, data: dataset.Dataset, fam: Family, statements: catalog.Sql, n: int,
            repeat: int, suffix: str) -> JsonObject:
    """One search setting through the driver; the host sampled over its measured window."""
    sizes = params(session.spec)
    session.server.check_alive()
    setting = f"{fam.search_key}={n}"
    label = f"search {fam.label} {setting}{suffix}"
    session.progress.step_start(session.name, label, sizes.warmup_s + sizes.duration_s)
    spec = {**_common(session, data, "search", repeat), "query_sql": statements.query,
            "session_sql": [s.format(n=n) for s in statements.session], "duration_s": sizes.duration_s}
    sampler = session.sampler()
    sampler.start()

    def on_line(obj: JsonObject) -> None:
        if obj.get("type") == "phase":
            sampler.mark("start" if obj.get("phase") == "measure" else "end", obj.get("mono_s"))
        now = search_pace(obj, sizes.warmup_s, sizes.duration_s)
        if now is not None:
            session.progress.step_progress(session.name, label, *now)

    try:
        out = process.run_driver("vector", spec, timeout_s=max(600.0, 3 * (sizes.warmup_s + sizes.duration_s) + 300),
                                 on_line=on_line, on_start=sampler.set_client, cpus=session.placement.driver)
    finally:
        sampler.stop()
    summary = out.output.summary or {}
    window = sampler.window()
    point: JsonObject = {"setting": setting, "value": n, "recall": summary.get("recall"),
                         "qps": summary.get("qps"), "queries": summary.get("queries"),
                         "queries_seen": summary.get("queries_seen"), "elapsed_s": summary.get("elapsed_s"),
                         "latency_us": {k: (summary.get("latency_us") or {}).get(k)
                                        for k in ("p50", "p95", "p99", "max")},
                         "intervals": [{k: v for k, v in iv.items() if k not in ("type", "mono_s")}
                                       for iv in out.output.intervals],
                         "hardware": window.as_dict() if window else None}
    if out.interrupted:
        session.progress.step_end(session.name, label, "interrupted", interrupted_error())
        raise KeyboardInterrupt
    if out.exit_code != 0 or not summary:
        message = process.fatal_message(out, f"{session.name}: {label}")
        session.progress.step_end(session.name, label, "failed", message)
        session.raise_if_dead()
        raise DriverError(message, "the repeat is stored with what it measured; see the server log")
    session.progress.step_end(session.name, label, "ok",
                              f"recall {point['recall'] or 0:.3f} at {point['qps'] or 0:,.0f} QPS")
    return point


def search_pace(obj: JsonObject, warmup_s: float, duration_s: float) -> tuple[float, str] | None:
    """How far a search is and its QPS now, from an interval line of the driver's `vector search`
    (docs/protocol.md: `t` is the interval's end from the start of the measured window); None
    for other lines."""
    if obj.get("type") != "interval":
        return None
    whole = warmup_s + duration_s
    return ((warmup_s + float(obj.get("t") or 0.0)) / whole if whole else 1.0,
            f"{float(obj.get('qps') or 0.0):,.0f} QPS")


# -- the hooks of the Workload (workloads/registry.py) -------------------------------------------
def preflight(spec: CampaignSpec) -> None:
    """What refuses the campaign before anything is fetched or stored: numpy missing, an engine
    without what the campaign asks for (catalog.refuse_engine)."""
    dataset.numpy_needed()
    for target in spec.targets:
        refuse_engine(target.name, target.engine, params(spec))


def check_builds(spec: CampaignSpec, cache_dir: Path) -> None:
    """Every target's build can run the campaign, as far as it is known before `run` fetches it:
    a cached build or one of the host's is looked at (pgvector's files), one to fetch is judged
    by what the catalogue would fetch (an npm or Maven PostgreSQL has no pgvector, a Debian one
    brings its suite's). A build the catalogue cannot name now is left to check_installs."""
    for target in spec.targets:
        try:
            install = engines.cached_install(target, cache_dir)
            planned = None if install is not None else engines.to_fetch(target, cache_dir)
        except UserError:
            continue  # resolving it fails in `run` with its own error; `--check` says it (locate)
        if install is not None:
            refuse_install(target.name, install, params(spec))
        elif planned is not None:
            build, extras = planned
            pgvector = next((v for name, v in extras.items() if name.endswith("-pgvector")), None)
            refuse_build(target.name, build.engine, build.version, build.detail,
                         catalog.version_of(pgvector) if pgvector is not None else None, params(spec))


def check_installs(spec: CampaignSpec, installs: dict[str, InstallInfo]) -> None:
    """Every target can run the campaign: said before the campaign is stored or a server starts."""
    for target in spec.targets:
        refuse_install(target.name, installs[target.name], params(spec))


def prepare(runner: Runner) -> dataset.Dataset:
    """Before any server: the data set with its exact neighbours, made or found in the cache."""
    try:
        return dataset.prepare(data_spec(runner.spec), runner.progress.message)
    except UserError as exc:
        raise UserError(f"vector data set: {exc.message}", exc.hint) from None


def run(runner: Runner, installs: dict[str, InstallInfo], outcome: CampaignOutcome) -> None:
    """Every target once per repeat, one after the other, each on a fresh server."""
    data = prepare(runner)
    store = runner.store

    def one(session: TargetSession, install: InstallInfo, target_id: int, repeat: int) -> None:
        run_target(session, install, data, repeat)

    done: Callable[[int, int], bool] = store.workload_done
    runner.one_after_another(installs, outcome, catalog.DBNAME, plan_s(runner.spec), progress_steps(runner.spec), 1,
                             done, lambda tid, rep: int(store.workload_done(tid, rep)), one,
                             planned_repeats(runner, outcome))


def estimate(spec: CampaignSpec) -> tuple[float, int]:
    n = target_repeats(spec)
    return plan_s(spec) * n, progress_steps(spec) * n


def clients(spec: CampaignSpec) -> int:
    return max(params(spec).clients, params(spec).loaders(os.cpu_count() or 1))
