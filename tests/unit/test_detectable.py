"""The detectable change (the minimum detectable effect at 80% power, never below the minimum
effect) of every rQPS cell, Insert Benchmark step verdict and rNOPM verdict, and that every
format shows it: text and Markdown after = and ~, CSV and JSON as `detectable_change`, HTML in
the cell, its tooltip and the findings."""
import csv
import dataclasses
import io
import json

import pytest

from dbdrift.analysis.noise import Verdict
from dbdrift.analysis.power import detectable_change, reported_change
from dbdrift.analysis.relative import Measurement, compare
from dbdrift.cli.report import render
from dbdrift.model import IBENCH_STEPS
from dbdrift.report.caveats import detectable_mark, undetected_text, verdict_lines
from dbdrift.report.envelope import CAMPAIGN_COLUMNS
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.results.findings import Finding
from dbdrift.workloads.ibench import report as ibench_format
from dbdrift.workloads.ibench.results import ibench_report
from dbdrift.workloads.tpcc import report as tpcc_format
from dbdrift.workloads.tpcc.results import tpcc_report
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS
from tests.unit.test_html_report import Page
from tests.unit.test_ibench_report import step
from tests.unit.test_reports import GENERATED_AT, make_store
from tests.unit.test_tpcc import run

ORDER = ["point-query", "scan"]


def runs(test: str, target: str, values: list[float]) -> list[Measurement]:
    return [Measurement(test, "point", target, 1, v, "qps", round=r) for r, v in enumerate(values)]


def test_a_cell_carries_the_detectable_change_of_its_interval_at_its_minimum_effect():
    data = (runs("point-query", "a", [100.0] * 4) + runs("point-query", "b", [99.5, 100.5, 100.2, 99.8])
            + runs("scan", "a", [100.0] * 4) + runs("scan", "b", [90.0, 108.0, 97.0, 104.0]))
    comp = compare(data, ["a", "b"], "a", ORDER)
    tight, loose = (row.cells["b"] for row in comp.rows)
    assert tight.estimate is not None and loose.estimate is not None
    assert detectable_change(tight.estimate) < 0.02 and tight.detectable == 0.02  # the floor: the minimum effect
    assert tight.verdict is Verdict.NO_CHANGE
    assert loose.detectable == pytest.approx(detectable_change(loose.estimate)) and loose.detectable > 0.05
    assert comp.rows[0].cells["a"].detectable is None  # the base has no ratio
    floored = compare(data, ["a", "b"], "a", ORDER, noise_floor={"point-query": 0.03}).rows[0].cells["b"]
    assert floored.detectable == 0.03  # the test's noise floor raises the floor with the minimum effect


def test_a_cell_without_an_interval_or_not_measured_has_no_detectable_change():
    data = runs("point-query", "a", [100.0]) + runs("point-query", "b", [99.0])
    data += [Measurement("scan", "point", "a", 1, None, "qps", "failed"), *runs("scan", "b", [1.0])]
    single, failed = (row.cells["b"] for row in compare(data, ["a", "b"], "a", ORDER).rows)
    assert single.verdict is Verdict.NO_INTERVAL and single.detectable is None
    assert failed.verdict is Verdict.NOT_MEASURED and failed.detectable is None


def test_rnopm_and_insert_benchmark_verdicts_carry_their_detectable_change():
    tp = tpcc_report([run("a", 1000.0, r) for r in range(3)]
                     + [run("b", v, r) for r, v in enumerate((1000.0, 1100.0, 930.0))], ["a", "b"])
    (found,) = tp.findings
    relative = tp.summaries[1].relative
    assert relative is not None and found.detectable == reported_change(relative, 0.02) and found.detectable > 0.05
    one = tpcc_report([run("a", 1000.0), run("b", 1010.0)], ["a", "b"])
    assert one.findings[0].verdict is Verdict.NO_INTERVAL and one.findings[0].detectable is None
    ib = _ibench()
    l_i0 = next(f for f in ib.findings if f.test == "l.i0")
    assert l_i0.verdict is Verdict.NO_CHANGE and l_i0.detectable is not None and l_i0.detectable >= 0.02


def _ibench():
    """Three repeats of the load steps; pg18's l.i1 swings by ±10% from repeat to repeat."""
    results = []
    for r, swing in enumerate((1.0, 1.1, 0.9)):
        results += [dataclasses.replace(step("pg17", s, 10_000.0), repeat=r) for s in IBENCH_STEPS[:4]]
        results += [dataclasses.replace(step("pg18", s, 10_000.0 * (swing if s == "l.i1" else 1 + r / 1000)), repeat=r)
                    for s in IBENCH_STEPS[:4]]
    return ibench_report(results, ["pg17", "pg18"], ncpu=4, campaign="ib")


def test_a_no_change_mark_says_what_it_rules_out_and_the_others_do_not():
    assert detectable_mark(Verdict.NO_CHANGE, 0.0314) == "<3.1%"
    assert detectable_mark(Verdict.TOO_NOISY, 0.118) == "<11.8%"
    assert detectable_mark(Verdict.REGRESSION, 0.03) == "" and detectable_mark(Verdict.NO_CHANGE, None) == ""
    same = Finding("timed", "l.i1", None, "pg18", "pg17", Verdict.NO_CHANGE, 0.99, 0.97, 1.01, detectable=0.026)
    worse = Finding("timed", "l.i2", None, "pg18", "pg17", Verdict.REGRESSION, 0.9, 0.88, 0.92, detectable=0.026)
    assert verdict_lines([same, worse]) == [
        "= l.i1 pg18: no significant change 0.990 [0.970,1.010] vs pg17; no change ≥ 2.6%",
        "- l.i2 pg18: regression 0.900 [0.880,0.920] vs pg17"]


def test_the_findings_name_what_could_not_detect_the_minimum_effect():
    found = [Finding("timed", "point-query", 1, "pg18", "pg17", Verdict.NO_CHANGE, 1.0, 0.98, 1.02, detectable=0.034),
             Finding("timed", "scan", 1, "pg18", "pg17", Verdict.NO_CHANGE, 1.0, 0.99, 1.01, detectable=0.02),
             Finding("timed", "insert", 4, "pg18", "pg17", Verdict.TOO_NOISY, 1.0, 0.9, 1.1, detectable=0.12),
             Finding("timed", "update-index", 1, "pg18", "pg17", Verdict.REGRESSION, 0.8, 0.7, 0.9, detectable=0.3)]
    assert undetected_text(found, 0.02) == ("could not detect a 2% change (no change found, detectable change above "
                                           "it), 2 of them: insert x4 pg18 (12.0%), point-query x1 pg18 (3.4%)")
    assert undetected_text(found[1:2], 0.02) == ""


@pytest.fixture
def sysbench(tmp_path):
    store = make_store(tmp_path / "g.db")
    yield build_report(store, MICROBENCHMARKS, None, None, False, generated_at=GENERATED_AT)
    store.close()


def test_text_and_markdown_follow_a_no_change_mark_with_its_detectable_change(sysbench):
    text = render(sysbench, "text", False)
    assert "1.02 [1.01,1.03]  =<2.0%" in next(line for line in text.splitlines() if line.endswith("  hot-points"))
    assert "no change ≥ x% (x: the detectable change" in text  # the legend says what it reads
    md = render(sysbench, "markdown", False)
    assert "| 1.02 \\[1.01,1.03] =<2.0% |" in md


def test_csv_and_json_rows_carry_detectable_change_as_a_fraction(sysbench):
    rows = list(csv.DictReader(io.StringIO(render(sysbench, "csv", False))))
    hot = next(r for r in rows if (r["test"], r["target"], r["measure"]) == ("hot-points", "pg18", "timed"))
    assert float(hot["detectable_change"]) == 0.02
    assert next(r for r in rows if r["measure"] == "instructions")["detectable_change"] == ""  # a count: none
    assert next(r for r in rows if r["target"] == "pg17")["detectable_change"] == ""  # the base: none
    doc = json.loads(render(sysbench, "json", False))
    hot_json = next(r for r in doc["rows"] if (r["test"], r["target"], r["measure"]) == ("hot-points", "pg18", "timed"))
    assert hot_json["detectable_change"] == 0.02
    assert all(r["detectable_change"] is None for r in doc["rows"] if r["measure"] == "instructions")


def test_html_shows_it_in_the_cell_its_tooltip_and_the_findings(sysbench):
    page = Page(render(sysbench, "html", False))
    cell = page.cell("rel", "hot-points", 0)
    assert "=<2.0%" in cell["text"]
    assert "detectable change 2.0%: no change ≥ 2.0%" in cell["attrs"]["title"]
    assert "could not detect" not in render(sysbench, "html", False)  # every cell could see 2%
    row = sysbench.comparison.rows[0]
    noisy = dataclasses.replace(row.cells["pg18"], verdict=Verdict.NO_CHANGE, detectable=0.034)
    rows = (dataclasses.replace(row, cells={**row.cells, "pg18": noisy}), *sysbench.comparison.rows[1:])
    html = render(dataclasses.replace(sysbench, comparison=dataclasses.replace(sysbench.comparison, rows=rows)),
                  "html", False)
    assert (f'<p class="undetected">could not detect a 2% change (no change found, detectable change above it), '
            f'1 of them: {row.test} x1 pg18 (3.4%)</p>') in html


def test_tpcc_formats_show_the_rnopm_detectable_change():
    data = tpcc_report([run("a", 1000.0, r) for r in range(3)]
                       + [run("b", v, r) for r, v in enumerate((1000.0, 1010.0, 995.0))], ["a", "b"])
    (found,) = data.findings
    assert found.verdict is Verdict.NO_CHANGE and found.detectable is not None
    shown = f"{100 * found.detectable:.1f}%"
    row = next(line for line in tpcc_format.render_text(data).splitlines() if line.startswith("b "))
    assert f"=<{shown}" in row
    rows = list(csv.DictReader(io.StringIO(tpcc_format.render_csv(data))))
    assert list(rows[0]) == [*tpcc_format.CSV_HEADER, *CAMPAIGN_COLUMNS]
    assert {r["detectable_change"] for r in rows if r["target"] == "b"} == {str(round(found.detectable, 4))}
    assert {r["detectable_change"] for r in rows if r["target"] == "a"} == {""}
    assert json.loads(tpcc_format.render_json(data))["verdicts"][0]["detectable_change"] == round(found.detectable, 4)
    html = tpcc_format.render_html(data)
    assert "<th>detectable change</th>" in html and f"no change ≥ {shown}" in html


def test_insert_benchmark_formats_show_each_steps_detectable_change():
    data = _ibench()
    l_i1 = next(f for f in data.findings if f.test == "l.i1")
    assert l_i1.verdict is Verdict.TOO_NOISY and l_i1.detectable is not None and l_i1.detectable > 0.05
    shown = f"{100 * l_i1.detectable:.1f}%"
    assert "~ l.i1 pg18: too noisy" in ibench_format.render_text(data)
    assert f"; no change ≥ {shown}" in ibench_format.render_markdown(data)
    rows = list(csv.DictReader(io.StringIO(ibench_format.render_csv(data))))
    assert next(r for r in rows if (r["target"], r["step"]) == ("pg18", "l.i1"))["detectable_change"] == \
        str(round(l_i1.detectable, 4))
    verdicts = ibench_format.to_json(data)["verdicts"]
    assert next(v for v in verdicts if v["test"] == "l.i1")["detectable_change"] == round(l_i1.detectable, 4)
    html = ibench_format.render_html(data)
    assert f'detectable change above it), 1 of them: l.i1 pg18 ({shown})' in html
    assert f"too noisy; detectable change {shown}: no change ≥ {shown}" in html  # the relative cell's tooltip
