"""A campaign of a workload judged over repeats (the Insert Benchmark, TPROC-C) planned to detect,
as it runs (runner/detect.py): which repeats run, when the plan is raised, and the budget."""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from dbdrift.analysis import planning
from dbdrift.analysis.noise import Estimate, Method
from dbdrift.analysis.planning import MIN_STARTS
from dbdrift.analysis.planning import TestNoise as Noise
from dbdrift.analysis.power import detectable_change
from dbdrift.workloads.registry import parse_campaign
from dbdrift.runner.detect import Planned
from dbdrift.runner.progress import NullProgress


class Said(NullProgress):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def message(self, text: str) -> None:
        self.lines.append(text)


def _spec(detect_plan: dict, budget: float | None = None):
    spec = parse_campaign({"name": "ib", "workload": "insert-benchmark", "detect": "5%",
                           "targets": [{"name": "a", "version": "17.10"}, {"name": "b", "version": "18.4"}]},
                          "ib.toml", Path("."), "ib")
    return replace(spec, budget=budget, detect_plan=detect_plan)


def _estimate(half: float, n: int) -> Estimate:
    """A ratio of 1 whose interval over n paired repeats is ±half (in ln)."""
    return Estimate(1.0, math.exp(-half), math.exp(half), n, Method.OVER_REPEATS)


def _planned(sd: dict[str, float], budget: float | None = None, clock=lambda: 0.0):
    noise = {t: Noise(t, 0.0, s ** 2, 0.0, 8) for t, s in sd.items()}
    found = planning.plan_repeats(list(sd), noise, 0.05, 100.0, budget)
    spread: dict[str, float] = {}
    said = Said()
    planned = Planned(_spec(found.to_dict(), budget), lambda cid, test, threads: [_estimate(spread[test], 3)],
                      1, said, clock)
    return found, planned, spread, said


def test_every_repeat_of_the_plan_runs_and_the_last_says_what_each_test_can_detect():
    found, planned, spread, said = _planned({"l.i1": 0.01, "qr100": 0.02})
    starts = found.tests[0].starts
    spread.update({"l.i1": 0.005, "qr100": 0.01})  # as quiet as calibrated: the plan stands
    ran = []
    for repeat in range(planned.repeats() + 5):
        if not planned.wants_repeat(repeat):
            break
        ran.append(repeat)
        planned.after_repeat(repeat)
    assert ran == list(range(starts))
    assert [line for line in said.lines if line.startswith("detect: l.i1: ")] == [
        f"detect: l.i1: {_mde(0.005):.1%} after {starts} starts (reached: 5.0%)"]


def _mde(half: float) -> float:
    return detectable_change(_estimate(half, 3)) or 0.0


def test_first_starts_noisier_than_the_calibration_add_repeats_up_to_the_cap():
    found, planned, spread, said = _planned({"l.i1": 0.01, "qr100": 0.02})
    spread.update({"l.i1": 0.005, "qr100": 0.3})  # qr100 far noisier in the first three
    for repeat in range(MIN_STARTS):
        assert planned.wants_repeat(repeat)
        planned.after_repeat(repeat)
    qr = next(p for p in found.tests if p.test == "qr100")
    assert planned.repeats() == qr.most > qr.starts
    assert any(line.startswith("detect: qr100: its first 3 starts are noisier") for line in said.lines)
    assert planned.wants_repeat(qr.most - 1) and not planned.wants_repeat(qr.most)


def test_past_three_starts_no_repeat_runs_that_would_overrun_the_budget():
    now = [0.0]
    found, planned, spread, said = _planned({"qr100": 0.03}, budget=10_000.0, clock=lambda: now[0])
    spread["qr100"] = 0.01
    assert found.tests[0].starts > MIN_STARTS + 1
    for repeat in range(MIN_STARTS):
        assert planned.wants_repeat(repeat)
        now[0] += 3000.0  # each repeat takes 3000 s: a fourth would end at 12,000 s
        planned.after_repeat(repeat)
    assert not planned.wants_repeat(MIN_STARTS)
    assert said.lines[-2].startswith("detect: another repeat would overrun the budget of ")
    assert said.lines[-2].endswith("; the campaign stops after 3")
    assert said.lines[-1] == f"detect: qr100: {_mde(0.01):.1%} after 3 starts (reached: 5.0%)"


def test_a_repeat_workloads_report_says_where_the_sequential_rule_stopped_each_test_in_every_format(tmp_path):
    from dbdrift.workloads.registry import WORKLOADS
    from tests.unit.test_recheck import tpcc_store
    store = tpcc_store(tmp_path / "t.db")
    cid = store.latest_campaign_id("tp")
    base = next(t for t in store.targets(cid) if t.is_base)
    store.add_step(base.id, "detect", "NOPM", "decided", 0.0,
                   {"test": "NOPM", "threads": 0, "outcome": "different", "starts": 3, "why": "decided"})
    store.db.execute("UPDATE campaigns SET spec_json = json_set(spec_json, '$.detect_plan', json('{\"detect\": 0.05}')) "
                     "WHERE id = ?", (cid,))
    tpcc = WORKLOADS["tpcc"]
    data = tpcc.build_report(store, cid, None)
    line = "stops (sequential, detect 5.0%): 1 of 1 decided (1 different, 0 same); different after 3 starts: NOPM"
    assert line in data.notes
    for fmt in ("text", "markdown", "csv", "json", "html"):
        assert line in tpcc.render_report(data, fmt), fmt
    store.close()
