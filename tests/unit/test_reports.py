"""Every report format against a golden file built from a small stored campaign."""
import json
import os
from pathlib import Path

import pytest

from dbdrift.cli.report import build_report, render
from dbdrift.store.store import RunRecord, Store

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
QPS = {  # test -> (group, metric, pg17, pg18, pg19)
    "point-query": ("point", "qps", 20000.0, 19000.0, 21500.0),
    "hot-points": ("point", "qps", 5000.0, 5100.0, None),
    "range-covered-pk": ("range-noagg", "qps", 8000.0, 8800.0, 8000.0),
    "scan": ("range-noagg", "krps", 950.0, 900.0, 1000.0),
    "read-only_range=100": ("range-agg", "qps", 16000.0, 15800.0, 15000.0),
    "update-index": ("writes", "qps", 7000.0, 6400.0, 7100.0),
}


def make_store(path: Path) -> Store:
    store = Store(path)
    cid = store.add_campaign("golden", {"name": "golden"}, {"cpus": 2}, "0.1.0")
    for pos, (name, version) in enumerate((("pg17", "17.10"), ("pg18", "18.4"), ("pg19", "19.0"))):
        tid = store.ensure_target(cid, name, "postgres", pos, pos == 0, {"name": name})
        store.set_target_facts(tid, server={"version": version})
        for test, (group, metric, *values) in QPS.items():
            value = values[pos]
            store.add_run(tid, RunRecord(test=test, test_group=group, threads=1, repeat=0,
                                         status="ok" if value else "failed", warmup_s=1, duration_s=5,
                                         metric=metric, driver_spec={}, value=value,
                                         error=None if value else "server died"))
        store.add_run(tid, RunRecord(test="point-query.warm", test_group="point", threads=1, repeat=0, status="ok",
                                     warmup_s=1, duration_s=5, metric="qps", driver_spec={}, value=1.0))
    return store


@pytest.fixture
def store(tmp_path):
    s = make_store(tmp_path / "g.db")
    yield s
    s.close()


@pytest.mark.parametrize("fmt, chain, suffix", [
    ("text", False, "txt"), ("markdown", False, "md"), ("csv", False, "csv"), ("json", False, "json"),
    ("text", True, "chain.txt"),
])
def test_report_format_matches_its_golden_file(store, fmt, chain, suffix):
    output = render(build_report(store, None, None, chain), fmt)
    golden = GOLDEN / f"report.{suffix}"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(output)
    assert output == golden.read_text()


def test_json_rows_carry_test_group_target_base_qps_and_rqps(store):
    doc = json.loads(render(build_report(store, None, None, False), "json"))
    row = next(r for r in doc["rows"] if r["test"] == "point-query" and r["target"] == "pg18")
    assert row == {**row, "group": "point", "base": "pg17", "qps": 19000.0, "rqps": 0.95}


def test_warm_runs_are_not_reported(store):
    assert "warm" not in render(build_report(store, None, None, False), "csv")


def test_text_colors_regressions_red_and_improvements_green(store):
    text = render(build_report(store, None, None, False), "text", color=True)
    assert "\x1b[31m   0.95\x1b[0m  \x1b[32m   1.07\x1b[0m  point-query" in text.replace("\x1b[0m \x1b", "\x1b[0m  \x1b")
