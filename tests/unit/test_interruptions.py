"""What an interrupted campaign stores and says (runner/campaign.py, session.py over the lab of
tests/fakes.py: fake servers, the real driver on its null backend): a SIGTERM is named as what
stopped it, and interrupted runs are counted as interrupted, not as failed."""
from __future__ import annotations

import os
import signal

import pytest

from dbdrift import errors
from dbdrift.driver import process
from dbdrift.runner.campaign import Runner
from dbdrift.server.base import sigterm_as_ctrl_c
from dbdrift.store.store import Store
from dbdrift.workloads.registry import workload_of
from tests.fakes import Lab, RecordingProgress, store_rows

PQ = "point-query"


@pytest.fixture
def lab(tmp_path, monkeypatch) -> Lab:
    monkeypatch.setattr(errors, "_stopped_by", ["Ctrl-C"], raising=False)  # what a signal records is this test's alone
    return Lab(tmp_path).install(monkeypatch)




@pytest.fixture
def sigterm_taking_ctrl_c_path():
    """SIGTERM handled as the CLI handles it (server/base.py sigterm_as_ctrl_c), for this test only."""
    previous = signal.getsignal(signal.SIGTERM)
    sigterm_as_ctrl_c()
    yield
    signal.signal(signal.SIGTERM, previous)


def signal_at_first_interval(monkeypatch, signum: int) -> None:
    """`kill -signum` to this process once a timed run's first interval is in."""
    lab_run_driver = process.run_driver

    def run_driver(mode, spec, timeout_s, on_line=None, **kwargs):
        sent = []

        def line(obj):
            if on_line is not None:
                on_line(obj)
            if obj.get("type") == "interval" and not sent:
                sent.append(True)
                os.kill(os.getpid(), signum)

        return lab_run_driver(mode, spec, timeout_s, line if mode == "run" else on_line, **kwargs)

    monkeypatch.setattr(process, "run_driver", run_driver)


def run(lab: Lab, store: Store, **keys):
    spec = lab.campaign(**keys)
    progress = RecordingProgress()
    runner = Runner(spec, store, progress=progress, workload=workload_of(spec))
    return runner, progress


@pytest.mark.fault("kill")
def test_a_run_cut_short_by_sigterm_is_stored_as_interrupted_by_sigterm_not_by_ctrl_c(
        lab, store, monkeypatch, sigterm_taking_ctrl_c_path):
    runner, progress = run(lab, store, order="sequential", tests=[PQ], read_s=0.5, interval_s=0.05)
    signal_at_first_interval(monkeypatch, signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        runner.run()
    rows = store_rows(store, store.latest_campaign_id("unit"))
    assert [(r["target"], r["status"], r["error"]) for r in rows] == [("A", "interrupted", "interrupted by SIGTERM")]
    assert progress.steps[-1] == ("A", f"{PQ} x1", "interrupted")


@pytest.mark.fault("kill")
def test_runs_cut_short_by_ctrl_c_are_counted_as_interrupted_not_failed(lab, store):
    runner, _ = run(lab, store, repeats=2, tests=[PQ], read_s=0.2, interval_s=0.05)
    lab.interrupt_at = 2  # point-query #1 done in turns, Ctrl-C during #2: one run of each target cut short
    with pytest.raises(KeyboardInterrupt):
        runner.run()
    outcome = runner.outcome
    assert (outcome.runs_ok, outcome.runs_failed, outcome.runs_interrupted) == (2, 0, 2)
    assert outcome.summary() == "2 runs (0 failed, 2 interrupted)"


@pytest.mark.fault("kill")
def test_the_store_counts_interrupted_runs_apart_from_failed_ones(lab, store):
    from dbdrift.app.campaigns import rows

    runner, _ = run(lab, store, order="sequential", tests=[PQ], read_s=0.2, interval_s=0.05)
    lab.interrupt_at = 2  # A's run done, Ctrl-C during B's
    with pytest.raises(KeyboardInterrupt):
        runner.run()
    listed = rows(store)
    assert [(c["runs_ok"], c["runs_failed"], c["runs_interrupted"]) for c in listed] == [(1, 0, 1)]
