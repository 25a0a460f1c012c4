"""The workload registry: one Workload per `workload` value, assembled from its slice, asked for
capabilities instead of its name, and carried whole to a cluster unit."""
from __future__ import annotations

import pickle
import re
from dataclasses import fields
from pathlib import Path

import pytest

from dbdrift.plan import keys

from dbdrift.workloads.registry import PLANS, parse_campaign
from dbdrift.runner.campaign import placement_option
from dbdrift.workloads.htap import plan as htap_plan
from dbdrift.workloads.ibench import plan as ibench_plan
from dbdrift.workloads.registry import WORKLOADS, Workload, workload_of
from dbdrift.workloads.sysbench import plan as sysbench_plan
from dbdrift.workloads.sysbench.catalog import SysbenchParams
from dbdrift.workloads.tpcc import plan as tpcc_plan
from dbdrift.workloads.vector import plan as vector_plan

TARGETS = [{"name": "a", "version": "17.10"}, {"name": "b", "version": "18.4"}]


def spec(**extra):
    return parse_campaign({"targets": TARGETS, **extra}, "c.toml", Path("."), "c")


def test_every_workload_the_campaign_file_accepts_has_a_plan_part_and_a_workload():
    assert set(keys.key("top", "workload").choices) == set(PLANS) == set(WORKLOADS)
    assert all(w.plan is PLANS[name] for name, w in WORKLOADS.items())


def test_a_workload_pickles_whole_for_a_cluster_unit():
    for workload in WORKLOADS.values():
        assert pickle.loads(pickle.dumps(workload)) == workload


def test_each_workload_has_its_own_table_or_none():
    tables = [w.table for w in WORKLOADS.values() if w.table]
    assert len(tables) == len(set(tables)) and all(keys.key("top", t) for t in tables)


SLICE_PARAMS = {"insert-benchmark": ibench_plan.params, "tpcc": tpcc_plan.params, "vector": vector_plan.params,
                "htap": htap_plan.params}


def test_a_workloads_table_is_stored_as_its_params_hold_it_key_for_key():
    for name, params in SLICE_PARAMS.items():
        campaign = spec(workload=name)
        table = PLANS[name].table
        assert list(campaign.to_dict()[table]) == [f.name for f in fields(params(campaign))]
        assert set(campaign.to_dict()[table]) == {k.name for k in PLANS[name].keys}, name


def test_a_slice_refuses_to_read_its_params_from_a_campaign_of_another_workload():
    for name, params in SLICE_PARAMS.items():
        other = spec(workload="tpcc" if name != "tpcc" else "vector")
        message = f"campaign c is a {other.workload} campaign: it has no [{PLANS[name].table}]"
        with pytest.raises(TypeError, match=re.escape(message)):
            params(other)
    # sysbench's keys are top-level: it has no table of its own, and its record says what is missing
    assert sysbench_plan.params(spec()) == SysbenchParams()
    with pytest.raises(TypeError, match=re.escape("campaign c is a tpcc campaign: it has no SysbenchParams")):
        sysbench_plan.params(spec(workload="tpcc"))


def test_a_workload_without_sbtest_tables_settles_as_sysbenchs_default_sizes_do():
    # TPROC-C, vector search and HTAP have always settled 61 s with settle_s = "auto"
    assert sysbench_plan.settle_s(spec()) == 61.0
    for name in ("tpcc", "vector", "htap"):
        assert spec(workload=name).settle_total_s() == 61.0


@pytest.mark.parametrize("workload", ["insert-benchmark", "tpcc", "vector", "htap"])
def test_a_workload_of_whole_repeats_answers_sysbenchs_per_test_hooks_with_none_and_refuses_their_changes(workload):
    campaign, plan = spec(workload=workload), PLANS[workload]
    assert not plan.counts_instructions(campaign)
    assert plan.measured_lengths(campaign) == {} and plan.threads(campaign) == ()
    for ask in (lambda: plan.counting(campaign, False), lambda: plan.with_measured_lengths(campaign, {"read": 1.0}),
                lambda: plan.turn_s(campaign), lambda: plan.loaded_rows(campaign)):
        with pytest.raises(TypeError, match=f"campaign c is a {workload} campaign"):
            ask()


def test_a_chosen_write_length_carries_the_insert_length_along_and_a_kind_left_out_keeps_its_own():
    campaign = spec(read_s=10, write_s=20, insert_s=30)
    chosen = sysbench_plan.with_measured_lengths(campaign, {"write": 60.0})
    assert sysbench_plan.measured_lengths(chosen) == {"read": 10.0, "write": 60.0, "insert": 60.0}
    chosen = sysbench_plan.with_measured_lengths(campaign, {"read": 5.0, "insert": 45.0})
    assert sysbench_plan.measured_lengths(chosen) == {"read": 5.0, "write": 20.0, "insert": 45.0}


def test_sysbenchs_hooks_answer_from_its_keys():
    campaign = spec(tables=3, rows=1000, turn_s=0.05, simulate_cache=True)
    plan = PLANS["sysbench"]
    assert (plan.loaded_rows(campaign), plan.turn_s(campaign), plan.counts_instructions(campaign)) == (3000, 0.05, True)
    assert plan.threads(spec(threads=[4, 1, 4])) == (4, 1)
    counted = plan.counting(spec(), True)
    assert sysbench_plan.params(counted).count_instructions and sysbench_plan.params(counted).simulate_cache


def test_a_campaign_is_asked_for_capabilities_not_its_name():
    sysbench, tpcc = spec(), spec(workload="tpcc")
    assert workload_of(sysbench).caps.takes_turns and not workload_of(tpcc).caps.takes_turns
    assert sysbench.caps is workload_of(sysbench).caps
    assert placement_option(spec(workload="insert-benchmark")) == "shared"  # cpus = "auto": unpinned
    assert placement_option(sysbench) == "auto"


def test_a_workload_of_whole_repeats_splits_its_repeats_and_a_sysbench_one_its_tests():
    s = spec(tests=["point-query", "read-only"], repeats=2)
    assert sorted(workload_of(s).split(s, 2)) == [(("point-query",), ()), (("read-only_range=100",), ())]
    ib = spec(workload="insert-benchmark", repeats=2)
    assert workload_of(ib).split(ib, 2) == [((), (0,)), ((), (1,))]


def test_every_workload_answers_every_hook_with_a_function_of_its_own():
    hooks = [f.name for f in fields(Workload) if f.name not in ("plan", "catalog", "views")]  # parts handed down whole
    unanswered = [(name, hook) for name, w in WORKLOADS.items() for hook in hooks if not callable(getattr(w, hook))]
    assert unanswered == [] and all(callable(p.axes) and isinstance(p.demo_targets, dict) for p in PLANS.values())


def test_only_sysbench_has_views_of_cells_and_the_others_refuse_them_naming_the_campaign():
    from dbdrift.errors import InputError
    from dbdrift.workloads.registry import NoViews
    assert WORKLOADS["sysbench"].views.formats == ("text", "markdown", "csv", "json", "html", "post")
    others = {name: w.views for name, w in WORKLOADS.items() if name != "sysbench"}
    assert all(isinstance(v, NoViews) and v.formats == () for v in others.values())
    with pytest.raises(InputError, match="campaign c1 ran TPROC-C, whose report has no comparison of cells"):
        others["tpcc"].build(None, "c1", None)


def test_sysbench_is_judged_per_cell_and_every_other_workload_over_repeats():
    judged = {name: w.caps.judged_over_repeats for name, w in WORKLOADS.items()}
    assert judged == {"sysbench": False, "insert-benchmark": True, "tpcc": True, "vector": True, "htap": True}


def test_sysbench_has_no_test_judged_over_repeats_nor_a_value_per_repeat(tmp_path):
    from dbdrift.store.store import Store
    store = Store(tmp_path / "s.db")
    cid = store.add_campaign("c", {"name": "c"}, {"cpus": 2}, "0.1.0")
    sysbench = WORKLOADS["sysbench"]
    assert sysbench.judged(spec()) == () and sysbench.estimates(store, cid) == {}
    assert sysbench.history_values(store, cid) == {}


def test_a_workload_of_whole_repeats_resumes_the_target_repeat_pairs_not_stored_whole(tmp_path):
    from dbdrift.model import WorkloadRun
    from dbdrift.store.store import Store
    store = Store(tmp_path / "s.db")
    htap = spec(workload="htap", repeats=2)
    cid = store.add_campaign("c", {"name": "c"}, {"cpus": 2}, "0.1.0")
    ids = [store.ensure_target(cid, t.name, t.engine, i, i == 0, {}) for i, t in enumerate(htap.targets)]
    store.add_workload_run(ids[0], WorkloadRun(target="a", workload="htap", status="ok", repeat=0))
    store.add_workload_run(ids[1], WorkloadRun(target="b", workload="htap", status="failed", repeat=0))
    line, expected = workload_of(htap).resume_left(store, cid, htap)
    assert line == "1 of 4 (target, repeat) runs stored, 3 to run"
    assert expected == pytest.approx(workload_of(htap).estimate(htap)[0] * 3 / 4)


def test_only_sysbench_counts_time_besides_its_measured_runs_and_an_overhead_per_run():
    costs = {name: w.detect_costs(spec(workload=name)) for name, w in WORKLOADS.items()}
    fixed, per_run = costs.pop("sysbench")
    assert fixed > 0 and per_run > sysbench_plan.params(spec()).warmup_s and set(costs.values()) == {(0.0, 0.0)}


def test_an_insert_benchmark_repeat_missing_a_step_is_left_to_resume_and_to_its_cluster_unit_alike(tmp_path):
    from dbdrift.model import InsertStepResult
    from dbdrift.store.store import Store
    from dbdrift.workloads.ibench.plan import params
    store = Store(tmp_path / "s.db")
    ib = spec(workload="insert-benchmark", repeats=1)
    cid = store.add_campaign("c", {"name": "c"}, {"cpus": 2}, "0.1.0")
    ids = [store.ensure_target(cid, t.name, t.engine, i, i == 0, {}) for i, t in enumerate(ib.targets)]
    steps = params(ib).steps
    for i, tid in enumerate(ids):  # the second target lacks the last step
        for step in steps[:len(steps) - i]:
            store.add_ibench_step(tid, InsertStepResult(ib.targets[i].name, step, "ok", 1, 5.0, 100, 100, 0, 20.0,
                                                        20.0, 0.0, target_ips=None))
    line, _ = workload_of(ib).resume_left(store, cid, ib)
    assert line == "1 of 2 (target, repeat) runs stored, 1 to run"
    assert workload_of(ib).remaining(store, cid, ib, (), ()) == ((), (0,))
    assert store.ibench_done(ids[0], 0) == set()  # the repeat runs again from l.i0: its steps are superseded
    store.close()
