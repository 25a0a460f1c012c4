"""The noise of a host learned from the campaigns stored of it (app/host_noise.py), and `detect`
planning from it (app/detect.py): which campaigns count, how they pool, what the plan says of
its evidence, and the fall back to the newest calibration while the history is thin."""
from __future__ import annotations

import math
import random
from dataclasses import replace
from pathlib import Path

import pytest

from dbdrift.analysis import planning
from dbdrift.analysis.noise import Estimate, Method
from dbdrift.analysis.planning import TestNoise as Noise
from dbdrift.app import detect
from dbdrift.app.host_noise import HISTORY_STARTS, evidence_of, host_history
from dbdrift.errors import UserError
from dbdrift.workloads.registry import parse_campaign
from dbdrift.results.hosts import host_key
from dbdrift.workloads.registry import INSERT_BENCHMARK, SYSBENCH
from tests.stored_turns import HOST, OTHER_HOST, add_turns

HERE = host_key(HOST)


@pytest.fixture
def here(monkeypatch):
    """Plan as if this machine were HOST, the host the stored campaigns ran on."""
    monkeypatch.setattr(detect, "machine_facts", lambda steal_window_s=0: dict(HOST))


def _spec(detect_share: float = 0.05):
    spec = parse_campaign({"name": "c", "tests": ["point-query"], "read_s": "5s", "rows": 1000,
                           "targets": [{"name": "a", "version": "17.10"}, {"name": "b", "version": "18.4"}]},
                          "c.toml", Path("."), "c")
    return replace(spec, detect=detect_share)


def test_a_hosts_history_pools_its_calibrations_and_the_starts_of_its_other_campaigns(store):
    rng = random.Random(1)
    add_turns(store, "calibrate-a", rng, 4, calibration=True, ratios={"a-aa": 1.0}, created="2026-11-27T10:00:00")
    add_turns(store, "a-vs-b", rng, 5, created="2026-11-28T11:00:00")
    add_turns(store, "elsewhere", rng, 6, host=OTHER_HOST)
    found = host_history(store, SYSBENCH, HERE)
    assert found.labels == ("[1] a-vs-b (#2, 2026-11-28 11:00, repeats, 5 starts)",
                            "[2] calibrate-a (#1, 2026-11-27 10:00, A/A, 4 starts)")
    noise = found.noise[("point-query", 1)]
    assert (noise.starts, noise.campaigns, noise.df) == (9, 2, 7)
    assert found.sources[("point-query", 1)] == "[1, 2], 9 starts"


def test_the_spread_of_a_campaigns_starts_is_noise_whatever_the_ratio_of_its_targets(store):
    add_turns(store, "far", random.Random(2), 30, between=0.01, ratios={"b": 0.7}, rounds=60)
    between = host_history(store, SYSBENCH, HERE).noise[("point-query", 1)].between
    assert 0.5 * 0.01 ** 2 < between < 2.0 * 0.01 ** 2  # a 30% difference adds nothing to it


def test_repeats_that_are_not_server_starts_and_one_target_campaigns_are_no_evidence(store):
    rng = random.Random(3)
    kept = add_turns(store, "never", rng, 5, restart="never")
    alone = add_turns(store, "alone", rng, 5, ratios={})
    assert evidence_of(store, kept, {"restart": "never", "order": "turns"}, SYSBENCH) is None
    assert evidence_of(store, alone, {"order": "turns"}, SYSBENCH) is None
    assert host_history(store, SYSBENCH, HERE).evidence == ()


def test_the_history_reads_only_the_newest_campaigns(store):
    rng = random.Random(4)
    for n in range(4):
        add_turns(store, f"c{n}", rng, 3, rounds=40)
    found = host_history(store, SYSBENCH, HERE, limit=2)
    assert [e.name for e in found.evidence] == ["c3", "c2"]


def test_pooled_noise_takes_within_per_second_of_run_and_between_by_degrees_of_freedom():
    newest = Noise("t", 0.0004, 0.0001, 10.0, 5)  # 0.004 per second of run, df 4
    older = Noise("t", 0.0001, 0.0004, 20.0, 3)  # 0.002 per second of run, df 2
    found = planning.pooled([newest, older])
    assert found.seconds == 10.0 and found.starts == 8 and found.df == 6
    assert found.within == pytest.approx((0.004 * 5 + 0.002 * 3) / 8 / 10.0)
    assert found.between == pytest.approx((0.0001 * 4 + 0.0004 * 2) / 6)


def test_detect_plans_from_the_history_without_a_calibration_and_names_each_tests_evidence(store, here):
    rng = random.Random(5)
    add_turns(store, "first", rng, 5, created="2026-11-28T09:00:00")
    add_turns(store, "second", rng, 5, created="2026-11-29T09:00:00")
    spec = detect.planned(_spec(), store)
    plan = spec.detect_plan
    assert plan["calibration"] == "the history of this host: 2 campaigns (repeats), 2026-11-28 to 2026-11-29"
    assert plan["evidence"] == ["[1] second (#2, 2026-11-29 09:00, repeats, 5 starts)",
                                "[2] first (#1, 2026-11-28 09:00, repeats, 5 starts)"]
    assert plan["tests"][0]["source"] == "[1, 2], 10 starts"
    lines = detect.check_lines(spec)
    assert lines[0].startswith("detect 5.0%: planned from the history of this host: 2 campaigns")
    assert lines[2:5] == ["  evidence (noise of ln rQPS over server starts, pooled per test):",
                          "    [1] second (#2, 2026-11-29 09:00, repeats, 5 starts)",
                          "    [2] first (#1, 2026-11-28 09:00, repeats, 5 starts)"]
    assert lines[5] == ("  noise floors: none: no calibration of this host, and reports raise no verdict to a floor "
                        "without one")
    assert lines[-1].startswith("  point-query x1: ") and lines[-1].endswith("; noise from [1, 2], 10 starts")


def test_the_floors_of_a_history_plan_come_from_the_hosts_newest_calibration(store, here):
    rng = random.Random(6)
    add_turns(store, "calibrate-a", rng, 3, calibration=True, ratios={"a-aa": 1.0}, created="2026-11-27T10:00:00")
    add_turns(store, "run", rng, 6)
    plan = detect.planned(_spec(), store).detect_plan
    assert plan["floors_from"] == "calibration calibrate-a (#1, 2026-11-27 10:00), the newest of this host, as reports apply it"
    assert plan["tests"][0]["floor"] > 0
    note = planning.source_notes(plan)[0]
    assert note.startswith("detect 5.0%: planned from the history of this host: 2 campaigns (A/A and repeats)")
    assert "[2] calibrate-a (#1, 2026-11-27 10:00, A/A, 3 starts)" in note and note.endswith("as reports apply it")


def test_a_thin_history_falls_back_to_the_newest_calibration_and_says_why(store, here):
    add_turns(store, "calibrate-a", random.Random(7), 3, calibration=True, ratios={"a-aa": 1.0})
    assert HISTORY_STARTS > 3
    spec = detect.planned(_spec(), store)
    lines = detect.check_lines(spec)
    assert lines[0].startswith("detect 5.0%: planned from calibration calibrate-a (#1, ")
    assert ("  note: the history of this host is too thin to plan from: 0 of 1 tests have 8 or more starts in its 1 "
            "campaign(s) with starts, and half need to; planned from the newest calibration") in lines
    assert "evidence" not in spec.detect_plan


def test_without_a_calibration_a_thin_history_is_refused_saying_both(store, here):
    add_turns(store, "short", random.Random(8), 3)
    with pytest.raises(UserError) as refused:
        detect.planned(_spec(), store)
    assert refused.value.message.startswith("detect plans from a calibration of this host (")
    assert refused.value.message.endswith("the history of this host is too thin to plan from: 0 of 1 tests have 8 "
                                          "or more starts in its 1 campaign(s) with starts, and half need to")
    assert "detect plans from them" in refused.value.hint


def test_a_workload_judged_over_repeats_learns_each_steps_noise_from_its_campaigns(store):
    def estimates(_store, campaign_id):  # l.i1 spread ±2% (in ln) over 5 starts in every campaign
        half = 0.02
        return {"l.i1": [Estimate(0.9, 0.9 * math.exp(-half), 0.9 * math.exp(half), 5, Method.OVER_REPEATS)]}
    workload = replace(INSERT_BENCHMARK, estimates=estimates)
    rng = random.Random(9)
    for name in ("ib1", "ib2"):
        cid = add_turns(store, name, rng, 1, rounds=2)
        store.db.execute("UPDATE campaigns SET spec_json = json_set(spec_json, '$.workload', 'insert-benchmark') "
                         "WHERE id = ?", (cid,))
    store.db.commit()
    found = host_history(store, workload, HERE)
    noise = found.noise[("l.i1", 0)]
    assert noise.starts == 10 and found.sources[("l.i1", 0)] == "[1, 2], 10 starts"
    one = planning.repeat_noise(estimates(store, 1))["l.i1"]
    assert noise.between == pytest.approx(one.between)
