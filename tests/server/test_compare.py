"""`dbdrift compare` against real PostgreSQL servers: no campaign file, the report printed, the
store listed by `campaigns`, and the JSON report's context naming the versions that ran."""
from __future__ import annotations

import json

import pytest

from tests.helpers import dbdrift, query, shared_work_dir

pytestmark = pytest.mark.server


def test_compare_two_versions_without_a_campaign_file(tmp_path):
    store = tmp_path / "s.db"
    result = dbdrift("compare", "17.10", "18.4", "--tests", "point-query,update-index", "--rows", "20000",
                     "--duration", "2", "--set", "warmup_s=1", "--set", "scan_warm_s=1", "--set", "settle_s=0",
                     "--store", store, work_dir=shared_work_dir("compare"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "compare-pg17.10-vs-pg18.4" in result.stdout and "update-index" in result.stdout
    listed = dbdrift("campaigns", "--store", store).stdout
    assert "compare-pg17.10-vs-pg18.4" in listed and "4/0/0" in listed
    doc = json.loads(dbdrift("report", "--store", store, "--format", "json").stdout)
    assert [(t["name"], t["version"]) for t in doc["meta"]["targets"]] == [("pg17.10", "17.10"), ("pg18.4", "18.4")]
    assert doc["meta"]["campaign"]["settings"]["read_s"] == 2.0
    sizes = [t["binary"] for t in doc["meta"]["targets"]]  # stored with each target when its server started
    assert all(s["bytes"] > 5e6 and s["text"] > 5e6 and s["path"].endswith("bin/postgres") for s in sizes)
    rows = [r for r in doc["rows"] if r["target"] == "pg18.4"]
    assert {r["test"] for r in rows} == {"point-query", "update-index"}
    assert all(r["reference"] == "pg17.10" and r["rqps"] > 0 and r["status"] == "ok" for r in rows)
    assert dbdrift("report", "--store", store, "--fail-on", "not-measured").returncode == 0


def test_a_target_without_index_only_scans_is_marked_p_on_the_covered_tests_with_both_plans(tmp_path):
    """17.10 against 17.10 with enable_indexonlyscan = off: the covered tests get another plan
    (P, both plans listed); a test whose plan is an index scan on both is not marked."""
    store = tmp_path / "s.db"
    result = dbdrift("compare", "17.10", "noios=17.10", "--set", "targets.noios.settings.enable_indexonlyscan=off",
                     "--tests", "points-covered-pk,range-covered-pk,point-query", "--rows", "20000", "--duration", "2",
                     "--set", "warmup_s=1", "--set", "settle_s=0", "--store", store, "--format", "json",
                     work_dir=shared_work_dir("plans"))
    assert result.returncode == 0, result.stderr[-3000:]
    doc = json.loads(result.stdout)
    flagged = {r["test"] for r in doc["rows"] if r["plan_changed"]}
    assert flagged == {"points-covered-pk", "range-covered-pk"}
    change = next(c for c in doc["plan_changes"] if c["test"] == "range-covered-pk")
    assert change["statements"][0]["reference_shape"].startswith("covering range scan on sbtest using sbtest_pkey")
    assert change["statements"][0]["shape"].startswith("range scan on sbtest using sbtest_pkey")
    text = dbdrift("report", "--store", store).stdout
    assert "range-covered-pk noios vs pg17.10:" in text
    # the plan stored is the prepared statement's after five executions, as the run uses it: the
    # plan cache's generic plan, whose index condition names the parameter, not the value
    point = query(store, "SELECT p.plan_json FROM plans p JOIN targets t ON t.id = p.target_id "
                         "WHERE t.name = 'pg17.10' AND p.test = 'point-query'")
    assert len(point) == 1 and "(id = $1)" in point[0]["plan_json"], point
    for row in doc["rows"]:  # a verdict on a covered test names the plan as what moved with it
        if row["plan_changed"] and row["verdict"] in ("regression", "improvement"):
            assert "plan changed: covering range scan" in row["explanation"], row["explanation"]
