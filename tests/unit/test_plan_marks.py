"""The `P` marks of a report (results/plans.py), on stores holding EXPLAIN JSON captured from real
servers (tests/data/plans/): a new JSON format alone marks nothing, another plan marks the cell,
and the shapes come from the stored EXPLAIN at report time, whatever the store's shape column says."""
import json
from pathlib import Path

import pytest

from dbdrift.workloads.registry import parse_campaign
from dbdrift.workloads.sysbench.report.text import render_text
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.store.store import RunRecord, Store
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS

PLANS = Path(__file__).resolve().parents[1] / "data" / "plans"
DISTINCT = "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 100000 AND 100009 ORDER BY c"
UPDATE = "UPDATE sbtest1 SET k=k+1 WHERE id=100000"


def explained(fixture: str, sql: str) -> str:
    doc = json.loads((PLANS / f"{fixture}.json").read_text())
    return next(p["plan_json"] for p in doc["plans"] if p["sql"] == sql)


def store_of(path: Path, targets: list[tuple[str, str, str, str]], sql: str, shape_column: str = "stale") -> Store:
    """A campaign of read-only-distinct on `targets` (name, engine, version, fixture), each with
    the fixture's plan of `sql` stored with `shape_column` beside it, as an older dbdrift stored it."""
    spec = parse_campaign({"name": "plans", "tests": ["read-only-distinct"],
                           "targets": [{"name": n, "engine": e, "version": v} for n, e, v, _ in targets]},
                          source="plans.toml", base_dir=Path("."), default_name="plans")
    store = Store(path)
    cid = store.add_campaign("plans", spec.to_dict(), {"cpus": 2}, "0.1.0")
    for pos, (target, (_, _, _, fixture)) in enumerate(zip(spec.targets, targets)):
        tid = store.ensure_target(cid, target.name, target.engine, pos, target.base, {"name": target.name})
        intervals = [{"index": i, "round": 0, "start_s": float(i), "end_s": i + 1.0, "events": 1000.0 * f,
                      "statements": 1000.0 * f, "rows": 0, "errors": {}, "latency_us": {}, "steal_pct": 0.0}
                     for i, f in enumerate((0.99, 1.0, 1.01, 1.0, 0.995, 1.005))]
        store.add_run(tid, RunRecord(test="read-only-distinct", test_group="range-agg", threads=1, repeat=0,
                                     status="ok", warmup_s=1, duration_s=6, metric="qps", driver_spec={},
                                     value=1000.0, intervals=intervals))
        store.add_plan(tid, "read-only-distinct", 1, sql, explained(fixture, sql), f"{shape_column} {pos}")
    return store


def test_a_plan_printed_in_json_format_2_instead_of_1_marks_no_cell(tmp_path):
    store = store_of(tmp_path / "s.db", [("my8", "mysql", "8.0.33", "mysql-8.0.33"),
                                         ("my9", "mysql", "9.7.4", "mysql-9.7.4-v2")], DISTINCT)
    data = build_report(store, MICROBENCHMARKS, None, None, False)
    assert data.plan_changes == () and not data.comparison.rows[0].cells["my9"].plan_changed


def test_another_plan_marks_the_cell_p_with_both_normalised_shapes(tmp_path):
    store = store_of(tmp_path / "s.db", [("hg0", "mysql", "9.7.4", "mysql-9.7.4-v2"),
                                         ("hg1", "mysql", "9.7.4", "mysql-9.7.4-hypergraph")], DISTINCT)
    data = build_report(store, MICROBENCHMARKS, None, None, False)
    [change] = data.plan_changes
    assert data.comparison.rows[0].cells["hg1"].plan_changed
    assert change.statements[0]["reference_shape"] == \
        "sort (deduplicating temporary table (range scan on sbtest using PRIMARY ~10 rows))"
    assert change.statements[0]["shape"] == "deduplicating sort (range scan on sbtest using PRIMARY ~10 rows)"
    assert "    hg1: deduplicating sort (range scan on sbtest using PRIMARY ~10 rows)" in render_text(data)


def test_the_shape_column_an_older_dbdrift_stored_is_not_read(tmp_path):
    # the column differs between the targets (stale 0, stale 1), the plans do not
    store = store_of(tmp_path / "s.db", [("a", "mysql", "9.7.4", "mysql-9.7.4-v1"),
                                         ("b", "mysql", "9.7.4", "mysql-9.7.4-v2")], DISTINCT)
    assert build_report(store, MICROBENCHMARKS, None, None, False).plan_changes == ()


def test_a_stored_explain_without_a_plan_is_not_compared_and_a_note_counts_it(tmp_path):
    store = store_of(tmp_path / "s.db", [("my8", "mysql", "8.0.33", "mysql-8.0.33"),
                                         ("my9", "mysql", "9.7.4", "mysql-9.7.4-v2-no-plan")], UPDATE)
    data = build_report(store, MICROBENCHMARKS, None, None, False)
    assert data.plan_changes == ()
    assert any(n.startswith("query plans: 1 statement(s) of my9 not compared: its EXPLAIN JSON holds no plan")
               for n in data.notes), data.notes


@pytest.mark.parametrize("fixture", ["mariadb-11.8.9", "postgres-17.10"])
def test_plans_of_two_engines_are_not_compared(tmp_path, fixture):
    engine, version = fixture.split("-")
    store = store_of(tmp_path / "s.db", [("my8", "mysql", "8.0.33", "mysql-8.0.33"),
                                         ("other", engine, version, fixture)], DISTINCT)
    assert build_report(store, MICROBENCHMARKS, None, None, False).plan_changes == ()
