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
_fault_outcomes: dict[str, tuple[str, str]] = {}  # nodeid -> (area, outcome)


def pytest_configure(config):
    config.addinivalue_line("markers", "fault(area): a case of the fault suite (security, concurrency, "
                                       "kill, store, input, reports); counted per area in the summary")


def pytest_runtest_logreport(report):
    area = _fault_area(report)
    if area and (report.when == "call" or report.outcome != "passed"):
        if report.nodeid not in _fault_outcomes or report.outcome != "passed":
            _fault_outcomes[report.nodeid] = (area, report.outcome)
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


def _fault_area(report) -> str | None:
    return getattr(report, "fault_area", None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    marker = item.get_closest_marker("fault")
    if marker:
        outcome.get_result().fault_area = marker.args[0]


def pytest_terminal_summary(terminalreporter):
    if _fault_outcomes:
        areas: dict[str, list[int]] = {}
        for area, outcome in _fault_outcomes.values():
            tried_passed = areas.setdefault(area, [0, 0])
            tried_passed[0] += 1
            tried_passed[1] += outcome == "passed"
        terminalreporter.write_line("fault suite (area: tried / passed): " + ", ".join(
            f"{area} {tried}/{passed}" for area, (tried, passed) in sorted(areas.items())))
    skipped = [n for n, o in _server_outcomes.items() if o == "skipped"]
    ran = [n for n, o in _server_outcomes.items() if o != "skipped"]
    terminalreporter.write_line(f"real-server tests: {len(ran)} ran, {len(skipped)} skipped")
    if os.environ.get("DBDRIFT_REQUIRE_SERVER_TESTS") == "1" and (skipped or not ran):
        terminalreporter.write_line("FAILED: real-server tests were skipped or none ran "
                                    "(DBDRIFT_REQUIRE_SERVER_TESTS=1)", red=True)


@pytest.fixture
def data_dir() -> Path:
    return ROOT / "tests" / "data"
