"""`report` as one use case (app/report.py): a request in, the report's text, the lines for stderr,
the files written and the exit status out, for a sysbench campaign and for workloads judged over
repeats; the command line only prints what it returns."""
from __future__ import annotations

from pathlib import Path

import pytest

from dbdrift.analysis.noise import Judging
from dbdrift.app.report import FINDING_EXIT, ReportOutcome, ReportRequest, report
from dbdrift.errors import UserError
from dbdrift.store.store import Store
from tests.cli.test_workload_goldens import tpcc_sp_store
from tests.cli.test_workload_reports import ib_store, tpcc_store
from tests.unit.test_reports import make_store


def sysbench(tmp_path: Path) -> Path:
    """pg17 (base), pg18 and pg19 over six tests: point-query and update-index of pg18 regressed,
    in time and in instructions per event."""
    make_store(tmp_path / "sb.db").close()
    return tmp_path / "sb.db"


def run(request: ReportRequest) -> tuple[ReportOutcome, list[str]]:
    """The outcome, and what was said before the report."""
    said: list[str] = []
    return report(request, said.append), said


def test_a_sysbench_report_is_the_rqps_table_with_nothing_said_and_status_0(tmp_path):
    outcome, said = run(ReportRequest(sysbench(tmp_path)))
    assert outcome.text.startswith("campaign: golden\nRelative to: pg17 (postgres 17.10)\n")
    assert (outcome.notes, outcome.written, outcome.status, said) == ((), (), 0, [])


def test_a_sysbench_report_in_json_is_the_json_document(tmp_path):
    outcome, _ = run(ReportRequest(sysbench(tmp_path), format="json"))
    assert outcome.text.lstrip().startswith("{") and '"campaign": "golden"' in outcome.text


def test_fail_on_regression_of_a_sysbench_campaign_lists_each_regression_and_returns_the_finding_exit(tmp_path):
    outcome, _ = run(ReportRequest(sysbench(tmp_path), fail_on=("regression",)))
    assert outcome.status == FINDING_EXIT == 3
    assert "fail-on: point-query x1 pg18: regression 0.950 [0.941,0.959] vs pg17" in outcome.notes
    assert "fail-on: update-index instructions pg18: regression 1.040 instructions/event vs pg17" in outcome.notes
    assert outcome.notes[-1] == "fail-on: 6 finding(s) of regression; exit 3"


def test_fail_by_instructions_reads_only_the_instruction_counts(tmp_path):
    outcome, _ = run(ReportRequest(sysbench(tmp_path), fail_on=("regression",), fail_by="instructions"))
    assert outcome.status == FINDING_EXIT
    assert outcome.notes == ("fail-on: point-query instructions pg18: regression 1.036 instructions/event vs pg17",
                             "fail-on: update-index instructions pg18: regression 1.040 instructions/event vs pg17",
                             "fail-on: 2 finding(s) of regression; exit 3")


def test_fail_on_a_kind_the_report_does_not_find_returns_0(tmp_path):
    outcome, _ = run(ReportRequest(ib_store(tmp_path / "s.db", 3, 10_000.0), fail_on=("regression",)))
    assert (outcome.status, outcome.notes) == (0, ())


def test_a_tpcc_report_is_judged_over_its_repeats_by_its_own_builder(tmp_path):
    outcome, said = run(ReportRequest(tpcc_store(tmp_path / "s.db", 3, 700.0)))
    assert outcome.text.startswith("campaign: tp\nTPROC-C: 4 warehouse(s)")
    assert "NOPM b: regression 0.700 [" in outcome.text
    assert (outcome.status, outcome.notes, said) == (0, (), [])


def test_fail_on_regression_of_a_tpcc_campaign_names_the_nopm_and_returns_the_finding_exit(tmp_path):
    outcome, _ = run(ReportRequest(tpcc_store(tmp_path / "s.db", 3, 700.0), fail_on=("regression",)))
    assert outcome.status == FINDING_EXIT
    assert outcome.notes[0].startswith("fail-on: NOPM b: regression 0.700 [")
    assert outcome.notes[-1] == "fail-on: 1 finding(s) of regression; exit 3"


def test_a_one_repeat_insert_benchmark_passes_fail_on_regression_and_counts_the_cells_without_a_verdict(tmp_path):
    outcome, _ = run(ReportRequest(ib_store(tmp_path / "s.db", 1, 2_900.0), fail_on=("regression",)))
    assert outcome.status == 0
    assert outcome.notes == ("fail-on: 4 cell(s) had no verdict (too noisy or no interval) and pass; add `noisy` "
                             "to --fail-on to fail on them",)


def test_the_judging_of_the_request_reaches_a_workload_judged_over_repeats(tmp_path):
    path = tpcc_store(tmp_path / "s.db", 3, 700.0)
    outcome, _ = run(ReportRequest(path, fail_on=("regression",), judging=Judging(min_effect=0.5)))
    assert outcome.status == 0 and "regression" not in " ".join(outcome.notes)


@pytest.mark.parametrize("view", [{"chain": True}, {"matrix": True}, {"tests": "point"}, {"group_by": "sync"}])
def test_a_sysbench_only_view_of_a_workload_judged_over_repeats_is_refused_naming_the_option(tmp_path, view):
    with pytest.raises(UserError) as refused:
        run(ReportRequest(tpcc_store(tmp_path / "s.db", 3, 700.0), **view))
    option = "--" + next(iter(view)).replace("_", "-")
    assert refused.value.message == f"{option}: campaign tp ran the tpcc workload, whose report has no such view"
    assert refused.value.exit_code == 2


def test_tpcc_flamegraphs_are_written_and_said_after_the_report(tmp_path):
    folder = tmp_path / "fg"
    outcome, said = run(ReportRequest(tpcc_sp_store(tmp_path / "s.db"), flamegraphs=folder))
    assert said == [] and outcome.notes == (f"wrote 11 flamegraph files to {folder}",)
    assert sorted(p.name for p in outcome.written) == sorted(p.name for p in folder.iterdir())
    assert folder / "tpcc.pg-sp1-vs-pg-sp0.diff.svg" in outcome.written


def test_sysbench_flamegraphs_not_stored_are_said_before_the_report(tmp_path):
    outcome, said = run(ReportRequest(sysbench(tmp_path), flamegraphs=tmp_path / "fg"))
    assert said == ["no flamegraphs stored: run the campaign with `dbdrift run --flamegraph`"]
    assert outcome.written == () and outcome.text.startswith("campaign: golden")


def test_a_bare_report_says_which_newer_one_target_campaigns_it_passed_over(tmp_path):
    path = sysbench(tmp_path)
    store = Store(path)
    cid = store.add_campaign("bisect-probe", {"name": "bisect-probe", "rows": 10_000}, {"cpus": 2}, "0.1.0")
    store.ensure_target(cid, "probe", "postgres", 0, True, {"name": "probe"})
    store.close()
    outcome, said = run(ReportRequest(path))
    assert said == ["report: campaign golden (#1), the newest comparing two or more targets; passed over 1 newer "
                    "one-target campaign(s): bisect-probe (#2) (--campaign NAME|ID chooses one)"]
    assert outcome.text.startswith("campaign: golden\n")


def test_what_was_said_before_a_refusal_stays_said(tmp_path):
    path = tpcc_store(tmp_path / "s.db", 3, 700.0)
    store = Store(path)
    cid = store.add_campaign("probe", {"name": "probe", "workload": "tpcc", "tpcc": {}}, {"cpus": 2}, "0.1.0")
    store.ensure_target(cid, "p", "postgres", 0, True, {"name": "p"})
    store.close()
    said: list[str] = []
    with pytest.raises(UserError):
        report(ReportRequest(path, chain=True), said.append)
    assert said and said[0].startswith("report: campaign tp (#1), the newest comparing two or more targets")


def test_config_returns_each_targets_server_configuration_instead_of_the_report(tmp_path):
    outcome, _ = run(ReportRequest(sysbench(tmp_path), config=True))
    assert outcome.text.startswith("# ===== target pg17: postgres 17.10")
    assert outcome.status == 0


def test_a_store_that_does_not_exist_is_refused_with_exit_2(tmp_path):
    with pytest.raises(UserError) as refused:
        run(ReportRequest(tmp_path / "none.db"))
    assert refused.value.message == f"store {tmp_path / 'none.db'} does not exist" and refused.value.exit_code == 2


def test_sysbench_flamegraphs_are_written_per_cell_with_a_differential_against_each_cell_s_reference(tmp_path):
    from dbdrift.store.store import RunRecord
    store = make_store(tmp_path / "sb.db")
    cid = store.latest_campaign_id(None)
    for target in store.targets(cid):
        stacks = {"postgres;exec_simple_query;ExecScan": 90 + 10 * target.position, "postgres;PostgresMain": 10}
        store.add_run(target.id, RunRecord(test="point-query", test_group="point", threads=1, repeat=4, status="ok",
                                           warmup_s=1, duration_s=3, metric="qps", driver_spec={}, value=None,
                                           folded=stacks))
    store.close()
    folder = tmp_path / "fg"
    outcome, said = run(ReportRequest(tmp_path / "sb.db", flamegraphs=folder))
    assert said == [f"wrote 8 flamegraph files to {folder}"]
    assert sorted(p.name for p in outcome.written) == [
        "point-query.x1.pg17.folded", "point-query.x1.pg17.svg",
        "point-query.x1.pg18-vs-pg17.diff.svg", "point-query.x1.pg18.folded", "point-query.x1.pg18.svg",
        "point-query.x1.pg19-vs-pg17.diff.svg", "point-query.x1.pg19.folded", "point-query.x1.pg19.svg"]
    assert (folder / "point-query.x1.pg18.folded").read_text().splitlines() == [
        "postgres;PostgresMain 10", "postgres;exec_simple_query;ExecScan 100"]
