"""Bad campaign files through the command line, as a user meets them: an `error:` line naming
the key and a `hint:`, exit 1, no traceback, nothing started or stored."""
from __future__ import annotations

import time

import pytest

from tests.cli.test_cli_errors import assert_user_error
from tests.helpers import dbdrift

pytestmark = pytest.mark.fault("input")
TARGET = '[[targets]]\nname = "a"\nversion = "17.10"\n'


def run_check(tmp_path, text: str | bytes, **kwargs):
    path = tmp_path / "c.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return dbdrift("run", "--check", path, "--store", tmp_path / "s.db", **kwargs)


@pytest.mark.parametrize("text, needles", [
    ('[[targets]]\nname = "a"\nversion = 17.10\n', ["version 17.10 is a number", 'write version = "17.10"']),
    ("tests = []\n" + TARGET, ["tests = [] selects no microbenchmark"]),
    ("read_s = 0\n" + TARGET, ["read_s: duration must be more than 0"]),
    ("read_s = nan\n" + TARGET, ["read_s", "not a finite duration"]),
    ("write_s = inf\n" + TARGET, ["write_s", "not a finite duration"]),
    ("rows = 1000000000000000\n" + TARGET, ["rows = 1000000000000000 is more than 2147483647"]),
    ("tables = 1000000\n" + TARGET, ["tables = 1000000 is more than 128", "allow_large = true"]),
    ("warmup_s = 9223372036854775807\n" + TARGET, ["warmup_s", "more than 365 days"]),
    ("rows = 99999999999999999999\n" + TARGET, ["does not fit in a 64-bit integer"]),
])
def test_a_bad_value_is_an_error_naming_the_key(tmp_path, text, needles):
    result = run_check(tmp_path, text)
    assert_user_error(result, *needles)
    assert not (tmp_path / "s.db").exists()


def test_a_campaign_file_that_is_not_utf8_is_an_error_naming_the_line(tmp_path):
    assert_user_error(run_check(tmp_path, b'name = "caf\xe9"\n' + TARGET.encode()),
                      "is not valid UTF-8", "line 1")


def test_a_large_size_passes_with_allow_large(tmp_path):
    result = run_check(tmp_path, "allow_large = true\ntables = 200\nrows = 1000\n" + TARGET)
    assert result.returncode == 0, result.stderr
    assert "expected time" in result.stdout


def test_an_uncached_version_fails_fast_and_clearly_without_a_registry(tmp_path):
    env = {"DBDRIFT_CACHE_DIR": str(tmp_path / "empty-cache"), "DBDRIFT_NPM_REGISTRY": "http://127.0.0.1:9",
           "DBDRIFT_MAVEN_REPOSITORY": "http://127.0.0.1:9"}
    started = time.monotonic()
    result = run_check(tmp_path, TARGET, extra_env=env)
    assert time.monotonic() - started < 10
    assert_user_error(result, "cannot fetch", "127.0.0.1:9", "DBDRIFT_NPM_REGISTRY")
