"""The closed registry of workloads: one Workload per slice, assembled from the slice's role files.

The one place that maps a campaign's `workload` value to its object. It sits above every layer a
slice's parts belong to (catalog, plan, runner, cluster), so only the verbs import it: they look
the campaign's workload up here and hand the object down (Runner(..., workload=w)). A new
workload is a new sub-package beside these and one entry in WORKLOADS.
"""
from __future__ import annotations

from dbdrift.cluster import units
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.results.workload import with_recheck
from dbdrift.workload import Workload
from dbdrift.workloads.htap import plan as htap_plan
from dbdrift.workloads.htap import report as htap_report
from dbdrift.workloads.htap import results as htap_results
from dbdrift.workloads.htap import run as htap_run
from dbdrift.workloads.ibench import cluster as ibench_cluster
from dbdrift.workloads.ibench import plan as ibench_plan
from dbdrift.workloads.ibench import report as ibench_report
from dbdrift.workloads.ibench import results as ibench_results
from dbdrift.workloads.ibench import run as ibench_run
from dbdrift.workloads.sysbench import cluster as sysbench_cluster
from dbdrift.workloads.sysbench import plan as sysbench_plan
from dbdrift.workloads.sysbench import run as sysbench_run
from dbdrift.workloads.tpcc import cluster as tpcc_cluster
from dbdrift.workloads.tpcc import plan as tpcc_plan
from dbdrift.workloads.tpcc import report as tpcc_report
from dbdrift.workloads.tpcc import results as tpcc_results
from dbdrift.workloads.tpcc import run as tpcc_run
from dbdrift.workloads.vector import plan as vector_plan
from dbdrift.workloads.vector import report as vector_report
from dbdrift.workloads.vector import results as vector_results
from dbdrift.workloads.vector import run as vector_run


def no_lines(spec: CampaignSpec) -> list[str]:
    return []


SYSBENCH = Workload(plan=sysbench_plan.PLAN, estimate=sysbench_run.estimate_campaign, run=sysbench_run.run,
                    clients=sysbench_run.clients, check_lines=sysbench_run.check_lines,
                    time_lines=sysbench_run.time_lines, narrow=sysbench_cluster.narrow,
                    split=sysbench_cluster.split, remaining=sysbench_cluster.remaining,
                    store_failed=sysbench_cluster.store_failed)
INSERT_BENCHMARK = Workload(plan=ibench_plan.PLAN, estimate=ibench_run.estimate, run=ibench_run.run,
                            clients=ibench_run.clients, check_lines=ibench_plan.check_lines, time_lines=no_lines,
                            narrow=units.narrow_repeats, split=units.split_repeats,
                            remaining=ibench_cluster.remaining, store_failed=units.no_failed_runs,
                            build_report=with_recheck(ibench_results.build), render_report=ibench_report.render,
                            estimates=ibench_results.step_estimates, judged=ibench_plan.judged,
                            stacks=ibench_results.stacks, history_values=ibench_results.history_values,
                            history_measure=ibench_results.history_measure)
TPCC = Workload(plan=tpcc_plan.PLAN, estimate=tpcc_run.estimate, run=tpcc_run.run, clients=tpcc_run.clients,
                check_lines=tpcc_plan.check_lines, time_lines=no_lines, narrow=units.narrow_repeats,
                split=units.split_repeats, remaining=tpcc_cluster.remaining, store_failed=units.no_failed_runs,
                build_report=with_recheck(tpcc_results.build), render_report=tpcc_report.render, estimates=tpcc_results.nopm_estimates,
                stacks=tpcc_results.stacks, history_values=tpcc_results.history_values,
                history_measure=tpcc_results.history_measure,
                judged=tpcc_plan.judged)

VECTOR = Workload(plan=vector_plan.PLAN, estimate=vector_run.estimate, run=vector_run.run, clients=vector_run.clients,
                  check_lines=vector_plan.check_lines, time_lines=no_lines, narrow=units.narrow_repeats,
                  split=units.split_repeats, remaining=units.remaining_workload_runs, store_failed=units.no_failed_runs,
                  build_report=with_recheck(vector_results.build), render_report=vector_report.render,
                  estimates=vector_results.qps_estimates, judged=vector_plan.judged,
                  history_values=vector_results.history_values, history_measure=vector_results.history_measure,
                  check_installs=vector_run.check_installs, preflight=vector_run.preflight,
                  check_builds=vector_run.check_builds)

HTAP = Workload(plan=htap_plan.PLAN, estimate=htap_run.estimate, run=htap_run.run, clients=htap_run.clients,
                check_lines=htap_plan.check_lines, time_lines=no_lines, narrow=units.narrow_repeats,
                split=units.split_repeats, remaining=units.remaining_workload_runs, store_failed=units.no_failed_runs,
                build_report=with_recheck(htap_results.build), render_report=htap_report.render, estimates=htap_results.estimates,
                judged=htap_plan.judged, history_values=htap_results.history_values,
                history_measure=htap_results.history_measure)

WORKLOADS: dict[str, Workload] = {w.name: w for w in (SYSBENCH, INSERT_BENCHMARK, TPCC, VECTOR, HTAP)}


def workload_of(spec: CampaignSpec) -> Workload:
    """The campaign's workload (its `workload` value was checked when the file was parsed)."""
    return WORKLOADS[spec.workload]
