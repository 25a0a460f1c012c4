"""One test per exit status `dbdrift --help` lists: 0 done, 1 failed (stored), 2 input refused
before measuring, 3 a --fail-on finding, 130 interrupted (Ctrl-C or SIGTERM). None starts a server."""
from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from tests.cli.test_cli_errors import assert_user_error
from tests.helpers import cli_env, dbdrift
from tests.unit.test_reports import make_store

TARGET = '[[targets]]\nname = "a"\nversion = "17.10"\n'
UNREACHABLE = {"DBDRIFT_NPM_REGISTRY": "http://127.0.0.1:9", "DBDRIFT_MAVEN_REPOSITORY": "http://127.0.0.1:9"}


def check(tmp_path, text: str, *args: str, **kwargs):
    path = tmp_path / "c.toml"
    path.write_text(text)
    return dbdrift("run", "--check", path, "--store", tmp_path / "s.db", *args, **kwargs)


def test_a_command_that_did_its_work_exits_0():
    assert dbdrift("catalog", "--tests", "point").returncode == 0


def test_a_registry_that_cannot_be_reached_exits_1_not_2(tmp_path):
    result = check(tmp_path, TARGET, extra_env={"DBDRIFT_CACHE_DIR": str(tmp_path / "cache"), **UNREACHABLE})
    assert_user_error(result, "cannot fetch")
    assert result.returncode == 1


@pytest.mark.parametrize("text, args, needle", [
    ('tests = ["point-quer"]\n' + TARGET, (), "unknown microbenchmark or group 'point-quer'"),
    ("raed_s = 60\n" + TARGET, (), "unknown key 'raed_s'"),
    ('[[targets]]\nname = "a"\nversion = "seventeen"\n', (), "is not a version number"),
    ('[[targets]]\nname = "a"\nengine = "oracle"\nversion = "19"\n', (), "oracle"),
    ("read_s = 0\n" + TARGET, (), "read_s: duration must be more than 0"),
    (TARGET, ("--tests", "nosuch"), "unknown microbenchmark or group 'nosuch'"),
    (TARGET, ("--base", "b"), "b"),
    (TARGET, ("--set", "raed_s=1"), "raed_s"),
])
def test_input_refused_before_measuring_exits_2(tmp_path, text, args, needle):
    result = check(tmp_path, text, *args)
    assert_user_error(result, needle)
    assert result.returncode == 2
    assert not (tmp_path / "s.db").exists()


def test_an_unknown_test_or_campaign_in_a_report_exits_2(tmp_path):
    make_store(tmp_path / "r.db").close()
    assert dbdrift("report", "--store", tmp_path / "r.db", "--campaign", "nosuch").returncode == 2
    assert dbdrift("catalog", "--tests", "nosuch").returncode == 2
    assert dbdrift("report", "--store", tmp_path / "none.db").returncode == 2


def test_a_report_fail_on_finding_exits_3(tmp_path):
    make_store(tmp_path / "r.db").close()  # point-query pg18 is a regression
    assert dbdrift("report", "--store", tmp_path / "r.db", "--fail-on", "regression").returncode == 3


WAITING_VERB = """
import sys, time
from dbdrift.cli import catalog, main

def wait(args):
    print("waiting", flush=True)
    time.sleep(60)
    return 0

catalog.main = wait
sys.exit(main.main(["catalog"]))
"""


@pytest.mark.parametrize("signum, said", [(signal.SIGINT, "interrupted:"), (signal.SIGTERM, "interrupted by SIGTERM:")],
                         ids=["ctrl-c", "sigterm"])
def test_ctrl_c_and_sigterm_exit_130_with_the_resume_hint_naming_what_stopped_it(signum, said):
    proc = subprocess.Popen([sys.executable, "-c", WAITING_VERB], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=cli_env())
    try:
        assert proc.stdout.readline() == "waiting\n"
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert f"{said} every run that finished is in the store; rerun with --resume" in stderr
    assert "Traceback" not in stderr and "Ctrl-C" not in stderr


@pytest.mark.fault("input")
@pytest.mark.parametrize("group, first", [("point", "point-query"), ("writes", None), ("default32", None)])
def test_bisect_refuses_a_group_for_test_at_parse_time_naming_its_tests(tmp_path, group, first):
    from dbdrift.workloads.sysbench.catalog import select_tests
    # no cache and no registry: code that let the group through would fail fast (exit 1), not start a bisect
    result = dbdrift("bisect", "--good", "17.0", "--bad", "17.1", "--test", group, "--store", tmp_path / "b.db",
                     extra_env={"DBDRIFT_CACHE_DIR": str(tmp_path / "cache"), **UNREACHABLE})
    assert result.returncode == 2, result.stderr
    names = [t.name for t in select_tests([group])]
    assert f"argument --test: '{group}' is a group of {len(names)} tests ({', '.join(names[:3])}" in result.stderr
    assert f"pick one, e.g. --test {first or names[0]}" in result.stderr
    assert not (tmp_path / "b.db").exists() and "Traceback" not in result.stderr
