"""Stores written by an earlier dbdrift read as ones written now (store/schema.py MIGRATIONS)."""
from __future__ import annotations

import json

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
