"""docs/protocol.md from the Python side: the driver's golden files and the live binary."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from dbdrift.workloads.sysbench import catalog as sysbench
from dbdrift.driver import process
from dbdrift.driver.protocol import PROTOCOL_VERSION, bucket_index, merge_buckets, parse_lines, percentile_us, totals

PROTOCOL = Path(__file__).resolve().parents[1] / "data" / "protocol"
# A run spec carries every field (protocol 3: the driver has no defaults); the tests below set
# what they are about over these.
_RUN = {"seed": 1, "threads": 1, "warmup_s": 0, "interval_s": 1, "tables": 1, "table_size": 1,
        "rand": {"type": "uniform"}, "prepared": True}
_SELECT_1 = {"transaction": False, "id_max": 1, "statements": [
    {"sql": "SELECT 1", "repeat": 1, "table": "random", "rows": "count", "params": []}]}


def golden(name: str):
    return json.loads((PROTOCOL / f"{name}.spec.json").read_text()), (PROTOCOL / f"{name}.ndjson").read_text()


def test_golden_run_output_parses_into_known_line_types():
    _, text = golden("run_null")
    out = parse_lines(text)
    assert out.unparsed == [] and out.fatal is None
    assert out.start["protocol"] == PROTOCOL_VERSION == 3 and out.warmup is not None and out.summary is not None


def test_golden_intervals_are_contiguous_and_count_begin_commit_as_statements():
    spec, text = golden("run_null")
    out = parse_lines(text)
    per_event = sum(s.get("repeat", 1) for s in spec["workload"]["statements"]) + 2
    ends = [0.0] + [iv["end_s"] for iv in out.intervals]
    assert [iv["start_s"] for iv in out.intervals] == ends[:-1]
    assert all(iv["statements"] == iv["events"] * per_event for iv in out.intervals)


def test_python_totals_agree_with_the_driver_summary():
    _, text = golden("run_null")
    out = parse_lines(text)
    t = totals(out.intervals)
    s = out.summary
    assert (t.events, t.statements, t.rows) == (s["events"], s["statements"], s["rows"])
    assert t.latency["count"] == s["latency_us"]["count"]
    for q in ("p50", "p95", "p99"):
        assert t.latency[q] == pytest.approx(s["latency_us"][q])


def test_python_histogram_math_reproduces_the_driver_percentiles():
    _, text = golden("run_null")
    for iv in parse_lines(text).intervals:
        lat = iv["latency_us"]
        buckets = merge_buckets([lat["buckets"]])
        assert percentile_us(buckets, 0.5, lat["max"]) == pytest.approx(lat["p50"])
        assert bucket_index(int(lat["min"] * 1000)) in buckets


@pytest.mark.parametrize("name", ["run_null", "exec_null"])
def test_installed_driver_reproduces_the_golden_output(name):
    spec, text = golden(name)
    mode = "run" if name.startswith("run") else "exec"
    result = process.run_driver(mode, spec, timeout_s=60)
    assert result.exit_code == 0, result.stderr
    expected = parse_lines(text)
    got = result.output
    assert (got.start, got.warmup, got.intervals, got.jobs, got.summary) == \
        (expected.start, expected.warmup, expected.intervals, expected.jobs, expected.summary)


def test_a_malformed_spec_is_a_spec_fatal_with_exit_2():
    result = process.run_driver("run", {"backend": "null", "threads": "many"}, timeout_s=30)
    assert result.exit_code == 2 and result.output.fatal["class"] == "spec"
    assert "spec" in process.fatal_message(result, "run")


@pytest.mark.parametrize("test_name", sorted(sysbench.CATALOG))
def test_the_driver_accepts_every_catalog_workload(test_name):
    test = sysbench.CATALOG[test_name]
    spec = {"backend": "null", "connection": {"socket_dir": "", "host": "127.0.0.1", "port": 1, "user": "u",
                                              "dbname": "d"},
            "seed": 1, "threads": 1, "warmup_s": 0, "duration_s": 1, "interval_s": 1, "tables": 2,
            "table_size": 1000, "rand": {"type": "zipfian", "exp": 0.8} if test.rand_type == "zipfian"
            else {"type": "uniform"}, "prepared": True,
            "workload": sysbench.render_workload(test, "postgres", 1000),
            "null": {"ops_per_s": 100, "latency_us": 10, "rows_per_statement": 1, "deterministic": True}}
    result = process.run_driver("run", spec, timeout_s=30)
    assert result.exit_code == 0, process.fatal_message(result, test_name)
    assert result.output.summary["statements"] == 100 * test.statements_per_event


def test_a_run_in_turns_reports_turns_per_target_in_abba_order_and_per_target_totals():
    """docs/protocol.md "Turns", on the live binary with the null backend (timed, so
    counts vary; the shape and order do not)."""
    spec = {**_RUN, "backend": "null", "threads": 2, "warmup_s": 0.1, "duration_s": 0.8, "seed": 1,
            "workload": _SELECT_1,
            "null": {"ops_per_s": 4000, "latency_us": 40, "rows_per_statement": 1},
            "turns": {"connections": [{}, {}], "turn_s": 0.05}}
    result = process.run_driver("run", spec, timeout_s=60)
    out = result.output
    assert result.exit_code == 0 and out.unparsed == [] and out.fatal is None
    assert out.start["targets"] == 2 and len(out.start["target_pids"]) == 2
    assert out.warmup["turn_s"] == 0.05 and out.warmup["rounds"] == 8
    turns = out.intervals
    assert [iv["index"] for iv in turns] == list(range(16))
    assert [iv["target"] for iv in turns] == [0, 1, 1, 0] * 4
    assert [iv["round"] for iv in turns] == [i // 2 for i in range(16)]
    assert all("latency_us" not in iv and iv["start_s"] <= iv["end_s"] for iv in turns)
    per_target = out.summary["targets"]
    for i in (0, 1):
        mine = [iv for iv in turns if iv["target"] == i]
        assert per_target[i]["events"] == sum(iv["events"] for iv in mine) > 0
        assert per_target[i]["latency_us"]["count"] == per_target[i]["events"]
        assert per_target[i]["busy_s"] == pytest.approx(sum(iv["end_s"] - iv["start_s"] for iv in mine), abs=1e-4)
    assert out.summary["events"] == sum(t["events"] for t in per_target)


def test_slow_events_get_turns_of_turn_events_after_the_warmup():
    """4 ms events and turn_events 10: the measured turns are 40 ms (warm ones 10 ms)."""
    spec = {**_RUN, "backend": "null", "threads": 1, "warmup_s": 0.2, "duration_s": 2.0, "seed": 1,
            "workload": _SELECT_1,
            "null": {"ops_per_s": 500, "latency_us": 4000, "rows_per_statement": 1},
            "turns": {"connections": [{}, {}], "turn_s": 0.01, "turn_events": 10}}
    result = process.run_driver("run", spec, timeout_s=60)
    out = result.output
    assert result.exit_code == 0 and out.fatal is None
    assert out.warmup["turn_s"] == pytest.approx(0.04) and out.warmup["rounds"] == 25
    assert [iv["target"] for iv in out.intervals] == [0, 1, 1, 0] * 12 + [0, 1]
    assert out.summary["duration_s"] == pytest.approx(2.0, abs=0.05)
    # 500 events/s for 40 ms: about 20 a turn, every turn has some
    assert all(iv["events"] >= 5 for iv in out.intervals[:-1])


@pytest.mark.parametrize("turns, message", [
    ({"connections": [{}], "turn_s": 0.01}, "at least two servers"),
    ({"connections": [{}, {}], "turn_s": 0}, "turn_s must be >= 0.001"),
    ({"connections": [{}, {}], "turn_s": 0.01, "turn_events": 0}, "turn_events must be > 0"),
])
def test_malformed_turns_are_a_spec_fatal(turns, message):
    spec = {**_RUN, "backend": "null", "duration_s": 1, "workload": _SELECT_1,
            "null": {"ops_per_s": 100}, "turns": turns}
    result = process.run_driver("run", spec, timeout_s=60)
    assert result.exit_code == 2 and result.output.fatal["class"] == "spec"
    assert message in result.output.fatal["message"]


def test_ctrl_c_as_the_driver_exits_still_returns_its_result():
    """Ctrl-C that lands after the driver printed its summary and exited: the result is kept,
    nothing raises (a poll before the SIGINT used to reap the driver and wait4 then failed)."""
    spec = {**_RUN, "backend": "null", "threads": 1, "warmup_s": 0, "duration_s": 0.3, "seed": 1,
            "workload": _SELECT_1,
            "null": {"ops_per_s": 1000, "latency_us": 10, "rows_per_statement": 1}}

    def on_line(obj):
        if obj.get("type") == "summary":
            time.sleep(0.5)  # the driver exits meanwhile
            raise KeyboardInterrupt

    result = process.run_driver("run", spec, timeout_s=30, on_line=on_line)
    assert result.interrupted and result.output.summary is not None and result.exit_code == 0
