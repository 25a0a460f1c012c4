"""The store's one table of fact kinds (store/facts.py) agrees with its schema, and its reads
return campaigns and targets typed, their JSON parsed once (store/stored.py)."""
from __future__ import annotations

import sqlite3

from dbdrift.store import facts
from dbdrift.store.store import Store


def columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def test_every_table_a_fact_kind_adds_to_exists_in_the_schema(tmp_path):
    store = Store(tmp_path / "s.db")
    tables = {row[0] for row in store.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {kind.table for kind in facts.KINDS.values() if kind.table} - tables == set()


def test_a_fact_kind_is_marked_with_its_unit_exactly_where_its_table_has_unit_and_worker(tmp_path):
    store = Store(tmp_path / "s.db")
    marked = {kind.table: kind.unit_marked for kind in facts.KINDS.values() if kind.table}
    assert marked == {table: {"unit_id", "worker"} <= columns(store.db, table) for table in marked}


def test_the_result_tables_are_those_whose_rows_can_be_superseded(tmp_path):
    store = Store(tmp_path / "s.db")
    tables = [kind.table for kind in facts.KINDS.values() if kind.table]
    assert set(facts.RESULT_TABLES) == {t for t in tables if "superseded" in columns(store.db, t)}


def test_a_stored_campaign_reads_with_its_spec_and_host_parsed(tmp_path):
    store = Store(tmp_path / "s.db")
    cid = store.add_campaign("c", {"name": "c", "workload": "tpcc", "rows": 5}, {"cpus": 4}, "1.2.3")
    campaign = store.campaign(cid)
    assert (campaign.id, campaign.name, campaign.spec["rows"], campaign.host, campaign.workload,
            campaign.dbdrift_version) == (cid, "c", 5, {"cpus": 4}, "tpcc", "1.2.3")


def test_a_campaign_stored_before_workloads_had_a_name_reads_as_sysbench(tmp_path):
    store = Store(tmp_path / "s.db")
    assert store.campaign(store.add_campaign("c", {"name": "c"}, {}, "0")).workload == "sysbench"


def test_a_target_whose_server_never_started_reads_with_empty_server_and_install_facts(tmp_path):
    store = Store(tmp_path / "s.db")
    cid = store.add_campaign("c", {}, {}, "0")
    tid = store.ensure_target(cid, "pg17", "postgres", 0, True, {"name": "pg17", "twin": True})
    [target] = store.targets(cid)
    assert (target.id, target.name, target.engine, target.is_base, target.spec["twin"], target.server,
            target.install) == (tid, "pg17", "postgres", True, True, {}, {})


def test_a_targets_stored_facts_read_back_parsed(tmp_path):
    store = Store(tmp_path / "s.db")
    cid = store.add_campaign("c", {}, {}, "0")
    tid = store.ensure_target(cid, "pg17", "postgres", 0, True, {})
    store.set_target_facts(tid, install={"version": "17.10", "source": "debian"}, server={"version": "17.10"})
    [target] = store.targets(cid)
    assert (target.install["source"], target.server["version"]) == ("debian", "17.10")
