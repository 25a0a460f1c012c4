"""A damaged or foreign store through the command line: an `error:` line naming the store and
the fix, exit 2, no traceback, no server started, the file left as it was."""
from __future__ import annotations

import pytest

from tests.cli.test_cli_errors import assert_user_error
from tests.helpers import dbdrift, shared_work_dir
from tests.unit.test_store_damage import (empty_version_6_store, foreign_file, garble_cell_pointers,
                                         garble_pages_after_the_first, stored)

OFFLINE = {"DBDRIFT_NPM_REGISTRY": "http://127.0.0.1:9", "DBDRIFT_MAVEN_REPOSITORY": "http://127.0.0.1:9"}
READERS = [("report",), ("campaigns",), ("history",)]


@pytest.fixture
def damaged(tmp_path):
    path = tmp_path / "s.db"
    stored(path)
    garble_pages_after_the_first(path)
    return path


@pytest.mark.fault("store")
@pytest.mark.parametrize("verb", READERS)
def test_a_read_command_on_a_damaged_store_names_it_and_the_recover_command(damaged, verb):
    result = dbdrift(*verb, "--store", damaged)
    assert_user_error(result, f"store {damaged} is damaged", ".recover")
    assert result.returncode == 2


@pytest.mark.fault("store")
@pytest.mark.parametrize("verb", [*READERS, ("run", "--check")])
def test_a_store_damaged_in_many_places_is_one_error_line_naming_it_and_the_hint_says_how_to_list_them(
        tmp_path, verb):
    path = tmp_path / "s.db"
    stored(path)
    garble_cell_pointers(path)
    if verb[0] == "run":
        campaign = tmp_path / "c.toml"
        campaign.write_text('name = "c"\n[[targets]]\nname = "a"\nversion = "17.10"\n')
        verb = (*verb, str(campaign))
    result = dbdrift(*verb, "--store", path, extra_env=OFFLINE)
    error, hint = result.stderr.splitlines()
    assert error.startswith(f"error: store {path} is damaged (On tree page ") and ", and 4 more)" in error
    assert hint.startswith("hint: recover what it holds") and f'`sqlite3 {path} "PRAGMA quick_check"`' in hint
    assert result.returncode == 2


@pytest.mark.fault("store")
def test_run_on_a_damaged_store_refuses_before_any_server_starts(tmp_path, damaged):
    campaign = tmp_path / "c.toml"
    campaign.write_text('name = "c"\ntests = ["point"]\n[[targets]]\nname = "a"\nversion = "17.10"\n'
                        '[[targets]]\nname = "b"\nversion = "18.4"\n')
    work = shared_work_dir("damaged")  # short: the servers' socket paths must fit (pytest-xdist's tmp is longer)
    result = dbdrift("run", campaign, "--store", damaged, work_dir=work,
                     extra_env={**OFFLINE, "DBDRIFT_CACHE_DIR": str(tmp_path / "cache")}, timeout=60)
    assert_user_error(result, f"store {damaged} is damaged", "nothing was started", ".recover")
    assert result.returncode == 2
    assert not list(work.glob("c-*"))  # no run directory, so no server


@pytest.mark.fault("store")
@pytest.mark.parametrize("verb", READERS)
def test_a_read_command_on_another_programs_database_leaves_it_untouched(tmp_path, verb):
    path = tmp_path / "contacts.db"
    before = foreign_file(path)
    result = dbdrift(*verb, "--store", path)
    assert_user_error(result, f"{path} is not a dbdrift store", "--store")
    assert path.read_bytes() == before
    assert not (tmp_path / "contacts.db-wal").exists()


@pytest.mark.fault("store")
def test_a_read_command_leaves_a_store_of_an_older_dbdrift_as_it_was(tmp_path):
    path = empty_version_6_store(tmp_path / "old.db")
    before = path.read_bytes()
    result = dbdrift("campaigns", "--store", path)
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() == before
