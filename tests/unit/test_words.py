"""The comparison in the posts' words: counts and median per comparison, then per group its
median and its largest, smallest and median regression and improvement with their tests, every
change in basis points as the posts define them (0.01 of rQPS)."""
from __future__ import annotations

from dbdrift.analysis.noise import Estimate, Verdict
from dbdrift.analysis.relative import Cell, CellSummary
from dbdrift.report.basis_points import bp
from dbdrift.workloads.sysbench.report.words import cell_ranks, comparison_lines, ranked, words_json
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS
from tests.unit.test_reports import make_store


def _cell(ratio: float, verdict: Verdict) -> Cell:
    return Cell("new", CellSummary(100.0, 1, 0), Estimate(100.0, None, None, 1, "rounds"), ratio=ratio,
                verdict=verdict, reference="old")


def test_a_basis_point_is_a_change_of_one_hundredth_in_rqps():
    assert bp(0.85) == "-15 bp" and bp(0.62) == "-38 bp" and bp(1.10) == "+10 bp"


def test_changes_below_ten_basis_points_keep_a_tenth():
    assert bp(0.915) == "-8.5 bp" and bp(0.98) == "-2 bp" and bp(1.0125) == "+1.2 bp"


def test_a_group_names_its_largest_smallest_and_median_regression_with_their_tests():
    cells = [("a", _cell(0.90, Verdict.REGRESSION)), ("b", _cell(0.62, Verdict.REGRESSION)),
             ("c", _cell(0.73, Verdict.REGRESSION)), ("d", _cell(1.00, Verdict.NO_CHANGE))]
    found = {r.rank: (r.test, r.ratio) for r in ranked(cells, Verdict.REGRESSION)}
    assert found == {"largest": ("b", 0.62), "smallest": ("a", 0.90), "median": ("c", 0.73)}


def test_the_median_of_an_even_count_is_the_smaller_middle_change():
    cells = [(t, _cell(r, Verdict.IMPROVEMENT)) for t, r in (("a", 1.05), ("b", 1.20), ("c", 1.10), ("d", 1.30))]
    median = next(r for r in ranked(cells, Verdict.IMPROVEMENT) if r.rank == "median")
    assert median.test == "c"


def test_one_change_of_a_kind_is_named_the_only_one():
    phrases = [r.phrase() for r in ranked([("point-query", _cell(0.62, Verdict.REGRESSION))], Verdict.REGRESSION)]
    assert phrases == ["the only regression is an rQPS drop of 38 basis points for point-query (0.620)"]


def test_each_comparison_has_a_head_line_then_one_line_per_group(tmp_path):
    store = make_store(tmp_path / "g.db")
    lines = comparison_lines(build_report(store, MICROBENCHMARKS, None, None, False))
    at = lines.index(next(line for line in lines if line.startswith("pg18 vs pg17, 1 client")))
    assert "3 regression(s) and 1 improvement(s) in 6 tests" in lines[at] and "median rQPS 0.969 (-3.1 bp)" in lines[at]
    assert [line.split(":")[0].strip() for line in lines[at + 1:at + 5]] == [
        "point queries", "range queries without aggregation", "range queries with aggregation", "writes"]
    assert lines[at + 4] == ("  writes: median rQPS 0.915 (-8.5 bp); the only regression is an rQPS drop of "
                             "8.5 basis points for update-index (0.915)")
    store.close()


def test_the_json_words_carry_each_named_change_in_basis_points(tmp_path):
    store = make_store(tmp_path / "g.db")
    pg18 = next(w for w in words_json(build_report(store, MICROBENCHMARKS, None, None, False)) if w["target"] == "pg18")
    writes = next(g for g in pg18["groups"] if g["group"] == "writes")
    assert writes["changes"] == [{"rank": "only", "kind": "regression", "test": "update-index", "rqps": 0.915,
                                  "bp": -8.5}]
    store.close()


def test_each_cell_the_words_name_knows_its_place(tmp_path):
    store = make_store(tmp_path / "g.db")
    ranks = cell_ranks(build_report(store, MICROBENCHMARKS, None, None, False))
    assert ranks[("range-covered-pk", 1, "pg18")] == "only improvement"
    assert ("read-only_range=100", 1, "pg18") not in ranks
    store.close()
