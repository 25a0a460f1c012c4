"""A store in a folder the user cannot write (docs/faults.md "The store's file"): the commands
that read read it where it is; the commands that write (`recheck`, `run`, `run --check`) refuse
it before anything starts, saying the folder is read-only, never that the store is damaged.

Tests run as root, whom a folder's mode does not stop. Two real ways to take the write away:
the command runs as root without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (setpriv), so the
kernel checks a 0555 folder's mode as it does any user's ("folder"); or the folder is bound
read-only in a private mount namespace (unshare -m: "mount"). As another user, chmod alone."""
from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from tests.cli.test_cli_errors import assert_user_error
from tests.helpers import cli_env, version_6_store
from tests.unit.test_recheck import recheckable_store
from tests.unit.test_reports import make_store

OFFLINE = {"DBDRIFT_NPM_REGISTRY": "http://127.0.0.1:9", "DBDRIFT_MAVEN_REPOSITORY": "http://127.0.0.1:9"}
BIND_READ_ONLY = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"'


def without_write(how: str, folder: Path) -> list[str]:
    """The command prefix that runs dbdrift unable to write `folder`."""
    if how == "mount":
        if os.geteuid() != 0:
            pytest.skip("a read-only bind mount needs root")
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c", BIND_READ_ONLY, str(folder)]
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"] if os.geteuid() == 0 else []


@contextmanager
def read_only_folder(folder: Path) -> Iterator[Path]:
    """`folder` made 0555 for the block (a root without its override capabilities obeys it too)."""
    folder.chmod(0o555)
    try:
        yield folder
    finally:
        folder.chmod(0o755)


def dbdrift_without_write(how: str, folder: Path, *args: object, cwd: Path | None = None):
    with read_only_folder(folder):
        return subprocess.run([*without_write(how, folder), sys.executable, "-m", "dbdrift", *map(str, args)],
                              capture_output=True, text=True, env=cli_env(extra_env=OFFLINE), timeout=120, cwd=cwd)


def leave_a_wal(path: Path, name: str) -> None:
    """Rename the store's campaign in its -wal only, as a writer killed before a checkpoint
    leaves it, without the -shm (the folder copied without it, or a tmpfs -shm gone)."""
    done = subprocess.run([sys.executable, "-c", "import os, sqlite3, sys\n"
                           "db = sqlite3.connect(sys.argv[1]); db.execute('PRAGMA wal_autocheckpoint = 0')\n"
                           "db.execute('UPDATE campaigns SET name = ?', (sys.argv[2],)); db.commit(); os._exit(0)",
                           str(path), name], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    Path(f"{path}-shm").unlink()
    assert Path(f"{path}-wal").stat().st_size > 0


def listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


# (how the write is taken away, whether a -wal is left beside the store)
CASES = [("folder", False), ("folder", True), ("mount", True)]


@pytest.fixture(params=CASES, ids=["-".join(("folder" if h == "folder" else "mount", "wal" if w else "nowal"))
                                   for h, w in CASES])
def unwritable_store(request, tmp_path):
    how, wal = request.param
    folder = tmp_path / "shared"
    folder.mkdir()
    path = folder / "s.db"
    recheckable_store(path)
    if wal:
        leave_a_wal(path, "golden-wal")
    return how, path, "golden-wal" if wal else "golden"


@pytest.mark.fault("store")
@pytest.mark.parametrize("verb", ["report", "campaigns", "history"])
def test_a_read_command_reads_a_store_in_a_folder_it_cannot_write_and_leaves_it_as_it_was(unwritable_store, verb):
    how, path, name = unwritable_store
    before = listing(path.parent)
    result = dbdrift_without_write(how, path.parent, verb, "--store", path)
    assert result.returncode == 0, result.stderr
    assert ("point-query" if verb == "history" else name) in result.stdout
    assert listing(path.parent) == before


@pytest.mark.fault("store")
def test_publish_reads_a_store_in_a_folder_it_cannot_write(unwritable_store, tmp_path):
    how, path, name = unwritable_store
    site = tmp_path / "site"
    result = dbdrift_without_write(how, path.parent, "publish", path, "--out", site)
    assert result.returncode == 0, result.stderr
    assert name in (site / "index.html").read_text()


@pytest.mark.fault("store")
def test_a_store_of_an_older_dbdrift_in_a_folder_it_cannot_write_is_read_migrated_in_memory(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    db = version_6_store(folder / "old.db")
    db.execute("PRAGMA journal_mode = WAL")  # as every dbdrift made its stores
    db.execute("INSERT INTO campaigns(name, created_at, spec_json, host_json, dbdrift_version) VALUES "
               "('old-one', 'now', '{}', '{}', '0.1.0')")
    db.commit()
    db.close()
    before = listing(folder)
    result = dbdrift_without_write("folder", folder, "campaigns", "--store", folder / "old.db")
    assert result.returncode == 0, result.stderr
    assert "old-one" in result.stdout and listing(folder) == before


@pytest.mark.fault("store")
def test_recheck_on_a_store_in_a_read_only_folder_says_the_folder_is_read_only_and_how_to_copy_it(unwritable_store):
    how, path, _ = unwritable_store
    result = dbdrift_without_write(how, path.parent, "recheck", "--pin-defaults", "--store", path)
    assert_user_error(result, f"store {path} cannot be written", f"its folder {path.parent}",
                      f"cp {path} ~/s.db", "--store ~/s.db")
    assert "damaged" not in result.stderr and ".recover" not in result.stderr
    assert result.returncode == 2


@pytest.mark.fault("store")
def test_recheck_print_campaign_reads_a_store_in_a_read_only_folder(unwritable_store):
    how, path, _ = unwritable_store
    result = dbdrift_without_write(how, path.parent, "recheck", "--pin-defaults", "--store", path,
                                   "--tests", "point-query", "--print-campaign")
    assert result.returncode == 0, result.stderr
    assert 'tests = ["point-query"]' in result.stdout


# -- run and run --check on a store they could not write -------------------------------------------------
def campaign_file(tmp_path: Path) -> Path:
    path = tmp_path / "c.toml"
    path.write_text('name = "c"\ntests = ["point-query"]\n[[targets]]\nname = "a"\nversion = "17.10"\n'
                    '[[targets]]\nname = "b"\nversion = "18.4"\n')
    return path


def store_paths(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "a-file").write_text("")
    return {"under /proc": Path("/proc/dbdrift-store.db"), "under a file": tmp_path / "a-file" / "s.db"}


@pytest.mark.fault("store")
@pytest.mark.parametrize("where", ["under /proc", "under a file"])
@pytest.mark.parametrize("check", [True, False], ids=["check", "run"])
def test_run_and_its_check_refuse_a_store_on_an_impossible_path_alike_with_exit_2(tmp_path, where, check):
    store = store_paths(tmp_path)[where]
    args = ["run", *(["--check"] if check else []), campaign_file(tmp_path), "--store", store]
    result = subprocess.run([sys.executable, "-m", "dbdrift", *map(str, args)], capture_output=True, text=True,
                            env=cli_env(extra_env={**OFFLINE, "DBDRIFT_CACHE_DIR": str(tmp_path / "cache")}),
                            timeout=120)
    assert_user_error(result, f"store {store} cannot be written", "nothing was started",
                      "pass --store PATH in a folder you can write")
    assert result.returncode == 2 and "ok: nothing was started" not in result.stdout


@pytest.mark.fault("store")
@pytest.mark.parametrize("how", ["folder", "mount"])
@pytest.mark.parametrize("check", [True, False], ids=["check", "run"])
def test_run_and_its_check_refuse_a_store_in_a_read_only_folder_alike_with_exit_2(tmp_path, how, check):
    folder = tmp_path / "shared"
    folder.mkdir()
    path = folder / "s.db"
    make_store(path).close()
    args = ["run", *(["--check"] if check else []), campaign_file(tmp_path), "--store", path]
    result = dbdrift_without_write(how, folder, *args)
    assert_user_error(result, f"store {path} cannot be written (no file can be created in its folder {folder}",
                      "report, campaigns, history and publish read this one where it is")
    assert result.returncode == 2 and "damaged" not in result.stderr


def test_a_read_only_open_leaves_no_scratch_copy_behind(tmp_path):
    """A store read through a private copy (a -wal without its -shm, folder read-only) leaves no
    copy in the temporary directory once the command ends."""
    folder = tmp_path / "shared"
    folder.mkdir()
    path = folder / "s.db"
    make_store(path).close()
    leave_a_wal(path, "golden-wal")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    with read_only_folder(folder):
        result = subprocess.run([*without_write("folder", folder), sys.executable, "-m", "dbdrift", "campaigns",
                                 "--store", str(path)], capture_output=True, text=True,
                                env=cli_env(extra_env={"TMPDIR": str(scratch)}))
    assert result.returncode == 0 and "golden-wal" in result.stdout, result.stderr
    assert list(scratch.iterdir()) == []
