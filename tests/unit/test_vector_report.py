"""The vector search report from stored repeats: curves, QPS at equal recall with its verdict,
build time and size relative to the base, in all five formats; the store keeps a repeat whole."""
from __future__ import annotations

import csv
import io
import json

import pytest

from dbdrift.analysis.noise import Verdict
from dbdrift.model import WorkloadRun
from dbdrift.store.store import Store
from dbdrift.workloads.vector.report import render
from dbdrift.workloads.vector.results import vector_report
from tests.helpers import slower_with_a_failure

SETTINGS = (10, 20, 40, 80)
RECALL = {10: 0.86, 20: 0.93, 40: 0.97, 80: 0.995}


def run(target: str, repeat: int, speed: float, reach: float = 1.0, status: str = "ok") -> WorkloadRun:
    points = [{"setting": f"ef_search={n}", "value": n, "recall": min(RECALL[n], reach),
               "qps": speed * 8000 / n * (1 + 0.01 * repeat), "queries": 1000, "queries_seen": 100,
               "latency_us": {"p50": 100.0, "p95": 200.0, "p99": 300.0, "max": 400.0},
               "hardware": {"elapsed_s": 1.0, "cpu_user_pct": 50.0, "cpu_sys_pct": 10.0, "server_cpu_s": 0.8 / speed,
                            "client_cpu_s": 0.1, "cs": 1000}} for n in SETTINGS]
    family = {"number": 0, "label": "hnsw m=16 ef_construction=64 vector", "type": "vector", "index": "hnsw",
              "build": {"m": 16, "ef_construction": 64}, "search_key": "ef_search", "build_s": 10.0 / speed,
              "table_bytes": 5_000_000, "index_bytes": 2_000_000, "points": points}
    record = {"dataset": {"source": "synthetic: test"}, "engine": "postgres",
              "loads": [{"type": "vector", "rows": 1000, "elapsed_s": 1.5}], "families": [family]}
    return WorkloadRun(target, "vector", status, record, 30.0, None if status == "ok" else "server died", repeat,
                       position=repeat % 2)


def report(runs):
    return vector_report(runs, ["old", "new"], {"old": "postgres 17.12", "new": "postgres 18.6"}, campaign="v",
                         setup="synthetic")


def test_a_slower_target_is_a_regression_at_every_recall_both_reach():
    data = report([run("old", r, 1.0) for r in range(3)] + [run("new", r, 0.8) for r in range(3)])
    verdicts = {f.test: f for f in data.findings}
    assert set(verdicts) == {f"hnsw m=16 ef_construction=64 vector QPS @ recall {r}" for r in ("0.90", "0.95", "0.99")}
    for f in verdicts.values():
        assert f.verdict is Verdict.REGRESSION and f.ratio == pytest.approx(0.8, rel=1e-6)
    build = next(r for r in data.relatives if r.what == "build time")
    assert build.estimate.value == pytest.approx(1.25)
    assert data.explanations  # the why: server CPU per query moved with it
    assert "server CPU µs/query +25.0%" in next(iter(data.explanations.values()))


def test_a_recall_the_target_never_reaches_is_not_measured_and_one_the_base_misses_is_not_compared():
    data = report([run("old", r, 1.0, reach=0.98) for r in range(3)] + [run("new", r, 1.0, reach=0.94)
                                                                       for r in range(3)])
    tests = {f.test.rsplit(" ", 1)[1]: f for f in data.findings}
    assert "0.99" not in tests  # the base never gets there
    assert tests["0.95"].verdict is Verdict.NOT_MEASURED and "does not reach recall 0.95 (best 0.940)" in \
        tests["0.95"].status
    assert tests["0.90"].verdict is Verdict.NO_CHANGE


@pytest.mark.parametrize("fmt", ["text", "markdown", "csv", "json", "html"])
def test_every_format_carries_the_verdicts_and_the_curves(fmt):
    out = render(report(slower_with_a_failure(run)), fmt)
    if fmt == "json":
        doc = json.loads(out)
        assert len(doc["curves"]) == 2 and doc["verdicts"][0]["verdict"] == "regression"
        assert doc["runs"][-1]["status"] == "failed"
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert {r["setting"] for r in rows} == {f"ef_search={n}" for n in SETTINGS}
        assert {r["verdict"] for r in rows if r["target"] == "new"} == {"regression"}
    else:
        assert "regression" in out and "recall" in out.lower() and "server died" in out
        if fmt == "html":
            assert out.count("<svg") >= 1 and "recall@k against queries per second" in out


def test_the_store_keeps_a_repeat_whole_and_a_rerun_supersedes_it(tmp_path):
    store = Store(tmp_path / "s.db")
    cid = store.add_campaign("v", {"workload": "vector"}, {}, "test")
    tid = store.ensure_target(cid, "old", "postgres", 0, True, {})
    store.add_workload_run(tid, run("old", 0, 1.0, status="failed"))
    assert not store.workload_done(tid, 0)
    store.add_workload_run(tid, run("old", 0, 1.0))
    [kept] = store.workload_runs(cid)
    assert kept.status == "ok" and kept.record["families"][0]["points"][2]["setting"] == "ef_search=40"
    assert store.workload_done(tid, 0)
    assert [dict(r)["ok"] for r in store.campaigns()] == [1]
