"""bisect over released PostgreSQL versions on real servers (instructions per event), and
history reading back every version it measured."""
from __future__ import annotations

import json

import pytest

from tests.helpers import dbdrift, query, shared_work_dir

pytestmark = pytest.mark.server


def test_bisect_measures_each_version_once_stores_it_and_history_shows_it(tmp_path):
    work = shared_work_dir("bisect")
    store = tmp_path / "b.db"
    args = ["bisect", "--engine", "postgres", "--good", "18.2", "--bad", "18.4", "--test", "point-query",
            "--rows", "2000", "--threshold", "0.01%", "--store", store, "--format", "json"]
    first = dbdrift(*args, work_dir=work, timeout=900)
    assert first.returncode == 0, first.stderr[-3000:]
    out = json.loads(first.stdout)
    assert out["candidates"] == ["18.2", "18.3", "18.4"]
    measured = [p["version"] for p in out["probes"]]
    assert measured[0] == "18.2" and measured[-1] == "18.4"
    assert all(p["value"] and 10_000 < p["value"] < 200_000 for p in out["probes"])  # instructions per event
    if out["verdict"] == "found":
        assert measured == ["18.2", "18.3", "18.4"] and out["first_bad"] in ("18.3", "18.4")
    else:
        assert out["verdict"] == "no-move" and measured == ["18.2", "18.4"]
    campaigns = {r["name"] for r in query(store, "SELECT name FROM campaigns")}
    assert campaigns == {f"bisect-postgres-point-query-{v}" for v in measured}
    counted = query(store, "SELECT test, status, ir_per_event FROM instructions")
    assert len(counted) == len(measured) and all(r["status"] == "ok" for r in counted)

    again = dbdrift(*args, work_dir=work, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "measuring" not in again.stderr and again.stderr.count("from the store") == len(measured)
    assert json.loads(again.stdout)["answer"] == out["answer"]

    shown = dbdrift("history", "--store", store, "--metric", "instructions", "--format", "json")
    assert shown.returncode == 0, shown.stderr
    series = json.loads(shown.stdout)["series"]
    assert len(series) == 1 and series[0]["test"] == "point-query"
    assert [p["label"] for p in series[0]["points"]] == measured
    by_version = {p["version"]: p["value"] for p in out["probes"]}
    assert all(p["value"] == pytest.approx(by_version[p["label"]]) for p in series[0]["points"])
