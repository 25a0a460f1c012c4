"""Campaigns planned to a detectable change (analysis/planning.py): the starts a test needs, the
run length chosen from how its noise splits, the budget, the noise read from an A/A campaign,
the report's note, and that the stopping rule keeps the interval's 95% where peeking does not."""
from __future__ import annotations

import math
import random

import pytest

from dbdrift.analysis import planning
from dbdrift.analysis.noise import IntervalSample, over_repeats
from dbdrift.analysis.relative import Measurement, compare
from dbdrift.analysis.planning import MIN_STARTS, Cell, mde, plan, replan, starts_needed
from dbdrift.analysis.planning import TestNoise as Noise


def test_the_starts_needed_are_the_fewest_whose_interval_detects_the_change():
    var = 0.012 ** 2
    n = starts_needed(var, 0.02)
    assert n is not None and n > MIN_STARTS
    assert mde(var, n) <= 0.02 < mde(var, n - 1)
    assert starts_needed(0.001 ** 2, 0.02) == MIN_STARTS  # a quiet test still gets an interval over starts
    assert starts_needed(0.2 ** 2, 0.02) is None  # beyond MAX_STARTS: out of reach


def test_noise_within_a_start_buys_longer_runs_and_noise_between_starts_buys_starts():
    within = Cell("point-query", 1, "read", Noise("point-query", within=0.02 ** 2, between=0.0, seconds=10, starts=4))
    between = Cell("point-query", 1, "read", Noise("point-query", within=0.0005 ** 2, between=0.01 ** 2,
                                                        seconds=10, starts=4))
    long_runs, many_starts = plan([within], 0.02), plan([between], 0.02)
    assert long_runs.lengths["read"] > many_starts.lengths["read"]
    assert many_starts.lengths["read"] == min(planning.LENGTHS)  # a longer run buys nothing against the start offset
    for found in (long_runs, many_starts):
        assert found.tests[0].reaches(0.02)


def test_a_test_out_of_reach_gets_the_fewest_starts_and_is_said_to_miss():
    hopeless = Cell("scan", 1, "read", Noise("scan", within=0.0, between=0.2 ** 2, seconds=10, starts=4))
    p = plan([hopeless], 0.02).tests[0]
    assert (p.starts, p.most) == (MIN_STARTS, MIN_STARTS) and not p.reaches(0.02)


def test_a_test_without_calibration_is_planned_from_the_noisiest_calibrated_one():
    quiet = Noise("point-query", within=0.001 ** 2, between=0.003 ** 2, seconds=10, starts=4)
    loud = Noise("read-only", within=0.002 ** 2, between=0.008 ** 2, seconds=10, starts=4)
    found = plan([Cell("point-query", 1, "read", quiet), Cell("read-only", 1, "read", loud),
                  Cell("scan", 1, "read", None)], 0.02)
    scan = found.of("scan", 1)
    assert scan is not None and not scan.calibrated and scan.starts == found.of("read-only", 1).starts


def test_a_budget_cuts_the_starts_beyond_the_first_three_to_fit():
    noisy = [Cell(f"t{i}", 1, "read", Noise(f"t{i}", within=0.0, between=0.012 ** 2, seconds=30, starts=4))
             for i in range(4)]
    free = plan(noisy, 0.02, fixed_s=100)
    tight = plan(noisy, 0.02, fixed_s=100, budget_s=free.most_s / 2)
    assert tight.most_s <= free.most_s / 2 + 1e-6
    assert all(MIN_STARTS <= p.most < q.most for p, q in zip(tight.tests, free.tests))
    tiny = plan(noisy, 0.02, fixed_s=100, budget_s=50)
    assert all(p.most == MIN_STARTS for p in tiny.tests) and tiny.notes


def test_a_tight_budget_picks_shorter_runs_when_they_see_smaller_changes():
    # noise mostly within a start, so a run's length trades against its starts
    cells = [Cell(f"t{i}", 1, "read", Noise(f"t{i}", within=0.02 ** 2, between=0.002 ** 2, seconds=10, starts=4))
             for i in range(4)]
    lengths = (5.0, 10.0, 60.0)
    free = plan(cells, 0.02, lengths=lengths)
    assert free.lengths == {"read": 10.0} and all(p.reaches(0.02) for p in free.tests)
    tight = plan(cells, 0.02, budget_s=500, lengths=lengths)
    at_ten = plan(cells, 0.02, budget_s=500, lengths=(10.0,))
    assert tight.lengths == {"read": 5.0} and tight.most_s <= 500 and not tight.notes
    assert tight.tests[0].expected < at_ten.tests[0].expected  # more short starts see a smaller change
    # below MIN_STARTS of every test even at the shortest length: the shortest, and a note
    tiny = plan(cells, 0.02, budget_s=10, lengths=lengths)
    assert tiny.lengths == {"read": 5.0} and tiny.notes


def test_the_plan_round_trips_through_its_stored_form():
    found = plan([Cell("point-query", 1, "read", Noise("point-query", 1e-5, 4e-5, 10, 5))], 0.02, budget_s=600)
    p = found.tests[0]
    assert planning.TestPlan.from_dict(p.to_dict()) == p
    assert found.to_dict()["tests"][0]["expected"] == pytest.approx(p.expected, abs=1e-6)


def _aa_runs(rng: random.Random, starts: int, between: float, turn_sd: float, rounds: int = 400) -> list[Measurement]:
    """An A/A campaign in turns: per start an offset drawn with sd `between` for the copy, and
    every turn pair with noise `turn_sd`."""
    runs = []
    for rep in range(starts):
        offset = rng.gauss(0.0, between)
        base, copy = [], []
        for r in range(rounds):
            base.append(IntervalSample(1000.0 * math.exp(rng.gauss(0.0, turn_sd)), 0.01, 0.0, r, r % 2))
            copy.append(IntervalSample(1000.0 * math.exp(offset + rng.gauss(0.0, turn_sd)), 0.01, 0.0, r, 1 - r % 2))
        runs += [Measurement("point-query", "point", "a", 1, 1000.0, round=rep, intervals=tuple(base)),
                 Measurement("point-query", "point", "a-aa", 1, 1000.0, round=rep, intervals=tuple(copy))]
    return runs


def test_the_noise_of_an_aa_campaign_splits_into_what_a_start_draws_and_what_its_turns_add():
    rng = random.Random(5)
    noise = planning.noise_of(_aa_runs(rng, 12, between=0.01, turn_sd=0.05), "a", {"point-query": 30.0})
    found = noise[("point-query", 1)]
    assert found.starts == 12 and found.seconds == 30.0
    # one start's turns: 400 pairs of sd 0.05 * sqrt(2) (a trimmed mean: a little more)
    assert found.within == pytest.approx(2 * 0.05 ** 2 / 400, rel=0.6)
    assert 0.5 * 0.01 ** 2 < found.between < 2.0 * 0.01 ** 2
    quiet = planning.noise_of(_aa_runs(rng, 8, between=0.0, turn_sd=0.05), "a", {"point-query": 30.0})
    assert quiet[("point-query", 1)].between < 0.2 * 0.01 ** 2


def test_a_test_with_one_start_gives_no_noise_to_plan_from():
    assert planning.noise_of(_aa_runs(random.Random(1), 1, 0.01, 0.05), "a", {"point-query": 30.0}) == {}


def _simulated(rng: random.Random, sd: float, p: planning.TestPlan, detect: float, peek: bool) -> tuple[bool, int]:
    """One null campaign (no change) of one test under the planned rule, or peeking: stop as
    soon as the interval over starts excludes 1. Returns whether its final interval excludes 1
    (a false verdict) and its starts."""
    values = [rng.gauss(0.0, sd) for _ in range(MIN_STARTS)]
    if peek:
        while True:
            est = over_repeats(values)
            if not (est.lower <= 1.0 <= est.upper) or len(values) >= p.most:
                return not (est.lower <= 1.0 <= est.upper), len(values)
            values.append(rng.gauss(0.0, sd))
    total = replan(p, [over_repeats(values)], MIN_STARTS, detect)
    values += [rng.gauss(0.0, sd) for _ in range(total - MIN_STARTS)]
    est = over_repeats(values)
    return not (est.lower <= 1.0 <= est.upper), total


@pytest.mark.parametrize("sd", [0.008, 0.015])
def test_the_stopping_rule_keeps_false_verdicts_at_5_percent_where_peeking_does_not(sd):
    rng = random.Random(int(sd * 1000))
    p = plan([Cell("t", 1, "read", Noise("t", within=0.0, between=sd ** 2, seconds=30, starts=4))], 0.02).tests[0]
    trials = 3000
    planned = [_simulated(rng, sd, p, 0.02, peek=False) for _ in range(trials)]
    peeked = [_simulated(rng, sd, p, 0.02, peek=True) for _ in range(trials)]
    false_planned = sum(f for f, _ in planned) / trials
    false_peeked = sum(f for f, _ in peeked) / trials
    assert false_planned <= 0.065, false_planned
    assert false_peeked > false_planned + 0.03, (false_peeked, false_planned)
    assert len({n for _, n in planned}) > 1  # the rule did change the number of starts


def test_the_report_note_names_each_test_that_did_not_reach_the_threshold():
    rng = random.Random(3)
    quiet = _aa_runs(rng, 5, between=0.002, turn_sd=0.02)
    loud = [Measurement("scan", "scan", m.target, 1, m.value, round=m.round, intervals=m.intervals)
            for m in _aa_runs(rng, 3, between=0.08, turn_sd=0.02)]
    comparison = compare(quiet + loud, ["a", "a-aa"], "a", ["point-query", "scan"])
    note, _ = planning.detect_notes(comparison, {"detect": 0.02})
    assert note.startswith("detect 2.0%: 1 of 2 tests reached it; not reached: scan x1 (")
    assert "after 3 starts" in note
    assert planning.detect_notes(comparison, None) == ()
    # the note gives the change each cell shows: a noise floor above the threshold keeps a test from it
    floored = compare(quiet + loud, ["a", "a-aa"], "a", ["point-query", "scan"], noise_floor={"point-query": 0.031})
    note, _ = planning.detect_notes(floored, {"detect": 0.02})
    assert note.startswith("detect 2.0%: 0 of 2 tests reached it; not reached: point-query x1 (3.1% after 5 starts)")


def test_a_test_whose_noise_floor_is_above_the_threshold_is_out_of_reach_whatever_its_starts():
    quiet = Noise("t", within=0.0, between=0.004 ** 2, seconds=30, starts=4)
    free, floored = plan([Cell("t", 1, "read", quiet)], 0.02), plan([Cell("t", 1, "read", quiet, floor=0.03)], 0.02)
    assert free.tests[0].reaches(0.02)
    p = floored.tests[0]
    assert p.starts == p.most == MIN_STARTS and p.expected == 0.03 and not p.reaches(0.02)
    assert planning.TestPlan.from_dict(p.to_dict()) == p


def _paired_repeats(rng: random.Random, n: int, sd: float, ratio: float = 1.0):
    """An estimate over n paired repeats as the Insert Benchmark and TPROC-C judge them
    (noise.relative_over_repeats): each repeat's value of new and base, ln ratio ~ N(ln ratio, sd)."""
    from dbdrift.analysis.noise import relative_over_repeats
    base = [(r, 1000.0, 10.0) for r in range(n)]
    new = [(r, 1000.0 * ratio * math.exp(rng.gauss(0.0, sd)), 10.0) for r in range(n)]
    return relative_over_repeats(new, base)


def test_the_noise_of_a_workload_judged_over_repeats_is_the_spread_of_its_starts():
    rng = random.Random(5)
    noise = planning.repeat_noise({"l.i1": [_paired_repeats(rng, 12, 0.03)], "qr100": [_paired_repeats(rng, 2, 0.03)],
                                   "NOPM": []})
    assert set(noise) == {"l.i1"}  # two starts give no interval over starts to plan from, nothing gives nothing
    n = noise["l.i1"]
    assert n.starts == 12 and n.df == 11 and n.within == 0.0
    assert 0.015 < math.sqrt(n.between) < 0.045  # the per-start sd, 0.03, within what 12 starts can tell


def test_a_workload_judged_over_repeats_gets_one_number_of_starts_for_all_its_tests():
    noise = {"l.i1": Noise("l.i1", 0.0, 0.01 ** 2, 0.0, 8), "qr100": Noise("qr100", 0.0, 0.02 ** 2, 0.0, 8),
             "l.x": Noise("l.x", 0.0, 0.5 ** 2, 0.0, 8)}
    found = planning.plan_repeats(["l.i1", "qr100", "l.x", "qp100"], noise, 0.05, 100.0, calibration="c")
    by = {p.test: p for p in found.tests}
    # qr100 decides (l.x cannot reach 5% in 30 starts and does not raise it); paired repeats: n - 1 df
    need = starts_needed(0.02 ** 2, 0.05, crossover=False)
    assert need is not None and need > MIN_STARTS and need != starts_needed(0.02 ** 2, 0.05)
    assert {p.starts for p in found.tests} == {need}
    assert by["qr100"].reaches(0.05) and by["l.i1"].reaches(0.05) and not by["l.x"].reaches(0.05)
    assert by["qr100"].most == math.ceil(need * planning.HEADROOM) and by["l.x"].most == need
    assert not by["qp100"].calibrated and by["qp100"].var == 0.5 ** 2  # from the noisiest calibrated test
    assert found.expected_s == need * 100.0 and found.most_s == by["qr100"].most * 100.0
    assert found.lengths == {}
    assert planning.TestPlan.from_dict(by["qr100"].to_dict()) == by["qr100"]
    # a budget holds the starts to what it fits, never below three
    tight = planning.plan_repeats(["qr100"], noise, 0.05, 100.0, budget_s=need * 100.0 - 1)
    assert tight.tests[0].most == need - 1 and tight.most_s <= need * 100.0 - 1
    tiny = planning.plan_repeats(["qr100"], noise, 0.05, 100.0, budget_s=150.0)
    assert tiny.tests[0].starts == MIN_STARTS and "budget is less than 3 starts" in tiny.notes[0]
