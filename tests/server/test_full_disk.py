"""A work directory on a full disk (a small tmpfs): the target that does not fit fails with a
hint naming the disk, the target that fits still runs, and nothing is lost."""
from __future__ import annotations

import grp
import json
import os
import sqlite3
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from tests.helpers import dbdrift, shared_work_dir

pytestmark = pytest.mark.server


@contextmanager
def tmpfs(name: str, options: str) -> Iterator[Path]:
    """A tmpfs mounted (with mount's `options`) on a fresh directory for the `with` block,
    unmounted and removed after (the test needs root)."""
    path = shared_work_dir(name)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True,
                             text=True)
    assert mounted.returncode == 0, f"cannot mount a tmpfs (the test needs root): {mounted.stderr}"
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)
        path.rmdir()


@pytest.fixture
def small_disk():
    with tmpfs("small-disk", "size=200M,mode=755") as path:
        yield path


def test_a_target_that_does_not_fit_fails_with_a_full_disk_hint_and_the_other_runs(tmp_path, small_disk):
    # MariaDB preallocates its redo log (a quarter of RAM / 2, GBs) and cannot start on 200 MB;
    # PostgreSQL with 20,000 rows fits.
    path = tmp_path / "full.toml"
    path.write_text('name = "full"\nrows = 20000\nread_s = 1\nwrite_s = 1\nsettle_s = 0\nwarm_runs = false\n'
                    'tests = ["point-query"]\n'
                    '[[targets]]\nname = "ma"\nengine = "mariadb"\nversion = "11.4.5"\nbase = true\n'
                    '[[targets]]\nname = "pg"\nversion = "17.10"\nsettings = { shared_buffers = "128MB" }\n')
    store = tmp_path / "store.db"
    result = dbdrift("run", path, "--store", store, work_dir=small_disk)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "error 28" in result.stderr
    assert f"hint: the disk holding {small_disk}/full-ma" in result.stderr and "is full" in result.stderr
    db = sqlite3.connect(store)
    runs = db.execute("SELECT t.name, r.status FROM runs r JOIN targets t ON t.id = r.target_id").fetchall()
    steps = db.execute("SELECT t.name, s.status, s.error FROM steps s JOIN targets t ON t.id = s.target_id "
                       "WHERE s.kind = 'server'").fetchall()
    db.close()
    assert sorted(runs) == [("ma", "skipped"), ("pg", "ok")]  # the report says why ma has no rQPS
    assert [(name, status) for name, status, _ in steps] == [("ma", "failed"), ("pg", "ok")]
    # the failed target's logs stay where the error points, its data directory is gone
    [ma_dir] = small_disk.glob("full-ma-*")
    assert (ma_dir / "install-db.log").is_file() and not (ma_dir / "data").exists()
    assert not list(small_disk.glob("full-pg-*"))
    # what was measured is reported; there is no rQPS without the base
    rows = json.loads(dbdrift("report", "--store", store, "--format", "json").stdout)["rows"]
    pg = [r for r in rows if r["target"] == "pg"]
    assert len(pg) == 1 and pg[0]["value"] > 0 and pg[0]["rqps"] is None


@pytest.fixture
def tiny_disk():
    """A 20 MB tmpfs as the work directory, 0710 with the server user's group (server/rundir.py)."""
    with tmpfs("tiny-disk", "size=20M,mode=0710") as path:
        try:
            os.chown(path, -1, grp.getgrnam("dbdrift").gr_gid)
        except KeyError:
            pass  # dbdrift creates the user on its first run and fixes the group
        yield path


@pytest.mark.fault("input")
def test_initdb_on_a_full_disk_names_the_device_its_free_space_and_the_servers_own_cause(tmp_path, tiny_disk):
    path = tmp_path / "tiny.toml"
    path.write_text('name = "tiny"\nrows = 1000\nread_s = 1\nsettle_s = 0\nwarm_runs = false\n'
                    'tests = ["point-query"]\n[[targets]]\nname = "pg"\nversion = "17.10"\n')
    result = dbdrift("run", path, "--store", tmp_path / "s.db", "--no-report", work_dir=tiny_disk)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    # the bootstrap's own line, not initdb's "removing data directory"
    assert "initdb failed for target pg (postgres 17.10): FATAL:  could not extend file" in result.stderr
    assert f"hint: the disk holding {tiny_disk}/tiny-pg" in result.stderr
    assert f"(mounted at {tiny_disk}, " in result.stderr and "MB free now) is full" in result.stderr
