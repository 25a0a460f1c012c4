"""Progress and its ETA (cli/progress.py over runner/progress.py): the estimator on literal
sequences of step durations with a clock of the test's own, the bar and log lines inside a step,
and what each workload's driver lines say of a step's progress. The runner's own steps are
checked over the lab of tests/fakes.py (fake servers, the real driver on its null backend)."""
from __future__ import annotations

import io

import pytest

from dbdrift.cli import progress as progress_mod
from dbdrift.cli.progress import ConsoleProgress
from dbdrift.runner.campaign import Runner
from dbdrift.workloads.registry import workload_of
from tests.fakes import RecordingProgress


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(progress_mod.time, "monotonic", c)
    return c


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# (label, its share of the estimate, how long it took): a target's start, load and settle, then
# repeats of a restart and a 60 s run with 5 s of warm-up, each taking a second more than its
# share (connecting, preparing, storing), the restarts well under theirs.
SETUP = [("start", 2.0, 0.4), ("load", 10.0, 12.0), ("settle work", 1.0, 0.3), ("settle quiet", 60.0, 60.0)]
RUNS = [step for _ in range(40) for step in (("restart", 3.0, 0.4), ("run", 65.5, 66.5))]


def walk(p: ConsoleProgress, clock: Clock, steps) -> list[float]:
    """Each step in turn; the ETA in seconds after each."""
    etas = []
    for n, (label, expected, took) in enumerate(steps):
        p.step_start("pg", f"{label} {n}", expected)
        clock.now += took
        p.step_end("pg", f"{label} {n}", "ok", "")
        etas.append(p.eta_s())
    return etas


@pytest.mark.fault("progress")
def test_a_sub_second_step_moves_the_eta_by_seconds_not_by_a_share_of_the_campaign(clock):
    """A restart 2.6 s under its guess says the 40 restarts will be quicker, not the 60 s runs:
    the ETA of the 47-minute campaign drops by a few seconds at each, as it learns (it dropped
    ~28 s at each of the first ones when every step was scaled by the pace of those done)."""
    steps = SETUP + RUNS
    p = ConsoleProgress(io.StringIO())
    p.campaign_start(sum(e for _, e, _ in steps), len(steps))
    before = p.eta_s()
    drops = []
    for (label, expected, took), after in zip(steps, walk(p, clock, steps)):
        if took < 1.0:
            drops.append(before - after)
        before = after
    assert max(drops) < 10.0 and sum(drops[-10:]) < 10.0, drops


@pytest.mark.fault("progress")
def test_the_eta_is_0_after_the_last_step_and_near_the_time_left_before(clock):
    steps = SETUP + RUNS
    p = ConsoleProgress(io.StringIO())
    p.campaign_start(sum(e for _, e, _ in steps), len(steps))
    etas = walk(p, clock, steps)
    assert etas[-1] == 0.0
    left = sum(took for _, _, took in steps[-20:])  # the last 10 restarts and runs, as they went
    assert etas[-21] == pytest.approx(left, rel=0.02)


@pytest.mark.fault("progress")
def test_a_long_run_moves_the_bar_and_the_eta_on_a_terminal_while_it_runs(clock):
    term = Terminal()
    p = ConsoleProgress(term)
    p.campaign_start(600.0, 2)
    p.step_start("pg17", "point-query x1", 300.0)
    before = p.eta_s()
    clock.now += 150.0
    p.step_progress("pg17", "point-query x1", 0.5, "19,876 QPS")
    assert p.eta_s() == pytest.approx(before - 150.0)
    drawn = term.getvalue().rsplit("\r\x1b[K", 1)[-1]
    assert drawn.startswith("[######------------------]  25% ETA 7m30s")
    assert drawn.endswith("pg17: point-query x1: 50% (2m30s), 19,876 QPS")


@pytest.mark.fault("progress")
def test_a_long_run_writes_a_line_every_ten_seconds_to_a_log(clock):
    log = io.StringIO()
    p = ConsoleProgress(log)
    p.campaign_start(300.0, 1)
    p.step_start("pg17", "point-query x1", 300.0)
    for second in range(1, 31):
        clock.now += 1.0
        p.step_progress("pg17", "point-query x1", second / 300, f"{19000 + second} QPS")
    lines = [line for line in log.getvalue().splitlines() if "%" in line]
    assert lines == ["pg17: point-query x1: 3% (10s), 19010 QPS (ETA 4m50s)",
                     "pg17: point-query x1: 7% (20s), 19020 QPS (ETA 4m40s)",
                     "pg17: point-query x1: 10% (30s), 19030 QPS (ETA 4m30s)"]


def test_quiet_progress_writes_nothing_inside_a_step(clock):
    log = io.StringIO()
    p = ConsoleProgress(log, verbosity=-1)
    p.campaign_start(300.0, 1)
    p.step_start("pg17", "point-query x1", 300.0)
    clock.now += 20.0
    p.step_progress("pg17", "point-query x1", 0.1, "19,000 QPS")
    assert log.getvalue() == ""


# -- the runner's steps over the lab ----------------------------------------------------------



@pytest.mark.fault("progress")
@pytest.mark.parametrize("keys", [
    {"order": "turns", "restart": "repeat"}, {"order": "sequential", "restart": "repeat"},
    {"order": "turns", "restart": "reload"}, {"order": "sequential", "restart": "reload", "warm_runs": True}],
    ids=["turns", "sequential", "turns-reload", "sequential-reload"])
def test_every_second_of_the_estimate_is_done_when_the_campaign_is(lab, store, keys):
    log = io.StringIO()
    progress = ConsoleProgress(log)
    spec = lab.campaign(repeats=2, settle_s=0.2, **keys)
    Runner(spec, store, progress=progress, workload=workload_of(spec)).run()
    assert progress.done_s == pytest.approx(progress.total_s)
    assert progress.steps_done == progress.steps_total
    assert [line for line in log.getvalue().splitlines() if line.startswith("[")][-1].endswith("(ETA 0s)")


@pytest.mark.fault("progress")
@pytest.mark.parametrize("order", ["turns", "sequential"])
def test_a_sysbench_run_reports_its_progress_and_rate_from_the_drivers_intervals(lab, store, order):
    progress = RecordingProgress()
    spec = lab.campaign(order=order, tests=["point-query"], read_s=0.6, interval_s=0.1)
    Runner(spec, store, progress=progress, workload=workload_of(spec)).run()
    for target in ("A", "B"):
        seen = [(f, rate) for t, label, f, rate in progress.progress if t == target and label == "point-query x1"]
        assert len(seen) >= 3, progress.progress
        fractions = [f for f, _ in seen]
        assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0, abs=0.2)
        rates = [rate for f, rate in seen if f > 0]  # the warm-up's end (none here) has no rate of its own
        assert rates and all(rate.endswith(" QPS") and int(rate[:-4].replace(",", "")) > 0 for rate in rates)


@pytest.mark.fault("progress")
def test_resume_counts_only_the_runs_it_still_has_to_do_in_its_estimate(lab, store):
    spec = lab.campaign(order="sequential", tests=["point-query"], repeats=2, read_s=0.2, interval_s=0.05)
    lab.interrupt_at = 4  # A's two runs and B's first are stored, Ctrl-C during B's second
    with pytest.raises(KeyboardInterrupt):
        Runner(spec, store, progress=RecordingProgress(), workload=workload_of(spec)).run()
    progress = ConsoleProgress(io.StringIO())
    Runner(spec, store, resume=True, progress=progress, workload=workload_of(spec)).run()
    # B's start, load, settle work and wait, the restart before #2 and its run: nothing of A's
    assert progress.steps_total == progress.steps_done == 6
    assert progress.done_s == pytest.approx(progress.total_s)


# -- what each workload's driver lines say of its step (docs/protocol.md's own examples) ---------

@pytest.mark.fault("progress")
def test_an_insert_benchmark_step_reports_its_rows_done_and_every_clients_rates():
    from dbdrift.workloads.ibench.catalog import IBenchStep
    from dbdrift.workloads.ibench.run import StepPace

    step = IBenchStep("qr100", rows_per_client=20000, rows_per_statement=1, inserts_per_second=100, query="range")
    pace = StepPace(step, clients=2, expected_s=200.0)
    assert pace.read({"type": "start", "step": "qr100", "clients": 2}) is None
    line = {"type": "interval", "i_sec": 1.0, "t_sec": 1.0, "i_ips": 100.0, "i_qps": 812.0, "t_ins": 100}
    pace.read({**line, "client": 1})
    assert pace.read({**line, "client": 2}) == (200 / 40000, "200 inserts/s, 1,624 queries/s")


@pytest.mark.fault("progress")
def test_an_index_build_that_prints_no_rows_reports_its_time_against_its_estimate():
    from dbdrift.workloads.ibench.catalog import IBenchStep
    from dbdrift.workloads.ibench.run import StepPace

    step = IBenchStep("l.x", rows_per_client=0, rows_per_statement=1, create_indexes=True)
    line = {"type": "interval", "client": 1, "t_sec": 5.0, "i_ips": 0.0, "t_ins": 0}
    assert StepPace(step, clients=1, expected_s=20.0).read(line) == (0.25, "0 inserts/s")


@pytest.mark.fault("progress")
@pytest.mark.parametrize("clients, streams, said", [
    (2, 0, "35,820 NOPM, ramp-up"), (0, 1, "11 queries in 1s, ramp-up"), (1, 1, "35,820 NOPM, 11 queries in 1s, ramp-up")],
    ids=["tproc-c", "htap-analytics", "htap-both"])
def test_a_tpcc_or_htap_window_reports_its_time_and_nopm_or_queries(clients, streams, said):
    from dbdrift.workloads.tpcc.run import WindowPace

    pace = WindowPace(RecordingSession(), "TPROC-C", 10.0, clients=clients, streams=streams)
    line = {"type": "interval", "phase": "rampup", "t_sec": 1.0, "i_sec": 1.0, "nopm": 35820.0, "tpm": 80040.0,
            "queries": 11}
    pace.read(line)
    assert pace.session.progress.progress == [("pg", "TPROC-C", 0.1, said)]


@pytest.mark.fault("progress")
def test_a_vector_search_reports_its_time_past_the_warm_up_and_its_qps():
    from dbdrift.workloads.vector.run import search_pace

    assert search_pace({"type": "phase", "phase": "measure", "t": 2.0}, 2.0, 10.0) is None
    assert search_pace({"type": "interval", "t": 1.0, "interval_s": 1.0, "queries": 812, "qps": 812.0},
                       2.0, 10.0) == (0.25, "812 QPS")


class RecordingSession:
    """What WindowPace reads of a TargetSession: its name and progress."""

    def __init__(self) -> None:
        self.name, self.progress = "pg", RecordingProgress()


@pytest.mark.fault("progress")
@pytest.mark.parametrize("order, said", [("sequential", "3 of 4 timed runs stored, 1 to run"),
                                         ("turns", "2 of 4 timed runs stored, 2 to run")])
def test_resume_check_plans_the_time_of_what_resume_runs_not_of_the_whole_campaign(lab, store, order, said):
    from dbdrift.app import check

    # sequential: a test of 2 repeats, B's second cut short; in turns (a test a target lacks runs again for
    # every target): update-index then point-query, the second cut short
    tests, repeats = (["point-query"], 2) if order == "sequential" else (["update-index", "point-query"], 1)
    spec = lab.campaign(order=order, tests=tests, repeats=repeats, read_s=0.2, write_s=0.2, interval_s=0.05)
    lab.interrupt_at = 4 if order == "sequential" else 2
    with pytest.raises(KeyboardInterrupt):
        Runner(spec, store, progress=RecordingProgress(), workload=workload_of(spec)).run()
    whole = workload_of(spec).estimate(spec)[0]
    left = check.resumed(spec, store.path)
    assert said in left.line and left.expected_s < whole
    progress = ConsoleProgress(io.StringIO())
    Runner(spec, store, resume=True, progress=progress, workload=workload_of(spec)).run()
    assert left.expected_s == pytest.approx(progress.total_s)  # what --check says is what the run expects


def test_targets_taking_turns_share_the_bar_each_with_its_rate(clock):
    term = Terminal()
    p = ConsoleProgress(term)
    p.campaign_start(600.0, 2)
    for target in ("pg17", "pg18"):
        p.step_start(target, "point-query x1", 300.0, 600.0)
    clock.now += 60.0
    p.step_progress("pg17", "point-query x1", 0.1, "19,876 QPS")
    p.step_progress("pg18", "point-query x1", 0.1, "18,002 QPS")
    clock.now += 1.0
    p.step_progress("pg17", "point-query x1", 0.11, "19,870 QPS")
    drawn = term.getvalue().rsplit("\r\x1b[K", 1)[-1]
    assert drawn.endswith("point-query x1: 11% (1m01s), pg17 19,870 QPS; pg18 18,002 QPS")
