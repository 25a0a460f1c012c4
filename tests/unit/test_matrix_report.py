"""A configuration matrix's reports: the absolute table and the variant, version and engine views."""
import csv
import io
import json
from pathlib import Path

import pytest

from dbdrift.cli import main as cli_main
from dbdrift.errors import UserError
from dbdrift.workloads.registry import parse_campaign
from dbdrift.workloads.sysbench.report.matrix import render_matrix
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.store.store import RunRecord, Store
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS

SYNC = {"0": {"postgres": {"synchronous_commit": "off"}, "mysql": {}},
        "1": {"postgres": {"synchronous_commit": "on"}, "mysql": {"innodb_flush_log_at_trx_commit": 1}}}
FPI = {"0": {"postgres": {"full_page_writes": "off"}}, "1": {"postgres": {"full_page_writes": "on"}}}
DW = {"0": {"mysql": {"innodb_doublewrite": 0}}, "1": {"mysql": {"innodb_doublewrite": 1}}}
TESTS = {"insert": "writes", "update-index": "writes", "update-nonindex": "writes"}


def qps(target: str, test: str) -> float:
    """Made-up but shaped like the posts: fsync costs 10x, fpi 10%, dw 5%, pg18 +5%, MySQL half."""
    value = {"insert": 10000.0, "update-index": 8000.0, "update-nonindex": 9000.0}[test]
    value /= 10 if "sync1" in target else 1
    value *= 0.9 if "fpi1" in target else 1
    value *= 0.95 if "dw1" in target else 1
    value *= 1.05 if target.startswith("pg18") else 1
    return value * (0.5 if target.startswith("my") else 1)


@pytest.fixture
def store(tmp_path):
    store = make_matrix_store(tmp_path / "mx.db")
    yield tmp_path / "mx.db", store
    store.close()


def make_matrix_store(path: Path) -> Store:
    """The matrix campaign `mx`: pg17, pg18 and MySQL 8 over the sync, fpi and dw axes, stored."""
    spec = parse_campaign({"name": "mx", "tests": list(TESTS), "axes": {"sync": SYNC, "fpi": FPI, "dw": DW},
                           "targets": [{"name": "pg17", "version": "17.10"}, {"name": "pg18", "version": "18.4"},
                                       {"name": "my8", "engine": "mysql", "version": "8.0.31"}]},
                          source="mx.toml", base_dir=Path("."), default_name="mx")
    store = Store(path)
    cid = store.add_campaign("mx", spec.to_dict(), {"cpus": 2}, "0.1.0")
    for pos, target in enumerate(spec.targets):
        tid = store.ensure_target(cid, target.name, target.engine, pos, target.base, {"name": target.name})
        store.set_target_facts(tid, server={"version": target.version}, install=None)
        for test, group in TESTS.items():
            value = qps(target.name, test)
            intervals = [{"index": i, "round": 0, "start_s": float(i), "end_s": i + 1.0, "events": value * f,
                          "statements": value * f, "rows": 0, "errors": {}, "latency_us": {}, "steal_pct": 0.0}
                         for i, f in enumerate((0.99, 1.0, 1.01, 1.0, 0.995, 1.005))]
            store.add_run(tid, RunRecord(test=test, test_group=group, threads=1, repeat=0, status="ok", warmup_s=1,
                                         duration_s=6, metric="qps", driver_spec={}, value=value, intervals=intervals))
            store.add_plan(tid, test, 0, "UPDATE sbtest1 SET k=k+1 WHERE id=5", "{}",
                           "Index Scan" if target.engine == "postgres" else "range PRIMARY")
    return store


def test_the_variant_view_divides_every_variant_by_its_targets_base_variant(store):
    path, s = store
    data = build_report(s, MICROBENCHMARKS, None, None, False, against="variant")
    refs = data.comparison.references
    assert refs["pg17-sync1_fpi1"] == "pg17-sync0_fpi0" and refs["pg18-sync0_fpi1"] == "pg18-sync0_fpi0"
    assert refs["my8-sync1_dw1"] == "my8-sync0_dw0"
    assert "pg17-sync0_fpi0" not in refs and "pg18-sync0_fpi0" not in refs
    row = next(r for r in data.comparison.rows if r.test == "insert")
    assert row.cells["pg17-sync1_fpi0"].ratio == pytest.approx(0.1)
    assert row.cells["pg17-sync0_fpi1"].ratio == pytest.approx(0.9)


def test_the_version_view_divides_each_variant_by_the_same_variant_of_the_base_version(store):
    _, s = store
    data = build_report(s, MICROBENCHMARKS, None, None, False, against="version")
    assert data.comparison.references == {f"pg18-{v}": f"pg17-{v}" for v in
                                          ("sync0_fpi0", "sync0_fpi1", "sync1_fpi0", "sync1_fpi1")}
    row = next(r for r in data.comparison.rows if r.test == "update-index")
    assert all(row.cells[t].ratio == pytest.approx(1.05) for t in data.comparison.compared)


def test_the_engine_view_pairs_variants_on_the_axes_both_engines_share(store):
    _, s = store
    data = build_report(s, MICROBENCHMARKS, None, None, False, against="engine")
    refs = data.comparison.references
    # sync is shared; fpi is PostgreSQL's alone and stays at its first level
    assert refs == {"my8-sync0_dw0": "pg17-sync0_fpi0", "my8-sync0_dw1": "pg17-sync0_fpi0",
                    "my8-sync1_dw0": "pg17-sync1_fpi0", "my8-sync1_dw1": "pg17-sync1_fpi0"}
    row = next(r for r in data.comparison.rows if r.test == "insert")
    assert row.cells["my8-sync1_dw0"].ratio == pytest.approx(0.5)
    # two engines' plans never have one shape: no cell is marked P for it
    assert data.plan_changes == () and not any(c.plan_changed for c in row.cells.values())
    text = cli_render(s, "engine")
    assert "Relative to: each column's reference" in text and "col-1 : my8-sync0_dw0 (mysql 8.0.31) / pg17-sync0_fpi0" in text


def cli_render(s, against):
    from dbdrift.cli.report import render
    return render(build_report(s, MICROBENCHMARKS, None, None, False, against=against), "text")


def test_a_view_needs_axes_to_pair_on(tmp_path):
    s = Store(tmp_path / "plain.db")
    cid = s.add_campaign("plain", {"name": "plain", "targets": [{"name": "a"}, {"name": "b"}]}, {"cpus": 2}, "0.1.0")
    for pos, name in enumerate("ab"):
        tid = s.ensure_target(cid, name, "postgres", pos, pos == 0, {"name": name})
        s.add_run(tid, RunRecord(test="insert", test_group="writes", threads=1, repeat=0, status="ok", warmup_s=1,
                                 duration_s=1, metric="qps", driver_spec={}, value=1.0))
    with pytest.raises(UserError, match="needs a campaign with axes"):
        build_report(s, MICROBENCHMARKS, None, None, False, against="variant")
    s.close()


def test_the_absolute_table_has_a_line_per_variant_and_the_tests_as_columns_grouped_by_an_axis(store):
    _, s = store
    data = build_report(s, MICROBENCHMARKS, None, None, False)
    text = render_matrix(data, "text", ["insert", "update-index", "update-nonindex"], "sync")
    lines = text.splitlines()
    assert "-- 1 client thread, sync0" in lines and "-- 1 client thread, sync1" in lines
    header = lines.index("-- 1 client thread, sync0") + 1
    assert lines[header].split() == ["ins", "upd-ix", "upd-nix", "dbms"]
    assert lines[header + 1].split() == ["10000", "8000", "9000", "pg17-sync0_fpi0"]
    sync1 = lines[lines.index("-- 1 client thread, sync1") + 1:]
    assert sync1[1].split() == ["1000", "800", "900", "pg17-sync1_fpi0"]
    assert sum(1 for ln in lines if ln.endswith("_dw0") or ln.endswith("_dw1")) == 4


@pytest.mark.parametrize("fmt", ["markdown", "csv", "json", "html"])
def test_the_absolute_table_renders_in_every_format(store, fmt):
    _, s = store
    out = render_matrix(build_report(s, MICROBENCHMARKS, None, None, False), fmt, ["insert"], None)
    if fmt == "json":
        rows = json.loads(out)["blocks"][0]["rows"]
        assert len(rows) == 12 and rows[3]["levels"] == {"sync": "1", "fpi": "1"} and rows[3]["values"]["insert"] == 900
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert len(rows) == 12 and rows[-1]["variant"] == "sync1_dw1" and float(rows[-1]["insert"]) == pytest.approx(475)
    elif fmt == "markdown":
        assert "| ins | dbms |" in out and "| 10000 | pg17-sync0_fpi0 |" in out
    else:
        assert out.count("<tr>") == 12 + 1 and "<b>10500</b>" in out


def test_the_cli_checks_the_matrix_tests_and_axis(store, capsys):
    path, _ = store
    assert cli_main.main(["report", "--store", str(path), "--matrix", "--group-by", "bl"]) == 2
    assert "has no such axis" in capsys.readouterr().err
    assert cli_main.main(["report", "--store", str(path), "--matrix", "--tests", "scan"]) == 2
    assert "'scan' was not measured" in capsys.readouterr().err
    assert cli_main.main(["report", "--store", str(path), "--matrix", "--tests", "insert", "--group-by", "fpi"]) == 0
    assert "-- 1 client thread, fpi1" in capsys.readouterr().out
