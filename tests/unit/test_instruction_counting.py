"""How instruction counts are sized, judged and run side by side (no server: the arithmetic,
the progress sink several counting lanes share, the cancellation they obey, and the campaign
refused without valgrind)."""
from __future__ import annotations

import io
import threading

import pytest

from dbdrift.analysis.instructions import instruction_verdict
from dbdrift.analysis.noise import Judging, Verdict
from dbdrift.workloads.sysbench.catalog import select_tests
from dbdrift.cli.progress import ConsoleProgress
from dbdrift.driver import process
from dbdrift.errors import UserError
from dbdrift.workloads.sysbench import instructions
from dbdrift.runner.campaign import Runner
from dbdrift.runner.progress import LanesProgress
from dbdrift.server import engines
from dbdrift.workloads.registry import workload_of

ROWS = 1_000_000


def test_tests_are_sized_to_a_budget_of_instructions_not_to_a_number_of_events():
    counts = {name: instructions.event_counts(select_tests([name])[0], ROWS)
              for name in ("point-query", "update-index", "update-inlist", "random-points_range=100",
                           "random-points_range=1000", "read-only_range=10000", "scan")}
    assert counts["point-query"] == (500, 2500)  # 2,000 events of ~40k: 80M
    assert counts["update-index"] == (200, 1000)  # a statement that writes costs more: 800 of ~100k
    n1, n2 = counts["update-inlist"]
    assert abs((n2 - n1) - 4 * n1) <= 2 and n2 < 200  # ten rows written per event
    n1, n2 = counts["random-points_range=100"]
    assert n2 == 5 * n1 and n1 < 50  # a hundred-row IN list: far fewer events than a point query
    for heavy in ("random-points_range=1000", "read-only_range=10000"):
        n1, n2 = counts[heavy]
        assert n1 == instructions.MIN_N1 < n2  # never fewer: past the custom plans
    assert counts["scan"] == (0, 1)  # one scan against none: a connection and a plan are nothing beside 1M rows


def test_the_difference_is_sized_to_the_wanted_precision_over_what_does_not_cancel():
    assert instructions.NOISE_IR["postgres"] / instructions.DIFFERENCE_IR == pytest.approx(instructions.PRECISION)
    assert instructions.PRECISION <= 0.02 / 8  # an eighth of the minimum effect
    differences = {}
    for test in select_tests(["default32"]):
        n1, n2 = instructions.event_counts(test, ROWS)
        assert 0 <= n1 < n2, test.name
        assert test.metric == "krps" or n1 >= instructions.MIN_N1, test.name  # past the custom plans
        if n2 - n1 >= 4:  # light enough that rounding to whole events is within 12%
            differences[test.name] = (n2 - n1) * instructions.estimated_ir(test, ROWS)
    assert len(differences) >= 25
    assert all(0.88 * instructions.DIFFERENCE_IR < d < 1.13 * instructions.DIFFERENCE_IR
               for d in differences.values()), differences


def test_a_campaign_with_mysql_or_mariadb_sizes_every_targets_counts_to_innodbs_larger_noise():
    point = select_tests(["point-query"])[0]
    mixed = instructions.difference_ir(["postgres", "mariadb"])
    assert mixed == instructions.difference_ir(["mysql"]) == 2 * instructions.difference_ir(["postgres"])
    assert instructions.event_counts(point, ROWS, mixed) == (1000, 5000)  # 4,000 point queries: 160M


def test_one_pair_when_a_pairs_difference_is_large_enough_that_a_second_shows_nothing():
    scan, point = select_tests(["scan"])[0], select_tests(["point-query"])[0]
    assert instructions.repeats(scan, ROWS) == 1
    assert instructions.repeats(point, ROWS) == 2
    assert instructions.repeats(scan, 1000) == 2  # a small table's scan is cheap: both pairs


def test_the_scan_estimate_follows_the_table_size():
    scan = select_tests(["scan"])[0]
    assert instructions.estimated_ir(scan, 2 * ROWS) == 2 * instructions.estimated_ir(scan, ROWS)


@pytest.mark.parametrize("ratio, spreads, verdict", [
    (1.034, [0.002, 0.005], Verdict.REGRESSION),
    (1.019, [0.002, 0.005], Verdict.NO_CHANGE),
    (0.97, [None, None], Verdict.IMPROVEMENT),  # one pair each: taken as counted
    (1.05, [1.5, 0.01], Verdict.TOO_NOISY),  # one count's pairs differ by more than half the minimum effect
    (None, [0.01, 0.01], Verdict.NOT_MEASURED),
])
def test_an_instruction_ratio_reads_as_throughput(ratio, spreads, verdict):
    assert instruction_verdict(ratio, spreads, Judging(min_effect=0.02)) is verdict


def test_the_verdict_follows_the_minimum_effect():
    assert instruction_verdict(1.03, [0.0, 0.0], Judging(min_effect=0.05)) is Verdict.NO_CHANGE
    assert instruction_verdict(1.06, [0.0, 0.0], Judging(min_effect=0.05)) is Verdict.REGRESSION


def test_each_lane_pins_its_server_to_its_own_cpu():
    first = instructions.valgrind_command("valgrind", "/tmp/out", "postgres", cpu=0)
    second = instructions.valgrind_command("valgrind", "/tmp/out", "postgres", cpu=1)
    if first[0] == "taskset":
        assert first[:3] == ["taskset", "-c", "0"] and second[:3] == ["taskset", "-c", "1"]


def test_lanes_share_one_console_and_the_eta_stays_in_wall_time():
    stream = io.StringIO()
    console = ConsoleProgress(stream)
    lanes = LanesProgress(console, 2)
    lanes.campaign_start(100.0, 4)
    lanes.step_start("pg17", "point-query", 50.0)  # 25 s of the wall-clock estimate each
    lanes.step_start("pg18", "point-query", 50.0)
    lanes.step_end("pg18", "point-query", "ok", "")
    lanes.step_end("pg17", "point-query", "ok", "")
    assert console.done_s == pytest.approx(50.0)
    assert "[2/4] pg17: point-query: ok" in stream.getvalue()


def test_lanes_calls_from_many_threads_all_arrive_whole():
    stream = io.StringIO()
    lanes = LanesProgress(ConsoleProgress(stream), 4)
    lanes.campaign_start(100.0, 400)

    def lane(name: str) -> None:
        for i in range(100):
            lanes.step_start(name, f"t{i}", 1.0)
            lanes.step_end(name, f"t{i}", "ok", "")

    threads = [threading.Thread(target=lane, args=(f"target{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = stream.getvalue().splitlines()
    assert len([line for line in lines if ": ok" in line]) == 400
    assert all(line.startswith("[") or line.startswith("campaign") for line in lines)


def test_a_cancelled_campaign_ends_every_driver_run_in_other_threads_as_interrupted(tmp_path):
    # a stand-in for the driver binary that waits until it gets SIGINT, as the driver does
    fake = tmp_path / "fake-driver"
    fake.write_text("#!/bin/sh\ntrap 'exit 130' INT\nwhile :; do sleep 0.05; done\n")
    fake.chmod(0o755)
    results = []
    process.CANCELLED.clear()
    try:
        worker = threading.Thread(target=lambda: results.append(process.run_driver("run", {}, 30, driver=fake)))
        worker.start()
        for _ in range(100):
            if process._live:
                break
            threading.Event().wait(0.05)
        process.cancel_all()
        worker.join(20)
        assert not worker.is_alive() and results[0].interrupted
        with pytest.raises(KeyboardInterrupt):  # and a run asked for afterwards does not start
            process.run_driver("run", {}, 30, driver=fake)
    finally:
        process.CANCELLED.clear()


def _plan(tmp_path, tests: list[str]):
    from dbdrift.workloads.registry import parse_campaign
    from dbdrift.workloads.sysbench.expand import expand
    data = {"name": "c", "rows": ROWS, "tests": tests,
            "targets": [{"name": "a", "engine": "postgres", "version": "17.10", "base": True},
                        {"name": "b", "engine": "postgres", "version": "18.4"}]}
    return expand(parse_campaign(data, "c.toml", tmp_path, "c"))[0]


def test_reads_count_first_on_the_shared_database_the_one_pair_tests_last_then_the_writes(tmp_path):
    plan = _plan(tmp_path, ["insert", "scan", "point-query", "update-index", "read-only_range=10000", "hot-points"])
    order = [t.name for t in instructions.tests_in_run_order(plan)]
    # in each part the plan's order (the catalog's), which the sort keeps
    assert order == ["point-query", "hot-points", "scan", "read-only_range=10000", "update-index", "insert"]


def test_a_test_counted_by_one_pair_needs_no_prime_and_the_others_get_six_events():
    scan, wide, point = (select_tests([n])[0] for n in ("scan", "read-only_range=10000", "point-query"))
    assert instructions.prime_events(scan, ROWS) == instructions.prime_events(wide, ROWS) == 0
    assert instructions.prime_events(point, ROWS) == instructions.MIN_N1


def test_the_estimate_counts_a_fresh_copy_for_each_run_of_a_write_and_none_for_a_read():
    point, update = select_tests(["point-query"])[0], select_tests(["update-index"])[0]
    same_size = instructions.test_estimate_s(point, "postgres", ROWS, primed=True)
    assert instructions.test_estimate_s(update, "postgres", ROWS) - same_size == pytest.approx(
        4 * (instructions.ESTIMATE_COPY_S + ROWS * instructions.ESTIMATE_PREWARM_S_PER_ROW))


def test_a_campaign_counting_instructions_without_valgrind_is_refused_before_any_build_is_looked_for(
        lab, store, monkeypatch, tmp_path):
    spec = lab.campaign(count_instructions=True)
    looked: list[str] = []
    monkeypatch.setattr(engines, "resolve_install", lambda target, *a, **k: looked.append(target.name))
    monkeypatch.setenv("PATH", str(tmp_path))  # no valgrind on it
    with pytest.raises(UserError, match="count_instructions needs valgrind"):
        Runner(spec, store, workload=workload_of(spec)).run()
    assert looked == [] and lab.events == [] and store.latest_campaign_id(spec.name) is None
