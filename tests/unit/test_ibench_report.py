"""Insert Benchmark report formats on a small literal campaign: headers, values and marks, and
CSV/JSON parsed back."""
import csv
import io
import json
from dataclasses import replace

import pytest

from dbdrift.report.envelope import CAMPAIGN_COLUMNS
from dbdrift.model import IBENCH_QUERY_STEPS, IBENCH_STEPS, InsertStepResult
from dbdrift.workloads.ibench.report import (CSV_HEADER, render, render_csv, render_json, render_markdown, render_text,
                                             to_json)
from dbdrift.workloads.ibench.results import ibench_report

WINDOW = {"elapsed_s": 10.0, "cpu_user_pct": 40.0, "cpu_sys_pct": 10.0, "cs": 100_000, "reads": 0, "read_kb": 0.0,
          "writes": 2_000, "write_kb": 40_000.0, "server_rss_bytes": 3_000_000_000}
HISTOGRAMS = {"insert": {"counts": [30, 60, 10, 0, 0, 0, 0, 0, 0, 0], "max_us": 3_900},
              "query": {"counts": [0, 0, 0, 0, 0, 0, 1, 0, 0, 3], "max_us": 17_000_000}}


def per_second(rate: float) -> list[dict]:
    """Twenty 1 s lines of client 1: rate + 0, 1, ..., 19 for inserts and queries."""
    return [{"i_sec": 1.0, "t_sec": float(i + 1), "i_ips": rate + i, "max_i_us": 1000, "i_dps": 0.0,
             "max_d_us": 0, "i_qps": rate + i, "max_q_us": 500} for i in range(20)]


def step(target: str, name: str, ips: float, qps: float = 0.0, status: str = "ok") -> InsertStepResult:
    return InsertStepResult(target=target, step=name, status=status, clients=2, elapsed_s=10.0,
                            inserted=int(ips * 10), deleted=0, queries=int(qps * 10), ips=ips, dps=0.0, qps=qps,
                            target_ips=200.0 if name in IBENCH_QUERY_STEPS else None, histograms=HISTOGRAMS,
                            per_second=per_second(qps or ips), hardware=WINDOW,
                            error="lost connection" if status == "failed" else None,
                            db_bytes=3 * 2 ** 29 if status == "ok" else None,
                            datadir_bytes=2 * 2 ** 30 if status == "ok" else None)


@pytest.fixture
def data():
    """pg17 (base) ran every step; pg18 loads faster, misses the SLA in qr100 (150 of 200
    inserts/s), fails qp100 and never ran the other query steps."""
    results = [step("pg17", s, 10_000.0) for s in IBENCH_STEPS[:4]]
    results += [step("pg17", s, 200.0, 3000.0) for s in IBENCH_QUERY_STEPS]
    results += [step("pg18", s, 12_000.0) for s in IBENCH_STEPS[:4]]
    results += [step("pg18", "qr100", 150.0, 3600.0), step("pg18", "qp100", 0.0, 0.0, status="failed")]
    return ibench_report(results, ["pg17", "pg18"], {"pg17": "postgres 17.10"}, ncpu=4, campaign="ib-demo")


def test_text_shows_the_three_tables_with_marks_and_a_legend(data):
    text = render_text(data)
    lines = text.splitlines()
    assert "campaign: ib-demo" in lines
    assert lines.count("target                    l.i0      l.x     l.i1     l.i2   qr100   qp100   qr500   qp500  "
                       "qr1000  qp1000") == 1
    # l.i0: 10000 vs 12000 -> no red (min >= 80% of max), 12000 green; qr100: pg18 missed the SLA
    assert "pg17 (postgres 17.10)  10000    10000    10000    10000    3000 +  3000 +  3000 +  3000 +  3000 +  3000 +" \
        in lines
    assert "pg18                   12000 +  12000 +  12000 +  12000 +  3600 .     -       -       -       -       -" \
        in lines
    assert "pg18                   1.20 ^  1.20 ^  1.20 ^  1.20 ^  1.20 ^     -       -       -       -       -" \
        in lines
    assert "pg18                   150 -    -      -      -       -       -" in lines
    assert "target                 200    200    200    200     200     200" in lines
    assert any(line.startswith("marks: + top quarter") for line in lines)
    assert "  pg18: qp100 failed: lost connection; not run: qr500 qp500 qr1000 qp1000" in lines


def test_text_has_a_section_per_step_with_histograms_and_metrics(data):
    text = render_text(data)
    assert "== qr100: range queries with 100 insert/s per client ==" in text
    section = text.split("== qr100")[1].split("== qp100")[0]
    assert "target                 ≤256µs  ≤1ms  ≤4ms  ≤16ms  ≤64ms  ≤256ms   ≤1s  ≤4s  ≤16s  >16s  responses     max" \
        in section
    assert "pg17 (postgres 17.10)     0.0   0.0   0.0    0.0    0.0     0.0  25.0  0.0   0.0  75.0          4  17.000" \
        in section
    assert "-- metrics (host CPUs: 4)" in section
    metrics_header = next(line for line in section.splitlines() if line.startswith("target") and "cpupq" in line)
    assert metrics_header.split()[1:] == ["ips", "qps", "rps", "rmbps", "wps", "wmbps", "rpq", "rkbpq", "wpi", "wkbpi",
                                          "csps", "cpups", "cspq", "cpupq", "dbgb1", "dbgb2", "rss", "maxop", "p50",
                                          "p99", "bgpq", "bg%", "flps", "flpi", "rawait", "wawait", "aqu", "us", "sy",
                                          "r", "uspq", "sypq"]
    pg17 = next(line for line in section.splitlines() if line.startswith("pg17") and "3000" in line).split()
    # ips 200, qps 3000, cpupq = 50% x 4 CPUs x 1e6 / 3000 = 667 µs, dbgb1 1.5 GiB, dbgb2 2 GiB, maxop 17 s,
    # p50 3010, p99 3000
    assert pg17[3:5] == ["200", "3000"] and pg17[16] == "667" and pg17[17:19] == ["1.500", "2.000"]
    assert pg17[20:23] == ["17.000", "3010", "3000"] and pg17[23:30] == ["-"] * 7  # no role split or disk times stored
    assert pg17[30:] == ["40.0", "10.0", "-", "533", "133"]  # us, sy, no runnable count stored, uspq, sypq


def test_a_failed_step_is_flagged_in_its_histograms_and_metrics(data):
    section = render_text(data).split("== qp100")[1].split("== qr500")[0]
    assert sum(line.startswith("pg18 [failed] ") for line in section.splitlines()) == 3


def test_markdown_has_the_tables_as_markdown_tables(data):
    md = render_markdown(data)
    assert "| target | l.i0 | l.x | l.i1 | l.i2 | qr100 | qp100 | qr500 | qp500 | qr1000 | qp1000 |" in md
    assert "| pg18 | 12000 + | 12000 + | 12000 + | 12000 + | 3600 . | - | - | - | - | - |" in md
    assert "| pg18 | 1.20 ^ | 1.20 ^ | 1.20 ^ | 1.20 ^ | 1.20 ^ | - | - | - | - | - |" in md
    assert "| target | 200 | 200 | 200 | 200 | 200 | 200 |" in md
    assert "## l.x: create secondary indexes" in md


def test_csv_has_one_row_per_target_and_step(data):
    rows = list(csv.DictReader(io.StringIO(render_csv(data))))
    assert tuple(rows[0]) == (*CSV_HEADER, *CAMPAIGN_COLUMNS)
    assert [(r["target"], r["step"]) for r in rows] == [(t, s) for t in ("pg17", "pg18") for s in IBENCH_STEPS]
    qr100 = {r["target"]: r for r in rows if r["step"] == "qr100"}
    assert qr100["pg18"]["sla_met"] == "false" and qr100["pg17"]["sla_met"] == "true"
    assert float(qr100["pg18"]["ips"]) == 150.0 and float(qr100["pg18"]["qps"]) == 3600.0
    assert float(qr100["pg18"]["relative"]) == pytest.approx(1.2)
    assert float(qr100["pg17"]["p50"]) == 3010.0 and float(qr100["pg17"]["maxop"]) == 17.0
    assert float(qr100["pg17"]["cpupq"]) == pytest.approx(2e6 / 3000)
    load = next(r for r in rows if r["target"] == "pg17" and r["step"] == "l.i0")
    assert load["sla_met"] == "" and load["target_ips"] == "" and float(load["maxop"]) == pytest.approx(0.0039)
    assert next(r for r in rows if r["target"] == "pg18" and r["step"] == "qp1000")["status"] == "not run"


def test_json_has_the_tables_with_color_names_and_hex_codes(data):
    doc = json.loads(render_json(data))
    assert doc == json.loads(json.dumps(to_json(data)))
    assert doc["base"] == "pg17" and doc["colors"]["gray"] == "#D7D7D7"
    throughput = doc["tables"]["throughput"]
    assert throughput["columns"] == list(IBENCH_STEPS)
    pg18 = throughput["rows"][1]
    assert pg18["name"] == "pg18"
    assert pg18["cells"][4] == {"value": 3600.0, "color": "gray"}
    assert pg18["cells"][5] == {"value": None, "color": None}
    assert doc["tables"]["relative"]["rows"][1]["cells"][0] == {"value": 1.2, "color": "blue"}
    assert doc["tables"]["background"]["rows"][2] == {
        "name": "target", "cells": [{"value": 200.0, "color": "gray"}] * 6}
    assert doc["missing"]["pg18"][0] == {"step": "qp100", "why": "failed: lost connection"}


def test_json_has_per_step_histograms_metrics_and_chart_series(data):
    doc = json.loads(render_json(data))
    assert [s["step"] for s in doc["steps"]] == list(IBENCH_STEPS)  # pg17 ran them all
    qr100 = doc["steps"][4]["targets"]
    assert set(qr100) == {"pg17", "pg18"}
    pg18 = qr100["pg18"]
    assert pg18["sla_met"] is False and pg18["target_ips"] == 200.0
    assert pg18["histograms"]["query"]["counts"] == [0, 0, 0, 0, 0, 0, 1, 0, 0, 3]
    assert pg18["histograms"]["query"]["percents"][9] == 75.0 and pg18["histograms"]["query"]["max_s"] == 17.0
    assert pg18["metrics"]["p99"] == 3600.0
    series = pg18["per_second"]
    assert list(series) == ["t_sec", "i_ips", "max_i_us", "i_dps", "max_d_us", "i_qps", "max_q_us"]
    assert series["t_sec"][:3] == [1.0, 2.0, 3.0] and series["i_qps"][0] == 3600.0 and len(series["max_q_us"]) == 20
    assert pg18["slices"]["i_qps"] == [3600.5 + 2 * k for k in range(10)]  # two 1 s lines per slice


def test_html_colours_the_summary_cells_and_charts_every_step_per_operation(data):
    from dbdrift.workloads.ibench.report import render_html
    page = render_html(replace(data, host={"hostname": "h<1>", "cpu_model": "cpu"}, setup="1 client(s)"))
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "h&lt;1&gt;" in page and "h<1>" not in page
    assert 'td.c-green{background:#81FFA6}' in page and '<td class="c-green">12000</td>' in page
    assert '<td class="c-red">150</td>' in page  # the background table: pg18 missed the SLA in qr100
    sections = page.split('<h2 id="step-')[1:]
    assert [s.split('"')[0] for s in sections] == ["l.i0", "l.x", "l.i1", "l.i2", *IBENCH_QUERY_STEPS]
    for section in sections:
        name = section.split('"')[0]
        charts = section.split("<svg")[1:]
        # inserts/s and max insert response, queries/s and max query response (the fixture's
        # per-second lines carry both rates; deletes are all 0, so they have no chart)
        assert [c.split('aria-label="')[1].split('"')[0] for c in charts] == [
            f"{name}: inserts/s per interval", f"{name}: max insert response time per interval (ms)",
            f"{name}: queries/s per interval", f"{name}: max query response time per interval (ms)"]
        targets = 1 if name in IBENCH_QUERY_STEPS[2:] else 2  # pg18 has no per-second lines there
        assert all(c.count("<polyline") == targets for c in charts)


def test_the_relative_table_shows_the_interval_over_repeats():
    results = [InsertStepResult(target=t, step="l.i0", status="ok", clients=1, elapsed_s=10.0, inserted=0,
                                deleted=0, queries=0, ips=v, dps=0.0, qps=0.0, repeat=r)
               for t, values in (("a", (100.0, 110.0, 90.0)), ("b", (120.0, 130.0, 100.0)))
               for r, v in enumerate(values)]
    data = ibench_report(results, ["a", "b"])
    text = render_text(data)
    cell = data.summary.relative.rows["b"][0]
    assert f"{cell.value:.2f} [{cell.lower:.2f},{cell.upper:.2f}]" in text
    assert "[95% interval over the repeats]" in text
    row = next(r for r in csv.DictReader(io.StringIO(render_csv(data))) if r["target"] == "b" and r["step"] == "l.i0")
    assert row["repeats"] == "3" and float(row["relative_lower"]) == pytest.approx(cell.lower, abs=1e-6)


def test_time_chart_breaks_its_line_at_a_gap():
    from dbdrift.report.charts import Line, time_chart
    svg = time_chart([Line("a", (1.0, 2.0, 3.0, 4.0), (5.0, None, 7.0, 8.0), "#000")], "c", "rows/s")
    assert svg.count("<polyline") == 2 and svg.count("<circle") == 3


def test_a_step_under_foreign_load_is_marked_in_every_format_and_one_repeat_says_its_ratios_may_be_the_neighbours():
    """docs/hardware.md "Foreign load": the step and its figure in every format's notes."""
    loaded = dict(WINDOW, foreign_cpu_pct=45.2, foreign_read_kb=0.0, foreign_write_kb=100.0)
    results = [step("pg17", "qr100", 200.0, 3000.0), replace(step("pg18", "qr100", 200.0, 1200.0), hardware=loaded)]
    data = ibench_report(results, ["pg17", "pg18"], campaign="ib-demo")
    for text in (render_text(data), render_markdown(data), render_json(data), render_csv(data)):
        assert "qr100 of pg18, repeat 1: foreign load: other processes used 45%" in text
        assert "its ratios may be the neighbours'" in text
    assert not [n for n in ibench_report(results[:1], ["pg17"]).notes if "foreign" in n]


def vacuum_wave(target: str) -> InsertStepResult:
    """l.i2 whose deletes/s fall for 4 s every 15 s while a vacuum of pi1 runs, the dead tuples
    built up in the 11 s before each fall: the PostgreSQL delete series the posts chart."""
    lines = [{"i_sec": 1.0, "t_sec": float(s), "i_ips": 1000.0, "max_i_us": 900,
              "i_dps": 1000.0 if s % 15 < 11 else 200.0, "max_d_us": 800, "i_qps": 0.0, "max_q_us": 0}
             for s in range(1, 61)]
    t = [float(s) for s in range(1, 61)]
    events = {"t": t, "series": {"dead_tuples": [float(100 * (s % 15)) if s % 15 < 12 else 0.0 for s in range(1, 61)]},
              "events": [{"t": float(s), "kind": "vacuum", "what": "pi1"} for s in (12, 27, 42, 57)], "error": ""}
    return replace(step(target, "l.i2", 1000.0), per_second=lines, events=events)


@pytest.fixture
def waved():
    return ibench_report([vacuum_wave("pg17")], ["pg17"], {"pg17": "postgres 17.10"}, ncpu=4, campaign="ib-wave")


def test_the_delete_series_dips_and_the_vacuum_in_each_are_in_every_text_format(waved):
    for text in (render_text(waved), render_markdown(waved), render(waved, "html")):
        assert "4 dips of deletes/s below 80% of its median (1,000), 4 s long at the median" in text
        assert "4 of 4 dips span a vacuum of pi1" in text
        assert "each dip and spike: its span" in text and "26-29" in text
    assert "4 dips of deletes/s" in render_csv(waved) and "4 of 4 dips span a vacuum of pi1" in render_csv(waved)


def test_json_lists_each_delete_dip_with_its_span_the_events_in_it_and_the_peak_before_it(waved):
    (step_doc,) = [s for s in json.loads(render_json(waved))["steps"] if s["step"] == "l.i2"]
    (deletes,) = [d for d in step_doc["targets"]["pg17"]["dips"] if d["series"] == "deletes/s"]
    assert deletes["episodes"][1] == {"start": 26.0, "end": 29.0, "extreme": 200.0, "peak": [15.0, 25.0],
                                      "during": ["vacuum of pi1", "dead tuples fall"], "in_peak": []}


def test_a_series_the_step_does_not_run_has_no_dips(waved):
    assert {d.series for d in waved.details[("pg17", "l.i2")].dips} == {"deletes/s"}  # no queries in l.i2; flat inserts


def test_a_step_shows_vmstats_us_sy_and_r_and_cpu_per_op_split_into_user_and_system():
    window = {**WINDOW, "runnable": 2.5}
    data = ibench_report([replace(step("pg17", "l.i0", 10_000.0), hardware=window)], ["pg17"], ncpu=4)
    m = data.details[("pg17", "l.i0")].metrics
    # 40% user and 10% system of 4 CPUs over 10,000 inserts/s: 160 and 40 µs per insert
    assert (m["us"], m["sy"], m["r"], m["uspq"], m["sypq"]) == (40.0, 10.0, 2.5, 160.0, 40.0)
    assert m["uspq"] + m["sypq"] == pytest.approx(m["cpupq"])
    assert ibench_report([step("pg17", "l.i0", 10_000.0)], ["pg17"]).details[("pg17", "l.i0")].metrics["r"] is None


def test_a_step_with_flamegraphs_gets_an_area_table_with_the_base_first_in_every_format():
    fg = "postgres;PostgresMain;exec_execute_message;standard_ExecutorRun;ExecModifyTable;ExecInsert"
    results = [replace(step("pg17", "l.i0", 10_000.0), folded={fg: 3, "dbdrift-driver;main": 1}),
               replace(step("pg18", "l.i0", 12_000.0), folded={fg: 1})]
    data = ibench_report(results, ["pg17", "pg18"], {"pg17": "postgres 17.10"})
    text = render_text(data)
    assert "-- flamegraph areas (% of samples)" in text
    assert next(ln for ln in text.splitlines() if ln.startswith("  insert")).split() == ["insert", "75.0", "100.0"]
    assert "| client | 25.0 | 0.0 |" in render_markdown(data)
    rows = list(csv.DictReader(io.StringIO(render_csv(data))))
    assert rows[0]["flame_client"] == "0.25" and rows[0]["flame_insert"] == "0.75"
    doc = json.loads(render_json(data))
    assert doc["steps"][0]["targets"]["pg18"]["flame_areas"]["kinds"]["insert"] == 1.0
