"""A store file that is damaged, another program's, newer, on a full disk, reached by another
name, or readable by others (docs/faults.md "The store's file"): refused or handled with an
error naming the file, never a traceback, never silently changed."""
from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dbdrift.errors import UserError
from dbdrift.store import guard
from dbdrift.store.lock import campaign_lock
from dbdrift.store.schema import SCHEMA_VERSION
from dbdrift.store.store import Store
from tests.helpers import version_6_store
from tests.unit.test_store_busy import locked, run_record


def empty_version_6_store(path: Path) -> Path:
    """`path`, now an empty store as dbdrift wrote it at schema version 6 (before the
    application id), committed and closed."""
    db = version_6_store(path)
    db.commit()
    db.close()
    return path


def stored(path: Path, runs: int = 40) -> int:
    """A store with one campaign and `runs` runs (several pages); returns the target id."""
    store = Store(path)
    cid = store.add_campaign("c", {}, {}, "0")
    tid = store.ensure_target(cid, "pg17", "postgres", 0, True, {})
    for i in range(runs):
        store.add_run(tid, run_record(f"t{i}"))
    store.close()
    return tid


def garble_pages_after_the_first(path: Path) -> None:
    size = path.stat().st_size
    page = sqlite3.connect(path).execute("PRAGMA page_size").fetchone()[0]
    with path.open("r+b") as f:
        f.seek(page)
        f.write(os.urandom(size - page))


def garble_cell_pointers(path: Path, table: str = "runs") -> None:
    """Point the first cells of `table`'s root page out of its page: quick_check then lists a
    problem per cell, one a line ("On tree page 6 cell 7: Offset 7 out of range ...")."""
    db = sqlite3.connect(path)
    page = db.execute("PRAGMA page_size").fetchone()[0]
    root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    db.close()
    with path.open("r+b") as f:
        f.seek(page * (root - 1))
        interior = f.read(1)[0] in (2, 5)  # an interior page's header is 12 bytes, a leaf's 8
        f.seek(page * (root - 1) + (12 if interior else 8))
        f.write(b"\xff\xff\x00\x07" * 4)


def foreign_file(path: Path) -> bytes:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE contacts (name TEXT)")
    db.execute("INSERT INTO contacts VALUES ('ada')")
    db.commit()
    db.close()
    return path.read_bytes()


# -- damaged -------------------------------------------------------------------------------------
@pytest.mark.fault("store")
@pytest.mark.parametrize("read_only", [False, True])
def test_a_store_with_garbage_past_its_first_page_is_refused_as_damaged_with_the_recover_command(tmp_path, read_only):
    path = tmp_path / "s.db"
    stored(path)
    garble_pages_after_the_first(path)
    with pytest.raises(UserError) as err:
        Store(path, read_only=read_only)
    assert f"store {path} is damaged" in err.value.message
    assert ".recover" in err.value.hint and err.value.exit_code == 2


@pytest.mark.fault("store")
def test_a_store_missing_a_table_is_refused_as_damaged_naming_the_table(tmp_path):
    path = tmp_path / "s.db"
    stored(path, runs=1)
    db = sqlite3.connect(path)
    db.execute("PRAGMA foreign_keys=OFF")
    db.execute("DROP TABLE samples")
    db.commit()
    db.close()
    with pytest.raises(UserError, match="is damaged .no table samples"):
        Store(path)


# -- another program's file, a newer dbdrift's -------------------------------------------------------
@pytest.mark.fault("store")
@pytest.mark.parametrize("read_only", [False, True])
def test_another_programs_sqlite_file_is_refused_and_left_byte_for_byte(tmp_path, read_only):
    path = tmp_path / "contacts.db"
    before = foreign_file(path)
    with pytest.raises(UserError) as err:
        Store(path, read_only=read_only)
    assert f"{path} is not a dbdrift store (tables contacts)" in err.value.message
    assert "--store" in err.value.hint
    assert path.read_bytes() == before


@pytest.mark.fault("store")
def test_a_file_that_is_not_sqlite_is_refused_as_no_dbdrift_store(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('name = "c"\n')
    with pytest.raises(UserError, match="is not a dbdrift store .not a SQLite database"):
        Store(path)
    assert path.read_text() == 'name = "c"\n'


@pytest.mark.fault("store")
def test_a_new_store_is_marked_as_dbdrift_and_an_empty_file_becomes_one(tmp_path):
    (tmp_path / "empty.db").touch()
    for name in ("new.db", "empty.db"):
        Store(tmp_path / name).close()
        db = sqlite3.connect(tmp_path / name)
        assert db.execute("PRAGMA application_id").fetchone()[0] == guard.APPLICATION_ID
        db.close()


@pytest.mark.fault("store")
def test_a_store_of_an_older_dbdrift_without_the_mark_is_recognised_migrated_and_marked(tmp_path):
    path = empty_version_6_store(tmp_path / "old.db")
    Store(path).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == guard.APPLICATION_ID
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.close()


@pytest.mark.fault("store")
def test_a_store_of_a_newer_dbdrift_is_refused_untouched_with_upgrade_in_the_hint(tmp_path):
    path = tmp_path / "s.db"
    stored(path, runs=0)
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(UserError) as err:
        Store(path)
    assert "newer than this dbdrift" in err.value.message and "upgrade dbdrift" in err.value.hint
    assert err.value.exit_code == 2 and path.read_bytes() == before


# -- read-only opens ---------------------------------------------------------------------------------
@pytest.mark.fault("store")
def test_a_read_only_open_of_an_older_store_reads_it_migrated_and_leaves_the_file_unchanged(tmp_path):
    path = tmp_path / "old.db"
    db = version_6_store(path)
    db.execute("INSERT INTO campaigns(name, created_at, spec_json, host_json, dbdrift_version) VALUES "
               "('old', 'now', '{}', '{}', '0.1.0')")
    db.commit()
    db.close()
    before = path.read_bytes()
    store = Store(path, read_only=True)
    assert [r["name"] for r in store.campaigns()] == ["old"]
    store.close()
    assert path.read_bytes() == before


@pytest.mark.fault("store")
def test_a_read_only_open_of_a_wal_store_in_a_writable_directory_reads_it(tmp_path):
    path = tmp_path / "s.db"
    stored(path, runs=2)
    writer = Store(path)  # keeps a -wal and -shm beside it
    assert Path(str(path) + "-wal").exists()
    reader = Store(path, read_only=True)
    assert reader.campaigns()[0]["runs"] == 2
    reader.close()
    writer.close()


@pytest.mark.fault("store")
def test_a_read_only_open_on_a_read_only_mount_reads_the_store(tmp_path):
    path = tmp_path / "d" / "s.db"
    path.parent.mkdir()
    stored(path, runs=2)
    view = tmp_path / "ro"
    view.mkdir()
    if subprocess.run(["mount", "--bind", "-o", "ro", str(path.parent), str(view)], capture_output=True).returncode:
        pytest.skip("mount --bind -o ro is not permitted here (needs root)")
    try:
        store = Store(view / "s.db", read_only=True)
        assert store.campaigns()[0]["runs"] == 2
        store.close()
    finally:
        subprocess.run(["umount", str(view)], check=True)


# -- the journal ---------------------------------------------------------------------------------------
@pytest.mark.fault("store")
def test_journal_lines_that_are_no_facts_are_set_aside_with_a_note_and_the_good_ones_imported(tmp_path):
    path = tmp_path / "s.db"
    tid = stored(path, runs=0)
    good = {"kind": "step", "target_id": tid, "step_kind": "load", "label": "load", "status": "ok",
            "started_at": "now", "elapsed_s": 1.0, "detail": {}, "error": None}
    lines = [json.dumps(good), "[1, 2]", '"text"', json.dumps({"kind": "mystery", "target_id": tid}),
             json.dumps({"kind": "run", "target_id": tid}), json.dumps({"kind": "run", "target_id": tid,
                                                                          "record": {"test": "x"}}),
             '{"kind": "run", "tar']
    (tmp_path / "s.db.journal").write_text("\n".join(lines) + "\n")
    store = Store(path)
    assert store.imported == 1 and [r["label"] for r in store.completed_steps(tid)] == ["load"]
    rejected, = tmp_path.glob("s.db.journal.rejected-*")
    assert sorted(rejected.read_text().splitlines()) == sorted(lines[1:])
    assert stat.S_IMODE(rejected.stat().st_mode) == 0o600
    note, = store.notes
    assert "6 lines of" in note and str(rejected) in note and "unknown kind 'mystery'" in note
    assert not store.journal_path.exists()
    store.close()
    assert Store(path).imported == 0  # the next open does not stumble on them again


# -- a full disk -------------------------------------------------------------------------------------
@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.decode().strip()}): needs root")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=True)


def fill(directory: Path) -> None:
    fd = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.write(fd, b"x" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


@pytest.mark.fault("store")
def test_a_run_that_finds_the_disk_full_goes_to_the_journal_or_stops_naming_the_mount(small_disk):
    path = small_disk / "s.db"
    tid = stored(path, runs=0)
    store = Store(path)
    fill(small_disk)
    big = run_record()
    big.server_log_tail = "x" * 200_000
    with pytest.raises(UserError) as err:
        for _ in range(20):
            store.add_run(tid, big)
    assert isinstance(err.value, guard.StoreFull)
    assert f"the disk holding store {path} is full" in err.value.message
    assert f"{small_disk}: " in err.value.message and "MB free" in err.value.message
    assert "--resume" in err.value.hint


@pytest.mark.fault("store")
def test_creating_a_store_on_a_full_disk_is_an_error_naming_the_mount(small_disk):
    fill(small_disk)
    with pytest.raises(UserError, match=f"is full .* {small_disk}: "):
        Store(small_disk / "s.db")


# -- the campaign lock follows the file ----------------------------------------------------------------
@pytest.mark.fault("concurrency")
@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_the_same_store_by_another_name_is_the_same_campaign_lock(tmp_path, link):
    path = tmp_path / "s.db"
    stored(path, runs=0)
    other = tmp_path / "other.db"
    other.symlink_to(path) if link == "symlink" else os.link(path, other)
    with campaign_lock(path, "c"):
        with pytest.raises(UserError, match="already running"):
            with campaign_lock(other, "c"):
                pass
        with campaign_lock(other, "another campaign"):
            pass


@pytest.mark.fault("concurrency")
def test_a_store_that_does_not_exist_yet_has_one_lock_before_and_after_it_is_made(tmp_path):
    path = tmp_path / "new.db"
    with campaign_lock(path, "c"):
        Store(path).close()
        with pytest.raises(UserError, match="already running"):
            with campaign_lock(tmp_path / "." / "new.db", "c"):
                pass


# -- permissions -----------------------------------------------------------------------------------------
@pytest.mark.fault("security")
def test_a_new_store_its_wal_shm_and_journal_are_private(tmp_path):
    os.umask(0o022)
    path = tmp_path / "s.db"
    tid = stored(path, runs=1)
    store = Store(path)
    store.add_run(tid, run_record("again"))
    with locked(path):
        store.wait_s = 0.1
        store.add_run(tid, run_record("journalled"))
        for name in ("s.db", "s.db-wal", "s.db-shm", "s.db.journal"):
            assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
    store.close()


@pytest.mark.fault("security")
def test_a_store_others_can_read_is_left_as_it_is_with_a_note(tmp_path):
    path = tmp_path / "s.db"
    stored(path, runs=0)
    path.chmod(0o644)
    store = Store(path)
    assert any("readable by other users (mode 644)" in n and "chmod 600" in n for n in store.notes)
    store.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


@pytest.mark.fault("store")
def test_a_second_connection_s_writes_are_seen_by_another_program_at_once(tmp_path):
    """Opening a second connection (each counting lane's) must not open and close the store file
    outside SQLite: that dropped this process's POSIX locks, SQLite then unlinked the -wal the
    first connection was using, and every fact written after was invisible to other programs
    (and lost to a kill -9) until the run ended."""
    path = tmp_path / "s.db"
    store = Store(path)
    tid = store.ensure_target(store.add_campaign("c", {}, {}, "0"), "pg17", "postgres", 0, True, {})
    lane = store.another()
    lane.add_run(tid, run_record("point-query"))
    seen = subprocess.run([sys.executable, "-c", "import sqlite3, sys; print(sqlite3.connect(sys.argv[1])"
                           ".execute('SELECT count(*) FROM runs').fetchone()[0])", str(path)],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert seen == "1" and Path(str(path) + "-wal").exists()
    lane.close()
    store.close()


@pytest.mark.fault("store")
def test_a_store_disk_that_fills_as_a_server_starts_names_the_store_s_disk_not_the_work_directory_s(
        small_disk, tmp_path, monkeypatch):
    """The server's facts (its configuration, settings) find the store's disk full as it starts;
    the step's own line still fits in the journal. The error and its hint name the store's disk
    and its free space, not the run directory's (a full-disk error of a server's would)."""
    from dbdrift.runner.campaign import Runner
    from dbdrift.workloads.registry import workload_of
    from tests.fakes import FakeServer, Lab, RecordingProgress

    lab = Lab(tmp_path).install(monkeypatch)
    spec = lab.campaign()
    store = Store(small_disk / "s.db", wait_s=0.2)
    started = FakeServer.start

    def start_then_fill(server: FakeServer) -> None:
        started(server)
        server.config_text = "# a long configuration\n" * 2000  # its facts outgrow the last free block
        (small_disk / "reserve").write_bytes(b"r" * 4096)
        fill(small_disk)
        (small_disk / "reserve").unlink()

    monkeypatch.setattr(FakeServer, "start", start_then_fill)
    with pytest.raises(UserError) as err:
        Runner(spec, store, progress=RecordingProgress(), workload=workload_of(spec)).run()
    assert f"the disk holding store {small_disk / 's.db'} is full (storing target facts" in err.value.message
    assert f"{small_disk}: " in err.value.message and "MB free" in err.value.message
    assert err.value.hint.startswith(f"free space on {small_disk} (the store's disk)")
    assert "DBDRIFT_WORK_DIR" not in err.value.hint
