"""CH-benCHmark end to end through the CLI on real PostgreSQL, MariaDB and MySQL servers: one
warehouse, the three windows (transactions alone, analytics alone, together), every one of the 22
queries planned on each engine, the consistency checks after, and the report in all five formats."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.helpers import dbdrift, query, run_campaign, write_campaign

pytestmark = pytest.mark.server

SIZES = """[htap]
warehouses = 1
clients = 1
streams = 1
rampup_s = 0.5
duration_s = 6
"""


def campaign(tmp: Path, name: str, targets: list[tuple[str, str]], sizes: str = SIZES) -> Path:
    return write_campaign(tmp, name, ['workload = "htap"', sizes], targets)


@pytest.fixture(scope="module")
def three_engines(tmp_path_factory):
    # the builds test_tpcc.py runs, so a CI machine fetches nothing more
    targets = [("pg17", 'version = "17.10"'), ("ma10.11", 'engine = "mariadb"\nversion = "10.11.5"'),
               ("my8.0", 'engine = "mysql"\nversion = "8.0.31"')]
    return run_campaign(campaign(tmp_path_factory.mktemp("htap"), "htap-3", targets), "--format", "json", timeout=1200)


def test_each_engine_runs_the_three_windows_and_passes_the_consistency_checks(three_engines):
    store, result = three_engines
    assert result.returncode == 0, result.stderr[-3000:]
    rows = query(store, "SELECT t.name AS target, r.* FROM workload_runs r JOIN targets t ON t.id = r.target_id "
                        "WHERE r.superseded = 0 ORDER BY r.id")
    assert sorted(r["target"] for r in rows) == ["ma10.11", "my8.0", "pg17"]
    for row in rows:
        assert row["status"] == "ok", (row["target"], row["error"])
        record = json.loads(row["record_json"])
        assert sorted(record["queries"]) == sorted(f"Q{i}" for i in range(1, 23))
        w = record["windows"]
        assert set(w) == {"transactions", "analytics", "together"}
        assert w["transactions"]["nopm"] > 0 and w["together"]["nopm"] > 0, row["target"]
        assert w["analytics"]["nopm"] == 0 and not w["transactions"]["analytics"]
        for name in ("analytics", "together"):
            a = w[name]["analytics"]
            assert a["completed"] > 0 and a["qph"] > 0, (row["target"], name, a)
            assert set(a["by_query"]) == set(record["queries"])
            done = [q for q, s in a["by_query"].items() if s["count"]]
            assert all(a["by_query"][q]["mean_ms"] > 0 for q in done), a
            assert sum(s["count"] for s in a["by_query"].values()) == a["completed"]
            assert w[name]["hardware"]["server_cpu_s"] > 0
        assert record["consistency"] and all(c["ok"] for c in record["consistency"]), record["consistency"]


def test_the_report_compares_nopm_queries_per_hour_and_latency_in_every_format(three_engines):
    store, result = three_engines
    doc = json.loads(result.stdout)
    assert doc["base"] == "pg17"
    tests = {(v["target"], v["test"]) for v in doc["verdicts"]}
    for target in ("ma10.11", "my8.0"):
        for what in ("NOPM with analytics", "NOPM alone", "queries/h with transactions", "queries/h alone"):
            assert (target, what) in tests
    nopm = [r for r in doc["relatives"] if r["what"] == "NOPM with analytics"]
    assert all(r["value"] and r["value"] > 0 for r in nopm), nopm
    for s in doc["targets"]:
        assert s["interference"]["NOPM"] and s["interference"]["NOPM"] > 0, s
    for fmt in ("text", "markdown", "html"):
        out = dbdrift("report", "--store", store, "--format", fmt)
        assert out.returncode == 0, out.stderr[-2000:]
        assert "interference" in out.stdout and "NOPM" in out.stdout, fmt
    out = dbdrift("report", "--store", store, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert {r["window"] for r in rows} == {"transactions", "analytics", "together"}

