"""The use cases of `run`, `demo` and `campaigns` without a command line: the overrides a
campaign takes, the demo campaigns, and the campaigns table."""
from __future__ import annotations

import pytest

from dbdrift.app import demo, run
from dbdrift.errors import UserError
from dbdrift.report.campaigns import campaign_lines


def demo_spec(workload: str = "sysbench"):
    return demo.campaign(demo.demo_campaign("postgres", workload), [])


def test_instructions_only_counts_and_skips_the_timed_runs_of_the_chosen_tests():
    spec = run.apply_overrides(demo_spec(), run.Overrides(tests=("point",), instructions_only=True))
    assert spec.workload_plan.counts_instructions(spec) and not spec.timed
    assert spec.test_names == ("point",) and spec.tests


def test_a_sysbench_flag_on_another_workloads_campaign_is_refused_before_anything_runs():
    with pytest.raises(UserError) as refused:
        run.apply_overrides(demo_spec("tpcc"), run.Overrides(instructions_only=True))
    assert refused.value.exit_code == 2 and refused.value.message.startswith("--instructions-only applies to sysbench")
    with pytest.raises(UserError) as refused:
        run.apply_overrides(demo_spec("vector"), run.Overrides(flamegraph=True))
    assert refused.value.message.startswith("--flamegraph applies to sysbench")


def test_flamegraphs_record_the_insert_benchmark_and_tpcc_too():
    for workload in ("insert-benchmark", "tpcc"):
        assert run.apply_overrides(demo_spec(workload), run.Overrides(flamegraph=True)).flamegraphs


def test_a_campaign_without_cluster_runs_on_this_host_unless_cluster_is_given():
    spec = demo_spec()
    assert run.cluster_address(spec, None) is None
    assert run.cluster_address(spec, "tcp://sched:8786") == "tcp://sched:8786"


def test_a_two_target_demo_has_no_chain_view_and_a_chain_of_four_has():
    assert not demo.chain_view(demo.demo_of("postgres"), "sysbench")
    assert demo.chain_view(demo.demo_of("mysql"), "sysbench")


def test_the_campaigns_table_lists_the_base_first_and_marks_a_calibration():
    row = {"id": 7, "name": "pg", "created_at": "2026-01-02T03:04:05.678", "workload": "sysbench",
           "calibration": True, "targets": ["b", "a"], "base": "a", "runs_ok": 3, "runs_failed": 1,
           "runs_interrupted": 2, "runs_skipped": 0, "dbdrift_version": "1"}
    lines = campaign_lines([row])
    assert lines[0].split()[:3] == ["id", "created", "(UTC)"]
    assert lines[1].split() == ["7", "2026-01-02", "03:04:05", "pg", "sysbench", "A/A", "3/1/2/0", "a,", "b"]
    assert lines[-1] == "report one with: dbdrift report --campaign NAME|ID"
