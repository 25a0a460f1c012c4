"""Vector search end to end through the CLI on real servers: pgvector on Debian's PostgreSQL 18.6
against MariaDB 11.8.9's VECTOR INDEX, a tiny synthetic set. Every search setting stores its
recall and QPS, recall rises with ef_search, the report compares QPS at equal recall in all five
formats, and targets that cannot run it are refused before any server starts."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.helpers import dbdrift, query, run_campaign, write_campaign

pytestmark = pytest.mark.server

SIZES = """[vector]
rows = 3000
dim = 128
queries = 60
ef_search = [10, 20, 80]
warmup_s = 0.3
duration_s = 1.5
"""


def campaign(tmp: Path, name: str, targets: list[tuple[str, str]], sizes: str = SIZES, extra: str = "") -> Path:
    return write_campaign(tmp, name, ['workload = "vector"', "repeats = 2", extra, sizes], targets)


@pytest.fixture(scope="module")
def pg_and_mariadb(tmp_path_factory):
    targets = [("pg18.6", 'version = "debian:18.6"'), ("ma11.8.9", 'engine = "mariadb"\nversion = "11.8.9"')]
    return run_campaign(campaign(tmp_path_factory.mktemp("vector"), "vector-2", targets), "--format", "json",
                        timeout=1500)


def test_every_search_setting_of_both_engines_stores_recall_and_qps(pg_and_mariadb):
    store, result = pg_and_mariadb
    assert result.returncode == 0, result.stderr[-3000:]
    rows = query(store, "SELECT t.name AS target, r.* FROM workload_runs r JOIN targets t ON t.id = r.target_id "
                        "WHERE r.superseded = 0 ORDER BY r.id")
    assert sorted((r["target"], r["repeat"]) for r in rows) == [("ma11.8.9", 0), ("ma11.8.9", 1), ("pg18.6", 0),
                                                               ("pg18.6", 1)]
    for row in rows:
        assert row["status"] == "ok", (row["target"], row["error"])
        record = json.loads(row["record_json"])
        assert record["loads"][0]["rows"] == 3000
        [family] = record["families"]
        assert family["build_s"] > 0 and family["index_bytes"] > 0 and family["table_bytes"] > 0, family
        recalls = [p["recall"] for p in family["points"]]
        assert [p["setting"] for p in family["points"]] == ["ef_search=10", "ef_search=20", "ef_search=80"]
        assert all(0.0 < r <= 1.0 for r in recalls), recalls
        assert recalls[-1] >= recalls[0] and recalls[-1] > 0.9, recalls  # a wider search finds more
        for p in family["points"]:
            assert p["qps"] > 0 and p["queries_seen"] == 60, p
            assert p["hardware"]["server_cpu_s"] > 0, p
    labels = {r["target"]: json.loads(r["record_json"])["families"][0]["label"] for r in rows}
    assert labels == {"pg18.6": "hnsw m=16 ef_construction=64 vector", "ma11.8.9": "hnsw m=16 vector"}


def test_the_report_compares_qps_at_equal_recall_in_every_format(pg_and_mariadb):
    store, result = pg_and_mariadb
    doc = json.loads(result.stdout)
    assert doc["base"] == "pg18.6" and "synthetic" in doc["dataset"]["source"]
    compared = [r for r in doc["relative"] if r["what"].startswith("QPS")]
    assert compared and all(r["target"] == "ma11.8.9" for r in compared)
    assert any(r["estimate"] and r["estimate"]["value"] > 0 for r in compared), compared
    verdicts = {v["test"] for v in doc["verdicts"]}
    assert any(t.endswith("QPS @ recall 0.90") for t in verdicts), verdicts
    for fmt in ("text", "markdown", "csv", "html"):
        out = dbdrift("report", "--store", store, "--format", fmt)
        assert out.returncode == 0, out.stderr[-2000:]
        assert "recall" in out.stdout.lower(), fmt
    rows = list(csv.DictReader(io.StringIO(dbdrift("report", "--store", store, "--format", "csv").stdout)))
    assert {r["setting"] for r in rows} == {"ef_search=10", "ef_search=20", "ef_search=80"}
    assert "<svg" in dbdrift("report", "--store", store, "--format", "html").stdout


def test_targets_that_cannot_search_vectors_are_refused_before_any_server_starts(tmp_path):
    npm = campaign(tmp_path, "no-pgvector", [("pg17.10", 'version = "17.10"'), ("pg18.6", 'version = "debian:18.6"')])
    out = dbdrift("run", npm, "--store", tmp_path / "s.db")
    assert out.returncode == 2, out.stderr[-2000:]
    assert "has no pgvector extension" in out.stderr and "debian:17.12" in out.stderr
    assert "start postgres" not in out.stderr  # no server started
    old = campaign(tmp_path, "old-mariadb", [("ma10.11", 'engine = "mariadb"\nversion = "10.11.5"')])
    out = dbdrift("run", old, "--store", tmp_path / "s.db")
    assert out.returncode == 2 and "has no VECTOR type" in out.stderr, out.stderr[-2000:]
    half = campaign(tmp_path, "halfvec-mariadb", [("ma11.8.9", 'engine = "mariadb"\nversion = "11.8.9"')],
                    sizes=SIZES + 'types = ["vector", "halfvec"]\n')
    out = dbdrift("run", half, "--store", tmp_path / "s.db")
    assert out.returncode == 2 and "has no halfvec" in out.stderr, out.stderr[-2000:]


def test_history_follows_each_engines_qps_at_equal_recall(pg_and_mariadb):
    """`history --metric rate`: each engine's QPS at recall 0.90 (both curves reach it) is a point
    of its own series, the mean of the two repeats; without an interval, since one over two
    repeats would have a single degree of freedom (docs/noise.md D23)."""
    store, _ = pg_and_mariadb
    out = dbdrift("history", "--store", store, "--metric", "rate", "--format", "json")
    assert out.returncode == 0, out.stderr
    series = {(s["engine"], s["test"]): s["points"] for s in json.loads(out.stdout)["series"]}
    for engine, label in (("postgres", "hnsw m=16 ef_construction=64 vector"), ("mariadb", "hnsw m=16 vector")):
        [point] = series[(engine, f"{label} QPS @ recall 0.90")]
        assert point["value"] > 0 and point["lower"] is None and point["upper"] is None, point
