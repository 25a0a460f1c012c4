"""Cluster campaigns without a cluster: the [cluster] table, units, what a unit still lacks,
streamed facts in the store, Dask kept out of local runs, and `dbdrift worker`'s resources."""
from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import pytest

from dbdrift.workloads.registry import WORKLOADS, workload_of
from dbdrift.workloads.sysbench import cluster as sysbench_units
from dbdrift.errors import UserError
from dbdrift.workloads.registry import parse_campaign
from dbdrift.store.store import RunRecord, Store
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS
from tests.helpers import ROOT, cli_env, dbdrift

TARGETS = [{"name": "a", "version": "17.10"}, {"name": "b", "version": "18.4"}]


def spec(**extra):
    return parse_campaign({"targets": TARGETS, "rows": 10000, "read_s": 10, "write_s": 20, "settle_s": 0, **extra},
                          "c.toml", Path("."), "c")


def test_cluster_table_is_read_and_checked():
    s = spec(cluster={"address": "sched:8786", "hosts": ["small", "large"], "units": 3, "wait_s": "2m"})
    assert s.cluster.address == "tcp://sched:8786" and s.cluster.hosts == ("small", "large")
    assert s.cluster.units == 3 and s.cluster.wait_s == 120
    assert s.to_dict()["cluster"]["hosts"] == ["small", "large"]
    for bad, words in (({"adress": "x:1"}, "adress"), ({"address": "ftp://x:1"}, "unknown protocol"),
                       ({"hosts": ["a", "a"]}, "twice"), ({"hosts": ["bad kind"]}, "not a valid name"),
                       ({"units": 0}, "positive integer"), ("tcp://x:1", "not a table")):
        with pytest.raises(UserError) as err:
            spec(cluster=bad)
        assert words in err.value.message


def test_tests_split_into_units_of_about_equal_time_in_catalog_order():
    s = spec(tests=["point", "writes"])
    groups = sysbench_units.split_tests(s, 3)
    assert len(groups) == 3 and sorted(t for g in groups for t in g) == sorted(t.name for t in s.tests)
    order = [t.name for t in s.tests]
    assert all(list(g) == sorted(g, key=order.index) for g in groups)
    sysbench = workload_of(s)
    times = [sysbench.estimate(sysbench.narrow(s, g))[0] for g in groups]
    assert max(times) < 1.6 * min(times)  # writes run 20 s, reads 10 s: balanced, not by count
    assert sysbench_units.split_tests(s, 50) == [(name,) for name in order]  # at most one unit per test
    tpcc = parse_campaign({"targets": TARGETS, "workload": "tpcc"}, "c.toml", Path("."), "c")
    assert workload_of(tpcc).split(tpcc, 4) == [((), (0,))]  # one repeat: one unit
    tpcc5 = parse_campaign({"targets": TARGETS, "workload": "tpcc", "repeats": 5}, "c.toml", Path("."), "c")
    w = WORKLOADS["tpcc"]
    assert w.split(tpcc5, 2) == [((), (0, 2, 4)), ((), (1, 3))]  # repeats dealt out, each on one host
    assert w.narrow(tpcc5, (), (1, 3)).only_repeats == (1, 3)
    assert w.estimate(w.narrow(tpcc5, (), (1, 3)))[0] == 2 / 5 * w.estimate(tpcc5)[0]


def record(test, status="ok", qps=100.0):
    return asdict(RunRecord(test=test, test_group="point", threads=1, repeat=0, status=status, warmup_s=1,
                            duration_s=2, metric="qps", driver_spec={}, qps=qps, value=qps))


def stored_campaign(tmp_path: Path, s) -> tuple[Store, int, dict[str, int]]:
    """A store holding the campaign `s` and its targets, as a cluster client starts one: the store,
    the campaign's id and each target's id by name."""
    store = Store(tmp_path / "s.db")
    cid = store.add_campaign("c", s.to_dict(), {}, "0")
    return store, cid, {t.name: store.ensure_target(cid, t.name, t.engine, i, i == 0, {})
                        for i, t in enumerate(s.targets)}


def test_remaining_tests_and_a_streamed_cell_counts_once(tmp_path):
    s = spec(tests=["point-query", "read-only"])
    store, cid, ids = stored_campaign(tmp_path, s)
    unit = store.add_unit(cid, 1, None, ["point-query", "read-only"])
    tests = ("point-query", "read-only_range=100")
    assert workload_of(s).remaining(store, cid, s, tests) == (tests, ())
    store.add_streamed({"kind": "run", "target_id": ids["a"], "record": record("point-query", qps=1.0)}, unit)
    store.add_streamed({"kind": "run", "target_id": ids["a"], "record": record("point-query", qps=2.0)}, unit)
    live = store.db.execute("SELECT qps, unit_id FROM runs WHERE superseded = 0").fetchall()
    assert [tuple(r) for r in live] == [(2.0, unit)]  # the later run of a cell replaces the earlier
    store.add_streamed({"kind": "run", "target_id": ids["b"], "record": record("point-query")}, unit)
    store.add_streamed({"kind": "run", "target_id": ids["a"], "record": record("read-only_range=100")}, unit)
    # point-query is complete for both targets; read-only lacks b's run and runs again whole
    assert workload_of(s).remaining(store, cid, s, tests) == (("read-only_range=100",), ())
    assert store.db.execute("SELECT superseded FROM runs WHERE test = 'read-only_range=100'").fetchone()[0] == 1
    store.add_streamed({"kind": "run", "target_id": ids["a"], "record": record("read-only_range=100")}, unit)
    store.add_streamed({"kind": "run", "target_id": ids["b"], "record": record("read-only_range=100")}, unit)
    assert workload_of(s).remaining(store, cid, s, tests) is None
    assert store.unit_result_counts([unit]) == {"runs ok": 4}
    store.close()


def test_a_requeued_unit_s_runs_keep_the_worker_that_measured_each_and_the_report_names_both(tmp_path):
    from dbdrift.workloads.sysbench.results.build import build_report

    s = spec(tests=["point-query", "read-only"])
    store, cid, ids = stored_campaign(tmp_path, s)
    unit = store.add_unit(cid, 1, None, ["point-query", "read-only"])
    lost, taker = "w2 tcp://10.0.0.3:4001", "w1 tcp://10.0.0.2:4002"
    def run(test, at):
        return {**record(test), "started_at": f"2026-01-01T00:{at}+00:00"}

    for name in ("a", "b"):  # the lost host measured point-query; read-only ran on the host that took over
        store.add_streamed({"kind": "run", "target_id": ids[name], "record": run("point-query", "00:01")}, unit, lost)
    # cut off: b's read-only never came, so read-only runs again whole
    store.add_streamed({"kind": "run", "target_id": ids["a"], "record": run("read-only_range=100", "00:02")}, unit,
                       lost)
    assert workload_of(s).remaining(store, cid, s, ("point-query", "read-only_range=100")) == (
        ("read-only_range=100",), ())
    for name in ("a", "b"):
        store.add_streamed({"kind": "run", "target_id": ids[name], "record": run("read-only_range=100", "01:00")},
                           unit, taker)
    store.update_unit(unit, status="done", attempts=2, worker=taker, hostname="w1")
    live = store.db.execute("SELECT test, worker FROM runs WHERE superseded = 0").fetchall()
    assert sorted(tuple(r) for r in live) == [("point-query", lost)] * 2 + [("read-only_range=100", taker)] * 2
    assert store.unit_workers([unit]) == {unit: [lost, taker]}  # the superseded run of w2 is not used
    report = build_report(store, MICROBENCHMARKS, "c", None, False)
    (line,) = [n for n in report.notes if n.startswith("cluster:")]
    assert line == "cluster: unit 1 on w1: point-query, read-only, 2 attempts; its results measured on w2, w1"
    (meta,) = report.meta["units"]
    assert meta["worker"] == taker and meta["measured_on"] == [lost, taker]
    store.close()


def test_a_unit_measured_on_its_one_host_is_reported_as_before(tmp_path):
    from dbdrift.workloads.sysbench.results.build import build_report

    s = spec(tests=["point-query"])
    store, cid, ids = stored_campaign(tmp_path, s)
    unit = store.add_unit(cid, 1, None, ["point-query"])
    for name in ("a", "b"):
        store.add_streamed({"kind": "run", "target_id": ids[name], "record": record("point-query")}, unit,
                           "w1 tcp://10.0.0.2:4002")
    store.update_unit(unit, status="done", attempts=1, worker="w1 tcp://10.0.0.2:4002", hostname="bench1")
    report = build_report(store, MICROBENCHMARKS, "c", None, False)
    assert "cluster: unit 1 on w1 (bench1): point-query" in report.notes
    assert report.meta["units"][0]["measured_on"] == ["w1 tcp://10.0.0.2:4002"]
    store.close()


def test_a_tpcc_unit_runs_the_repeats_some_target_lacks(tmp_path):
    from dbdrift.model import TpccResult

    s = parse_campaign({"targets": TARGETS, "workload": "tpcc", "repeats": 4}, "c.toml", Path("."), "c")
    store, cid, ids = stored_campaign(tmp_path, s)
    unit = store.add_unit(cid, 1, None, [], [0, 2])
    done = dict(status="ok", warehouses=1, clients=1, procedures=False, elapsed_s=1, new_orders=1, transactions=2,
                nopm=60.0, tpm=120.0, by_type={}, intervals=[], hardware=None, consistency=[], load_s=1.0, error=None)
    for name in ("a", "b"):
        store.add_streamed({"kind": "tpcc run", "target_id": ids[name],
                            "record": asdict(TpccResult(target=name, repeat=0, **done))}, unit)
    store.add_streamed({"kind": "tpcc run", "target_id": ids["a"],
                        "record": asdict(TpccResult(target="a", repeat=2, **done))}, unit)
    assert workload_of(s).remaining(store, cid, s, (), (0, 2)) == ((), (2,))  # b lacks repeat 3: it runs again
    store.close()


def test_a_failed_unit_stores_its_missing_runs_as_failed_with_the_reason(tmp_path):
    s = spec(tests=["point-query", "read-only"])
    store, cid, ids = stored_campaign(tmp_path, s)
    unit = store.add_unit(cid, 1, None, ["point-query"])
    store.add_streamed({"kind": "run", "target_id": ids["a"], "record": record("point-query")}, unit)
    assert workload_of(s).store_failed(store, cid, s, ("point-query",), "lost its worker twice", unit) == 1
    row = store.db.execute("SELECT status, error FROM runs WHERE target_id = ? AND superseded = 0",
                           (ids["b"],)).fetchone()
    assert tuple(row) == ("failed", "lost its worker twice")
    store.close()


def test_a_streamed_fact_survives_a_locked_store_through_the_journal(tmp_path):
    path = tmp_path / "s.db"
    store = Store(path, wait_s=0.2)
    cid = store.add_campaign("c", {}, {}, "0")
    tid = store.ensure_target(cid, "a", "postgres", 0, True, {})
    unit = store.add_unit(cid, 1, None, ["point-query"])
    blocker = __import__("sqlite3").connect(path)
    blocker.execute("BEGIN EXCLUSIVE")
    store.add_streamed({"kind": "run", "target_id": tid, "record": record("point-query")}, unit, "w1 tcp://h:1")
    assert store.journaled == 1
    blocker.rollback()
    blocker.close()
    store.close()
    again = Store(path)
    assert tuple(again.db.execute("SELECT unit_id, worker FROM runs").fetchone()) == (unit, "w1 tcp://h:1")
    again.close()


def test_a_streamed_line_journaled_before_runs_named_their_worker_imports_without_one(tmp_path):
    """A store of schema 17 with a journal line it wrote (no worker): opened now, the store is
    migrated to the newest schema and the line imported, its run with no worker."""
    import json
    import sqlite3

    from dbdrift.store import guard
    from dbdrift.store.schema import MIGRATIONS, SCHEMA_VERSION

    path = tmp_path / "s.db"
    db = sqlite3.connect(path)
    for script in MIGRATIONS[:17]:
        db.executescript(script)
    db.execute("PRAGMA user_version = 17")
    db.execute(f"PRAGMA application_id = {guard.APPLICATION_ID}")
    db.execute("INSERT INTO campaigns VALUES (1, 'c', '2026-01-01', '{}', '{}', '0')")
    db.execute("INSERT INTO targets(id, campaign_id, name, engine, position, is_base, spec_json) "
               "VALUES (1, 1, 'a', 'postgres', 0, 1, '{}')")
    db.execute("INSERT INTO units(id, campaign_id, number, tests_json, status) VALUES (1, 1, 1, '[]', 'running')")
    db.commit()
    db.close()
    path.chmod(0o600)
    line = {"kind": "streamed", "unit_id": 1, "fact": {"kind": "run", "target_id": 1, "record": record("point-query")}}
    path.with_name("s.db.journal").write_text(json.dumps(line) + "\n")
    store = Store(path)
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert store.imported == 1 and not store.notes
    assert tuple(store.db.execute("SELECT unit_id, worker FROM runs").fetchone()) == (1, None)
    store.close()


def test_a_local_run_does_not_import_dask(tmp_path):
    code = ("import sys; from dbdrift.cli.main import main; "
            "rc = main(['run', sys.argv[1], '--check']); "
            "print('DASK' if any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules) else 'NO-DASK')")
    path = tmp_path / "c.toml"
    path.write_text('tests = ["point-query"]\n[[targets]]\nname = "a"\nsystem = true\nengine = "mariadb"\n')
    result = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                            env=cli_env(), cwd=tmp_path, timeout=120)
    assert result.stdout.strip().endswith("NO-DASK"), result.stdout + result.stderr


def test_without_the_extra_cluster_says_which_to_install(tmp_path):
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "distributed.py").write_text("raise ImportError('no distributed here', name='distributed')\n")
    path = tmp_path / "c.toml"
    path.write_text('tests = ["point-query"]\n[[targets]]\nname = "a"\nversion = "17.10"\n')
    env = cli_env(extra_env={})
    env["PYTHONPATH"] = f"{hide}:{env['PYTHONPATH']}"
    for args in (["run", str(path), "--cluster", "tcp://127.0.0.1:1", "--store", str(tmp_path / "s.db")],
                 ["worker", "tcp://127.0.0.1:1"]):
        result = subprocess.run([sys.executable, "-m", "dbdrift", *args], capture_output=True, text=True, env=env,
                                cwd=tmp_path, timeout=120)
        assert result.returncode == 2, result.stderr  # refused before anything ran
        assert "needs Dask distributed" in result.stderr
        assert f"hint: install dbdrift's extra cluster (Dask distributed; `dbdrift docs cluster`) on this host and on " \
               f"every worker host: `{sys.executable} -m pip install -e '{ROOT}[cluster]'`" in result.stderr
        assert "Traceback" not in result.stderr


def test_an_unreachable_scheduler_is_a_clear_error(tmp_path):
    pytest.importorskip("distributed")
    path = tmp_path / "c.toml"
    path.write_text('tests = ["point-query"]\n[[targets]]\nname = "a"\nversion = "17.10"\n')
    result = dbdrift("run", path, "--cluster", "127.0.0.1:9", "--store", tmp_path / "s.db", timeout=120,
                     extra_env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"})
    assert result.returncode == 1 and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in result.stderr
    assert "dbdrift worker" in result.stderr and "Traceback" not in result.stderr


def test_dbdrift_worker_joins_with_one_benchmark_slot_and_its_kind(tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        script = Path(sys.executable).parent / "dbdrift"  # the installed command: its worker process is spawned
        assert script.exists(), "install dbdrift into this Python (./dev setup) to test the dbdrift command"
        proc = subprocess.Popen([str(script), "worker", cluster.scheduler_address, "--kind",
                                 "large", "--name", "host-a", "--work-dir", str(tmp_path / "w")],
                                env=cli_env(), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not client.scheduler_info()["workers"]:
                time.sleep(0.2)
            (info,) = client.scheduler_info()["workers"].values()
            assert info["name"] == "host-a" and info["nthreads"] == 1
            assert info["resources"] == {"dbdrift": 1, "dbdrift-large": 1}
        finally:
            proc.terminate()
            proc.wait(timeout=60)
