"""Flamegraphs of the server's backends during a real run (perf record, cpu-clock)."""
from __future__ import annotations

import json
import sqlite3
import xml.etree.ElementTree as ET

import pytest

from tests.helpers import dbdrift, shared_work_dir
from tests.server.test_campaign_run import campaign

pytestmark = pytest.mark.server


def test_a_flamegraph_run_stores_backend_stacks_and_the_report_draws_them(tmp_path):
    store = tmp_path / "s.db"
    work = shared_work_dir("flame")
    result = dbdrift("run", campaign(tmp_path, "flame", tests=["point-query"], read_s=3), "--store", store,
                     "--flamegraph", "--no-report", work_dir=work)
    assert result.returncode == 0, result.stderr[-3000:]
    assert list(work.iterdir()) == []  # data directories removed once the servers stopped
    assert sorted(p.name for p in (tmp_path / "dbdrift-logs").iterdir()) == ["s-c1-flame-pg17-server.log",
                                                                            "s-c1-flame-pg18-server.log"]
    db = sqlite3.connect(store)
    folded = {name: json.loads(f) for name, f in db.execute(
        "SELECT t.name, r.folded_json FROM runs r JOIN targets t ON t.id = r.target_id")}
    db.close()
    assert set(folded) == {"pg17", "pg18"}
    for stacks in folded.values():
        assert sum(stacks.values()) > 50  # 3 s at up to 333 Hz on a busy backend
        assert all(stack.startswith("postgres;") for stack in stacks)
    out = tmp_path / "flames"
    report = dbdrift("report", "--store", store, "--flamegraphs", out)
    assert report.returncode == 0, report.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == ["point-query.x1.pg17.folded", "point-query.x1.pg17.svg", "point-query.x1.pg18-vs-pg17.diff.svg",
                     "point-query.x1.pg18.folded", "point-query.x1.pg18.svg"]
    ET.parse(out / "point-query.x1.pg18-vs-pg17.diff.svg")  # well-formed
