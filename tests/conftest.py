"""Shared fixtures, and the rule that real-server tests may not be skipped in CI.

With DBDRIFT_REQUIRE_SERVER_TESTS=1 (set by ./dev test, hence CI), a skipped test marked
`server` turns the session into a failure, and so does a session that ran no server test.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

_server_outcomes: dict[str, str] = {}


def pytest_runtest_logreport(report):
    if "server" in report.keywords and (report.when == "call" or report.skipped):
        if report.skipped:
            _server_outcomes[report.nodeid] = "skipped"
        elif report.when == "call":
            _server_outcomes[report.nodeid] = report.outcome


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("DBDRIFT_REQUIRE_SERVER_TESTS") != "1":
        return
    skipped = [n for n, o in _server_outcomes.items() if o == "skipped"]
    ran = [n for n, o in _server_outcomes.items() if o != "skipped"]
    if skipped or not ran:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter):
    skipped = [n for n, o in _server_outcomes.items() if o == "skipped"]
    ran = [n for n, o in _server_outcomes.items() if o != "skipped"]
    terminalreporter.write_line(f"real-server tests: {len(ran)} ran, {len(skipped)} skipped")
    if os.environ.get("DBDRIFT_REQUIRE_SERVER_TESTS") == "1" and (skipped or not ran):
        terminalreporter.write_line("FAILED: real-server tests were skipped or none ran "
                                    "(DBDRIFT_REQUIRE_SERVER_TESTS=1)", red=True)


@pytest.fixture
def data_dir() -> Path:
    return ROOT / "tests" / "data"
