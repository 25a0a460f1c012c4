"""What `run --check` says of a campaign planned to detect (app/detect.py: check_lines)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from dbdrift.analysis import planning
from dbdrift.analysis.planning import TestNoise as Noise
from dbdrift.app.detect import check_lines
from dbdrift.workloads.registry import parse_campaign

TARGETS = [{"name": "a", "version": "17.10"}, {"name": "b", "version": "18.4"}]


def _spec(workload: str, found: planning.DetectPlan):
    spec = parse_campaign({"name": "c", "workload": workload, "targets": TARGETS}, "c.toml", Path("."), "c")
    return replace(spec, detect=found.detect, repeats=max(p.most for p in found.tests), detect_plan=found.to_dict())


def test_a_plan_over_whole_repeats_names_its_steps_without_threads_and_its_one_number_of_repeats():
    noise = {"l.i1": Noise("l.i1", 0.0, 0.02 ** 2, 0.0, 8), "l.x": Noise("l.x", 0.0, 0.5 ** 2, 0.0, 8)}
    found = planning.plan_repeats(["l.i1", "l.x"], noise, 0.05, 60.0, calibration="calibration c (#1)")
    lines = check_lines(_spec("insert-benchmark", found))
    most = max(p.most for p in found.tests)
    assert lines[0] == (f"detect 5.0%: planned from calibration c (#1); {most} repeats at most, each a start of every "
                        "target running every test, at the campaign's own lengths")
    starts = found.tests[0].starts
    assert lines[2].startswith(f"  l.i1: {starts} starts (at most {most}), expected ")
    assert lines[3].startswith(f"  l.x: {starts} starts (at most {starts}), expected ") and "cannot reach 5.0%" in lines[3]


def test_a_threshold_below_the_reports_minimum_effect_says_which_report_can_show_it():
    cell = planning.Cell("point-query", 1, "read", Noise("point-query", 1e-5, 1e-5, 30.0, 8))
    found = planning.plan([cell], 0.01, calibration="calibration c (#1)")
    lines = check_lines(_spec("sysbench", found))
    assert any(line.startswith("  note: reports call no change below their minimum effect, 2% unless "
                               "`dbdrift report --min-effect 1.0%`") for line in lines), lines
    assert lines[-1].startswith("  point-query x1: ")
    higher = planning.plan([cell], 0.02, calibration="calibration c (#1)")
    assert not any("minimum effect" in line for line in check_lines(_spec("sysbench", higher)))


def test_a_plan_over_whole_repeats_under_the_sequential_rule_says_a_repeat_runs_while_a_test_is_undecided():
    noise = {"l.i1": Noise("l.i1", 0.0, 0.02 ** 2, 0.0, 8), "qr100": Noise("qr100", 0.0, 0.03 ** 2, 0.0, 8)}
    found = replace(planning.plan_repeats(["l.i1", "qr100"], noise, 0.05, 60.0, budget_s=900.0,
                                          calibration="calibration c (#1)"), sequential=True)
    spec = replace(_spec("insert-benchmark", found), budget=900.0)
    lines = check_lines(spec)
    assert "  repeats: each start runs every test; another runs while a test is undecided and below its most, and " \
           "while a start as long as the mean of those run so far fits what is left of the budget" in lines, lines
    assert not any(line.startswith("  budget order:") for line in lines)  # the tests do not run one after another
    most = max(p.most for p in found.tests)
    assert any(line.startswith(f"  l.i1: {planning.MIN_STARTS} to {most} starts, stopping once decided")
               for line in lines), lines


def test_floors_above_the_threshold_in_a_plan_from_history_ask_for_twice_the_calibrations_starts():
    cell = planning.Cell("scan", 1, "read", Noise("scan", 1e-4, 1e-4, 30.0, 8))
    found = replace(planning.plan([cell], 0.02, calibration="the history of this host: 1 campaign (A/A), 2026-12-06"),
                    evidence=("[1] calibrate-pg17 (#1, 2026-12-06 19:06, A/A, 8 starts)",))
    stored = found.to_dict()
    stored["tests"][0]["floor"] = 0.065
    lines = check_lines(replace(_spec("sysbench", found), detect_plan=stored))
    [note] = [line for line in lines if "noise floor above 2.0%" in line]
    assert "(--set repeats=16)" in note, note
