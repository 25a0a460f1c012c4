"""The comparison in the posts' words: counts, median, the largest and smallest regression and
improvement with their tests, group medians, and changes in basis points."""
from __future__ import annotations

from dbdrift.report.words import bp, comparison_lines
from dbdrift.results.build import build_report
from tests.unit.test_reports import make_store


def test_each_comparison_gets_one_line_with_its_extremes_and_group_medians(tmp_path):
    store = make_store(tmp_path / "g.db")
    lines = comparison_lines(build_report(store, None, None, False))
    pg18 = next(line for line in lines if line.startswith("pg18 vs pg17, 1 client"))
    assert "3 regression(s) and 1 improvement(s) in 6 tests" in pg18
    assert "largest regression update-index 0.915 (-850 bp)" in pg18 and "smallest point-query 0.950" in pg18
    assert "largest improvement range-covered-pk" in pg18 and "group medians: point queries" in pg18
    assert bp(0.977) == "-230 bp" and bp(1.0125) == "+125 bp"
    store.close()
