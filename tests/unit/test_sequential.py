"""The sequential rule of a campaign planned to detect (analysis/sequential.py) and the runner
that follows it (runner/sequential.py), on literal intervals and a fake clock: no server."""
from __future__ import annotations

import math
import random
from dataclasses import replace
from pathlib import Path
from statistics import NormalDist

from dbdrift.analysis import planning
from dbdrift.analysis.noise import _T975, Estimate, Method, over_repeats
from dbdrift.analysis.sequential import Outcome, look, look_at, nominal_levels, stops_note, t_quantile
from dbdrift.app.detect import check_lines
from dbdrift.workloads.registry import parse_campaign
from dbdrift.workloads.sysbench.expand import RunStep
from dbdrift.runner.progress import NullProgress
from dbdrift.runner.sequential import Sequential, Stop
from dbdrift.workloads.sysbench.catalog import CATALOG


class Said(NullProgress):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def message(self, text: str) -> None:
        self.lines.append(text)


def test_the_boundaries_are_those_of_obrien_fleming_alpha_spending_over_five_equal_looks():
    # gsDesign's sfLDOF, one-sided 2.5%, five equally spaced looks: 4.877, 3.357, 2.680, 2.290, 2.031
    z = [NormalDist().inv_cdf(1 - p) for p in nominal_levels(1, 5, 0.025)]
    assert [round(b, 2) for b in z] == [4.88, 3.36, 2.68, 2.29, 2.03]


def test_the_t_quantile_matches_the_table_of_the_95_percent_interval():
    assert [round(t_quantile(0.975, df), 3) for df in range(1, 31)] == list(_T975)


def test_an_interval_far_from_1_is_different_and_one_well_inside_the_threshold_is_same():
    assert look(math.log(0.95), 0.004, 4, 6, 3, 10, 0.02) is Outcome.DIFFERENT
    assert look(math.log(1.001), 0.002, 4, 6, 3, 10, 0.02) is Outcome.SAME
    assert look(math.log(1.01), 0.01, 4, 6, 3, 10, 0.02) is Outcome.UNKNOWN


def test_an_early_look_needs_a_narrower_interval_than_the_last():
    # the same interval: undecided at the first of ten looks, a change at the last
    assert look(math.log(0.98), 0.006, 4, 3, 3, 12, 0.02) is Outcome.UNKNOWN
    assert look(math.log(0.98), 0.006, 10, 12, 3, 12, 0.02) is Outcome.DIFFERENT


def test_a_noise_floor_above_the_threshold_never_says_same():
    assert look(math.log(1.001), 0.002, 4, 6, 3, 10, 0.02, floor=0.03) is Outcome.UNKNOWN


def test_a_cell_of_several_comparisons_is_decided_only_when_each_is():
    same, unknown = _estimate(1.0, 0.002, 6), _estimate(1.0, 0.05, 6)
    assert look_at([same, same], 6, 3, 10, 0.02) is Outcome.SAME
    assert look_at([same, unknown], 6, 3, 10, 0.02) is Outcome.UNKNOWN
    assert look_at([same, _estimate(0.9, 0.002, 6)], 6, 3, 10, 0.02) is Outcome.DIFFERENT


def test_the_rule_keeps_false_verdicts_under_5_percent_and_finds_a_change_of_the_threshold():
    rng, sd, detect = random.Random(7), 0.01, 0.02
    p = planning.plan([planning.Cell("t", 1, "read", planning.TestNoise("t", 0.0, sd * sd, 30.0, 4))], detect,
                      sequential=True).tests[0]

    def one(shift: float) -> Outcome:
        values = [rng.gauss(shift, sd) for _ in range(planning.MIN_STARTS)]
        while True:
            found = look_at([over_repeats(values)], len(values), planning.MIN_STARTS, p.most, detect)
            if found is not Outcome.UNKNOWN or len(values) >= p.most:
                return found
            values.append(rng.gauss(shift, sd))
    trials = 600
    null = [one(0.0) for _ in range(trials)]
    planted = [one(-math.log1p(detect)) for _ in range(trials)]
    assert null.count(Outcome.DIFFERENT) / trials <= 0.05
    assert planted.count(Outcome.DIFFERENT) / trials >= 0.8
    assert planted.count(Outcome.SAME) / trials <= 0.07


def _estimate(value: float, se: float, n: int) -> Estimate:
    """A ratio whose interval over n starts has ln standard error se (n - 1 df)."""
    half = _T975[n - 2] * se
    return Estimate(value, value * math.exp(-half), value * math.exp(half), n, Method.OVER_REPEATS)


def _spec(tests: list[str], budget: float | None = None, count: bool = False):
    spec = parse_campaign({"name": "s", "detect": "2%", "tests": tests, "count_instructions": count,
                           "targets": [{"name": "a", "version": "17.10"}, {"name": "b", "version": "18.4"}]},
                          "s.toml", Path("."), "s")
    plans = [planning.TestPlan(t, 1, 10.0, 1e-4, 6, 10, True).to_dict() for t in tests]
    for d, t in zip(plans, tests):
        d["blind"] = CATALOG[t].rw != "R"
    found = {"detect": 0.02, "tests": plans, "sequential": True, "overhead_s": 0.0, "targets": 2, "fixed_s": 0.0}
    return replace(spec, budget=budget, detect_plan=found)


def _runner(tests: list[str], intervals: dict[str, tuple[float, float]], budget: float | None = None,
            clock=lambda: 0.0, count: bool = False, moved: set[str] | None = None):
    kept: dict[tuple[str, int], Stop] = {}
    said = Said()
    seq = Sequential(_spec(tests, budget, count), lambda cid, test, threads: [_estimate(*intervals[test], 4)], 1, said,
                     clock, keep=lambda key, stop: kept.__setitem__(key, stop),
                     moved=(lambda: moved or set()))
    return seq, kept, said


def _step(test: str, repeat: int) -> RunStep:
    return RunStep(test, CATALOG[test], 1, repeat, 10.0, 1.0)


def _starts(seq: Sequential, test: str) -> int:
    ran = 0
    for repeat in range(12):
        if not seq.wants(_step(test, repeat)):
            break
        ran += 1
        seq.after(_step(test, repeat))
    return ran


def test_a_cell_whose_interval_lies_inside_the_threshold_after_three_starts_stops_there():
    seq, kept, said = _runner(["point-query"], {"point-query": (1.0, 0.001)})
    assert _starts(seq, "point-query") == 3
    assert kept[("point-query", 1)] == Stop(Outcome.SAME, 3, "decided")
    assert said.lines == ["detect: point-query x1: same after 3 starts (no change of 2.0% or more; decided)"]


def test_an_undecided_cell_runs_to_its_most_and_says_so():
    seq, kept, _ = _runner(["point-query"], {"point-query": (1.0, 0.03)})
    assert _starts(seq, "point-query") == 10
    assert kept[("point-query", 1)] == Stop(Outcome.UNKNOWN, 10, "cap")


def test_a_cell_stops_at_its_share_of_the_budget_keeping_the_first_starts_of_the_tests_to_come():
    now = [0.0]
    seq, kept, _ = _runner(["point-query", "random-points_range=10"],
                           {"point-query": (1.0, 0.03), "random-points_range=10": (1.0, 0.03)},
                           budget=200.0, clock=lambda: now[0])
    ran = 0
    while seq.wants(_step("point-query", ran)):
        now[0] += 20.0  # a start of both targets: 2 x 10 s
        seq.after(_step("point-query", ran))
        ran += 1
    # 200 s: 60 s kept for the next test's first 3 starts and its planned extras shared with this one
    assert 3 <= ran < 10 and kept[("point-query", 1)].why == "budget"
    assert _starts(seq, "random-points_range=10") >= 3


def test_with_instruction_counts_a_test_they_cannot_see_keeps_its_planned_starts_before_a_read_spends():
    intervals = {"point-query": (1.0, 0.03), "insert": (1.0, 0.03)}
    starts = {}
    for count in (False, True):
        now = [0.0]
        seq, kept, _ = _runner(["point-query", "insert"], intervals, budget=150.0, clock=lambda: now[0],
                               count=count)
        ran = 0
        while seq.wants(_step("point-query", ran)):
            now[0] += 20.0
            seq.after(_step("point-query", ran))
            ran += 1
        starts[count] = ran
        assert not kept[("point-query", 1)].first
    assert starts[True] < starts[False]  # insert, run after it, writes: its planned starts are reserved first


def test_a_read_whose_counts_moved_has_the_first_priority():
    seq, kept, _ = _runner(["point-query"], {"point-query": (1.0, 0.001)}, count=True, moved={"point-query"})
    _starts(seq, "point-query")
    assert kept[("point-query", 1)].first


def test_the_report_note_groups_the_cells_by_where_they_stopped():
    stops = {("point-query", 1): {"outcome": "same", "starts": 3, "why": "decided"},
             ("update-index", 1): {"outcome": "unknown", "starts": 4, "why": "budget", "first": True},
             ("insert", 1): {"outcome": "different", "starts": 3, "why": "decided"}}
    (note,) = stops_note(stops, 0.02)
    assert note == ("stops (sequential, detect 2.0%): 2 of 3 decided (1 different, 1 same), 1 at the budget; "
                    "different after 3 starts: insert x1; same after 3 starts: point-query x1; unknown after 4 "
                    "starts (at the budget): update-index x1*; * budget first (instruction counts moved, or "
                    "cannot see the test)")
    assert stops_note({}, 0.02) == ()


def test_run_check_says_the_rule_and_the_budgets_order():
    spec = _spec(["point-query", "update-index"], budget=600.0, count=True)
    spec = replace(spec, detect_plan={**spec.detect_plan, "lengths": {"read": 10.0}, "expected_s": 100.0,
                                      "most_s": 200.0, "budget_s": 600.0, "calibration": "calibration c (#1)"})
    lines = check_lines(spec)
    assert any(line.startswith("  sequential: after 3 starts each test is looked at") for line in lines)
    assert any(line.startswith("  budget order: instruction counts run first; the timed budget goes first to the 1 "
                               "tests they cannot see") for line in lines)
    assert "  update-index x1: 3 to 10 starts, stopping once decided (the fixed plan's 6), expected 1.5%; " \
           "budget first" in lines
