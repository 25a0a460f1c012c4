"""The fault suite against real PostgreSQL servers: concurrent runs of one campaign, kill -9 and
what it leaves, a store another program keeps locked, a server that will not start, and what
`run --check` does (nothing). Each case fails on the behaviour a user reported."""
from __future__ import annotations

import json
import os
import pwd
import signal
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from tests.helpers import (act_mid_run, dbdrift, lock_store_elsewhere, postgres_processes_under, shared_work_dir,
                           start_dbdrift, wait_for)
from tests.server.test_campaign_run import campaign, runs

pytestmark = pytest.mark.server
TESTS = ["point-query", "update-index", "range-covered-pk"]


def campaigns_in(store: Path) -> list[str]:
    db = sqlite3.connect(store)
    names = [r[0] for r in db.execute("SELECT name FROM campaigns")]
    db.close()
    return names


def _servers_up(work: Path) -> bool:
    return len(postgres_processes_under(work)) >= 2


@pytest.mark.fault("concurrency")
def test_a_second_run_of_a_running_campaign_refuses_at_once_and_leaves_the_first_alone(tmp_path):
    work = shared_work_dir("twice")
    store = tmp_path / "s.db"
    path = campaign(tmp_path, "twice", tests=TESTS, read_s=1.5)
    first = start_dbdrift("run", path, "--store", store, "--no-report", work_dir=work)
    try:
        wait_for(lambda: _servers_up(work), 240, "the first run's servers", first)
        started = time.monotonic()
        second = dbdrift("run", path, "--store", store, "--no-report", work_dir=work)
        refused_in = time.monotonic() - started
        out, err = first.communicate(timeout=300)
    finally:
        first.kill()
    assert second.returncode == 1 and "Traceback" not in second.stderr
    assert "campaign twice is already running on store" in second.stderr and f"pid {first.pid}" in second.stderr
    assert "nothing was started or changed" in second.stderr and refused_in < 10
    assert first.returncode == 0, err[-2000:]  # the first one's servers were not touched
    assert len([r for r in runs(store) if r["status"] == "ok"]) == 6
    assert campaigns_in(store) == ["twice"]  # no empty campaign from the refused run
    # --resume of the same campaign is refused the same way while it runs (checked above for run)
    assert postgres_processes_under(work) == []


@pytest.mark.fault("concurrency")
def test_two_runs_of_one_campaign_started_together_give_one_run_and_one_clear_refusal(tmp_path):
    work = shared_work_dir("race")
    store = tmp_path / "s.db"
    path = campaign(tmp_path, "race", tests=["point-query"], read_s=1)
    a = start_dbdrift("run", path, "--store", store, "--no-report", work_dir=work)
    time.sleep(0.3)
    b = start_dbdrift("run", path, "--store", store, "--no-report", work_dir=work)
    results = [(p.returncode, err) for p in (a, b) for _, err in [p.communicate(timeout=300)]]
    assert sorted(code for code, _ in results) == [0, 1]
    assert all("Traceback" not in err for _, err in results)
    refused = next(err for code, err in results if code == 1)
    assert "campaign race is already running on store" in refused
    assert campaigns_in(store) == ["race"] and len(runs(store)) == 2
    assert postgres_processes_under(work) == []


def _killed_mid_campaign(tmp_path: Path, name: str) -> tuple[Path, Path, Path, int]:
    """Start a campaign, kill -9 dbdrift once a run is stored; its servers stay up."""
    work = shared_work_dir(name)
    store = tmp_path / "s.db"
    path = campaign(tmp_path, name, tests=TESTS, read_s=1.5)
    proc = start_dbdrift("run", path, "--store", store, "--no-report", work_dir=work)
    act_mid_run(proc, lambda: len(runs(store)) >= 2, lambda: os.kill(proc.pid, signal.SIGKILL), after_s=0, exit_s=30)
    time.sleep(0.5)
    assert len(postgres_processes_under(work)) >= 2, "kill -9 gives dbdrift no chance to stop its servers"
    return work, store, path, proc.pid


@pytest.mark.fault("kill")
def test_after_kill_9_resume_stops_the_orphaned_servers_says_so_and_completes(tmp_path):
    work, store, path, pid = _killed_mid_campaign(tmp_path, "kill9")
    kept = len(runs(store))
    result = dbdrift("run", path, "--store", store, "--resume", "--no-report", work_dir=work)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert "not wiping" not in result.stderr
    for target in ("pg17", "pg18"):
        assert (f"stopped server {target} (postgres) of campaign kill9" in result.stderr
                and f"left running by dbdrift pid {pid}, which is gone" in result.stderr), result.stderr[:3000]
    assert len(runs(store)) >= kept and sorted(
        (r["target"], r["test"]) for r in runs(store) if r["status"] == "ok") == sorted(
        (t, x) for t in ("pg17", "pg18") for x in TESTS)
    assert postgres_processes_under(work) == []
    assert [p.name for p in work.iterdir()] == []  # the orphans' run directories are gone
    # their server logs were kept beside the store
    assert len(list((store.parent / "dbdrift-logs").glob("s-kill9-*-orphan.log"))) == 2


@pytest.mark.fault("kill")
def test_after_kill_9_cleanup_stops_the_orphaned_servers(tmp_path):
    work, store, _, pid = _killed_mid_campaign(tmp_path, "orphan")
    listed = dbdrift("cleanup", "--dry-run", work_dir=work)
    assert listed.returncode == 0 and listed.stdout.count("would clean") == 2
    assert len(postgres_processes_under(work)) >= 2  # a dry run touches nothing
    result = dbdrift("cleanup", work_dir=work)
    assert result.returncode == 0 and "Traceback" not in result.stderr
    assert result.stdout.count(f"left running by dbdrift pid {pid}, which is gone") == 2
    assert postgres_processes_under(work) == []
    again = dbdrift("cleanup", work_dir=work)
    assert again.returncode == 0 and again.stdout.startswith("nothing to clean up")


@pytest.mark.fault("store")
def test_runs_that_end_while_another_program_locks_the_store_are_kept_and_imported(tmp_path):
    work = shared_work_dir("locked")
    store = tmp_path / "s.db"
    path = campaign(tmp_path, "locked", tests=TESTS + ["random-points_range=10"], read_s=1.5)
    proc = start_dbdrift("run", path, "--store", store, "--no-report", work_dir=work,
                         extra_env={"DBDRIFT_STORE_WAIT_S": "1"})
    err = act_mid_run(proc, lambda: len(runs(store)) >= 2,
                      lambda: lock_store_elsewhere(store, hold_s=7).wait(timeout=60), after_s=0, exit_s=300)
    assert proc.returncode == 0 and "Traceback" not in err, err[-3000:]
    assert "were kept in" in err and "now in the store" in err, err[-3000:]
    assert not Path(str(store) + ".journal").exists()
    assert sorted((r["target"], r["test"]) for r in runs(store) if r["status"] == "ok") == sorted(
        (t, x) for t in ("pg17", "pg18") for x in TESTS + ["random-points_range=10"])
    assert postgres_processes_under(work) == []


@pytest.mark.fault("reports")
def test_a_server_that_will_not_start_heads_its_error_and_its_runs_read_skipped(tmp_path):
    work = shared_work_dir("nostart")
    store = tmp_path / "s.db"
    path = campaign(tmp_path, "nostart", tests=["point-query", "update-index"], read_s=1)
    head, pg18 = path.read_text().rsplit("[[targets]]", 1)  # pg18 gets a value PostgreSQL rejects
    path.write_text(head + "[[targets]]" + pg18.replace('"256MB"', '"lots"'))
    result = dbdrift("run", path, "--store", store, "--format", "json", work_dir=work)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert 'did not start: LOG:  invalid value for parameter "shared_buffers": "lots"' in result.stderr
    assert "stored 2 runs (0 failed, 2 skipped: pg18 server did not start)" in result.stderr
    rows = [r for r in json.loads(result.stdout)["rows"] if r["target"] == "pg18"]
    assert {r["status"] for r in rows} == {"skipped: server did not start"}
    assert {r["verdict"] for r in rows} == {"not measured"}
    text = dbdrift("report", "--store", store).stdout
    assert text.count("skipped: server did not start") >= 2
    assert postgres_processes_under(work) == []


@pytest.mark.fault("security")
def test_server_logs_beside_the_store_are_private_and_named_by_campaign_and_target(tmp_path):
    work = shared_work_dir("logs")
    store = tmp_path / "results.db"
    result = dbdrift("run", campaign(tmp_path, "logs", tests=["point-query"], read_s=1), "--store", store,
                     "--no-report", work_dir=work)
    assert result.returncode == 0, result.stderr[-2000:]
    logs = sorted(p.name for p in (tmp_path / "dbdrift-logs").iterdir())
    assert logs == ["results-c1-logs-pg17-server.log", "results-c1-logs-pg18-server.log"]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in (tmp_path / "dbdrift-logs").iterdir())
    assert [p.name for p in work.iterdir()] == []  # run directories are removed after a clean run


@pytest.mark.fault("security")
def test_a_work_directory_of_another_user_is_refused_before_anything_starts(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root to give a directory to another user")
    work = tmp_path / "theirs"
    work.mkdir()
    nobody = pwd.getpwnam("nobody")
    os.chown(work, nobody.pw_uid, nobody.pw_gid)
    result = dbdrift("run", campaign(tmp_path, "theirs", tests=["point-query"]), "--store", tmp_path / "s.db",
                     work_dir=work)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"work directory {work} belongs to user nobody, not to you" in result.stderr
    assert "hint: set DBDRIFT_WORK_DIR" in result.stderr and not (tmp_path / "s.db").exists()


@pytest.mark.fault("input")
def test_check_prints_the_plan_and_starts_and_stores_nothing(tmp_path):
    work = shared_work_dir("check")
    store = tmp_path / "s.db"
    path = campaign(tmp_path, "check", tests=TESTS)
    path.write_text(path.read_text().replace("base = true", "base = false"))
    result = dbdrift("run", "--check", path, "--store", store, work_dir=work)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "target pg17 (base): postgres" in result.stdout and "target pg18: postgres" in result.stdout
    assert "base: pg17 is the first target" in result.stdout
    assert "6 timed runs" in result.stdout and "expected time: about" in result.stdout
    assert not store.exists() and [p.name for p in work.iterdir()] == []


@pytest.mark.fault("kill")
def test_a_second_ctrl_c_still_removes_the_run_directories_or_names_them_with_cleanup(tmp_path):
    work = shared_work_dir("twice-c")
    store = tmp_path / "s.db"
    proc = start_dbdrift("run", campaign(tmp_path, "twicec", tests=["point-query", "update-index"], read_s=4),
                         "--store", store, "--no-report", work_dir=work)

    def ctrl_c_twice() -> None:
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)  # the first Ctrl-C is stopping the servers (pg_ctl stop -m fast) when the second comes
        proc.send_signal(signal.SIGINT)

    err = act_mid_run(proc, lambda: runs(store), ctrl_c_twice, after_s=1.0)
    assert proc.returncode in (1, 130) and "Traceback" not in err, err[-3000:]
    assert postgres_processes_under(work) == []
    left = [p for p in work.iterdir()]
    assert not left or all(str(p) in err for p in left) and "dbdrift cleanup" in err, (left, err[-3000:])
