"""Stores written by an earlier dbdrift read as ones written now (store/schema.py MIGRATIONS)."""
from __future__ import annotations

import json
import sqlite3

from dbdrift.store.store import Store
from tests.helpers import version_6_store


def test_migration_7_gives_turns_one_name_in_stored_campaigns_and_driver_specs(tmp_path):
    """A store written before the rename reads as one written after it."""
    path = tmp_path / "old.db"
    db = version_6_store(path)
    db.execute("INSERT INTO campaigns(name, created_at, spec_json, host_json, dbdrift_version) VALUES "
               "('old', 'now', ?, '{}', '0.1.0')", (json.dumps({"order": "interleaved", "slice_s": 0.02}),))
    db.execute("INSERT INTO targets(campaign_id, name, engine, position, is_base, spec_json) "
               "VALUES (1, 'a', 'postgres', 0, 1, '{}')")
    old_spec = {"seed": 1, "alternate": {"connections": [{}, {}], "slot_s": 0.01, "turn_events": 10, "turn_s": 0.04}}
    db.execute("INSERT INTO runs(target_id, test, test_group, threads, repeat, status, started_at, warmup_s, "
               "duration_s, metric, driver_spec_json, warnings_json) VALUES (1, 't', 'g', 1, 0, 'ok', 'now', 1, 1, 'qps', ?, '[]')",
               (json.dumps(old_spec),))
    db.commit()
    db.close()
    store = Store(path)
    spec = store.campaign(1).spec
    assert spec == {"order": "turns", "turn_s": 0.02}
    run = json.loads(store.runs(1)[0]["driver_spec_json"])
    assert run == {"seed": 1, "turns": {"connections": [{}, {}], "turn_s": 0.01, "turn_events": 10,
                                        "measured_turn_s": 0.04}}
    store.close()


def version_21_store(path):
    """A store as dbdrift wrote it at schema 21 (Insert Benchmark steps and TPROC-C runs in
    tables of their own), one campaign of one target; the caller adds rows, commits and closes."""
    from dbdrift.store.guard import APPLICATION_ID
    from dbdrift.store.schema import MIGRATIONS

    db = sqlite3.connect(path)
    for script in MIGRATIONS[:21]:
        db.executescript(script)
    db.execute("PRAGMA user_version = 21")
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.execute("INSERT INTO campaigns(name, created_at, spec_json, host_json, dbdrift_version) VALUES "
               "('old', 'now', '{}', '{}', '0.1.0')")
    db.execute("INSERT INTO targets(campaign_id, name, engine, position, is_base, spec_json) "
               "VALUES (1, 'a', 'postgres', 0, 1, '{}')")
    return db


IBENCH_STEP = ("INSERT INTO ibench_steps(target_id, step, status, started_at, clients, elapsed_s, inserted, deleted, "
               "queries, ips, dps, qps, target_ips, histograms_json, per_second_json, driver_spec_json, repeat, "
               "superseded, position, worker) VALUES (1, ?, 'ok', 'then', 2, 1.5, 10, 0, 0, ?, 0, 0, NULL, "
               "'{\"insert\": {\"counts\": [1], \"max_us\": 7}}', '[{\"i_sec\": 1}]', '{\"clients\": 2}', 0, ?, 1, 'w1 a')")
TPCC_RUN = ("INSERT INTO tpcc_runs(target_id, repeat, status, started_at, warehouses, clients, procedures, elapsed_s, "
            "new_orders, transactions, nopm, tpm, by_type_json, intervals_json, consistency_json, load_s, superseded) "
            "VALUES (1, 0, ?, 'then', 4, 2, 1, 60.0, 100, 230, ?, 230.0, '{}', '[]', '[{\"ok\": true}]', NULL, ?)")


def test_migration_22_moves_insert_benchmark_steps_into_workload_runs_with_every_digit(tmp_path):
    db = version_21_store(tmp_path / "old.db")
    db.execute(IBENCH_STEP, ("l.i0", 1.0, 1))  # superseded by the rerun of its repeat
    db.execute(IBENCH_STEP, ("l.i0", 0.1 + 0.2, 0))
    db.commit()
    db.close()
    store = Store(tmp_path / "old.db")
    [step] = store.ibench_steps(1)
    assert (step.target, step.step, step.ips, step.target_ips, step.elapsed_s, step.histograms, step.per_second,
            step.position) == ("a", "l.i0", 0.1 + 0.2, None, 1.5, {"insert": {"counts": [1], "max_us": 7}},
                               [{"i_sec": 1}], 1)


def test_migration_22_keeps_superseded_steps_and_runs_superseded_and_their_workers(tmp_path):
    db = version_21_store(tmp_path / "old.db")
    db.execute(IBENCH_STEP, ("l.i0", 1.0, 1))
    db.execute(IBENCH_STEP, ("l.i0", 2.0, 0))
    db.execute(TPCC_RUN, ("failed", 0.0, 1))
    db.execute(TPCC_RUN, ("ok", 98.5, 0))
    db.commit()
    db.close()
    store = Store(tmp_path / "old.db")
    rows = store.db.execute("SELECT workload, status, superseded, worker FROM workload_runs ORDER BY id").fetchall()
    assert [tuple(r) for r in rows] == [("insert-benchmark", "ok", 1, "w1 a"), ("insert-benchmark", "ok", 0, "w1 a"),
                                        ("tpcc", "failed", 1, None), ("tpcc", "ok", 0, None)]


def test_migration_22_reads_a_tpcc_run_back_as_it_was_stored(tmp_path):
    db = version_21_store(tmp_path / "old.db")
    db.execute(TPCC_RUN, ("ok", 98.5, 0))
    db.commit()
    db.close()
    store = Store(tmp_path / "old.db")
    [run] = store.tpcc_runs(1)
    assert (run.target, run.procedures, run.nopm, run.tpm, run.transactions, run.consistency, run.load_s,
            store.workload_done(1, 0)) == ("a", True, 98.5, 230.0, 230, [{"ok": True}], None, True)


def test_migration_22_leaves_no_table_of_the_insert_benchmark_or_tpcc(tmp_path):
    version_21_store(tmp_path / "old.db").close()
    store = Store(tmp_path / "old.db")
    tables = {r[0] for r in store.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"ibench_steps", "tpcc_runs"} & tables == set()
