"""-o/--output on every verb that prints a report: the verb's stdout written to the file once it
has finished, and a file that cannot be written refused before anything runs (exit 2)."""
from __future__ import annotations

import argparse

import pytest

from dbdrift.cli import main as cli_main
from tests.cli.test_cli_errors import assert_user_error
from tests.cli.test_exit_status import UNREACHABLE
from tests.helpers import dbdrift, shared_work_dir
from tests.unit.test_reports import make_store

# the verbs whose stdout is a report, a listing or a table (cli/output.py says why the others are not)
PRINTS_A_REPORT = ("report", "history", "compare", "run", "demo", "calibrate", "recheck", "bisect", "campaigns",
                   "bloat", "versions", "catalog", "system")


@pytest.fixture
def store(tmp_path):
    make_store(tmp_path / "r.db").close()
    return tmp_path / "r.db"


@pytest.mark.fault("cli")
def test_every_verb_that_prints_a_report_takes_o_and_output():
    sub = next(a for a in cli_main.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    without = [verb for verb in PRINTS_A_REPORT
               if not {"-o", "--output"} <= {s for action in sub.choices[verb]._actions for s in action.option_strings}]
    assert without == []


@pytest.mark.fault("cli")
def test_report_o_into_a_folder_that_does_not_exist_is_refused_with_status_2(store, tmp_path):
    result = dbdrift("report", "--store", store, "-o", tmp_path / "missing-dir" / "x")
    assert_user_error(result, f"folder {tmp_path / 'missing-dir'} does not exist", "mkdir -p")
    assert result.returncode == 2 and result.stdout == ""


@pytest.mark.fault("cli")
def test_o_in_a_folder_no_one_can_write_is_refused_before_the_verb_runs(store):
    # /sys refuses a new file even to root (chmod would not stop root, CI's user)
    result = dbdrift("report", "--store", store, "-o", "/sys/dbdrift-report.txt")
    assert_user_error(result, "-o /sys/dbdrift-report.txt: cannot write in /sys")
    assert result.returncode == 2


@pytest.mark.fault("cli")
@pytest.mark.parametrize("verb, fmt", [("history", "csv"), ("campaigns", "json")])  # formats without a timestamp
def test_a_store_reading_verb_writes_to_o_what_it_prints(verb, fmt, store, tmp_path):
    printed = dbdrift(verb, "--store", store, "--format", fmt)
    assert printed.returncode == 0, printed.stderr
    written = dbdrift(verb, "--store", store, "--format", fmt, "-o", tmp_path / "out.json")
    assert written.returncode == 0 and written.stdout == ""
    assert (tmp_path / "out.json").read_text() == printed.stdout


@pytest.mark.fault("cli")
def test_a_measuring_verb_refuses_an_unwritable_o_before_it_starts_anything(tmp_path):
    # no cache and no registry: a compare that went past -o would fail to fetch (exit 1), not start a server
    result = dbdrift("compare", "17.10", "18.4", "--store", tmp_path / "s.db", "-o", tmp_path / "no" / "r.html",
                     work_dir=shared_work_dir("output"), extra_env={"DBDRIFT_CACHE_DIR": str(tmp_path / "cache"),
                                                                    **UNREACHABLE})
    assert_user_error(result, "does not exist")
    assert result.returncode == 2 and not (tmp_path / "s.db").exists()


@pytest.mark.fault("cli")
def test_o_with_no_report_is_refused_as_there_is_nothing_to_write(tmp_path):
    result = dbdrift("compare", "17.10", "18.4", "--no-report", "-o", tmp_path / "r.txt")
    assert_user_error(result, "--no-report")
    assert result.returncode == 2


def test_catalog_o_writes_its_listing_to_the_file(tmp_path):
    result = dbdrift("catalog", "--tests", "point", "-o", tmp_path / "tests.txt")
    assert result.returncode == 0 and result.stdout == ""
    assert "point-query" in (tmp_path / "tests.txt").read_text()


def test_o_naming_a_directory_is_refused(store, tmp_path):
    result = dbdrift("report", "--store", store, "-o", tmp_path)
    assert_user_error(result, "is a directory")
    assert result.returncode == 2
