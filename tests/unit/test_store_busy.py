"""A store another program keeps locked: writes wait, then go to a journal that the next open
imports, so no measured run is lost; a second run of one campaign is refused by its lock."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from contextlib import contextmanager
from typing import Iterator

import pytest

from dbdrift.errors import UserError
from dbdrift.store.lock import campaign_lock
from dbdrift.store.store import RunRecord, Store
from tests.helpers import lock_store_elsewhere

pytestmark = pytest.mark.fault("store")


def run_record(test: str = "point-query") -> RunRecord:
    return RunRecord(test=test, test_group="point", threads=1, repeat=0, status="ok", warmup_s=1, duration_s=2,
                     metric="qps", driver_spec={"threads": 1}, measured_s=2.0, events=10, statements=10, value=5.0,
                     intervals=[{"index": 0, "start_s": 0.0, "end_s": 1.0, "events": 5, "statements": 5, "rows": 5,
                                 "steal_pct": 0.0, "round": None}],
                     samples=[(0.0, {"elapsed_s": 1.0, "cpu_user_pct": 1.0, "cpu_sys_pct": 1.0, "cpu_iowait_pct": 0.0,
                                     "cpu_steal_pct": 0.0, "cs": 10, "reads": 0, "read_kb": 0, "writes": 0,
                                     "write_kb": 0, "server_cpu_s": 0.1, "client_cpu_s": 0.1,
                                     "server_rss_bytes": 100})])


@pytest.fixture
def target(tmp_path):
    store = Store(tmp_path / "s.db", wait_s=0.3)
    cid = store.add_campaign("c", {}, {}, "0")
    tid = store.ensure_target(cid, "pg17", "postgres", 0, True, {})
    store.close()
    return tmp_path / "s.db", tid


@contextmanager
def locked(path) -> Iterator[sqlite3.Connection]:
    """Another program holding an exclusive transaction on the store for the `with` block; it
    lets go (rolls back and disconnects) at the end, whatever the block did."""
    other = sqlite3.connect(str(path), isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        yield other
    finally:
        other.rollback()
        other.close()


@contextmanager
def journalling(path) -> Iterator[Store]:
    """A store whose every write in the `with` block goes to the journal, as another program
    holds the database locked; its connection is dropped after (not closed through Store, as
    a killed dbdrift would leave it), the journal left for the next open."""
    store = Store(path, wait_s=0.3)
    with locked(path):
        yield store
    store.db.close()


def test_a_run_finished_while_the_store_is_locked_goes_to_the_journal(target):
    path, tid = target
    with journalling(path) as store:
        assert store.add_run(tid, run_record()) is None
        assert store.journaled == 1
        entry = json.loads(store.journal_path.read_text())
        assert entry["kind"] == "run" and entry["record"]["test"] == "point-query"


def test_the_next_open_imports_the_journal_with_intervals_and_samples(target):
    path, tid = target
    with journalling(path) as store:
        store.add_run(tid, run_record())
        store.add_step(tid, "load", "load", "ok", 1.0, {"rows": 1})
    again = Store(path, wait_s=0.3)
    assert again.imported == 2 and not again.journal_path.exists()
    run, = again.db.execute("SELECT * FROM runs").fetchall()
    assert run["value"] == 5.0 and len(again.intervals(run["id"])) == 1 and len(again.samples(run["id"])) == 1
    assert [r["label"] for r in again.completed_steps(tid)] == ["load"]
    again.close()


def test_a_write_that_waits_less_than_the_lock_holds_still_lands_in_the_store(target):
    path, tid = target
    holder = lock_store_elsewhere(path, hold_s=1.0)
    store = Store(path, wait_s=20)
    started = time.monotonic()
    assert store.add_run(tid, run_record()) is not None
    assert time.monotonic() - started >= 0.5 and store.journaled == 0
    holder.wait()
    store.close()


def test_a_damaged_journal_line_is_set_aside_and_the_rest_imported(target):
    path, tid = target
    with journalling(path) as store:
        store.add_run(tid, run_record())
    with store.journal_path.open("a") as out:
        out.write('{"kind": "run", "target_id": ')  # a write cut short by kill -9
    again = Store(path)
    assert again.imported == 1
    rejected, = path.parent.glob("s.db.journal.rejected-*")
    assert rejected.read_text().startswith('{"kind": "run"')
    again.close()


def test_adding_a_campaign_to_a_store_locked_too_long_is_a_user_error(tmp_path):
    Store(tmp_path / "s.db").close()
    with locked(tmp_path / "s.db"):
        store = Store(tmp_path / "s.db", wait_s=0.3)
        with pytest.raises(UserError, match="locked by another program") as err:
            store.add_campaign("c", {}, {}, "0")
        assert "DBDRIFT_STORE_WAIT_S" in err.value.hint
    store.close()


@pytest.mark.fault("concurrency")
def test_a_second_holder_of_one_campaigns_lock_is_refused_with_the_first_ones_pid(tmp_path):
    store = tmp_path / "s.db"
    with campaign_lock(store, "camp"):
        code = ("import sys; from pathlib import Path; from dbdrift.store.lock import campaign_lock\n"
                "try:\n    campaign_lock(Path(sys.argv[1]), 'camp').__enter__()\n"
                "except Exception as e:\n    print(type(e).__name__, e)\n")
        out = subprocess.run([sys.executable, "-c", code, str(store)], capture_output=True, text=True).stdout
    assert out.startswith("UserError campaign camp is already running") and "pid" in out


@pytest.mark.fault("concurrency")
def test_another_campaign_on_the_same_store_takes_its_own_lock(tmp_path):
    with campaign_lock(tmp_path / "s.db", "one"), campaign_lock(tmp_path / "s.db", "two"):
        pass
    with campaign_lock(tmp_path / "s.db", "one"):  # released on the way out
        pass



def test_a_tpcc_run_and_an_insert_benchmark_step_survive_a_locked_store(target):
    from dbdrift.model import InsertStepResult, TpccResult
    path, tid = target
    with journalling(path) as store:
        store.add_tpcc_run(tid, TpccResult(target="pg17", status="ok", warehouses=2, clients=2, procedures=False,
                                           nopm=1234.0, by_type={"new_order": {"count": 5}}, repeat=1,
                                           position=1))
        store.add_ibench_step(tid, InsertStepResult(target="pg17", step="l.i0", status="ok", clients=1, elapsed_s=1.0,
                                                    inserted=10, deleted=0, queries=0, ips=10.0, dps=0.0, qps=0.0,
                                                    repeat=2, position=0))
        assert store.journaled == 2
    again = Store(path, wait_s=0.3)
    assert again.imported == 2
    cid = again.db.execute("SELECT campaign_id FROM targets WHERE id = ?", (tid,)).fetchone()[0]
    (run,) = again.tpcc_runs(cid)
    assert (run.nopm, run.repeat, run.by_type, run.position) == (1234.0, 1, {"new_order": {"count": 5}}, 1)
    (step,) = again.ibench_steps(cid)
    assert (step.step, step.repeat, step.position) == ("l.i0", 2, 0) and again.workload_done(tid, 1)
    again.close()
