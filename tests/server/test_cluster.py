"""A campaign on a Dask cluster: a LocalCluster of two worker processes, each a "host" with its
own work directory, runs a small PostgreSQL campaign split by tests (`dbdrift run --cluster`)."""
from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from tests.helpers import dbdrift, postgres_processes_under, query, shared_work_dir, start_dbdrift

distributed = pytest.importorskip("distributed")  # the cluster extra: ./dev installs it (CI fails on a skip)

from dbdrift.cluster.worker import WorkDirs  # noqa: E402

pytestmark = pytest.mark.server

TESTS = ["point-query", "read-only", "update-index", "scan"]


def campaign(tmp: Path, name: str, tests=TESTS, read_s: float = 1.5, extra: str = "") -> Path:
    path = tmp / f"{name}.toml"
    path.write_text("\n".join([
        f'name = "{name}"', "tables = 1", "rows = 20000", "threads = [1]", "warmup_s = 0.5",
        f"read_s = {read_s}", f"write_s = {read_s}", "scan_warm_s = 0.5", "settle_s = 0",
        "tests = [" + ", ".join(f'"{t}"' for t in tests) + "]",
        '[[targets]]', 'name = "pg17"', 'version = "17.10"',
        '[[targets]]', 'name = "pg18"', 'version = "18.4"', extra, ""]))
    return path


class Cluster:
    def __init__(self, name: str) -> None:
        self.root = shared_work_dir(name)
        self.cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                                resources={"dbdrift": 1, "dbdrift-small": 1}, dashboard_address=None)
        self.client = distributed.Client(self.cluster)
        self.client.register_plugin(WorkDirs(str(self.root)))
        self.address = self.cluster.scheduler_address

    def pids(self) -> dict[str, int]:
        """Worker name -> its process id."""
        names = {addr: str(w["name"]) for addr, w in self.client.scheduler_info()["workers"].items()}
        return {names[addr]: pid for addr, pid in self.client.run(os.getpid).items()}

    def close(self) -> None:
        self.client.close()
        self.cluster.close()


@pytest.fixture
def cluster():
    running = Cluster("cluster")
    yield running
    running.close()


def live_runs(store: Path) -> list[sqlite3.Row]:
    return query(store, "SELECT r.test, t.name AS target, r.status, r.unit_id, u.worker, u.number, "
                        "r.worker AS measured_by FROM runs r "
                        "JOIN targets t ON t.id = r.target_id LEFT JOIN units u ON u.id = r.unit_id "
                        "WHERE r.superseded = 0 AND r.test NOT LIKE '%.warm'")  # reports leave warm runs out


def measured_on(root: Path) -> dict[str, set[tuple[str, str]]]:
    """Worker name -> the (target, test) runs its own unit stores hold: what each host measured."""
    found: dict[str, set] = {}
    for unit_db in root.glob("*/cluster/*/results.db"):
        worker = unit_db.parts[len(root.parts)]
        rows = query(unit_db, "SELECT t.name, r.test FROM runs r JOIN targets t ON t.id = r.target_id "
                              "WHERE r.status = 'ok'")
        found.setdefault(worker, set()).update((r[0], r[1]) for r in rows)
    return found


def test_tests_split_over_two_hosts_each_cell_once_with_its_host(tmp_path, cluster):
    store = tmp_path / "s.db"
    result = dbdrift("run", campaign(tmp_path, "split"), "--store", store, "--cluster", cluster.address,
                     "--format", "json", timeout=600)
    assert result.returncode == 0, result.stderr
    runs = live_runs(store)
    cells = [(r["target"], r["test"]) for r in runs]
    assert len(cells) == len(set(cells)) == 8 and all(r["status"] == "ok" for r in runs)
    units = query(store, "SELECT * FROM units ORDER BY number")
    assert len(units) == 2 and {u["status"] for u in units} == {"done"}
    assert len({u["worker"].split()[0] for u in units}) == 2  # one unit per host
    on_host = measured_on(cluster.root)
    for r in runs:  # the client's store names the host whose own store has the run
        assert (r["target"], r["test"]) in on_host[r["worker"].split()[0]], r
    # both targets of a test ran on one host: the comparison stays on one machine
    by_test = {}
    for r in runs:
        by_test.setdefault(r["test"], set()).add(r["unit_id"])
    assert all(len(ids) == 1 for ids in by_test.values())
    host = json.loads(query(store, "SELECT host_json FROM campaigns")[0][0])
    assert host["cluster"]["address"] == cluster.address and host["cpus"]
    assert json.loads(units[0]["host_json"])["hostname"]
    doc = json.loads(result.stdout)
    assert {r["test"] for r in doc["rows"] if r["target"] == "pg18"} == {r["test"] for r in runs}
    assert sorted(u["worker"].split()[0] for u in doc["meta"]["units"]) == ["0", "1"]
    text = dbdrift("report", "--store", store, timeout=120).stdout
    assert re.search(r"cluster: unit 1 on [01] \(.+\): .+; unit 2 on [01] \(.+\): ", text), text
    assert "2 units on 1 hosts" in result.stderr


def test_a_killed_worker_s_unit_is_requeued_and_the_campaign_completes(tmp_path, cluster):
    store = tmp_path / "s.db"
    proc = start_dbdrift("run", campaign(tmp_path, "kill", read_s=2), "--store", store, "--cluster",
                         cluster.address, "--no-report")
    deadline, victim = time.monotonic() + 300, None
    while time.monotonic() < deadline and victim is None:
        time.sleep(0.5)
        try:  # a unit has streamed a run: kill its host mid-unit
            rows = query(store, "SELECT u.worker FROM runs r JOIN units u ON u.id = r.unit_id LIMIT 1")
        except sqlite3.OperationalError:
            continue
        victim = rows[0][0].split()[0] if rows else None
    assert victim is not None, proc.communicate(timeout=60)
    pids = cluster.pids()
    os.kill(pids[victim], signal.SIGKILL)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert "was lost; re-queued on" in err
    runs = live_runs(store)
    cells = [(r["target"], r["test"]) for r in runs]
    assert len(cells) == len(set(cells)) == 8 and all(r["status"] == "ok" for r in runs), runs
    units = {u["number"]: u for u in query(store, "SELECT * FROM units")}
    assert sorted(u["attempts"] for u in units.values()) == [1, 2]
    assert {u["status"] for u in units.values()} == {"done"}
    time.sleep(2)
    assert postgres_processes_under(cluster.root / victim) == []  # the lost unit's servers stopped


def test_ctrl_c_stops_every_host_and_resume_completes_across_the_cluster(tmp_path, cluster):
    """With a host kind: the workers have its resource, and its results are the campaign stop@small."""
    store = tmp_path / "s.db"
    path = campaign(tmp_path, "stop", read_s=2, extra='[cluster]\nhosts = ["small"]')
    proc = start_dbdrift("run", path, "--store", store, "--cluster", cluster.address, "--no-report")
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        time.sleep(0.5)
        try:
            if query(store, "SELECT 1 FROM runs WHERE unit_id IS NOT NULL LIMIT 1"):
                break
        except sqlite3.OperationalError:
            continue
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=400)
    assert proc.returncode == 130, err
    assert "stopping the units on the cluster" in err
    assert postgres_processes_under(cluster.root) == []
    statuses = {u["status"] for u in query(store, "SELECT status FROM units")}
    assert "interrupted" in statuses
    ok_before = {(r["target"], r["test"]) for r in live_runs(store) if r["status"] == "ok"}
    assert 0 < len(ok_before) < 8
    result = dbdrift("run", path, "--store", store, "--cluster", cluster.address, "--resume", "--no-report",
                     timeout=600)
    assert result.returncode == 0, result.stderr
    runs = [r for r in live_runs(store)]
    cells = [(r["target"], r["test"]) for r in runs]
    assert len(cells) == len(set(cells)) == 8 and all(r["status"] == "ok" for r in runs), runs
    assert [r["name"] for r in query(store, "SELECT name FROM campaigns")] == ["stop@small"]
    report = dbdrift("report", "--store", store, "--campaign", "stop@small", "--format", "json", timeout=120)
    assert report.returncode == 0, report.stderr
    assert len({r["test"] for r in json.loads(report.stdout)["rows"] if r["target"] == "pg18"}) == 4


def test_tpcc_repeats_spread_over_hosts_each_repeat_on_one(tmp_path, cluster):
    """Each TPROC-C repeat runs whole on one worker, which follows the campaign's [tpcc] keys
    (here consistency_checks = false: the runs store no checks and the report says so)."""
    path = tmp_path / "tpcc.toml"
    path.write_text("\n".join([
        'name = "tpcc-cluster"', 'workload = "tpcc"', "repeats = 2",
        "[tpcc]", "warehouses = 1", "clients = 1", "rampup_s = 0", "duration_s = 3", "consistency_checks = false",
        '[[targets]]', 'name = "pg17"', 'version = "17.10"',
        '[[targets]]', 'name = "pg18"', 'version = "18.4"', ""]))
    store = tmp_path / "s.db"
    result = dbdrift("run", path, "--store", store, "--cluster", cluster.address, timeout=600)
    assert result.returncode == 0, result.stderr
    rows = query(store, "SELECT r.repeat, t.name, r.status, u.worker, u.repeats_json, "
                        "json_extract(r.record_json, '$.consistency') AS consistency_json "
                        "FROM workload_runs r JOIN targets t ON t.id = r.target_id JOIN units u ON u.id = r.unit_id "
                        "WHERE r.workload = 'tpcc' AND r.superseded = 0")
    assert sorted((r["repeat"], r["name"]) for r in rows) == [(0, "pg17"), (0, "pg18"), (1, "pg17"), (1, "pg18")]
    assert all(r["status"] == "ok" and json.loads(r["repeats_json"]) == [r["repeat"]] for r in rows)
    hosts = {r["repeat"]: {x["worker"] for x in rows if x["repeat"] == r["repeat"]} for r in rows}
    assert all(len(h) == 1 for h in hosts.values()) and len(set().union(*hosts.values())) == 2
    assert "NOPM" in result.stdout
    assert all(json.loads(r["consistency_json"]) == [] for r in rows) and "consistency not checked" in result.stdout
