"""What a report says about the cells it could not judge, the colours of its verdicts, its header
facts and its machine-readable envelope: each a case a reader tripped on (issue 65, reports)."""
from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from pathlib import Path

import pytest

from dbdrift.cli.main import main
from dbdrift.cli.report import render
from dbdrift.results.meta import FORMAT_VERSION
from dbdrift.analysis.noise import Judging, Verdict
from dbdrift.report.events import engine_charts
from dbdrift.workloads.sysbench.report.html import page_axis
from dbdrift.results.findings import Finding
from dbdrift.workloads.sysbench.results.findings import instruction_why
from dbdrift.store.store import Store
from dbdrift.workloads.sysbench.report.text import render_text
from dbdrift.workloads.sysbench.report.words import comparison_lines
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS
from tests.cli.test_workload_reports import ib_store, tpcc_store, two_target_store, vector_store
from tests.unit.test_html_report import Page
from tests.unit.test_reports import make_store

pytestmark = pytest.mark.fault("reports")


def test_the_in_words_line_counts_the_cells_too_noisy_to_judge(golden):
    data = build_report(golden, MICROBENCHMARKS, None, None, False, Judging(noisy_width=0.005))  # a narrow noise limit: some cells turn ~
    noisy = sum(1 for r in data.comparison.rows if str(r.cells["pg18"].verdict) == "too noisy")
    assert noisy >= 1
    pg18 = next(line for line in comparison_lines(data) if line.startswith("pg18 vs pg17"))
    assert f"{noisy} too noisy" in pg18


def test_the_in_words_line_counts_the_cells_not_measured(golden):
    pg19 = next(line for line in comparison_lines(build_report(golden, MICROBENCHMARKS, None, None, False))
                if line.startswith("pg19 vs pg17"))
    assert "in 6 tests" in pg19 and "1 not measured" in pg19


def _with_cell(data, test: str, target: str, ratio: float, lower: float, upper: float):
    """`data` with one compared cell moved to `ratio` [lower, upper], its verdict kept."""
    rows = []
    for row in data.comparison.rows:
        if row.test == test:
            cell = row.cells[target]
            est = dataclasses.replace(cell.estimate, value=ratio, lower=lower, upper=upper)
            row = dataclasses.replace(row, cells={**row.cells, target: dataclasses.replace(cell, ratio=ratio,
                                                                                         estimate=est)})
        rows.append(row)
    return dataclasses.replace(data, comparison=dataclasses.replace(data.comparison, rows=tuple(rows)))


def test_a_regression_at_0_96_is_red_in_the_html_report(golden):
    data = _with_cell(build_report(golden, MICROBENCHMARKS, None, None, False), "point-query", "pg18", 0.96, 0.951, 0.969)
    page = Page(render(data, "html"))
    cell = page.cell("rel", "point-query", 0)
    assert cell["text"].startswith("0.96 [0.95, 0.97]-") and cell["attrs"]["class"] == "red1"


def test_a_regression_at_0_96_is_red_in_the_coloured_text_report(golden):
    data = _with_cell(build_report(golden, MICROBENCHMARKS, None, None, False), "point-query", "pg18", 0.96, 0.951, 0.969)
    line = next(line for line in render_text(data, color=True).splitlines() if line.endswith("  point-query"))
    assert line.startswith("\x1b[31m0.96 [0.95,0.97]  -")


def _report(capsys, store: Path, fmt: str) -> str:
    """`dbdrift report --format fmt` of `store`, in this process."""
    assert main(["report", "--store", str(store), "--format", fmt]) == 0
    return capsys.readouterr().out


def _htap_store(path: Path) -> Path:
    from tests.unit.test_htap import run as htap_run
    return two_target_store(path, "ht", "htap", {"warehouses": 1}, (("a", 1.0), ("b", 1.1)), 2,
                            lambda store, tid, target, speed, r: store.add_workload_run(tid, htap_run(target, r, speed)))


WORKLOAD_STORES = {"insert-benchmark": lambda p: ib_store(p, 2, 12_000.0), "tpcc": lambda p: tpcc_store(p, 2, 1_100.0),
                   "vector": lambda p: vector_store(p, 2, 1.25), "htap": _htap_store}
ENVELOPE = ["meta", "workload", "campaign", "base", "min_effect", "noisy_half_width", "notes"]


@pytest.mark.parametrize("workload", WORKLOAD_STORES)
def test_every_workload_s_json_opens_with_the_sysbench_report_s_envelope(tmp_path, capsys, workload):
    doc = json.loads(_report(capsys, WORKLOAD_STORES[workload](tmp_path / "s.db"), "json"))
    assert list(doc)[:len(ENVELOPE)] == ENVELOPE
    assert doc["workload"] == workload and doc["meta"]["campaign"]["name"] == doc["campaign"]
    assert doc["meta"]["format_version"] == FORMAT_VERSION and [t["name"] for t in doc["meta"]["targets"]]


def test_the_sysbench_json_opens_with_the_same_envelope(golden):
    doc = json.loads(render(build_report(golden, MICROBENCHMARKS, None, None, False), "json"))
    assert list(doc)[:len(ENVELOPE)] == ENVELOPE and doc["workload"] == "sysbench"


@pytest.mark.parametrize("workload", WORKLOAD_STORES)
def test_every_line_of_every_workload_s_csv_ends_with_the_campaign_columns(tmp_path, capsys, workload):
    from dbdrift.report.envelope import CAMPAIGN_COLUMNS
    lines = list(csv.DictReader(io.StringIO(_report(capsys, WORKLOAD_STORES[workload](tmp_path / "s.db"), "csv"))))
    assert lines and list(lines[0])[-len(CAMPAIGN_COLUMNS):] == list(CAMPAIGN_COLUMNS)
    assert {(line["workload"], line["campaign"], line["format_version"]) for line in lines} == {
        (workload, lines[0]["campaign"], str(FORMAT_VERSION))} and lines[0]["campaign_id"] == "1"


def test_a_csv_line_of_a_default_that_differs_fills_its_own_columns_and_never_prints_none(tmp_path):
    from tests.unit.test_default_drift import drift_store
    store = drift_store(tmp_path / "d.db")
    text = render(build_report(store, MICROBENCHMARKS, None, None, False), "csv")
    store.close()
    settings = [line for line in csv.DictReader(io.StringIO(text)) if line["measure"] == "setting"]
    assert settings and "None" not in text
    for line in settings:
        assert line["setting"] and line["setting_category"] and line["setting_kind"]
        assert line["setting_reference"] and line["setting_target"]  # `(none)` where a server lacks it
        assert line["test"] == line["metric"] == line["value"] == line["explanation"] == ""


def _io_method(path: Path, methods: dict[str, str]) -> Path:
    """The store at `path` with each named target's server started with that io_method."""
    store = Store(path)
    for c in store.campaigns():
        for t in store.targets(c["id"]):
            server = t.server
            if t.name in methods:
                store.set_target_facts(t.id, server={**server, "settings": {"io_method": methods[t.name]}})
    store.close()
    return path


@pytest.mark.parametrize("fmt", ["text", "markdown", "html", "json"])
def test_the_sysbench_report_header_says_which_targets_ran_with_io_method_sync(tmp_path, capsys, fmt):
    make_store(tmp_path / "g.db").close()
    out = _report(capsys, _io_method(tmp_path / "g.db", {"pg18": "sync", "pg19": "sync"}), fmt)
    assert "io_method: sync on pg18, pg19 (sync is dbdrift's default on PostgreSQL 18 and later, as the posts' cx10b" \
        in out.replace("&#x27;", "'")


@pytest.mark.parametrize("fmt", ["text", "markdown", "html", "json", "csv"])
def test_a_workload_report_says_which_targets_ran_with_which_io_method(tmp_path, capsys, fmt):
    store = _io_method(tpcc_store(tmp_path / "t.db", 3, 1_100.0), {"b": "worker"})
    assert "io_method: worker on b (sync is dbdrift's default" in _report(capsys, store, fmt).replace("&#x27;", "'")


@pytest.fixture
def counts_only(tmp_path) -> Path:
    """The golden campaign's counts alone, stored as `timed = false` stores them, with the timed
    settings a campaign file carries whether they are used or not."""
    from tests.helpers import instructions_only_store
    return instructions_only_store(tmp_path / "c.db", {"name": "counts", "rows": 10_000, "timed": False,
                                                       "read_s": 60, "write_s": 60, "warmup_s": 10})


TIMED_WORDS = ("reads 60 s", "warmup", "rQPS", "stalls", "too few samples", "timed result")


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_a_report_of_instruction_counts_only_says_nothing_of_timed_runs(capsys, counts_only, fmt):
    out = _report(capsys, counts_only, fmt)
    assert "instruction counts only" in out and "1.036" in out
    found = [w for w in TIMED_WORDS if w in out.replace("no rQPS", "")]
    assert found == []


def test_a_share_above_100_percent_says_the_other_functions_moved_the_other_way():
    from dbdrift.workloads.sysbench.results.findings import where_it_went
    shown = [{"function": "f", "delta": 1_000.0}, {"function": "g", "delta": 515.0}]
    assert where_it_went(1_500.0, shown) == ("in: f +1,000, g +515, together +1,515, more than the net change (101% "
                                             "of it): the other functions moved the other way by -15")
    assert where_it_went(1_500.0, shown[:1]) == "67% of it in: f +1,000"


def test_the_share_of_a_finding_s_why_is_of_the_functions_it_names(golden):
    """The why of a counted finding names 3 functions: its share is theirs, not that of the 5 the
    instructions section lists (85%)."""
    data = build_report(golden, MICROBENCHMARKS, None, None, False)
    why = instruction_why(data.instruction_row("point-query"), "pg18")
    assert "74% of it in: LWLockReleaseInternal +440, LockAcquireExtended +345, LWLockDisownInternal +330" in why


def _no_change(test: str, detectable: float) -> Finding:
    return Finding("timed", test, 1, "pg18", "pg17", Verdict.NO_CHANGE, 1.0, 0.97, 1.03, detectable=detectable)


def test_a_long_list_of_cells_that_could_not_detect_the_minimum_effect_is_capped_and_the_rest_fold_away():
    from dbdrift.report.caveats import undetected_html
    found = [_no_change(f"t{i:03}", 0.021 + i / 1000) for i in range(101)]
    html = undetected_html(found, 0.02)
    sentence = Page(html.split("<details")[0])
    assert "t100 x1 pg18 (12.1%)" in html.split("</p>")[0] and "and 93 more" in html.split("</p>")[0]
    assert "t000" not in html.split("</p>")[0] and sentence.errors == []
    table = Page(html.split("</p>", 1)[1])
    assert sum(1 for kind, _ in table.rows if kind == "undetected") == 102  # the header and all 101
    assert html.count("<details") == 1


def test_the_html_keeps_too_noisy_for_the_verdict_alone(golden):
    data = build_report(golden, MICROBENCHMARKS, None, None, False)
    row = data.comparison.rows[0]
    wide = dataclasses.replace(row.cells["pg18"], verdict=Verdict.NO_CHANGE, detectable=0.034)
    rows = (dataclasses.replace(row, cells={**row.cells, "pg18": wide}), *data.comparison.rows[1:])
    html = render(dataclasses.replace(data, comparison=dataclasses.replace(data.comparison, rows=rows)), "html")
    assert "could not detect a 2% change" in html
    assert "too noisy to see" not in html and 'class="too-noisy"' not in html


def test_one_noisy_cell_does_not_stretch_the_page_s_axis_and_its_clipped_whisker_is_marked(golden):
    data = build_report(golden, MICROBENCHMARKS, None, None, False)
    before = page_axis(data)
    noisy = _with_cell(data, "scan", "pg18", 0.95, 0.40, 1.90)  # one very wide interval
    assert page_axis(noisy) == before
    html = render(noisy, "html")
    clipped = re.findall(r'<path class="interval clipped"[^>]*><title>([^<]*)</title>', html)
    assert clipped == ["95% interval [0.40, 1.90]: the whisker is clipped at the page's axis (an arrow marks "
                       "each clipped end)"]
    assert html.count('class="interval"') > 0  # the other whiskers stay as they were


def _drifted(path: Path) -> Path:
    """The store at `path` with its two targets' servers differing in a default neither set."""
    store = Store(path)
    for c in store.campaigns():
        for t in store.targets(c["id"]):
            server = t.server
            value = "1" if t.is_base else "16"
            store.set_target_facts(t.id, server={**server, "settings": {"effective_io_concurrency": value}})
    store.close()
    return path


@pytest.mark.parametrize("workload, fmt", [("insert-benchmark", "text"), ("insert-benchmark", "markdown"),
                                           ("insert-benchmark", "html"), ("tpcc", "html")])  # TPC-C's text had it
def test_the_defaults_that_differ_come_below_the_results(tmp_path, capsys, workload, fmt):
    out = _report(capsys, _drifted(WORKLOAD_STORES[workload](tmp_path / "s.db")), fmt).lower()
    last_result = "l.i2: continue load" if workload == "insert-benchmark" else "payment response time"
    assert out.index("defaults that differ") > out.rindex(last_result)


def test_a_chart_whose_every_value_is_0_is_not_drawn_and_the_page_says_why():
    events = {"a": {"t": [0.0, 1.0, 2.0], "events": [],
                    "series": {"wal_mb": [1.0, 2.0, 3.0], "checkpoint_buffers": [0.0, 0.0, 0.0]}}}
    charts = engine_charts(events, {"a": "#444"}, "TPROC-C")
    assert len([c for c in charts if c.startswith("<svg")]) == 1 and "WAL written" in charts[0]
    assert not any("checkpoint writes" in c for c in charts if c.startswith("<svg"))
    assert any("not drawn, every value 0 on every target: checkpoint writes (buffers/s)" in c for c in charts)
