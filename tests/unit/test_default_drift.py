"""Default drift: the settings that differ between a target and its reference that neither
configuration set, ranked; identity settings, paths and what either file set never count; every
report format shows them."""
from __future__ import annotations

import csv
import io
import json

import pytest

from dbdrift.analysis.defaults import OTHER, category_of, drift, set_names
from dbdrift.workloads.sysbench.report.formats import render
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.store.store import RunRecord, Store
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS

PG_CONF = """# --- dbdrift defaults ---
shared_buffers = 6026MB
synchronous_commit = off
io_method = sync
port = 5432
"""
MY_CNF = """[mysqld]
innodb-buffer-pool-size=256M
loose_innodb_redo_log_capacity = 96M
# skip-log-bin
"""


def test_the_configuration_names_what_it_set_in_either_syntax():
    assert set_names(PG_CONF) == {"shared_buffers", "synchronous_commit", "io_method", "port"}
    assert set_names(MY_CNF) == {"innodb_buffer_pool_size", "innodb_redo_log_capacity"}


def test_only_unset_differences_count_and_the_likely_ones_come_first():
    ref = {"effective_io_concurrency": "1", "io_method": "", "shared_buffers": "128MB", "ssl_ecdh_curve": "prime256v1",
           "data_directory": "/var/tmp/dbdrift-0/a/data", "server_version": "17.10", "jit": "on", "fsync": "on",
           "log_connections": "off"}
    new = {"effective_io_concurrency": "16", "io_method": "worker", "shared_buffers": "6GB", "io_workers": "3",
           "data_directory": "/var/tmp/dbdrift-0/b/data", "server_version": "18.4", "jit": "ON", "fsync": "off",
           "log_connections": ""}
    found = drift(ref, new, set_names(PG_CONF))
    assert [(d.name, d.kind) for d in found] == [
        ("fsync", "changed"),  # durability first
        ("effective_io_concurrency", "changed"), ("io_workers", "appeared"),  # then the I/O method
        ("log_connections", "changed"), ("ssl_ecdh_curve", "went away")]  # then the rest by name
    assert found[-1].category == OTHER and category_of("innodb_flush_log_at_trx_commit") == "durability"


def test_a_changed_gtid_default_is_drift_and_the_gtid_history_is_not():
    ref = {"gtid_mode": "OFF", "enforce_gtid_consistency": "OFF", "gtid_executed": "", "server_uuid": "a-1"}
    new = {"gtid_mode": "ON", "enforce_gtid_consistency": "ON", "gtid_executed": "b-2:1-5", "server_uuid": "b-2"}
    found = drift(ref, new, set())
    assert [(d.name, d.reference, d.target, d.category) for d in found] == [
        ("enforce_gtid_consistency", "OFF", "ON", "durability"), ("gtid_mode", "OFF", "ON", "durability")]


def drift_store(path) -> Store:
    store = Store(path)
    cid = store.add_campaign("d", {"name": "d"}, {"cpus": 2}, "0.1.0")
    for pos, (name, version, eic) in enumerate((("pg17", "17.10", None), ("pg18", "18.4", "16"))):
        tid = store.ensure_target(cid, name, "postgres", pos, pos == 0, {"name": name})
        settings = {"shared_buffers": "6026MB", "effective_io_concurrency": eic or "1", "server_version": version,
                    **({"io_workers": "3"} if eic else {})}
        store.set_target_facts(tid, server={"version": version, "settings": settings, "config_text": PG_CONF})
        store.add_run(tid, RunRecord(test="point-query", test_group="point", threads=1, repeat=0, status="ok",
                                     warmup_s=1, duration_s=3, metric="qps", driver_spec={}, value=1000.0 - pos))
    return store


@pytest.mark.parametrize("fmt", ["text", "markdown", "html", "json", "csv"])
def test_every_format_names_the_defaults_that_differ(tmp_path, fmt):
    data = build_report(drift_store(tmp_path / "s.db"), MICROBENCHMARKS, None, None, False)
    [table] = data.drift
    assert (table.target, table.reference) == ("pg18", "pg17")
    assert [d.name for d in table.rows] == ["effective_io_concurrency", "io_workers"]
    out = render(data, fmt)
    if fmt == "json":
        [doc] = json.loads(out)["default_drift"]
        assert doc["settings"][0] == {"setting": "effective_io_concurrency", "category": "I/O method",
                                      "kind": "changed", "reference": "1", "target": "16"}
    elif fmt == "csv":
        rows = [r for r in csv.DictReader(io.StringIO(out)) if r["measure"] == "setting"]
        assert [(r["setting"], r["setting_reference"], r["setting_target"]) for r in rows] == [
            ("effective_io_concurrency", "1", "16"), ("io_workers", "(none)", "3")]
    else:
        assert "effective_io_concurrency" in out and "io_workers" in out and "shared_buffers" not in out.split(
            "efaults that differ")[1]


@pytest.mark.parametrize("fmt", ["text", "markdown", "html", "json"])
def test_every_workload_report_names_them_too(fmt):
    from dbdrift.analysis.defaults import Drift, DriftTable
    from dbdrift.workloads.htap.report import render as render_htap
    from dbdrift.workloads.htap.results import htap_report
    from dbdrift.workloads.tpcc.report import render as render_tpcc
    from dbdrift.workloads.tpcc.results import tpcc_report
    table = (DriftTable("pg18", "pg17", (Drift("effective_io_concurrency", "1", "16", "I/O method"),
                                         Drift("ssl_groups", None, "X25519", "other"))),)
    for out in (render_tpcc(tpcc_report([], ["pg17", "pg18"], drift=table), fmt),
                render_htap(htap_report([], ["pg17", "pg18"], drift=table), fmt)):
        if fmt == "json":
            assert json.loads(out)["default_drift"][0]["settings"][0]["setting"] == "effective_io_concurrency"
        else:
            assert "effective_io_concurrency" in out and "ssl_groups" in out


def test_a_switch_list_keeps_only_the_flags_that_differ():
    [d] = drift({"optimizer_switch": "index_merge=on,mrr=on,hypergraph_optimizer=off"},
                {"optimizer_switch": "index_merge=on,mrr=off,hypergraph_optimizer=off,hash_set_operations=on"}, set())
    assert (d.reference, d.target, d.category) == ("mrr=on,hash_set_operations=(absent)",
                                                   "mrr=off,hash_set_operations=on", "optimizer")
