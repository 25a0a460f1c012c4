"""CH-benCHmark without a server: the [htap] keys, the driver's window specs, the queries per
engine, and the report from stored repeats (NOPM and queries/h alone and together, each query's
latency, the interference, the verdicts) in all five formats."""
from __future__ import annotations

import csv
import io
import json
import tomllib
from pathlib import Path

import pytest

from dbdrift.analysis.noise import Verdict
from dbdrift.errors import InputError
from dbdrift.model import WorkloadRun
from dbdrift.workloads.registry import parse_campaign
from dbdrift.workloads.htap import catalog
from dbdrift.workloads.htap.plan import check_lines, judged
from dbdrift.workloads.htap.report import render, slowest
from dbdrift.workloads.htap.results import htap_report
from tests.helpers import slower_with_a_failure

CAMPAIGN = """
name = "h"
workload = "htap"
[htap]
warehouses = 2
clients = 2
duration_s = 30
{extra}
[[targets]]
name = "old"
engine = "postgres"
version = "17.10"
[[targets]]
name = "new"
engine = "mariadb"
version = "11.8.9"
"""


def parse_text(text: str):
    return parse_campaign(tomllib.loads(text), "h.toml", Path("."), "h")


def spec(extra: str = ""):
    return parse_text(CAMPAIGN.format(extra=extra))


def test_the_htap_table_sets_sizes_windows_and_queries():
    s = spec('queries = ["Q6", "Q1", "Q6"]')
    assert (s.params.warehouses, s.params.clients, s.params.streams, s.params.duration_s) == (2, 2, 1, 30.0)
    assert s.params.queries == ("Q6", "Q1")
    assert s.params.window("transactions") == (2, 0) and s.params.window("analytics") == (0, 1)
    assert s.params.window("together") == (2, 1)
    assert judged(s) == catalog.JUDGED + ("Q6 latency", "Q1 latency")
    assert "analytics: 0 virtual user(s), 1 stream(s)" in "\n".join(check_lines(s))
    assert spec().params.queries == catalog.QUERY_NAMES


@pytest.mark.parametrize("extra, message", [
    ('queries = ["Q23"]', "unknown query 'Q23'"),
    ("queries = []", "empty"),
    ("streams = 0", "streams"),
    ("bogus = 1", "bogus"),
])
def test_bad_htap_keys_are_refused_with_the_key_named(extra, message):
    with pytest.raises(InputError) as exc:
        spec(extra)
    assert message in exc.value.message


def test_sysbench_keys_are_refused_for_htap():
    with pytest.raises(InputError) as exc:
        parse_text(CAMPAIGN.format(extra="").replace('workload = "htap"', 'workload = "htap"\nthreads = 4'))
    assert "threads" in exc.value.message


def test_the_22_queries_read_the_tpcc_schema_and_mysql_compares_c_state_by_byte():
    assert len(catalog.QUERIES) == 22
    pg = catalog.queries_for("postgres", catalog.QUERY_NAMES)
    my = catalog.queries_for("mariadb", catalog.QUERY_NAMES)
    q3 = next(q["sql"] for q in my if q["name"] == "Q3")
    assert "LIKE BINARY 'A%'" in q3
    assert "BINARY" not in next(q["sql"] for q in pg if q["name"] == "Q3")
    # each repeat starts the list elsewhere, and keeps every query once
    rotated = [q["name"] for q in catalog.queries_for("postgres", catalog.QUERY_NAMES, repeat=1)]
    assert rotated[0] == "Q8" and sorted(rotated) == sorted(catalog.QUERY_NAMES)


def test_the_three_tables_load_in_batches_with_every_nation_a_customer_state_can_name():
    statements = catalog.load_statements(seed=1)
    assert statements[:3] == [f"CREATE TABLE {t} ({c})" for t, c in catalog.TABLES.items()]
    inserts = [s for s in statements if s.startswith("INSERT INTO supplier")]
    assert len(inserts) == catalog.SUPPLIERS // 1000
    nations = catalog.nation_rows()
    assert {n[0] for n in nations} == {ord(c) for c in catalog.ALNUM}
    assert {n[2] for n in nations} == set(range(len(catalog.REGIONS)))
    assert sum(" bad " in str(r[6]) for r in catalog.supplier_rows(1)) == 5


# --- the report -----------------------------------------------------------------------------------
def window(clients: int, streams: int, nopm: float, qph: float, latency: dict[str, float | None]) -> dict:
    by_query = {q: {"count": 0 if ms is None else 2, "mean_ms": ms, "p50_ms": ms, "p95_ms": ms, "max_ms": ms,
                    "cancelled": 1 if ms is None else 0} for q, ms in latency.items()}
    return {"status": "ok", "error": None, "clients": clients, "streams": streams, "elapsed_s": 30.0,
            "nopm": nopm if clients else 0.0, "tpm": 2.2 * nopm if clients else 0.0,
            "new_orders": int(nopm / 2) if clients else 0, "transactions": int(nopm) if clients else 0,
            "by_type": {"new_order": {"count": 10, "errors": 0, "rollbacks": 0, "p50_us": 900.0, "p95_us": 2000.0,
                                      "p99_us": 3000.0, "max_us": 4000.0}} if clients else {},
            "analytics": {"streams": streams, "completed": 10, "qph": qph, "cancelled": 1,
                          "by_query": by_query} if streams else {},
            "intervals": [{"t_sec": 1.0, "nopm": nopm}],
            "hardware": {"elapsed_s": 30.0, "cpu_user_pct": 50.0, "cpu_sys_pct": 10.0, "server_cpu_s": 20.0,
                         "client_cpu_s": 2.0, "cs": 1000, "write_kb": 500, "read_kb": 100}}


def run(target: str, repeat: int, speed: float, status: str = "ok") -> WorkloadRun:
    wobble = 1 + 0.01 * repeat
    lat = {"Q1": 800.0 / speed * wobble, "Q6": 200.0 / speed * wobble, "Q9": None}
    record = {"engine": "postgres", "queries": ["Q1", "Q6", "Q9"], "consistency": [{"name": "c", "ok": True}],
              "windows": {"transactions": window(2, 0, 1000 * speed * wobble, 0, {}),
                          "analytics": window(0, 1, 0, 900 * speed * wobble, {k: v and v * 0.8 for k, v in lat.items()}),
                          "together": window(2, 1, 800 * speed * wobble, 700 * speed * wobble, lat)}}
    if status != "ok":
        record["windows"].pop("together")
    return WorkloadRun(target, "htap", status, record, 120.0, None if status == "ok" else "server died", repeat,
                       position=repeat % 2)


def report(runs):
    return htap_report(runs, ["old", "new"], {"old": "postgres 17.10", "new": "postgres 18.4"}, campaign="h",
                       setup="2 warehouses", queries=("Q1", "Q6", "Q9"))


def test_a_slower_target_regresses_on_nopm_queries_per_hour_and_each_latency_it_completes():
    data = report([run("old", r, 1.0) for r in range(3)] + [run("new", r, 0.8) for r in range(3)])
    found = {f.test: f for f in data.findings}
    for test in catalog.JUDGED + ("Q1 latency", "Q6 latency"):
        assert found[test].verdict is Verdict.REGRESSION and found[test].ratio == pytest.approx(0.8, rel=1e-6), test
    assert found["Q9 latency"].verdict is Verdict.NOT_MEASURED  # never completed inside a window
    assert any("never completed" in n and "Q9" in n for n in data.notes)
    old = data.summary("old")
    assert old.interference["NOPM"] == pytest.approx(0.8) and old.interference["queries/h"] == pytest.approx(700 / 900)
    q1 = next(q for q in old.queries if q.name == "Q1")
    assert q1.together_ms == pytest.approx(808.0) and q1.alone_ms == pytest.approx(808.0 * 0.8)
    assert slowest(data)[:2] == ["Q1", "Q6"]
    assert old.consistency_ok is True
    assert "server CPU" in data.explanations[("NOPM with analytics", "new")]
    # a query's why says whether it is slower alone too (the engine) or only beside the transactions
    assert data.explanations[("Q1 latency", "new")].endswith("Q1 latency alone +25.0%")


@pytest.mark.parametrize("fmt", ["text", "markdown", "csv", "json", "html"])
def test_every_format_carries_the_verdicts_the_windows_and_the_queries(fmt):
    out = render(report(slower_with_a_failure(run)), fmt)
    if fmt == "json":
        doc = json.loads(out)
        assert {v["verdict"] for v in doc["verdicts"] if v["test"] != "Q9 latency"} == {"regression"}
        assert doc["targets"][0]["interference"]["NOPM"] == pytest.approx(0.8)
        assert [r["status"] for r in doc["runs"] if r["target"] == "new"] == ["ok", "ok", "ok", "failed"]
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert {r["window"] for r in rows} == set(catalog.WINDOWS)
        assert {r["verdict"] for r in rows if r["target"] == "new" and r["window"] == "together" and r["query"] == "Q1"} \
            == {"regression"}
        assert {r["query"] for r in rows} == {"", "Q1", "Q6", "Q9"}
    else:
        assert "regression" in out and "interference" in out and "Q1" in out and "server died" in out
        if fmt == "html":
            assert out.count("<svg") >= 1


def test_a_windows_nopm_dips_are_laid_beside_the_engines_events_in_every_format():
    runs = [run("old", r, 1.0) for r in range(2)] + [run("new", r, 0.8) for r in range(2)]
    for old in runs[:2]:  # both repeats: the chart draws the last
        together = old.record["windows"]["together"]
        together["intervals"] = [{"t_sec": float(s), "nopm": 300.0 if s in (10, 20) else 1000.0} for s in range(30)]
        together["events"] = {"t": [float(s) for s in range(30)], "series": {"wal_mb": [1.0] * 30}, "error": "",
                              "events": [{"t": 10.2, "kind": "checkpoint", "what": ""},
                                         {"t": 19.8, "kind": "checkpoint", "what": ""}]}
    data = report(runs)
    text = render(data, "text")
    assert "dips and spikes, and the engine's events that coincide" in text
    assert "2 dips of NOPM below 80% of its median (1,000)" in text and "2 of 2 dips span a checkpoint" in text
    assert "2 of 2 dips span a checkpoint" in render(data, "csv")
    doc = json.loads(render(data, "json"))
    mine = next(r for r in doc["runs"] if r["target"] == "old" and r["repeat"] == 0)
    first = mine["dips"]["together"][0]["coincidences"][0]
    assert {k: first[k] for k in ("kind", "hits", "dips", "by_chance")} == {
        "kind": "checkpoint", "hits": 2, "dips": 2, "by_chance": pytest.approx(2 * 4 / 28, abs=1e-3)}  # 4 of 28 seconds
    assert "together: WAL written (MB/s)" in render(data, "html")
