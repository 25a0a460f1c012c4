"""What a report says about the cells it could not judge, the colours of its verdicts, its header
facts and its machine-readable envelope: each a case a reader tripped on (issue 65, reports)."""
from __future__ import annotations

import dataclasses

import pytest

from dbdrift.cli.report import render
from dbdrift.report.text import render_text
from dbdrift.report.words import comparison_lines
from dbdrift.results.build import build_report
from tests.unit.test_html_report import Page
from tests.unit.test_reports import make_store

pytestmark = pytest.mark.fault("reports")


@pytest.fixture
def golden(tmp_path):
    store = make_store(tmp_path / "g.db")
    yield store
    store.close()


def test_the_in_words_line_counts_the_cells_too_noisy_to_judge(golden):
    data = build_report(golden, None, None, False, noisy=0.005)  # a narrow noise limit: some cells turn ~
    noisy = sum(1 for r in data.comparison.rows if str(r.cells["pg18"].verdict) == "too noisy")
    assert noisy >= 1
    pg18 = next(line for line in comparison_lines(data) if line.startswith("pg18 vs pg17"))
    assert f"{noisy} too noisy" in pg18


def test_the_in_words_line_counts_the_cells_not_measured(golden):
    pg19 = next(line for line in comparison_lines(build_report(golden, None, None, False))
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
    data = _with_cell(build_report(golden, None, None, False), "point-query", "pg18", 0.96, 0.951, 0.969)
    page = Page(render(data, "html"))
    cell = page.cell("rel", "point-query", 0)
    assert cell["text"].startswith("0.96 [0.95, 0.97]-") and cell["attrs"]["class"] == "red1"


def test_a_regression_at_0_96_is_red_in_the_coloured_text_report(golden):
    data = _with_cell(build_report(golden, None, None, False), "point-query", "pg18", 0.96, 0.951, 0.969)
    line = next(line for line in render_text(data, color=True).splitlines() if line.endswith("  point-query"))
    assert line.startswith("\x1b[31m0.96 [0.95,0.97]  -")


def test_a_change_without_a_verdict_of_regression_is_never_red(golden):
    data = _with_cell(build_report(golden, None, None, False), "read-only_range=100", "pg18", 0.94, 0.88, 1.01)
    cell = Page(render(data, "html")).cell("rel", "read-only_range=100", 0)
    assert "red" not in cell["attrs"].get("class", "")
