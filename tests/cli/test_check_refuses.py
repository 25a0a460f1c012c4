"""`run --check` refuses what `run` would refuse before a server starts (issue 44, item 8):
settings dbdrift owns given through --set, CPUs the host lacks, a store that is not a store,
a work directory too long for the servers' sockets; and `run` refuses the same up front."""
from __future__ import annotations

import os

import pytest

from tests.cli.test_cli_errors import assert_user_error
from dbdrift.store.store import Store
from tests.helpers import dbdrift, shared_work_dir

pytestmark = pytest.mark.fault("input")
TARGET = '[[targets]]\nname = "pg"\nversion = "17.10"\n'


def check(tmp_path, *args: str, store=None, **kwargs):
    path = tmp_path / "c.toml"
    path.write_text('name = "c"\nrows = 1000\ntests = ["point-query"]\n' + TARGET)
    return dbdrift("run", "--check", path, "--store", store or tmp_path / "s.db", *args,
                   work_dir=kwargs.pop("work_dir", None) or shared_work_dir("check"), **kwargs)


@pytest.mark.parametrize("assignment, setting", [
    ("targets.pg.settings.listen_addresses='*'", "listen_addresses"),
    ("targets.pg.settings.unix_socket_permissions=0777", "unix_socket_permissions"),
])
def test_check_refuses_a_setting_dbdrift_owns_given_through_set(tmp_path, assignment, setting):
    result = check(tmp_path, "--set", assignment)
    assert_user_error(result, f"target pg: setting '{setting}' is chosen by dbdrift")
    assert result.returncode == 2 and "nothing was started" not in result.stdout


def test_check_refuses_cpus_the_host_lacks(tmp_path):
    result = check(tmp_path, "--set", 'cpus = { driver = "0", server = "8190" }')
    assert_user_error(result, "cpus.server = '8190' names CPU 8190", "usable CPUs here")
    assert result.returncode == 2


@pytest.mark.parametrize("kind", ["garbage", "directory"])
def test_check_refuses_a_store_that_is_not_a_store(tmp_path, kind):
    store = tmp_path / "bad.db"
    if kind == "directory":
        store.mkdir()
    else:
        store.write_bytes(b"not a database, only words" * 100)
    result = check(tmp_path, store=store)
    assert_user_error(result, f"store {store}")
    assert result.returncode == 2 and "nothing was started" not in result.stdout


def test_check_and_run_refuse_a_work_directory_too_long_for_the_socket_before_anything(tmp_path):
    work = tmp_path / ("w" * max(1, 100 - len(os.fsencode(tmp_path))))
    result = check(tmp_path, work_dir=work)
    assert_user_error(result, "is too long for target pg's socket", "Unix socket path at most 107",
                      "hint: set DBDRIFT_WORK_DIR to a directory at most")
    assert result.returncode == 2
    ran = dbdrift("run", tmp_path / "c.toml", "--store", tmp_path / "s.db", work_dir=work)
    assert_user_error(ran, "is too long for target pg's socket")
    assert ran.returncode == 2 and not (tmp_path / "s.db").exists() and not list(work.glob("c-pg-*"))


def test_detect_without_a_calibration_of_this_host_is_refused_with_how_to_make_one(tmp_path):
    alone = check(tmp_path, "--detect", "2%")
    assert_user_error(alone, "c: detect needs two or more targets to compare", "add a target, or remove detect")
    path = tmp_path / "two.toml"
    path.write_text('name = "two"\nrows = 1000\ntests = ["point-query"]\n' + TARGET
                    + '[[targets]]\nname = "pg18"\nversion = "18.4"\n')
    Store(tmp_path / "empty.db").close()
    # no store yet, and a store without a calibration; "2" is 2%, as everywhere on the command line
    for store, share in ((tmp_path / "none.db", "2%"), (tmp_path / "empty.db", "2")):
        result = dbdrift("run", "--check", path, "--store", store, "--detect", share, work_dir=shared_work_dir("detect"))
        assert_user_error(result, "detect plans from a calibration of this host",
                          "hint: calibrate this host first with starts: `dbdrift calibrate CAMPAIGN.toml --set repeats=8`")
        assert result.returncode == 2


@pytest.mark.parametrize("args, message, hint", [
    (("--detect", "2%", "--set", 'order="sequential"'),
     'detect needs order = "turns" and restart = "repeat"', "remove order and restart"),
    (("--detect", "2%", "--set", 'restart="never"'), 'not order = "turns", restart = "never"', "or remove detect"),
    (("--budget", "30m"), "budget is set without detect", 'add detect = "2%"'),
    (("--detect", "80%"), "detect: '80%' is out of range", "use 0.1% to 50%"),
    (("--detect", "two"), "detect: 'two' is not a percentage", 'bare numbers are percents: write e.g. 2 or "2%"'),
    (("--detect", "0.02"), "detect: '0.02' would be 0.02%: a bare number is a percent", "did you mean 2%?"),
    (("--set", "detect=0.02"), "detect: 0.02 would be 0.02%: a bare number is a percent", "did you mean 2%?"),
])
def test_detect_and_budget_are_checked_like_every_key(tmp_path, args, message, hint):
    result = check(tmp_path, *args)
    assert_user_error(result, message, hint)
    assert result.returncode == 2


def test_detect_for_the_other_workloads_needs_a_calibration_of_that_workload(tmp_path):
    path = tmp_path / "ib.toml"
    path.write_text('name = "ib"\nworkload = "insert-benchmark"\n' + TARGET + '[[targets]]\nname = "pg18"\nversion = "18.4"\n')
    Store(tmp_path / "empty.db").close()
    result = dbdrift("run", "--check", path, "--store", tmp_path / "empty.db", "--detect", "2%", work_dir=shared_work_dir("check"))
    assert_user_error(result, "with 3 or more server starts of an Insert Benchmark, and",
                      "hint: calibrate this host first with starts: `dbdrift calibrate CAMPAIGN.toml --set repeats=8`")
    assert result.returncode == 2
    # a budget without detect is refused for every workload alike
    over = dbdrift("run", "--check", path, "--store", tmp_path / "empty.db", "--budget", "1h", work_dir=shared_work_dir("check"))
    assert_user_error(over, "budget is set without detect", 'add detect = "2%"')
