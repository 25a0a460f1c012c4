"""Shared fixtures, and the rule that real-server tests may not be skipped in CI.

With DBDRIFT_REQUIRE_SERVER_TESTS=1 (set by ./dev test, hence CI), a skipped test marked
`server` (a real database server) or `browser` (headless Chromium) turns the session into a
failure, and so does a session that ran no such test. Under pytest-xdist (`./dev test` runs
`-n 2`) the workers' reports reach the controller's hooks, so the controller counts and decides;
a worker, which sees only its share, does neither.
"""
from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

REQUIRED = ("server", "browser")  # marks whose tests must run, none skipped, under DBDRIFT_REQUIRE_SERVER_TESTS=1
_required: dict[str, dict[str, str]] = {kind: {} for kind in REQUIRED}  # kind -> nodeid -> outcome
_fault_outcomes: dict[str, tuple[str, str]] = {}  # nodeid -> (area, outcome)


def pytest_configure(config):
    # A runner started in the background of a non-interactive shell (`cmd &`) has SIGINT ignored,
    # and an ignored signal stays ignored in every child: the dbdrift processes the Ctrl-C tests
    # start would then never see their SIGINT. A handler (unlike "ignore") resets to the default
    # on exec, so the children get Python's KeyboardInterrupt as at a terminal.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    config.addinivalue_line("markers", "fault(area): a case of the fault suite (security, concurrency, "
                                       "kill, store, input, reports, caches, publish, progress, cli, docs); "
                                       "counted per area in the summary")


HEAVIEST_FIRST = ("test_new_builds.py", "test_bare_host.py", "test_mysql.py", "test_instructions.py",
                  "test_tpcc.py", "test_campaign_run.py", "test_mariadb_campaign.py", "test_ibench.py")
"""tests/server files that take a worker longest (setup + calls, cold build cache, CI's
--durations): they start first, and the quick files fill the other worker meanwhile and the
tail at the end, so neither worker idles through the last heavy file."""
_DIR_ORDER = ("server", "browser", "contract", "cli", "unit")


def _file_rank(item) -> tuple[int, int]:
    path = Path(str(item.fspath))
    heavy = HEAVIEST_FIRST.index(path.name) if path.parent.name == "server" and path.name in HEAVIEST_FIRST else None
    if heavy is not None:
        return (0, heavy)
    folder = path.parent.name
    return (1, _DIR_ORDER.index(folder) if folder in _DIR_ORDER else len(_DIR_ORDER))


def pytest_collection_modifyitems(config, items):
    # pytest-xdist's loadfile hands out files in the order collected; a stable sort keeps each
    # file's tests in their own order, and every worker computes the same order.
    items.sort(key=_file_rank)


def pytest_runtest_logreport(report):
    area = _fault_area(report)
    if area and (report.when == "call" or report.outcome != "passed"):
        if report.nodeid not in _fault_outcomes or report.outcome != "passed":
            _fault_outcomes[report.nodeid] = (area, report.outcome)
    for kind in REQUIRED:
        if kind in report.keywords and (report.when == "call" or report.skipped):
            _required[kind][report.nodeid] = "skipped" if report.skipped else report.outcome


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")  # set by pytest-xdist in its worker processes


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("DBDRIFT_REQUIRE_SERVER_TESTS") != "1" or _is_worker(session.config):
        return
    if any(_missing(kind) for kind in REQUIRED):
        session.exitstatus = 1


def _counts(kind: str) -> tuple[int, int]:
    outcomes = _required[kind].values()
    return sum(o != "skipped" for o in outcomes), sum(o == "skipped" for o in outcomes)


def _missing(kind: str) -> bool:
    ran, skipped = _counts(kind)
    return bool(skipped) or not ran


def _fault_area(report) -> str | None:
    return getattr(report, "fault_area", None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    marker = item.get_closest_marker("fault")
    if marker:
        outcome.get_result().fault_area = marker.args[0]


def pytest_terminal_summary(terminalreporter):
    if _is_worker(terminalreporter.config):
        return
    if _fault_outcomes:
        areas: dict[str, list[int]] = {}
        for area, outcome in _fault_outcomes.values():
            tried_passed = areas.setdefault(area, [0, 0])
            tried_passed[0] += 1
            tried_passed[1] += outcome == "passed"
        terminalreporter.write_line("fault suite (area: tried / passed): " + ", ".join(
            f"{area} {tried}/{passed}" for area, (tried, passed) in sorted(areas.items())))
    (ran, skipped), (b_ran, b_skipped) = _counts("server"), _counts("browser")
    terminalreporter.write_line(f"real-server tests: {ran} ran, {skipped} skipped; "
                                f"browser tests: {b_ran} ran, {b_skipped} skipped")
    for kind in REQUIRED:
        if os.environ.get("DBDRIFT_REQUIRE_SERVER_TESTS") == "1" and _missing(kind):
            terminalreporter.write_line(f"FAILED: {kind} tests were skipped or none ran "
                                        "(DBDRIFT_REQUIRE_SERVER_TESTS=1)", red=True)


@pytest.fixture
def data_dir() -> Path:
    return ROOT / "tests" / "data"
