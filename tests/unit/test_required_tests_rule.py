"""The rule of tests/conftest.py, in a pytest session of its own: under
DBDRIFT_REQUIRE_SERVER_TESTS=1 a skipped `server` test fails the session, with one process and
with pytest-xdist's workers (where only the controller sees every report)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CASES = '''
import pytest

@pytest.mark.server
def test_ran():
    assert True

@pytest.mark.browser
def test_shown():
    assert True

@pytest.mark.server
def test_other():
    {other}
'''


def _session(tmp_path: Path, other: str, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_cases.py").write_text(CASES.format(other=other))
    (tmp_path / "conftest.py").write_text("from tests.conftest import *  # noqa: F401,F403\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    server: a real server\n    browser: Chromium\n")
    env = {**os.environ, "DBDRIFT_REQUIRE_SERVER_TESTS": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                           *args, str(tmp_path)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)


@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["one-process", "xdist"])
def test_a_skipped_server_test_fails_the_session_and_is_counted(tmp_path, args):
    result = _session(tmp_path, 'pytest.skip("no server here")', *args)
    assert result.returncode == 1, result.stdout[-2000:]
    assert "real-server tests: 1 ran, 1 skipped; browser tests: 1 ran, 0 skipped" in result.stdout, result.stdout
    assert "FAILED: server tests were skipped or none ran" in result.stdout


@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["one-process", "xdist"])
def test_a_session_whose_server_tests_all_ran_passes(tmp_path, args):
    result = _session(tmp_path, "assert True", *args)
    assert result.returncode == 0, result.stdout[-2000:]
    assert "real-server tests: 2 ran, 0 skipped; browser tests: 1 ran, 0 skipped" in result.stdout, result.stdout
