"""Instructions per event under valgrind callgrind, on real PostgreSQL 17.10 and 18.4."""
from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from tests.helpers import dbdrift, interrupt_mid_run, postgres_processes_under, shared_work_dir, start_dbdrift
from tests.server.test_campaign_run import campaign

pytestmark = pytest.mark.server
TESTS = ["point-query", "points-covered-si", "update-index"]


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("instr")
    store = tmp / "store.db"
    work = shared_work_dir("instr")
    # point-query is primed by the server's prime run; points-covered-si shares the database after
    # it (primed by a run of its own); update-index writes, so each of its runs gets a fresh copy
    result = dbdrift("run", campaign(tmp, "instr", tests=TESTS), "--store", store, "--instructions-only",
                     "--simulate-cache", "--no-report", work_dir=work)
    db = sqlite3.connect(store)
    db.row_factory = sqlite3.Row
    every = [dict(r) for r in db.execute(
        "SELECT i.*, t.name AS target FROM instructions i JOIN targets t ON t.id = i.target_id")]
    rows = {r["target"]: r for r in every if r["test"] == "point-query"}
    rows["all"] = every
    db.close()
    return store, result, rows, work


def test_instructions_only_stores_one_count_per_target_and_no_timed_run(counted):
    store, result, rows, _ = counted
    assert result.returncode == 0, result.stderr[-3000:]
    assert {(r["target"], r["test"]) for r in rows["all"]} == {(t, x) for t in ("pg17", "pg18") for x in TESTS}
    assert all(r["status"] == "ok" for r in rows["all"])
    db = sqlite3.connect(store)
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    db.close()


@pytest.mark.fault("reports")
def test_an_instructions_only_run_says_what_it_stored_and_nothing_of_timed_runs(counted):
    _, result, _, _ = counted
    assert "stored 6 instruction counts (0 failed)" in result.stderr, result.stderr[-3000:]
    assert "stored 0 runs" not in result.stderr


def test_the_count_repeats_within_a_tenth_of_a_percent_on_a_shared_database_and_on_fresh_copies(counted):
    _, _, rows, _ = counted
    for row in rows["all"]:
        pairs = json.loads(row["ir_json"])
        slopes = [(b - a) / (row["n2"] - row["n1"]) for a, b in pairs]
        assert len(slopes) == 2
        assert abs(slopes[0] - slopes[1]) / slopes[0] < 0.001, (row["target"], row["test"], slopes)
        assert row["spread_pct"] < 0.1


def test_each_count_says_where_its_time_went_and_only_writes_copy_the_database(counted):
    _, _, rows, _ = counted
    for row in rows["all"]:
        phases = json.loads(row["phases_json"])
        assert phases["run"] > 0 and phases["profile"] > 0
        assert sum(phases.values()) <= row["elapsed_s"] + 0.01
        assert ("copy" in phases) == (row["test"] == "update-index"), (row["test"], phases)
        assert ("prime" in phases) == (row["test"] == "points-covered-si"), (row["test"], phases)


def test_a_point_query_costs_tens_of_thousands_of_instructions_and_more_on_18(counted):
    _, _, rows, _ = counted
    pg17, pg18 = rows["pg17"]["ir_per_event"], rows["pg18"]["ir_per_event"]
    assert 20_000 < pg17 < 100_000 and 20_000 < pg18 < 100_000
    assert pg18 > pg17  # 18.4's fast-path lock and I/O statistics changes (+3 to 4 %)


def test_the_cache_and_branch_simulation_gives_misses_per_event(counted):
    _, _, rows, _ = counted
    for row in rows["all"]:
        simulated = json.loads(row["simulated_json"])
        assert set(simulated) == {"Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "Bc", "Bcm", "Bi", "Bim"}
        assert 0 < simulated["Bcm"] < simulated["Bc"] < row["ir_per_event"]  # mispredicts < branches < instr
        assert -1 < simulated["ILmr"] <= simulated["I1mr"]  # an LL miss was an L1 miss first (a difference: ~0 may dip below)


def test_report_shows_instructions_and_the_functions_that_moved(counted):
    store, _, _, _ = counted
    text = dbdrift("report", "--store", store)
    assert text.returncode == 0, text.stderr
    assert "instructions per event" in text.stdout
    assert "pg18 vs pg17, point-query: +" in text.stdout
    doc = json.loads(dbdrift("report", "--store", store, "--format", "json").stdout)
    point = next(row for row in doc["instructions"] if row["test"] == "point-query")
    assert point["relative"]["pg18"] > 1.0
    assert point["functions"]["pg18"]["self"]["grew"], "no function grew"


def test_no_server_under_valgrind_is_left_running(counted):
    """This run's own work directory: the other test worker's servers live beside it."""
    assert postgres_processes_under(counted[3]) == []


def _counts(store: Path) -> list[dict]:
    if not store.exists():
        return []
    db = sqlite3.connect(store)
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute(
            "SELECT i.test, i.status, t.name AS target FROM instructions i JOIN targets t ON t.id = i.target_id")]
    except sqlite3.OperationalError:  # the store is still being created
        return []
    finally:
        db.close()


@pytest.mark.fault("kill")
def test_ctrl_c_while_targets_are_counted_at_once_stops_every_server_and_keeps_the_counts(tmp_path):
    work = shared_work_dir("instr-intr")
    store = tmp_path / "s.db"
    path = campaign(tmp_path, "instrintr", tests=["point-query", "update-index", "range-covered-pk"])
    proc = start_dbdrift("run", path, "--store", store, "--instructions-only", "--no-report", work_dir=work)
    err = interrupt_mid_run(proc, lambda: _counts(store), after_s=0, wait_s=300, exit_s=180)
    if len(os.sched_getaffinity(0)) >= 2:
        assert "instruction counts: 2 targets at once" in err
    kept = _counts(store)
    assert kept and all(r["status"] == "ok" for r in kept), kept  # an interrupted count is not stored as failed
    assert postgres_processes_under(work) == []
    resumed = dbdrift("run", path, "--store", store, "--instructions-only", "--resume", "--no-report", work_dir=work)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    done = sorted((r["target"], r["test"]) for r in _counts(store) if r["status"] == "ok")
    assert done == sorted((t, x) for t in ("pg17", "pg18") for x in ("point-query", "update-index", "range-covered-pk"))
    assert postgres_processes_under(work) == []
