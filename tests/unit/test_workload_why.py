"""Each Insert Benchmark and TPROC-C regression or improvement says what moved with it, from the
figures the campaign stored, as a sysbench cell does."""
import pytest

from dbdrift.analysis.noise import Verdict
from dbdrift.model import IBENCH_STEPS
from dbdrift.results.findings import Finding
from dbdrift.results.workload import why_line
from dbdrift.workloads.ibench.report import render_csv, render_text
from dbdrift.workloads.ibench.results import ibench_report
from dbdrift.workloads.tpcc.report import render_json
from dbdrift.workloads.tpcc.results import tpcc_report
from tests.unit.test_ibench_report import step
from tests.unit.test_tpcc import run


def repeated(target: str, rate: float, repeats: int = 3) -> list:
    """The four load steps of `target` at `rate` (±1% per repeat), `repeats` times."""
    out = []
    for r in range(repeats):
        for name in IBENCH_STEPS[:4]:
            result = step(target, name, rate * (1 + 0.01 * (r % 2)))
            out.append(type(result)(**{**result.__dict__, "repeat": r}))
    return out


def test_a_line_gives_the_ratio_its_interval_and_how_each_figure_moved():
    f = Finding("timed", "l.i1", None, "pg18", "pg17", Verdict.REGRESSION, 0.8, 0.75, 0.85)
    assert why_line(f, [("host CPU µs/op", 125.0, 100.0), ("cs/op", 2.0, 2.0)]) == \
        "l.i1 pg18 vs pg17: 0.80 [0.75, 0.85] -: host CPU µs/op +25.0%, cs/op +0.0%"


def test_a_figure_one_side_lacks_or_with_a_zero_reference_is_left_out():
    f = Finding("timed", "NOPM", None, "b", "a", Verdict.IMPROVEMENT, 1.2)
    assert why_line(f, [("cs/new order", None, 3.0), ("KB read/op", 1.0, 0.0)]) == \
        "NOPM b vs a: 1.20 +: nothing else stored moved with it"


def test_an_insert_benchmark_regression_names_the_step_metrics_that_moved():
    data = ibench_report(repeated("pg17", 10_000.0) + repeated("pg18", 5_000.0), ["pg17", "pg18"], ncpu=4)
    # the same host CPU over half the inserts: twice the CPU per insert
    assert data.why("pg18", "l.i1") == ("l.i1 pg18 vs pg17: 0.50 [0.50, 0.50] -: host CPU µs/op +100.0%, "
                                        "cs/op +100.0%, KB written/insert +100.0%")
    assert "why: what moved with each regression (-) and improvement (+)" in render_text(data)
    rows = render_csv(data).splitlines()
    assert any(r.startswith("pg18,l.i1,") and "host CPU µs/op +100.0%" in r for r in rows)


def test_a_step_without_a_verdict_of_change_has_no_why():
    data = ibench_report(repeated("pg17", 10_000.0) + repeated("pg18", 10_000.0), ["pg17", "pg18"], ncpu=4)
    assert data.explanations == {} and "why:" not in render_text(data)


@pytest.mark.parametrize("factor, mark", [(1.5, "+"), (0.5, "-")])
def test_a_tpcc_nopm_verdict_names_the_hardware_per_new_order_that_moved(factor, mark):
    runs = [run("a", 1000.0 * (1 + 0.01 * r), repeat=r) for r in range(3)]
    runs += [run("b", 1000.0 * factor * (1 + 0.01 * r), repeat=r) for r in range(3)]
    data = tpcc_report(runs, ["a", "b"], ncpu=2)
    line = data.why("b", "NOPM")
    assert line.startswith(f"NOPM b vs a: {factor:.2f} [") and f"] {mark}: server CPU µs/new order " in line
    assert '"explanation": ' + f'"{line}"' in render_json(data)
