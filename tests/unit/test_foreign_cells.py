"""A workload's judged cell whose measurements saw foreign load carries `!` and the figure, in
every workload's report and every format; a quiet campaign's carry none."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import replace

import pytest

from dbdrift.workloads.htap.report import render as render_htap
from dbdrift.workloads.htap.results import htap_report
from dbdrift.workloads.ibench.report import render as render_ibench
from dbdrift.workloads.ibench.results import ibench_report
from dbdrift.workloads.tpcc.report import render as render_tpcc
from dbdrift.workloads.tpcc.results import tpcc_report
from dbdrift.workloads.vector.report import render as render_vector
from dbdrift.workloads.vector.results import vector_report
from tests.unit import test_htap, test_vector_report
from tests.unit.test_ibench_report import step
from tests.unit.test_tpcc import WINDOW
from tests.unit.test_tpcc import run as tpcc_run

FORMATS = ("text", "markdown", "csv", "json", "html")
BUSY = {**WINDOW, "foreign_cpu_pct": 38.0}  # another process used 38% of the host's CPU time
FIGURE = "new: foreign CPU 38% ("  # then the measurement: `repeat 2`, `ef_search=20, repeat 2`, ...


def flagged(text: str | None) -> bool:
    return bool(text) and text.startswith(FIGURE) and "repeat 2)" in text and "repeat 1)" not in text


def _reports(busy: bool):
    """Each workload's report of old and new, three repeats; with `busy` new's second repeat ran
    beside foreign load."""
    def hw(target: str, r: int) -> dict:
        return BUSY if busy and target == "new" and r == 1 else WINDOW

    def vector_run(t: str, r: int, speed: float):
        run = test_vector_report.run(t, r, speed)
        for p in run.record["families"][0]["points"]:
            p["hardware"] = {**p["hardware"], "foreign_cpu_pct": hw(t, r).get("foreign_cpu_pct")}
        return run

    def htap_run(t: str, r: int, speed: float):
        run = test_htap.run(t, r, speed)
        for w in run.record["windows"].values():
            w["hardware"] = hw(t, r)
        return run
    targets = ("old", "new")
    return {
        "tpcc": (tpcc_report([tpcc_run(t, (1000.0 if t == "old" else 1100.0) * (1 + 0.01 * r), repeat=r,
                                       hardware=hw(t, r)) for t in targets for r in range(3)], list(targets)),
                 render_tpcc),
        "insert-benchmark": (ibench_report([replace(step(t, "l.i0", (10_000.0 if t == "old" else 12_000.0)
                                                         * (1 + 0.01 * r)), repeat=r, hardware=hw(t, r))
                                            for t in targets for r in range(3)], list(targets)), render_ibench),
        "vector": (vector_report([vector_run(t, r, 1.0 if t == "old" else 0.8) for t in targets for r in range(3)],
                                 list(targets)), render_vector),
        "htap": (htap_report([htap_run(t, r, 1.0 if t == "old" else 0.8) for t in targets for r in range(3)],
                             list(targets), queries=("Q1", "Q6", "Q9")), render_htap),
    }


@pytest.mark.parametrize("workload", ["tpcc", "insert-benchmark", "vector", "htap"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_cell_whose_repeat_saw_foreign_load_carries_the_mark_and_the_figure(workload, fmt):
    data, render = _reports(busy=True)[workload]
    judged = [f for f in data.findings if f.target == "new" and f.ratio is not None]
    assert judged and all(flagged(f.warned) for f in judged)
    out = render(data, fmt)
    if fmt == "json":
        found = [v for v in json.loads(out)["verdicts"] if v["target"] == "new" and v["ratio"] is not None]
        assert found and all(flagged(v["foreign_load"]) for v in found)
    elif fmt == "csv":
        rows = [r for r in csv.DictReader(io.StringIO(out)) if r["target"] == "new" and r["verdict"]]
        assert rows and all(flagged(r["foreign_load"]) for r in rows)
    elif fmt == "html":
        assert f'<span class="warn" title="{FIGURE}' in out
    else:
        assert f"; ! {FIGURE}" in out  # the verdict line
        marked = [line for line in out.splitlines() if "[" in line and "!" in line.split("]")[-1]]
        assert marked, "a table cell carries the !"


@pytest.mark.parametrize("workload", ["tpcc", "insert-benchmark", "vector", "htap"])
def test_a_quiet_campaigns_cells_carry_no_foreign_mark(workload):
    data, render = _reports(busy=False)[workload]
    assert not any(f.warned for f in data.findings)
    assert "foreign" not in json.dumps([v for v in json.loads(render(data, "json"))["verdicts"]
                                        if v.get("foreign_load")])
