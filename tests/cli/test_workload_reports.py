"""Insert Benchmark and TPROC-C reports keep the sysbench report's contract: host warnings and
the no-interval note in every format, verdicts, and `--fail-on` with exit 3."""
import csv
import io
import json
from pathlib import Path

import pytest

from dbdrift.model import IBENCH_STEPS
from dbdrift.store.store import Store
from tests.helpers import dbdrift
from tests.unit.test_ibench_report import step
from tests.unit.test_tpcc import run

BUSY = {"cpus": 4, "hostname": "h", "warnings": [{"kind": "load", "message": "host 99% busy before the run",
                                                  "hint": "stop what else runs"}]}


def two_target_store(path: Path, name: str, workload: str, table: dict, targets: tuple[tuple[str, float], ...],
                     repeats: int, add) -> Path:
    """A campaign `name` of `workload` (its own table `table`) on two postgres targets, the first
    the base: add(store, target_id, target, value, repeat) stores each repeat of each."""
    store = Store(path)
    cid = store.add_campaign(name, {"name": name, "workload": workload, "repeats": repeats,
                                    workload.replace("-", "_"): table}, BUSY, "0.1.0")
    for pos, (target, value) in enumerate(targets):
        tid = store.ensure_target(cid, target, "postgres", pos, pos == 0, {"name": target})
        for r in range(repeats):
            add(store, tid, target, value, r)
    store.close()
    return path


def ib_store(path: Path, repeats: int, new_rate: float) -> Path:
    """pg17 (base) loads at 10,000 rows/s in every repeat; pg18 at `new_rate` (±1% per repeat)."""
    def add(store: Store, tid: int, target: str, rate: float, r: int) -> None:
        for s in IBENCH_STEPS[:4]:
            result = step(target, s, rate * (1 + 0.01 * (r % 2)))
            store.add_ibench_step(tid, type(result)(**{**result.__dict__, "repeat": r}))
    return two_target_store(path, "ib", "insert-benchmark", {"clients": 2}, (("pg17", 10_000.0), ("pg18", new_rate)),
                            repeats, add)


def tpcc_store(path: Path, repeats: int, new_nopm: float) -> Path:
    """a (base) at 1,000 NOPM in every repeat; b at `new_nopm` (±1% per repeat)."""
    return two_target_store(path, "tp", "tpcc", {"warehouses": 4, "clients": 2}, (("a", 1000.0), ("b", new_nopm)),
                            repeats, lambda store, tid, target, nopm, r: store.add_tpcc_run(
                                tid, run(target, nopm * (1 + 0.01 * (r % 2)), repeat=r)))


def vector_store(path: Path, repeats: int, new_speed: float) -> Path:
    """a (base) at its curve's speed in every repeat; b `new_speed` times as fast (±1% per repeat)."""
    from tests.unit.test_vector_report import run as vector_run
    return two_target_store(path, "vec", "vector", {"rows": 1000, "queries": 100}, (("a", 1.0), ("b", new_speed)),
                            repeats, lambda store, tid, target, speed, r: store.add_workload_run(
                                tid, vector_run(target, r, speed)))


@pytest.mark.parametrize("make", [ib_store, tpcc_store])
@pytest.mark.parametrize("fmt", ["text", "markdown", "csv", "json", "html"])
def test_every_format_carries_the_host_warning_and_the_no_interval_note(tmp_path, make, fmt):
    out = dbdrift("report", "--store", make(tmp_path / "s.db", 1, 300.0), "--format", fmt)
    assert out.returncode == 0, out.stderr
    assert "host 99% busy before the run" in out.stdout
    assert "no interval: one repeat per target" in out.stdout


def test_a_one_repeat_insert_benchmark_has_no_regression_but_fail_on_noisy_names_each_step(tmp_path):
    store = ib_store(tmp_path / "s.db", 1, 2_900.0)
    assert dbdrift("report", "--store", store, "--fail-on", "regression").returncode == 0
    noisy = dbdrift("report", "--store", store, "--fail-on", "noisy")
    assert noisy.returncode == 3, noisy.stderr
    assert "fail-on: l.i0 pg18: no interval 0.290 vs pg17" in noisy.stderr


def test_an_insert_benchmark_regression_exits_3_with_the_step_on_stderr(tmp_path):
    store = ib_store(tmp_path / "s.db", 3, 2_900.0)
    result = dbdrift("report", "--store", store, "--fail-on", "regression")
    assert result.returncode == 3, result.stderr
    assert "fail-on: l.i1 pg18: regression 0.290 [" in result.stderr
    assert "- l.i1 pg18: regression" in result.stdout  # the verdicts block of the text report
    doc = json.loads(dbdrift("report", "--store", store, "--format", "json").stdout)
    assert {(v["test"], v["verdict"]) for v in doc["verdicts"]} == {(s, "regression") for s in IBENCH_STEPS[:4]}
    rows = list(csv.DictReader(io.StringIO(dbdrift("report", "--store", store, "--format", "csv").stdout)))
    assert {r["verdict"] for r in rows if r["target"] == "pg18" and r["step"] == "l.i2"} == {"regression"}


def test_an_insert_benchmark_without_a_change_passes_fail_on_regression(tmp_path):
    result = dbdrift("report", "--store", ib_store(tmp_path / "s.db", 3, 10_000.0), "--fail-on", "regression")
    assert result.returncode == 0 and "fail-on" not in result.stderr


def test_a_tpcc_nopm_regression_exits_3_and_names_it(tmp_path):
    store = tpcc_store(tmp_path / "s.db", 3, 700.0)
    result = dbdrift("report", "--store", store, "--fail-on", "regression")
    assert result.returncode == 3, result.stderr
    assert "fail-on: NOPM b: regression 0.700 [" in result.stderr
    page = dbdrift("report", "--store", store, "--format", "html").stdout
    assert 'id="findings"' in page and "1 regression" in page


def test_a_one_repeat_tpcc_run_is_noisy_not_a_regression(tmp_path):
    store = tpcc_store(tmp_path / "s.db", 1, 700.0)
    assert dbdrift("report", "--store", store, "--fail-on", "regression").returncode == 0
    result = dbdrift("report", "--store", store, "--fail-on", "noisy")
    assert result.returncode == 3 and "fail-on: NOPM b: no interval 0.700 vs a" in result.stderr


def test_report_without_campaign_passes_over_newer_one_target_campaigns_and_says_so(tmp_path):
    from tests.unit.test_reports import make_store
    store = make_store(tmp_path / "r.db")  # pg17 vs pg18 (vs pg19): point-query pg18 regressed
    cid = store.add_campaign("bisect-probe", {"name": "bisect-probe", "rows": 10_000}, {"cpus": 2}, "0.1.0")
    store.ensure_target(cid, "probe", "postgres", 0, True, {"name": "probe"})
    store.close()
    result = dbdrift("report", "--store", tmp_path / "r.db", "--fail-on", "regression")
    assert result.returncode == 3, result.stderr
    assert "passed over 1 newer one-target campaign(s): bisect-probe (#2)" in result.stderr
    assert "fail-on: point-query x1 pg18: regression" in result.stderr
    chosen = dbdrift("report", "--store", tmp_path / "r.db", "--campaign", "bisect-probe")
    assert "passed over" not in chosen.stderr and "campaign: bisect-probe" in chosen.stdout


def test_report_of_a_store_with_one_comparison_says_nothing_about_its_choice(tmp_path):
    from tests.unit.test_reports import make_store
    make_store(tmp_path / "r.db").close()
    assert "passed over" not in dbdrift("report", "--store", tmp_path / "r.db").stderr


@pytest.mark.parametrize("make", [ib_store, tpcc_store])
@pytest.mark.parametrize("option", [["--chain"], ["--metrics"], ["--matrix"], ["--tests", "point"], ["--groups", "five"]])
def test_a_sysbench_only_view_of_another_workload_is_refused_with_exit_2(tmp_path, make, option):
    result = dbdrift("report", "--store", make(tmp_path / "s.db", 1, 300.0), *option)
    assert result.returncode == 2, result.stderr
    assert f"error: {option[0]}: campaign " in result.stderr and "whose report has no such view" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("make", [ib_store, tpcc_store])
def test_report_flamegraphs_of_a_workload_campaign_without_stacks_says_how_to_record_them(tmp_path, make):
    result = dbdrift("report", "--store", make(tmp_path / "s.db", 1, 300.0), "--flamegraphs", tmp_path / "f")
    assert result.returncode == 0, result.stderr
    assert "no flamegraphs stored: run the campaign with `dbdrift run --flamegraph`" in result.stderr
    assert result.stdout  # the report itself, as without the option


@pytest.mark.parametrize("make, measure, new, expected", [
    (ib_store, "l.x", 9_000.0, 0.9), (tpcc_store, "NOPM", 1_100.0, 1.1),
    (vector_store, "hnsw m=16 ef_construction=64 vector QPS @ recall 0.95", 1.25, 1.25)])
def test_history_follows_each_workloads_own_measures_as_the_rate_metric(tmp_path, make, measure, new, expected):
    """`history --metric rate`: an Insert Benchmark step's rate, TPROC-C's NOPM or vector search's
    QPS at equal recall per version, the mean over repeats with its interval (JSON), in a series
    whose setup names the workload's sizes."""
    from tests.cli.test_publish import versioned
    path = make(tmp_path / "s.db", 3, new)
    versioned(path)
    out = dbdrift("history", "--store", path, "--metric", "rate", "--format", "json")
    assert out.returncode == 0, out.stderr
    series = {s["test"]: s for s in json.loads(out.stdout)["series"]}
    assert measure in series and series[measure]["threads"] == 0
    points = series[measure]["points"]
    assert [p["label"] for p in points] == ["17.10", "18.4"]
    assert points[0]["lower"] < points[0]["value"] < points[0]["upper"]  # three repeats: an interval
    two = make(tmp_path / "two.db", 2, new)
    versioned(two)
    out = dbdrift("history", "--store", two, "--metric", "rate", "--format", "json")
    point = next(s for s in json.loads(out.stdout)["series"] if s["test"] == measure)["points"][0]
    assert point["lower"] is None and point["upper"] is None  # two repeats: no interval (t = 12.7)
    assert points[1]["relative"] == pytest.approx(expected, rel=0.02)
    text = dbdrift("history", "--store", path, "--metric", "rate", "--tests", measure)
    assert text.returncode == 0 and measure in text.stdout and "client thread" not in text.stdout
