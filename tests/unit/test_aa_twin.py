"""The A/A twin of a campaign's base (aa_twin, --aa-twin): the target it adds, the count of its
false verdicts in every report format and workload, the gate that leaves it out, and its rate per
host over time in `history --metric false-verdicts` and on the published site."""
from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import pytest

from dbdrift.analysis.noise import JUDGING, Verdict
from dbdrift.app.publish import PublishRequest, publish
from dbdrift.cli import main as cli_main
from dbdrift.errors import UserError
from dbdrift.plan.campaign import as_calibration
from dbdrift.workloads.registry import parse_campaign
from dbdrift.workloads.sysbench.report.formats import render
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.results.findings import Finding
from dbdrift.results.twins import TwinRate, twin_rate
from dbdrift.results.workload import WithRecheck, WorkloadReport
from dbdrift.store.store import Store
from dbdrift.workloads.registry import WORKLOADS
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS
from tests.stored_turns import OTHER_HOST, add_turns

TESTS = ("point-query", "range-covered-pk", "update-index")
TARGETS = [{"name": "pg17", "version": "17.10", "settings": {"work_mem": "8MB"}}, {"name": "pg18", "version": "18.4"}]


def _parse(extra: dict):
    return parse_campaign({"name": "c", "targets": TARGETS, **extra}, "c.toml", Path("."), "c")


def test_aa_twin_adds_the_bases_build_and_config_as_a_target_of_its_own():
    spec = _parse({"aa_twin": True})
    twin = spec.targets[-1]
    assert [t.name for t in spec.targets] == ["pg17", "pg18", "pg17-aa"]
    assert (twin.version, twin.settings, twin.base, twin.twin) == ("17.10", {"work_mem": "8MB"}, False, True)
    assert spec.to_dict()["aa_twin"] is True and spec.to_dict()["targets"][-1]["twin"] is True
    assert [t.name for t in _parse({}).targets] == ["pg17", "pg18"]


def test_a_target_already_named_as_the_twin_is_refused_with_the_fix():
    with pytest.raises(UserError) as refused:
        parse_campaign({"name": "c", "aa_twin": True, "targets": [*TARGETS, {"name": "pg17-aa", "version": "16.4"}]},
                       "c.toml", Path("."), "c")
    assert refused.value.message == "c.toml: aa_twin names the base's twin 'pg17-aa', and a target has that name"
    assert refused.value.hint == "rename target pg17-aa, or remove aa_twin"


def test_a_twin_in_a_matrix_campaign_is_refused_with_why():
    with pytest.raises(UserError) as refused:
        _parse({"aa_twin": True, "axes": {"sync": {"0": {"postgres": {"synchronous_commit": "off"}}, "1": {"postgres": {"synchronous_commit": "on"}}}}})
    assert refused.value.message.startswith("c.toml: aa_twin with axes: the matrix report pairs variants")


def test_a_calibration_of_a_campaign_with_a_twin_is_the_base_against_its_copy_only():
    spec = as_calibration(_parse({"aa_twin": True}), None)
    assert [(t.name, t.twin) for t in spec.targets] == [("pg17", False), ("pg17-aa", False)] and not spec.aa_twin


def test_the_run_flag_stands_for_the_campaign_key():
    parser = cli_main.build_parser()
    args = parser.parse_args(["run", "c.toml", "--aa-twin"])
    from dbdrift.cli.options import campaign_sets
    assert "aa_twin = true" in campaign_sets(args)
    assert not any("aa_twin" in s for s in campaign_sets(parser.parse_args(["run", "c.toml"])))


def _store(tmp_path: Path, lean: float = 1.0, name: str = "tw", host: dict | None = None,
           created: str | None = None, path: Path | None = None) -> Path:
    path = path or tmp_path / "s.db"
    store = Store(path)
    add_turns(store, name, random.Random(len(name) + int(lean * 100)), 3, between=0.002, turn_sd=0.01,
              ratios={"b": 1.0, "a-aa": lean}, twin=True, tests=TESTS, host=host, created=created)
    store.close()
    return path


def test_a_sysbench_report_counts_the_twins_false_verdicts_in_every_format(tmp_path):
    store = Store(_store(tmp_path, lean=0.9))
    report = build_report(store, MICROBENCHMARKS, None, None, False)
    store.close()
    note = next(n for n in report.notes if n.startswith("A/A twin"))
    assert note.startswith("A/A twin a-aa (a's build and config): 3 false verdicts in 3 cells (100.0%, 95% ")
    assert "point-query x1 a-aa: regression" in note
    assert report.meta["aa_twin"]["false_verdicts"] == 3 and report.meta["aa_twin"]["rate"] == 1.0
    for fmt in ("text", "markdown", "html"):
        assert "A/A twin a-aa (a&#x27;s build" in render(report, fmt, False) if fmt == "html" else \
            note in render(report, fmt, False), fmt
    as_json = json.loads(render(report, "json", False))
    assert as_json["meta"]["aa_twin"]["cells"] == 3 and note in as_json["notes"]
    lines = list(csv.DictReader(io.StringIO(render(report, "csv", False))))
    assert {(r["aa_twin"], r["aa_twin_cells"], r["aa_twin_false_verdicts"], r["aa_twin_rate"]) for r in lines} == \
        {("a-aa", "3", "3", "1.0")}


def test_a_report_without_a_twin_has_no_twin_columns(tmp_path):
    store = Store(tmp_path / "s.db")
    add_turns(store, "plain", random.Random(1), 3, tests=("point-query",))
    report = build_report(store, MICROBENCHMARKS, None, None, False)
    store.close()
    assert "aa_twin" not in render(report, "csv", False).splitlines()[0] and "aa_twin" not in report.meta


def test_the_twins_regressions_do_not_fail_the_gate(tmp_path, capsys):
    path = _store(tmp_path, lean=0.9)
    assert cli_main.main(["report", "--store", str(path), "--fail-on", "regression"]) == 0
    assert "fail-on:" not in capsys.readouterr().err


def _finding(target: str, verdict: Verdict, test: str = "l.i1") -> Finding:
    return Finding("timed", test, None, target, "a", verdict, 0.9 if verdict is Verdict.REGRESSION else 1.0)


def test_only_cells_with_an_interval_count_and_instruction_counts_are_left_out():
    found = [_finding("a-aa", Verdict.REGRESSION), _finding("a-aa", Verdict.NO_CHANGE, "l.i0"),
             _finding("a-aa", Verdict.TOO_NOISY, "qr100"), _finding("a-aa", Verdict.NO_INTERVAL, "l.x"),
             _finding("b", Verdict.REGRESSION),
             Finding("instructions", "point-query", None, "a-aa", "a", Verdict.REGRESSION, 1.05)]
    rate = twin_rate(found, "a-aa", "a")
    assert (rate.cells, rate.false) == (3, 1) and rate.rate == pytest.approx(1 / 3)
    assert TwinRate("t", "a", 0, 0).note().endswith("no cell with an interval, so no rate of false verdicts")


@pytest.mark.parametrize("workload", ["insert-benchmark", "tpcc", "vector", "htap"])
def test_every_workload_judged_over_repeats_reports_its_twins_false_verdicts(tmp_path, workload):
    assert isinstance(WORKLOADS[workload].build_report, WithRecheck)  # the hook every such report goes through
    store = Store(_store(tmp_path))

    def build(_store, campaign_id, base, judging=JUDGING):
        return WorkloadReport(campaign="tw", targets=("a", "b", "a-aa"), labels={}, ncpu=2,
                              findings=(_finding("b", Verdict.REGRESSION), _finding("a-aa", Verdict.IMPROVEMENT),
                                        _finding("a-aa", Verdict.NO_CHANGE, "qr100")))
    report = WithRecheck(build)(store, 1, None)
    store.close()
    assert report.notes[-1].startswith("A/A twin a-aa (a's build and config): 1 false verdict in 2 cells (50.0%")
    assert report.meta["aa_twin"]["false"] == ["l.i1 a-aa: improvement 1.000 vs a"]


def test_history_follows_the_twins_false_verdicts_per_host_over_time(tmp_path, capsys):
    path = _store(tmp_path, lean=0.9, name="first", created="2026-11-28T10:00:00")
    _store(tmp_path, name="second", created="2026-11-29T10:00:00", path=path)
    _store(tmp_path, name="away", host=OTHER_HOST, path=path)
    assert cli_main.main(["history", "--store", str(path), "--metric", "false-verdicts", "--host", "bench1"]) == 0
    text = capsys.readouterr().out
    assert "bench1 (AMD EPYC, 2 cpus, 25 GiB): 3 false verdicts in 6 cells (50.0%, 95% " in text
    assert "2026-11-28 10:00  first (#1)   sysbench  a-aa      3      3  100.0%" in text
    assert "note: campaigns of 1 other host(s) left out: bench2" in text
    cli_main.main(["history", "--store", str(path), "--metric", "false-verdicts", "--host", "all", "--format", "json"])
    hosts = json.loads(capsys.readouterr().out)["hosts"]
    assert [(h["host"].split()[0], h["cells"], h["false_verdicts"]) for h in hosts] == [("bench1", 6, 3),
                                                                                       ("bench2", 3, 0)]
    cli_main.main(["history", "--store", str(path), "--metric", "false-verdicts", "--host", "bench1", "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["campaign"], r["false_verdicts"], r["rate"]) for r in rows] == [("first", "3", "1.0"),
                                                                                ("second", "0", "0.0")]
    cli_main.main(["history", "--store", str(path), "--metric", "false-verdicts", "--host", "bench1",
                   "--format", "markdown"])
    assert "| 2026-11-29 10:00 | second (#2) | sysbench | a-aa | 3 | 0 | 0.0% |" in capsys.readouterr().out
    cli_main.main(["history", "--store", str(path), "--metric", "false-verdicts", "--host", "bench1",
                   "--format", "html"])
    assert "<h2>False verdicts of A/A twins</h2>" in capsys.readouterr().out


def test_history_of_false_verdicts_without_a_twin_says_how_to_get_one(tmp_path, capsys):
    store = Store(tmp_path / "s.db")
    add_turns(store, "plain", random.Random(1), 3, tests=("point-query",))
    store.close()
    assert cli_main.main(["history", "--store", str(tmp_path / "s.db"), "--metric", "false-verdicts"]) == 2
    err = capsys.readouterr().err
    assert "holds no campaign with an A/A twin on bench1" in err and "dbdrift run FILE --aa-twin" in err


def test_the_published_site_shows_the_twins_rate_per_host_and_counts_only_the_campaigns_own_verdicts(tmp_path):
    path = _store(tmp_path, lean=0.9)
    publish(PublishRequest(stores=(path,), out=tmp_path / "site"))
    index = (tmp_path / "site" / "index.html").read_text()
    assert "<h2>False verdicts of A/A twins</h2>" in index
    assert "bench1 (AMD EPYC, 2 cpus, 25 GiB): 3 false verdicts in 3 cells (100.0%" in index
    state = json.loads((tmp_path / "site" / "site.json").read_text())
    (entry,) = [c["entry"] for c in state["campaigns"].values()]
    assert entry["twin"]["false_verdicts"] == 3 and entry["counts"][0] == 0  # b is 1.0: no regression of its own
