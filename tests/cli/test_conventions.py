"""CLI conventions: compare without a file, --set, comma lists, campaigns, --fail-on exit codes,
report metadata, NO_COLOR, one version."""
import json
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from dbdrift.version import __version__
from dbdrift.cli import report as report_cli
from dbdrift.workloads.registry import load_campaign, parse_campaign
from dbdrift.workloads.sysbench.plan import params
from tests.cli.test_cli_errors import assert_user_error
from tests.helpers import dbdrift, instructions_only_store
from tests.unit.test_reports import _turn_store, make_store


@pytest.fixture
def regressed(tmp_path) -> Path:
    make_store(tmp_path / "r.db").close()  # point-query pg18 is a regression, pg19 hot-points failed
    return tmp_path / "r.db"


@pytest.fixture
def unchanged(tmp_path) -> Path:
    _turn_store(tmp_path / "u.db", 1, {"repeats": 1}).close()  # two identical targets
    return tmp_path / "u.db"


def test_version_is_the_package_metadata_everywhere():
    assert __version__ == version("dbdrift")
    assert dbdrift("--version").stdout.strip() == f"dbdrift {__version__}"


def test_report_fail_on_regression_exits_3_and_names_each_finding(regressed):
    result = dbdrift("report", "--store", regressed, "--fail-on", "regression")
    assert result.returncode == 3, result.stderr
    assert "fail-on: point-query x1 pg18: regression 0.950" in result.stderr
    assert "point-query" in result.stdout  # the report itself is printed first


def test_instruction_regressions_gate_fail_on_unless_it_reads_timed_verdicts_only(regressed):
    both = dbdrift("report", "--store", regressed, "--fail-on", "regression")
    assert "fail-on: update-index instructions pg18: regression 1.040 instructions/event vs pg17" in both.stderr
    counted = dbdrift("report", "--store", regressed, "--fail-on", "regression", "--fail-by", "instructions")
    assert counted.returncode == 3 and "x1" not in counted.stderr and "point-query instructions pg18" in counted.stderr
    timed = dbdrift("report", "--store", regressed, "--fail-on", "regression", "--fail-by", "timed")
    assert timed.returncode == 3 and "instructions pg18" not in timed.stderr


def test_an_instructions_only_campaign_fails_on_its_counts_and_exports_them(tmp_path):
    store = instructions_only_store(tmp_path / "i.db")
    result = dbdrift("report", "--store", store, "--fail-on", "regression")
    assert result.returncode == 3, result.stderr
    assert "fail-on: point-query instructions pg18: regression 1.036 instructions/event vs pg17" in result.stderr
    doc = json.loads(dbdrift("report", "--store", store, "--format", "json").stdout)
    row = next(r for r in doc["rows"] if r["target"] == "pg18" and r["test"] == "point-query")
    assert (row["measure"], row["verdict"], row["instr_rel"]) == ("instructions", "regression", 1.03592)
    lines = dbdrift("report", "--store", store, "--format", "csv").stdout.splitlines()
    header = lines[0].split(",")
    cells = [dict(zip(header, line.split(","))) for line in lines[1:]]
    assert {(c["test"], c["target"], c["verdict"]) for c in cells if c["measure"] == "instructions"} >= {
        ("point-query", "pg18", "regression"), ("update-index", "pg18", "regression"), ("point-query", "pg17", "")}
    page = dbdrift("report", "--store", store, "--format", "html").stdout
    assert "Instructions per event: 2 regression(s)" in page and "1.036" in page


def test_fail_on_noisy_names_the_cells_without_a_verdict(tmp_path):
    import random

    from dbdrift.store.store import RunRecord, Store
    store = Store(tmp_path / "n.db")
    cid = store.add_campaign("noisy", {"name": "noisy", "rows": 10_000, "repeats": 1}, {"cpus": 2}, "0.1.0")
    draw = random.Random(7)
    for pos, target in enumerate(("a", "b")):
        tid = store.ensure_target(cid, target, "postgres", pos, pos == 0, {"name": target})
        events = [draw.randint(100, 300) for _ in range(30)]  # +-50% from one turn to the next
        turns = [{"index": 2 * i + pos, "round": i, "start_s": i * 0.02, "end_s": i * 0.02 + 0.01, "events": e,
                  "statements": e, "rows": 0, "errors": {}, "latency_us": {}, "steal_pct": 0.0}
                 for i, e in enumerate(events)]
        store.add_run(tid, RunRecord(test="point-query", test_group="point", threads=1, repeat=0, status="ok",
                                     warmup_s=1, duration_s=1, metric="qps", driver_spec={}, value=20000.0,
                                     intervals=turns))
    store.close()
    result = dbdrift("report", "--store", tmp_path / "n.db", "--fail-on", "noisy")
    assert result.returncode == 3 and "point-query x1 b: too noisy" in result.stderr, result.stdout
    passed = dbdrift("report", "--store", tmp_path / "n.db", "--fail-on", "regression")
    assert passed.returncode == 0 and "1 cell(s) had no verdict" in passed.stderr


def test_report_fail_on_regression_exits_0_without_one(unchanged):
    result = dbdrift("report", "--store", unchanged, "--fail-on", "regression")
    assert result.returncode == 0, result.stderr
    assert "fail-on" not in result.stderr and "no significant change" not in result.stderr


def test_report_fail_on_not_measured_finds_the_cell_whose_server_died(regressed):
    result = dbdrift("report", "--store", regressed, "--fail-on", "not-measured")
    assert result.returncode == 3 and "hot-points x1 pg19: not measured" in result.stderr
    assert dbdrift("report", "--store", regressed, "--fail-on", "nonsense").returncode == 2


def test_report_without_fail_on_exits_0_whatever_it_finds(regressed):
    assert dbdrift("report", "--store", regressed).returncode == 0


def test_json_and_csv_carry_tool_version_date_host_and_settings(regressed):
    doc = json.loads(dbdrift("report", "--store", regressed, "--format", "json").stdout)
    meta = doc["meta"]
    assert meta["dbdrift_version"] == __version__ and meta["format_version"] == 5
    assert meta["generated_at"][:2] == "20" and meta["host"]["cpus"] == 2
    assert meta["campaign"]["name"] == "golden" and meta["campaign"]["settings"]["rows"] == 10_000
    assert [t["version"] for t in meta["targets"]] == ["17.10", "18.4", "19.0"]
    csv = dbdrift("report", "--store", regressed, "--format", "csv").stdout.splitlines()
    header, first = csv[0].split(","), csv[1].split(",")
    assert dict(zip(header, first))["dbdrift_version"] == __version__
    assert dict(zip(header, first))["campaign"] == "golden"


def test_json_rows_and_csv_columns_use_the_same_names(regressed):
    doc = json.loads(dbdrift("report", "--store", regressed, "--format", "json").stdout)
    header = dbdrift("report", "--store", regressed, "--format", "csv").stdout.splitlines()[0].split(",")
    shared = set(doc["rows"][0]) - {"warnings", "campaign_sd"}
    assert shared <= set(header), shared - set(header)


def test_campaigns_lists_the_store(regressed, tmp_path):
    result = dbdrift("campaigns", "--store", regressed)
    assert result.returncode == 0 and "golden" in result.stdout and "pg17, pg18, pg19" in result.stdout
    listed = json.loads(dbdrift("campaigns", "--store", regressed, "--format", "json").stdout)
    assert [c["name"] for c in listed] == ["golden"] and listed[0]["runs_failed"] == 1
    assert_user_error(dbdrift("campaigns", "--store", tmp_path / "none.db"), "does not exist")


def test_an_unknown_campaign_names_those_the_store_holds(regressed):
    assert_user_error(dbdrift("report", "--store", regressed, "--campaign", "nosuch"),
                      "no campaign 'nosuch'", "it holds golden", "dbdrift campaigns")


def test_no_color_turns_auto_color_off(monkeypatch):
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert report_cli.use_color("auto")
    monkeypatch.setenv("NO_COLOR", "1")
    assert not report_cli.use_color("auto") and report_cli.use_color("always")


def test_compare_builds_the_campaign_a_file_would_hold(tmp_path):
    result = dbdrift("compare", "17.10", "18.4", "mysql:8.0.31", "mine=mariadb:system", "--tests", "point,writes",
                     "--tests", "scan", "--duration", "5", "--set", "rows=5000",
                     "--set", "targets.pg18.4.settings.jit=false", "--print-campaign")
    assert result.returncode == 0, result.stderr
    data = tomllib.loads(result.stdout)
    assert data["tests"] == ["point", "writes", "scan"] and data["rows"] == 5000 and data["read_s"] == 5.0
    assert [(t["name"], t["engine"]) for t in data["targets"]] == [
        ("pg17.10", "postgres"), ("pg18.4", "postgres"), ("my8.0.31", "mysql"), ("mine", "mariadb")]
    assert data["targets"][1]["settings"] == {"jit": False} and data["targets"][3]["system"] is True
    spec = parse_campaign(data, "printed", tmp_path, "x")  # the printed file is a valid campaign
    assert spec.base.name == "pg17.10" and {t.group for t in spec.tests} == {"point", "writes", "range-noagg"}


def test_compare_takes_an_install_directory_and_finds_its_engine(tmp_path):
    (tmp_path / "pgbuild" / "bin").mkdir(parents=True)
    (tmp_path / "pgbuild" / "bin" / "postgres").touch()
    data = tomllib.loads(dbdrift("compare", "17.10", str(tmp_path / "pgbuild"), "--print-campaign").stdout)
    assert data["targets"][1] == {"name": "pgbuild", "engine": "postgres", "basedir": str(tmp_path / "pgbuild")}
    (tmp_path / "empty" / "bin").mkdir(parents=True)
    assert_user_error(dbdrift("compare", "17.10", str(tmp_path / "empty")), "no postgres, mariadbd or mysqld")
    assert_user_error(dbdrift("compare", "17.10", str(tmp_path)), "bin does not exist")
    assert_user_error(dbdrift("compare", "17.10"), "two targets or more")
    assert_user_error(dbdrift("compare", "17.10", "oracle:23"), "unknown engine 'oracle'")


def test_run_tests_does_not_swallow_the_campaign_file(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('name = "swallow"\n[[targets]]\nname = "a"\nversion = "17.10"\n[[targets]]\nname = "b"\n'
                    'version = "18.4"\n')
    result = dbdrift("run", "--tests", "point", path, "--set", "rows=nope", "--store", tmp_path / "s.db")
    # the file was read (its rows came from --set), not taken as a test name
    assert_user_error(result, "rows")
    assert "required: campaign" not in result.stderr


def test_set_overrides_keys_and_refuses_what_the_file_would_refuse(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[[targets]]\nname = "pg18.4"\nversion = "18.4"\nsettings = { work_mem = "4MB" }\n')
    spec = load_campaign(path, ["rows=5000", "order=sequential", "targets.pg18.4.settings.auto_explain.x=1",
                                "threads=[1, 4]"])
    assert (params(spec).rows, spec.order, params(spec).threads) == (5000, "sequential", (1, 4))
    assert dict(spec.targets[0].settings) == {"work_mem": "4MB", "auto_explain.x": "1"}
    assert_user_error(dbdrift("run", path, "--set", "rowz=1", "--check"), "rowz")
    assert_user_error(dbdrift("run", path, "--set", "targets.nobody.port=5000", "--check"), "no target named")
    assert_user_error(dbdrift("run", path, "--set", "novalue", "--check"), "not KEY=VALUE")
