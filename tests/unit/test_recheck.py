"""`recheck --pin-defaults`: the campaign it builds from a stored one (the regressed tests, each
regressed target beside its reference with the reference's values of the defaults that differ),
and the original report's why line once the recheck is stored."""
from __future__ import annotations

import pytest

from dbdrift.app.recheck import RecheckRequest, campaign, campaign_data, pinned_name
from dbdrift.errors import UserError
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.store.store import RunRecord
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS
from tests.unit.test_reports import QPS, _intervals, make_store

SETTINGS = {"pg17": {"effective_io_concurrency": "1", "jit": "on", "ssl_groups": "a"},
            "pg18": {"effective_io_concurrency": "16", "jit": "on", "io_workers": "3", "ssl_groups": "b"},
            "pg19": {"effective_io_concurrency": "16", "jit": "off", "io_workers": "3", "ssl_groups": "b"}}


@pytest.fixture
def stored(tmp_path):
    return recheckable_store(tmp_path / "g.db")


def recheckable_store(path):
    """The golden store with its campaign as a file holds it and each server's settings."""
    store = make_store(path)
    cid = store.latest_campaign_id(None)
    with store.db:  # the stored spec as a campaign holds it, and each server's settings at its start
        store.db.execute("UPDATE campaigns SET spec_json = ? WHERE id = ?", (
            '{"name": "golden", "rows": 10000, "read_s": 3.0, "threads": [1], "targets": ['
            '{"name": "pg17", "engine": "postgres", "version": "17.10", "base": true, "settings": {}}, '
            '{"name": "pg18", "engine": "postgres", "version": "18.4", "base": false, "settings": {"work_mem": "8MB"}}, '
            '{"name": "pg19", "engine": "postgres", "version": "19.0", "base": false, "settings": {}}]}', cid))
    for t in store.targets(cid):
        store.set_target_facts(t.id, server={"version": "x", "settings": SETTINGS[t.name],
                                                "config_text": "shared_buffers = 1GB\n"})
    store.close()
    return path


def test_the_recheck_runs_the_regressed_tests_with_the_reference_s_differing_defaults(stored):
    recheck = campaign_data(RecheckRequest(stored))
    data = recheck.data
    assert recheck.timed and data["name"] == pinned_name("golden") == "golden-pinned"
    # pg18 regressed on point-query, scan and update-index; pg19 on read-only_range=100
    assert data["tests"] == ["point-query", "read-only_range=100", "scan", "update-index"]
    by_name = {t["name"]: t for t in data["targets"]}
    assert list(by_name) == ["pg17", "pg18", "pg19"] and by_name["pg17"]["base"] is True
    # the ranked defaults that exist on both sides; its own settings stay as the campaign set them
    assert by_name["pg18"]["settings"] == {"effective_io_concurrency": "1", "work_mem": "8MB"}
    assert by_name["pg19"]["settings"] == {"effective_io_concurrency": "1", "jit": "on"}
    assert campaign(recheck).targets[1].settings["effective_io_concurrency"] == "1"  # a valid campaign


def test_a_campaign_without_a_regression_or_a_store_is_refused(tmp_path, stored):
    with pytest.raises(UserError, match="does not exist"):
        campaign_data(RecheckRequest(tmp_path / "nope.db"))
    with pytest.raises(UserError, match="no campaign|holds no campaign|no such"):
        campaign_data(RecheckRequest(stored, campaign="nope"))


def test_the_original_report_says_whether_each_regression_followed_the_defaults(stored):
    from dbdrift.store.store import Store
    store = Store(stored)
    cid = store.add_campaign("golden-pinned", {"name": "golden-pinned"}, {"cpus": 2}, "0.1.0")
    for pos, name in enumerate(("pg17", "pg18")):
        tid = store.ensure_target(cid, name, "postgres", pos, pos == 0, {"name": name})
        for test, follows in (("update-index", True), ("point-query", False)):
            group, metric, base, new, _ = QPS[test]
            value = base if name == "pg17" or follows else new  # update-index recovers with the defaults pinned
            for round_ in range(4):
                store.add_run(tid, RunRecord(test=test, test_group=group, threads=1, repeat=round_, status="ok",
                                             warmup_s=1, duration_s=3, metric=metric, driver_spec={}, value=value,
                                             intervals=_intervals(value, metric, round_, 0, False)))
    why = build_report(store, MICROBENCHMARKS, "golden", None, False).explanations
    assert why[("update-index", 1, "pg18")][1].endswith("the regression followed the defaults")
    assert why[("point-query", 1, "pg18")][1].endswith("it did not follow them")
    assert "pinned" not in why[("scan", 1, "pg18")][1]  # not rechecked
    store.close()


def test_a_counted_regression_rechecked_by_counting_says_whether_it_followed_the_defaults(stored):
    from dbdrift.workloads.sysbench.report.hardware import delta_lines
    from dbdrift.workloads.sysbench.results.findings import instruction_why
    from dbdrift.store.store import InstructionRecord, Store
    store = Store(stored)
    cid = store.add_campaign("golden-pinned", {"name": "golden-pinned", "timed": False}, {"cpus": 2}, "0.1.0")
    counts = {("point-query", "pg17"): 41_760.7, ("point-query", "pg18"): 41_900.0,  # back within 2%
              ("update-index", "pg17"): 103_559.9, ("update-index", "pg18"): 107_726.1}  # still +4%
    for pos, name in enumerate(("pg17", "pg18")):
        tid = store.ensure_target(cid, name, "postgres", pos, pos == 0, {"name": name})
        for (test, target), ir in counts.items():
            if target == name:
                store.add_instructions(tid, InstructionRecord(test, "ok", 1000, 5000, 20.0, [[1, 2], [1, 2]], ir,
                                                              0.02, {"f": ir}, {"f": ir}))
    data = build_report(store, MICROBENCHMARKS, "golden", None, False)
    rows = {r.test: r for r in data.instructions}
    assert rows["point-query"].rechecked == {
        "pg18": "with pg17's defaults pinned: instr 1.003 =, the regression followed the defaults"}
    assert rows["update-index"].rechecked["pg18"].endswith("instr 1.040 -, it did not follow them")
    assert "pg19" not in rows["point-query"].rechecked  # not counted again
    assert instruction_why(rows["point-query"], "pg18").endswith("the regression followed the defaults")
    assert "  with pg17's defaults pinned: instr 1.040 -, it did not follow them" in delta_lines(data)
    store.close()


def test_a_campaign_that_only_counted_is_rechecked_by_counting_its_counted_regressions(stored):
    from dbdrift.store.store import Store
    store = Store(stored)
    with store.db:
        cid = store.latest_campaign_id("golden")
        spec = store.db.execute("SELECT spec_json FROM campaigns WHERE id = ?", (cid,)).fetchone()[0]
        store.db.execute("UPDATE campaigns SET spec_json = ? WHERE id = ?",
                         (spec.replace('"threads": [1]', '"threads": [1], "timed": false'), cid))
        store.db.execute("UPDATE runs SET superseded = 1")  # only the counts are left
    store.close()
    recheck = campaign_data(RecheckRequest(stored))
    assert recheck.data["tests"] == ["point-query", "update-index"]  # pg18's counted regressions
    assert not recheck.timed
    spec = campaign(recheck)
    assert spec.workload_plan.counts_instructions(spec) and not spec.timed


TP_SETTINGS = {"pg17": {"effective_io_concurrency": "1", "jit": "on"},
               "pg18": {"effective_io_concurrency": "16", "jit": "on"}}


def tpcc_store(path, name: str = "tp", pg18_nopm: tuple[float, ...] = (800.0, 790.0, 810.0)):
    """A TPROC-C campaign of three repeats in which pg18 loses a fifth of pg17's NOPM."""
    from dbdrift.store.store import Store
    from tests.unit.test_tpcc import run as tpcc_run
    from dbdrift.workloads.registry import parse_campaign
    store = Store(path)
    spec = parse_campaign({"name": name, "workload": "tpcc", "repeats": 3, "tpcc": {"warehouses": 4},
                           "targets": [{"name": "pg17", "version": "17.10", "base": True},
                                       {"name": "pg18", "version": "18.4"}]}, "c", path.parent, name).to_dict()
    cid = store.add_campaign(name, spec, {"cpus": 2}, "0.1.0")
    for pos, target in enumerate(("pg17", "pg18")):
        tid = store.ensure_target(cid, target, "postgres", pos, pos == 0, spec["targets"][pos])
        store.set_target_facts(tid, server={"version": "x", "settings": TP_SETTINGS[target],
                                            "config_text": "shared_buffers = 1GB\n"})
        for repeat, nopm in enumerate((1000.0, 990.0, 1010.0) if target == "pg17" else pg18_nopm):
            store.add_tpcc_run(tid, tpcc_run(target, nopm, repeat))
    return store


def test_a_tpcc_regression_is_rechecked_by_running_the_workload_again_with_the_defaults_pinned(tmp_path):
    tpcc_store(tmp_path / "t.db").close()
    recheck = campaign_data(RecheckRequest(tmp_path / "t.db"))
    assert recheck.data["name"] == "tp-pinned" and "tests" not in recheck.data
    assert recheck.data["workload"] == "tpcc" and recheck.data["tpcc"]["warehouses"] == 4
    by_name = {t["name"]: t for t in recheck.data["targets"]}
    assert by_name["pg18"]["settings"] == {"effective_io_concurrency": "1"} and by_name["pg17"]["base"] is True
    assert campaign(recheck).workload == "tpcc"  # a valid campaign


def test_a_tpcc_recheck_refuses_chosen_tests(tmp_path):
    tpcc_store(tmp_path / "t.db").close()
    with pytest.raises(UserError, match="runs the workload again"):
        campaign_data(RecheckRequest(tmp_path / "t.db", tests=("new_order",)))


def test_the_tpcc_report_says_whether_its_regression_followed_the_defaults(tmp_path):
    from dbdrift.workloads.registry import WORKLOADS
    store = tpcc_store(tmp_path / "t.db")
    store.close()
    pinned = tpcc_store(tmp_path / "t.db", "tp-pinned", (1000.0, 985.0, 1012.0))  # back level with pg17's defaults
    report = WORKLOADS["tpcc"].build_report(pinned, pinned.latest_campaign_id("tp"), None)
    [line] = report.why_lines()
    assert line.startswith("NOPM pg18 vs pg17: 0.80") or "pg18 vs pg17: 0.80" in line
    assert line.endswith("the regression followed the defaults") and "with pg17's defaults pinned: 1.00" in line
    pinned.close()


@pytest.mark.parametrize("workload", ["insert-benchmark", "tpcc", "vector", "htap"])
def test_every_workloads_stored_campaign_makes_a_valid_recheck_campaign(tmp_path, workload):
    import json
    from pathlib import Path
    from dbdrift.app.recheck import stored_keys
    from dbdrift.workloads.registry import parse_campaign
    spec = json.loads(json.dumps(parse_campaign({"name": "w", "workload": workload, "targets": [
        {"name": "pg17", "version": "17.10"}]}, "c", tmp_path, "w").to_dict()))  # as the store holds it
    table = {**stored_keys(spec, per_test=False), "name": "w-pinned",
             "targets": [{"name": "pg17", "version": "17.10", "settings": {"jit": "off"}}]}
    assert "tests" not in table
    assert parse_campaign(table, "dbdrift recheck", Path.cwd(), "w-pinned").workload == workload


def test_the_recheck_pins_the_gtid_defaults_mysql_9_6_changed():
    from dbdrift.analysis.defaults import DriftTable, drift
    from dbdrift.app.recheck import pins
    mine = {"gtid_mode": "ON", "enforce_gtid_consistency": "ON", "gtid_executed": "u:1-9"}
    theirs = {"gtid_mode": "OFF", "enforce_gtid_consistency": "OFF", "gtid_executed": ""}
    table = DriftTable("my974", "my8033", tuple(drift(theirs, mine, set())))
    assert pins((table,), "my974") == {"enforce_gtid_consistency": "OFF", "gtid_mode": "OFF"}
