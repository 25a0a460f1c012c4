"""The work directory is private and refused when another user could tamper with it; every
server gets a run directory of its own; orphans are found from their owner files."""
from __future__ import annotations

import os
import pwd
import stat
import subprocess
import sys
import time

import pytest

from dbdrift.errors import UserError
from dbdrift.server import base, osuser, rundir

pytestmark = pytest.mark.fault("security")
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a directory to another user")


@pytest.fixture
def work(monkeypatch, tmp_path):
    path = tmp_path / "work"
    monkeypatch.setenv("DBDRIFT_WORK_DIR", str(path))
    return path


def test_the_work_directory_is_created_private(work):
    made = rundir.work_dir()
    info = made.stat()
    if os.geteuid() == 0:  # servers run as the dbdrift user, whose group may only pass through
        assert stat.S_IMODE(info.st_mode) == 0o710 and info.st_gid == osuser.server_user()[1]
    else:
        assert stat.S_IMODE(info.st_mode) == 0o700
    assert info.st_uid == os.geteuid()


@root_only
def test_a_work_directory_owned_by_another_user_is_refused(work):
    work.mkdir()
    nobody = pwd.getpwnam("nobody")
    os.chown(work, nobody.pw_uid, nobody.pw_gid)
    with pytest.raises(UserError, match="belongs to user nobody, not to you") as err:
        rundir.work_dir()
    assert "DBDRIFT_WORK_DIR" in err.value.hint


def test_a_work_directory_others_can_write_to_is_refused(work):
    work.mkdir()
    work.chmod(0o777)
    with pytest.raises(UserError, match="writable by other users"):
        rundir.work_dir()


def test_a_work_directory_that_is_a_symlink_is_refused(work, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    work.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UserError, match="symbolic link"):
        rundir.work_dir()


def test_every_server_gets_a_run_directory_of_its_own(work):
    made = rundir.work_dir()
    a = rundir.new_run_dir(made, "camp", "pg17")
    b = rundir.new_run_dir(made, "camp", "pg17")
    assert a != b and a.name.startswith("camp-pg17-") and stat.S_IMODE(a.stat().st_mode) == 0o700


def test_a_run_directory_name_keeps_the_socket_path_short(work):
    run_dir = rundir.new_run_dir(rundir.work_dir(), "c" * 64, "t" * 64)
    assert len(run_dir.name) <= 24 + 1 + 24 + 1 + 8


def test_a_run_directory_whose_dbdrift_is_alive_is_no_orphan(work):
    made = rundir.work_dir()
    run_dir = rundir.new_run_dir(made, "camp", "pg17")
    base.write_owner(run_dir, rundir.owner_facts("camp", "pg17", "postgres", None))
    assert rundir.find_orphans(made) == []


def test_a_run_directory_whose_dbdrift_is_gone_is_an_orphan(work):
    made = rundir.work_dir()
    run_dir = rundir.new_run_dir(made, "camp", "pg17")
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    facts = {**rundir.owner_facts("camp", "pg17", "postgres", None), "dbdrift_pid": child.pid,
             "dbdrift_start": base.process_start_ticks(child.pid)}
    child.wait()
    base.write_owner(run_dir, facts)
    orphans = rundir.find_orphans(made)
    assert [o.run_dir for o in orphans] == [run_dir] and orphans[0].server_pid is None


def test_a_reused_pid_does_not_keep_an_orphan_alive(work):
    made = rundir.work_dir()
    run_dir = rundir.new_run_dir(made, "camp", "pg17")
    facts = {**rundir.owner_facts("camp", "pg17", "postgres", None), "dbdrift_start": 1}  # our pid, other start
    base.write_owner(run_dir, facts)
    assert [o.run_dir for o in rundir.find_orphans(made)] == [run_dir]


def test_an_orphan_without_a_server_is_removed_by_cleanup_and_its_log_kept_beside_its_store(work, tmp_path):
    made = rundir.work_dir()
    run_dir = rundir.new_run_dir(made, "camp", "pg17")
    store = tmp_path / "results.db"
    base.write_owner(run_dir, {**rundir.owner_facts("camp", "pg17", "postgres", store), "dbdrift_start": 1})
    (run_dir / "server.log").write_text("LOG:  database system is ready\n")
    orphan, = rundir.find_orphans(made)
    said = rundir.stop_orphan(orphan, remove=True)
    assert not run_dir.exists() and "kept at" in said
    kept, = (tmp_path / "dbdrift-logs").iterdir()
    assert kept.name == "results-camp-pg17-orphan.log" and kept.read_text().startswith("LOG:")


def test_log_copies_are_private_and_named_by_store_campaign_and_target(tmp_path):
    source = tmp_path / "server.log"
    source.write_text("x")
    source.chmod(0o600)
    first = rundir.copy_log(source, tmp_path / "a.db", "camp", 3, "pg18")
    second = rundir.copy_log(source, tmp_path / "a.db", "camp", 3, "pg18")
    assert first.name == "a-c3-camp-pg18-server.log" and second.name == "a-c3-camp-pg18-server-2.log"
    assert stat.S_IMODE(first.stat().st_mode) == 0o600


def test_process_start_ticks_tell_two_processes_with_one_pid_apart():
    mine = base.process_start_ticks(os.getpid())
    assert isinstance(mine, int) and mine == base.process_start_ticks(os.getpid())
    time.sleep(0.02)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    try:
        assert base.process_start_ticks(child.pid) >= mine
    finally:
        child.wait()
    assert base.process_start_ticks(child.pid) is None
