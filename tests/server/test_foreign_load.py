"""Foreign load on a real PostgreSQL run (docs/hardware.md "Foreign load"): a CPU hog the test
starts beside the run marks it, and the stored window covers the seconds the driver measured.

The quiet case is asserted on literal counters (tests/unit/test_foreign.py): CI runs two test
workers at once, so on a real run the other worker is foreign load too."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from tests.helpers import dbdrift, shared_work_dir

pytestmark = pytest.mark.server


def hog(cpus: set[int]) -> subprocess.Popen:
    """A busy loop pinned to `cpus`: a neighbour that wants a whole CPU."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"],
                            preexec_fn=lambda: os.sched_setaffinity(0, cpus))


@pytest.fixture(scope="module")
def hogged(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("foreign")
    path = tmp / "foreign.toml"
    path.write_text("\n".join([
        'name = "foreign"', "tables = 1", "rows = 20000", "threads = [1]", "warmup_s = 0.5", "read_s = 2.5",
        "settle_s = 0", "warm_runs = false", 'tests = ["point-query"]',
        "[[targets]]", 'name = "pg17"', 'version = "17.10"', "base = true"]) + "\n")
    store = tmp / "store.db"
    neighbour = hog({min(os.sched_getaffinity(0))})  # the driver's CPU under cpus = "auto"
    try:
        result = dbdrift("run", path, "--store", store, work_dir=shared_work_dir("foreign"))
    finally:
        neighbour.kill()
        neighbour.wait()
    assert result.returncode == 0, result.stderr[-3000:]
    db = sqlite3.connect(store)
    db.row_factory = sqlite3.Row
    run = dict(db.execute("SELECT * FROM runs WHERE test = 'point-query'").fetchone())
    intervals = [dict(r) for r in db.execute("SELECT * FROM intervals WHERE run_id = ?", (run["id"],))]
    db.close()
    return store, run, intervals


def test_a_cpu_hog_beside_a_run_gives_it_a_foreign_load_warning_with_its_share(hogged):
    _, run, _ = hogged
    hw = json.loads(run["hardware_json"])
    warnings = {w["kind"]: w["message"] for w in json.loads(run["warnings_json"])}
    assert hw["foreign_cpu_pct"] > 10.0, hw
    assert f"{hw['foreign_cpu_pct']:.0f}% of the host's CPU time" in warnings["foreign_cpu"]


def test_the_report_marks_the_cell_the_hog_touched_with_bang_and_the_figure(hogged):
    store, _, _ = hogged
    text = dbdrift("report", "--store", store)
    assert text.returncode == 0, text.stderr
    assert "!" in text.stdout and "foreign load: other processes used" in text.stdout


def test_the_stored_window_spans_the_seconds_the_driver_measured(hogged):
    """Its edges come from the driver's clock stamps, not from when dbdrift read the lines: on
    a busy host those were read up to tenths of a second late (part 7 of issue 64)."""
    _, run, intervals = hogged
    hw = json.loads(run["hardware_json"])
    assert abs(hw["elapsed_s"] - run["measured_s"]) < 0.01, (hw["elapsed_s"], run["measured_s"])
    assert intervals and all(iv["foreign_cpu_pct"] is not None for iv in intervals)
