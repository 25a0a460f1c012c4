"""`bisect --check`: every refusal of a bisect made without measuring (exit 2), and otherwise
the plan (candidates, those stored, measurements and time); the bisect itself refuses the same
input before its first measurement."""
from __future__ import annotations

import pytest

from tests.cli.test_cli_errors import assert_user_error
from tests.cli.test_docs_commands import git_checkout
from tests.cli.test_exit_status import UNREACHABLE
from tests.helpers import dbdrift

ENDS = ("--good", "17.0", "--bad", "17.10", "--test", "point-query")


@pytest.mark.fault("cli")
def test_bisect_check_prints_the_plan_and_starts_nothing(tmp_path):
    result = dbdrift("bisect", *ENDS, "--metric", "qps", "--store", tmp_path / "b.db", "--check")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("bisect postgres point-query: QPS, threshold 2%; 10 versions from 17.0 to 17.10: 17.0, 17.1")
    assert "  expected time: a binary search measures at most 6 of 10, about " in out
    assert "  17.0: " in out and "  17.10: " in out  # where each end's build comes from
    assert out.endswith("ok: nothing was started (drop --check to run it)\n")
    assert not (tmp_path / "b.db").exists()


@pytest.mark.fault("cli")
@pytest.mark.parametrize("args, needle", [
    (("--good", "17.10", "--bad", "17.0", "--test", "point-query"), "swap them"),
    (("--good", "17.0", "--bad", "17.99", "--test", "point-query"), "17.99 is not fetchable"),
    (("--good", "17.0", "--bad", "17.10", "--test", "no-such-test"), "no-such-test"),
    ((*ENDS, "--set", "rows=0"), "rows must be a positive integer"),
    ((*ENDS, "--set", "raed_s=1"), "unknown key 'raed_s'"),
    ((*ENDS, "--build", "make"), "--build applies to --source DIR"),
])
def test_bisect_check_refuses_what_the_bisect_refuses_with_status_2(tmp_path, args, needle):
    result = dbdrift("bisect", *args, "--store", tmp_path / "b.db", "--check")
    assert_user_error(result, needle)
    assert result.returncode == 2 and not (tmp_path / "b.db").exists()


@pytest.mark.fault("cli")
def test_a_bisect_refuses_a_bad_set_before_its_first_measurement(tmp_path):
    # no cache and no registry: a bisect that went on would fail to fetch each version (exit 1)
    result = dbdrift("bisect", *ENDS, "--set", "rows=0", "--store", tmp_path / "b.db",
                     extra_env={"DBDRIFT_CACHE_DIR": str(tmp_path / "cache"), **UNREACHABLE})
    assert_user_error(result, "rows must be a positive integer")
    assert result.returncode == 2 and not (tmp_path / "b.db").exists()


@pytest.mark.fault("cli")
def test_bisect_check_over_a_source_tree_names_the_commits_not_built_yet(tmp_path):
    repo = git_checkout(tmp_path / "src", ("good", "middle", "bad"))
    # HEAD~2: a revision that is no valid target name (the measurements are named by commit)
    result = dbdrift("bisect", "--source", repo, "--good", "HEAD~2", "--bad", "bad", "--build", "make install",
                     "--test", "point-query", "--store", tmp_path / "b.db", "--check",
                     extra_env={"DBDRIFT_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 0, result.stderr
    assert "3 commits from HEAD~2 to bad of" in result.stdout
    assert result.stdout.count(": not built yet; the bisect builds it with --build") == 2  # both ends
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.log"))  # nothing built


@pytest.mark.fault("cli")
def test_bisect_check_refuses_a_source_that_is_no_checkout(tmp_path):
    result = dbdrift("bisect", "--source", tmp_path / "none", "--good", "a", "--bad", "b", "--build", "make",
                     "--test", "point-query", "--check")
    assert_user_error(result, "is not a directory")
    assert result.returncode == 2
