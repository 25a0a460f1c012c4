"""`report --fail-on not-measured` as a CI gate: what a campaign set out to measure and did not
(a target that never started, a campaign interrupted before its first run) fails it, for every
workload and measure, and every format shows it. None starts a server."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbdrift.store.store import RunRecord, Store
from tests.cli.test_workload_reports import ib_store, tpcc_store
from tests.helpers import dbdrift
from tests.unit.test_ibench_report import step

pytestmark = pytest.mark.fault("reports")


def sysbench_store(path: Path, ran: dict[str, list[str]], tests=("point-query", "update-index"), **spec) -> Path:
    """A campaign of targets a (base) and b planned on `tests`; `ran`: the tests each target has an ok run of."""
    store = Store(path)
    cid = store.add_campaign("c", {"name": "c", "rows": 100, "tests": list(tests), "threads": [1], **spec},
                             {"cpus": 2}, "0.1.0")
    for pos, name in enumerate("ab"):
        tid = store.ensure_target(cid, name, "postgres", pos, pos == 0, {"name": name})
        for test in ran.get(name, []):
            group = "writes" if test.startswith("update") else "point"
            store.add_run(tid, RunRecord(test=test, test_group=group, threads=1, repeat=0, status="ok", warmup_s=1,
                                         duration_s=3, metric="qps", driver_spec={}, value=100.0))
    store.close()
    return path


def gate(store: Path, *args: str):
    return dbdrift("report", "--store", store, "--fail-on", "not-measured", *args)


def test_a_sysbench_campaign_interrupted_before_its_first_run_fails_the_gate_and_says_nothing_was_measured(tmp_path):
    result = gate(sysbench_store(tmp_path / "s.db", {}))
    assert result.returncode == 3, result.stderr
    assert "report: campaign c: nothing measured (no run or count succeeded)" in result.stderr
    assert "campaign c: nothing measured (0 run(s) and 0 count(s) stored, none succeeded)" in result.stdout
    assert "fail-on: campaign c: nothing measured" in result.stderr
    assert "fail-on: point-query x1 b: not measured (not run)" in result.stderr


def test_a_report_of_an_empty_campaign_says_so_on_stderr_without_fail_on(tmp_path):
    result = dbdrift("report", "--store", sysbench_store(tmp_path / "s.db", {}))
    assert result.returncode == 0
    assert "report: campaign c: nothing measured" in result.stderr


def test_a_planned_test_no_target_got_to_is_not_measured(tmp_path):
    # point-query ran on both; the campaign stopped before update-index (nothing of it stored)
    store = sysbench_store(tmp_path / "s.db", {"a": ["point-query"], "b": ["point-query"]})
    result = gate(store)
    assert result.returncode == 3, result.stderr
    assert "fail-on: update-index x1 b: not measured (not run)" in result.stderr
    assert "nothing measured" not in result.stderr


def test_a_base_that_never_ran_leaves_its_cells_without_rqps_and_fails_the_gate(tmp_path):
    result = gate(sysbench_store(tmp_path / "s.db", {"b": ["point-query", "update-index"]}))
    assert result.returncode == 3, result.stderr
    assert "fail-on: point-query x1 b: not measured (a: not run)" in result.stderr


def test_a_fully_measured_campaign_passes_the_gate(tmp_path):
    both = ["point-query", "update-index"]
    result = gate(sysbench_store(tmp_path / "s.db", {"a": both, "b": both}))
    assert result.returncode == 0, result.stderr
    assert "not measured" not in result.stderr and "nothing measured" not in result.stderr


def test_an_instructions_only_campaign_that_counted_nothing_fails_fail_by_instructions(tmp_path):
    store = sysbench_store(tmp_path / "s.db", {}, timed=False, count_instructions=True)
    result = gate(store, "--fail-by", "instructions")
    assert result.returncode == 3, result.stderr
    assert "fail-on: campaign c: nothing measured" in result.stderr


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "html"])
def test_every_sysbench_format_says_the_campaign_measured_nothing(tmp_path, fmt):
    out = dbdrift("report", "--store", sysbench_store(tmp_path / "s.db", {}), "--format", fmt)
    assert "campaign c: nothing measured" in out.stdout


def test_the_sysbench_csv_has_a_not_measured_row_for_each_planned_cell(tmp_path):
    out = dbdrift("report", "--store", sysbench_store(tmp_path / "s.db", {}), "--format", "csv").stdout
    rows = [line.split(",") for line in out.splitlines()[1:]]
    assert {(r[0], r[4], r[13]) for r in rows if r[4] == "b"} == {("point-query", "b", "not measured"),
                                                                    ("update-index", "b", "not measured")}


def ib_planned(path: Path, ran: tuple[str, ...]) -> Path:
    """An Insert Benchmark campaign planned on l.i0, l.x, l.i1; both targets ran only `ran`."""
    store = Store(path)
    cid = store.add_campaign("ib", {"name": "ib", "workload": "insert-benchmark", "repeats": 1,
                                    "insert_benchmark": {"clients": 2, "steps": ["l.i0", "l.x", "l.i1"]}},
                             {"cpus": 2}, "0.1.0")
    for pos, name in enumerate(("pg17", "pg18")):
        tid = store.ensure_target(cid, name, "postgres", pos, pos == 0, {"name": name})
        for s in ran:
            store.add_ibench_step(tid, step(name, s, 10_000.0))
    store.close()
    return path


def test_an_insert_benchmark_step_planned_but_run_by_no_target_fails_the_gate(tmp_path):
    result = gate(ib_planned(tmp_path / "s.db", ("l.i0",)))
    assert result.returncode == 3, result.stderr
    assert "fail-on: l.x pg18: not measured (not run)" in result.stderr
    assert "fail-on: l.i1 pg18: not measured (not run)" in result.stderr


@pytest.mark.parametrize("make, what", [(ib_store, "step"), (tpcc_store, "run")], ids=["insert-benchmark", "tpcc"])
def test_a_workload_campaign_with_nothing_stored_fails_the_gate_with_a_campaign_finding(tmp_path, make, what):
    store = make(tmp_path / "s.db", 0, 1.0)
    name = "ib" if make is ib_store else "tp"
    result = gate(store)
    assert result.returncode == 3, result.stderr
    assert f"fail-on: campaign {name}: nothing measured (no {what} of any target succeeded)" in result.stderr
    for fmt in ("text", "markdown", "csv", "json", "html"):
        out = dbdrift("report", "--store", store, "--format", fmt).stdout
        assert f"campaign {name}: nothing measured" in out, fmt
    doc = json.loads(dbdrift("report", "--store", store, "--format", "json").stdout)
    assert {"measure": "campaign", "test": name, "verdict": "not measured"}.items() <= doc["verdicts"][0].items()
