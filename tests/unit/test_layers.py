"""Per-statement against per-row cost: the line fitted over a family's tests, its bounds from the
counts' repeatability or its interval over repeats, the verdict on each part, the why line, and
the split in every report format built from a store."""
from __future__ import annotations

import csv
import io
import json

import pytest

from dbdrift.analysis import layers
from dbdrift.analysis.layers import Member
from dbdrift.analysis.noise import Verdict

from dbdrift.workloads.sysbench.report.formats import render
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.store.store import InstructionRecord, RunRecord, Store
from dbdrift.workloads.sysbench.catalog import CATALOG, layer_members
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS

POINTS = [Member("random-points_range=10", 1, 10), Member("random-points_range=100", 1, 100),
          Member("random-points_range=1000", 1, 1000)]
READ_ONLY = [Member(t, s, r) for t, s, r in layer_members("read-only")]


def costs(members, per_statement, per_row, bend=0.0):
    return {m.test: m.statements * per_statement + m.rows * per_row * (1 + bend * (m.rows > 500)) for m in members}


def test_the_catalog_says_each_family_members_statements_and_rows():
    assert [(s, r) for _, s, r in layer_members("random-points")] == [(1, 10), (1, 100), (1, 1000)]
    # begin, 10 point selects, 4 ranges of r rows, commit
    assert [(s, r) for _, s, r in layer_members("read-only")] == [(16, 50), (16, 410), (16, 40010)]
    assert CATALOG["point-query"].rows_per_event == 1


def test_a_line_through_the_points_gives_back_its_intercept_per_statement_and_its_slope():
    line = layers.fit(READ_ONLY, costs(READ_ONLY, 30_000, 400))
    assert line.per_statement == pytest.approx(30_000) and line.per_row == pytest.approx(400)
    assert line.misfit == pytest.approx(0, abs=1e-9)
    bent = layers.fit(POINTS, costs(POINTS, 30_000, 400, bend=0.5))
    assert bent.misfit > 0.01  # the last point is off the line, and the report says by how much
    assert layers.fit(POINTS[:1], costs(POINTS, 1, 1)) is None  # one row count draws no line


def counts(per_statement, per_row, spread=0.05):
    return {m.test: (c, spread) for m, c in zip(POINTS, costs(POINTS, per_statement, per_row).values())}


def test_more_work_per_statement_and_none_per_row_is_above_the_storage_engine():
    row = layers.counted("random-points", POINTS, "pg17", "pg18",
                         {"pg17": counts(40_000, 900), "pg18": counts(42_800, 900)})
    stmt, per_row = row.parts["per statement"], row.parts["per row"]
    assert stmt.ratio == pytest.approx(1.07) and stmt.verdict is Verdict.REGRESSION
    assert stmt.lower < 1.07 < stmt.upper and stmt.lower > 1
    assert per_row.ratio == pytest.approx(1.0) and per_row.verdict is Verdict.NO_CHANGE
    assert layers.brief(row) == ("per-statement cost +7.0%, per-row cost = (+0.0%) "
                                 "(instructions, random-points family)")
    assert row.tests == tuple(m.test for m in POINTS)


def test_counts_that_repeat_poorly_widen_the_bounds_until_no_verdict_holds():
    row = layers.counted("random-points", POINTS, "pg17", "pg18",
                         {"pg17": counts(40_000, 900, spread=5.0), "pg18": counts(41_000, 900, spread=5.0)})
    assert row.parts["per statement"].verdict in (Verdict.NO_CHANGE, Verdict.TOO_NOISY)
    missing = layers.counted("random-points", POINTS, "pg17", "pg18", {"pg17": counts(40_000, 900)})
    assert missing.parts["per row"].ratio is None and "no line for pg18" in missing.parts["per row"].status


def test_time_per_event_fitted_per_repeat_gets_an_interval_over_repeats():
    wobble = (1.0, 1.01, 0.99, 1.005)
    seconds = {t: {r: {test: c * w / 1e6 for test, c in costs(POINTS, stmt, 0.9).items()} for r, w in enumerate(wobble)}
               for t, stmt in (("pg17", 40.0), ("pg18", 44.0))}
    row = layers.timed("random-points", POINTS, "pg17", "pg18", seconds)
    stmt, per_row = row.parts["per statement"], row.parts["per row"]
    assert row.measure == "time" and stmt.ratio == pytest.approx(1.10, rel=1e-3)
    assert stmt.verdict is Verdict.REGRESSION and stmt.lower > 1
    assert per_row.ratio == pytest.approx(1.0, rel=1e-3) and per_row.verdict is Verdict.NO_CHANGE


# --- from a store, in every format ------------------------------------------------------------------
def family_store(path) -> Store:
    """pg18 spends 7% more per statement and the same per row on random-points, counted and timed."""
    store = Store(path)
    cid = store.add_campaign("layers", {"name": "layers", "rows": 10_000}, {"cpus": 2}, "0.1.0")
    for pos, (name, stmt) in enumerate((("pg17", 40_000.0), ("pg18", 42_800.0))):
        tid = store.ensure_target(cid, name, "postgres", pos, pos == 0, {"name": name})
        store.set_target_facts(tid, server={"version": ("17.10", "18.4")[pos]})
        for m in POINTS:
            ir = stmt + 900.0 * m.rows
            store.add_instructions(tid, InstructionRecord(m.test, "ok", 1000, 5000, 20.0, [[1, 2], [1, 2]], ir, 0.02,
                                                          {}, {}))
            for rep, w in enumerate((1.0, 1.01, 0.99)):
                qps = 1e6 / ((stmt / 1000 + 0.9 * m.rows) * w)  # one statement per event: QPS = events/s
                store.add_run(tid, RunRecord(test=m.test, test_group="point", threads=1, repeat=rep, status="ok",
                                             warmup_s=1, duration_s=3, metric="qps", driver_spec={}, value=qps))
    return store


@pytest.mark.parametrize("fmt", ["text", "markdown", "html", "json", "csv"])
def test_every_format_shows_the_split_of_each_family_measured(tmp_path, fmt):
    store = family_store(tmp_path / "s.db")
    data = build_report(store, MICROBENCHMARKS, None, None, False)
    assert {(r.family, r.measure) for r in data.layers} == {("random-points", "instructions"), ("random-points", "time")}
    out = render(data, fmt)
    if fmt == "json":
        [counted] = [r for r in json.loads(out)["layers"] if r["measure"] == "instructions"]
        assert counted["parts"]["per statement"]["ratio"] == pytest.approx(1.07)
        assert counted["parts"]["per statement"]["verdict"] == "regression"
    elif fmt == "csv":
        rows = [r for r in csv.DictReader(io.StringIO(out)) if r["test"].startswith("random-points per")]
        assert {(r["test"], r["measure"]) for r in rows} == {
            (f"random-points {p}", m) for p in layers.PARTS for m in ("instructions", "timed")}
        assert next(r for r in rows if r["test"] == "random-points per statement" and r["measure"] == "instructions"
                    )["verdict"] == "regression"
    else:
        assert "per-statement and per-row cost" in out.lower() and "+7.0%" in out
