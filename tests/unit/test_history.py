"""History across a store's campaigns: series by version and by time, change points, and the
`history` verb's formats and --fail-on."""
import csv
import io
import json
import math
import random
import sys

import pytest

from dbdrift.analysis.changepoints import change_points, new_changes, shift_interval
from dbdrift.cli import main as cli_main
from dbdrift.results import history
from dbdrift.store.store import InstructionRecord, RunRecord, Store
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS
from tests.helpers import ROOT

HOST = {"hostname": "bench1", "cpu_model": "AMD EPYC", "cpus": 2, "memory_bytes": 25 * 2 ** 30}
OTHER = {"hostname": "bench2", "cpu_model": "Intel Xeon", "cpus": 8, "memory_bytes": 64 * 2 ** 30}
# point-query drops 5% at 17.5 and stays there; update-index does not move
QPS = {"17.0": 10000, "17.2": 10010, "17.4": 9990, "17.5": 9500, "17.6": 9510, "17.10": 9490}


def add_campaign(store: Store, name: str, versions: dict[str, float], host=HOST, rows=100000, created=None,
                 ir: dict[str, float] | None = None, jitter: float = 0.0) -> int:
    targets = [{"name": f"pg{v}", "engine": "postgres", "version": v, "settings": {}} for v in versions]
    cid = store.add_campaign(name, {"name": name, "rows": rows, "tables": 1, "targets": targets}, host, "0.1.0")
    if created:
        store.db.execute("UPDATE campaigns SET created_at = ? WHERE id = ?", (created, cid))
        store.db.commit()
    for pos, (version, value) in enumerate(versions.items()):
        tid = store.ensure_target(cid, f"pg{version}", "postgres", pos, pos == 0, targets[pos])
        store.set_target_facts(tid, server={"version": version}, install=None)
        for test, scale in (("point-query", 1.0), ("update-index", 0.5)):
            v = (value if test == "point-query" else 5000.0) * (1 + jitter)
            intervals = [{"index": i, "round": 0, "start_s": float(i), "end_s": i + 1.0, "events": v * f,
                          "statements": v * f, "rows": 0, "errors": {}, "latency_us": {}, "steal_pct": 0.0}
                         for i, f in enumerate((0.99, 1.0, 1.01, 1.0, 0.995, 1.005))]
            group = "point" if test == "point-query" else "writes"
            store.add_run(tid, RunRecord(test=test, test_group=group, threads=1, repeat=0, status="ok", warmup_s=1,
                                         duration_s=6, metric="qps", driver_spec={}, value=v, intervals=intervals))
        if ir:
            store.add_instructions(tid, InstructionRecord("point-query", "ok", 1000, 5000, 3.0,
                                                          ir_per_event=ir[version], spread_pct=0.01,
                                                          self_per_event={"ExecScan": ir[version] / 10}))
    return cid


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "h.db"
    store = Store(path)
    add_campaign(store, "minors-a", {v: q for v, q in QPS.items() if v in ("17.0", "17.4", "17.10")},
                 created="2026-11-01T10:00:00+00:00")
    add_campaign(store, "minors-b", {v: q for v, q in QPS.items() if v in ("17.2", "17.5", "17.6")},
                 created="2026-11-02T10:00:00+00:00")
    add_campaign(store, "again-17.4", {"17.4": QPS["17.4"]}, jitter=0.01, created="2026-11-03T10:00:00+00:00")
    add_campaign(store, "elsewhere", {"17.0": 30000, "17.10": 20000}, host=OTHER, created="2026-11-04T10:00:00+00:00")
    add_campaign(store, "bigger", {"17.0": 7000}, rows=1000000, created="2026-11-05T10:00:00+00:00")
    add_campaign(store, "here-last", {"17.10": QPS["17.10"]}, created="2026-11-06T10:00:00+00:00")
    store.close()
    return path


def read(path):
    store = Store(path)
    try:
        return history.points(store, MICROBENCHMARKS, "qps")
    finally:
        store.close()


def test_series_by_version_order_versions_as_numbers_and_keep_hosts_and_setups_apart(store_path):
    series = history.build_series(read(store_path), MICROBENCHMARKS)
    pq = [s for s in series if s.test == "point-query" and s.host.startswith("bench1") and s.setup == "100000 rows x 1"]
    assert len(pq) == 1
    assert [p.label for p in pq[0].points] == ["17.0", "17.2", "17.4", "17.5", "17.6", "17.10"]
    others = {(s.host.split()[0], s.setup) for s in series} - {("bench1", pq[0].setup)}
    assert others == {("bench2", "100000 rows x 1"), ("bench1", "1000000 rows x 1")}


def test_a_versions_campaigns_are_aggregated_into_one_point_with_an_interval_over_them(store_path):
    pq = next(s for s in history.build_series(read(store_path), MICROBENCHMARKS) if s.test == "point-query"
              and s.host.startswith("bench1") and s.setup == "100000 rows x 1")
    p174 = next(p for p in pq.points if p.label == "17.4")
    assert len(p174.replicates) == 2
    assert p174.value == pytest.approx(9990 * 1.005, rel=1e-3)
    assert p174.lower < 9990 < 9990 * 1.01 < p174.upper  # t(1) interval over two campaigns: wide
    p1710 = next(p for p in pq.points if p.label == "17.10")
    assert len(p1710.replicates) == 2 and p1710.value == pytest.approx(9490, rel=1e-3)
    p170 = pq.points[0]
    assert len(p170.replicates) == 1 and p170.lower < 10000 < p170.upper  # its campaign's own interval


def test_two_campaigns_far_apart_give_a_positive_interval_around_their_geometric_mean():
    def point(value: float, campaign_id: int) -> history.Point:
        return history.Point("postgres", "17.4", "s", "h", "point-query", 1, "qps", value, None, None,
                             campaign_id, f"c{campaign_id}", "2026-11-01T10:00:00", "pg17.4")
    p = history.aggregate("17.4", [point(4002.0, 1), point(5437.0, 2)])
    # a t(1) interval on the raw values would be [-4397, 13836]
    assert p.value == pytest.approx(math.sqrt(4002 * 5437))
    assert (round(p.lower), round(p.upper)) == (666, 32681)


def test_by_time_each_version_is_its_own_series_with_one_point_per_campaign(store_path):
    series = history.build_series([p for p in read(store_path) if p.host.startswith("bench1")], MICROBENCHMARKS, by="time")
    s = next(s for s in series if s.test == "point-query" and s.version == "17.10" and s.setup == "100000 rows x 1")
    assert s.name == "point-query 17.10"
    assert [p.label for p in s.points] == ["2026-11-01 10:00 #1", "2026-11-06 10:00 #6"]


def test_instruction_counts_are_a_metric_of_their_own(tmp_path):
    store = Store(tmp_path / "i.db")
    ir = {"17.0": 41000.0, "17.4": 41010.0, "17.5": 43000.0}
    add_campaign(store, "ipe", {v: 1.0 for v in ir}, ir=ir)
    found = history.points(store, MICROBENCHMARKS, "instructions")
    store.close()
    assert sorted((p.version, p.value, p.lower) for p in found) == [(v, ir[v], None) for v in ("17.0", "17.4", "17.5")]


def test_a_step_is_found_between_the_right_versions_with_an_interval_that_holds_it():
    rng = random.Random(7)
    values = [10000 * (1 + rng.gauss(0, 0.004)) for _ in range(6)] + [9500 * (1 + rng.gauss(0, 0.004)) for _ in range(6)]
    found = change_points(values)
    assert [c.index for c in found] == [6]
    c = found[0]
    assert c.lower < c.change < c.upper and c.upper - c.lower < 0.02
    assert abs(c.change + 0.05) < 0.01
    assert c.change == pytest.approx(c.after / c.before - 1)


def test_no_change_is_found_in_a_flat_noisy_series_nor_below_the_minimum_effect():
    rng = random.Random(3)
    assert change_points([10000 * (1 + rng.gauss(0, 0.005)) for _ in range(12)]) == []
    small = [10000.0] * 5 + [10100.0] * 5  # +1%, deterministic: significant but below 2%
    assert change_points(small) == []
    assert [c.index for c in change_points(small, min_magnitude=0.005)] == [5]


def test_a_one_point_segment_takes_its_variance_from_its_own_interval():
    lower, upper = shift_interval([100.0, 101.0, 99.0], [(None, None)] * 3, [90.0], [(88.0, 92.0)])
    assert lower < 90 / 100 - 1 < upper
    assert shift_interval([100.0], [(None, None)], [90.0], [(None, None)]) == (None, None)


def test_new_changes_are_those_the_newest_point_brought():
    values = [43000.0] * 6 + [45000.0]  # deterministic counts: one point after the step shows it
    assert [c.index for c in new_changes(values, None)] == [6]
    values.append(45000.0)
    assert new_changes(values, None) == []  # found before the newest point already


def test_history_prints_versions_as_columns_relative_to_the_first_and_the_change(store_path, capsys):
    rc = cli_main.main(["history", "--store", str(store_path), "--host", "bench1", "--tests", "point-query"])
    out = capsys.readouterr().out
    assert rc == 0
    block = out.split("-- ")[1]
    assert "17.0    17.2  17.4  17.5  17.6  17.10" in " ".join(block.split("\n")[1].split()) or \
        block.split("\n")[1].split() == ["test", "17.0", "17.2", "17.4", "17.5", "17.6", "17.10"]
    row = next(line for line in block.splitlines() if line.startswith("point-query")).split()
    assert row[1] == "10000" and row[4] == "0.95"
    assert "between 17.4 and 17.5: point-query -5." in out and "regression" in out
    assert "other host(s) left out" in out


def test_history_defaults_to_the_newest_campaigns_host(store_path, capsys):
    cli_main.main(["history", "--store", str(store_path)])
    out = capsys.readouterr().out
    assert "bench1" in out and "bench2 (" not in out.split("note:")[0]


def test_history_json_csv_and_html(store_path, capsys):
    cli_main.main(["history", "--store", str(store_path), "--host", "all", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    pq = next(s for s in doc["series"] if s["test"] == "point-query" and s["host"].startswith("bench1")
              and s["setup"] == "100000 rows x 1")
    assert [p["label"] for p in pq["points"]][-1] == "17.10" and pq["points"][3]["relative"] == pytest.approx(0.95)
    assert pq["changes"][0]["after"] == "17.4" and pq["changes"][0]["kind"] == "regression"
    assert any(s["host"].startswith("bench2") for s in doc["series"])
    cli_main.main(["history", "--store", str(store_path), "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["label"] for r in rows if r["test"] == "update-index"} >= {"17.0", "17.10"}
    assert all(math.isfinite(float(r["value"])) for r in rows)
    cli_main.main(["history", "--store", str(store_path), "--format", "html"])
    page = capsys.readouterr().out
    assert page.count("<polyline") >= 2 and "stroke-dasharray" in page and "0.80" in page


def test_fail_on_new_regression_reports_a_regression_once_when_it_is_first_found(tmp_path, capsys):
    path = tmp_path / "n.db"
    store = Store(path)
    for day, value in enumerate([10000, 10010, 9995, 10005, 10000, 9990]):
        add_campaign(store, f"night{day}", {"18.4": value}, created=f"2026-11-{day + 1:02d}T02:00:00+00:00")
    store.close()
    argv = ["history", "--store", str(path), "--by", "time", "--tests", "point-query", "--fail-on", "new-regression"]
    assert cli_main.main(argv) == 0
    codes = []
    for day, value in ((7, 9000), (8, 9010), (9, 8995)):  # a 10% drop from night 7 on
        store = Store(path)
        add_campaign(store, f"night{day}", {"18.4": value}, created=f"2026-11-{day + 1:02d}T02:00:00+00:00")
        store.close()
        capsys.readouterr()
        codes.append(cli_main.main(argv))
        if codes[-1] == 3:
            assert "new regression: postgres" in capsys.readouterr().err
    assert sorted(codes) == [0, 0, 3]


def test_without_otava_history_still_prints_and_says_how_to_get_change_points(store_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "otava.analysis", None)  # import fails
    assert cli_main.main(["history", "--store", str(store_path)]) == 0
    install = f"`{sys.executable} -m pip install -e '{ROOT}[history]'`"  # this checkout, with the extra
    assert install in capsys.readouterr().out
    assert cli_main.main(["history", "--store", str(store_path), "--fail-on", "new-regression"]) == 1
    assert "hint: install dbdrift's extra history (Apache Otava, the change-point detector): " + install \
        in capsys.readouterr().err


def test_unknown_host_and_missing_metric_say_what_the_store_has(store_path, capsys):
    # a host or metric the store lacks is input refused, as a campaign it lacks is (exit 2)
    assert cli_main.main(["history", "--store", str(store_path), "--host", "nohost"]) == 2
    assert "bench1" in capsys.readouterr().err
    assert cli_main.main(["history", "--store", str(store_path), "--metric", "instructions"]) == 2
    assert "--count-instructions" in capsys.readouterr().err


def test_tests_take_group_names_and_unknown_names_are_refused(store_path, capsys):
    assert cli_main.main(["history", "--store", str(store_path), "--tests", "writes"]) == 0
    out = capsys.readouterr().out
    assert "update-index" in out and "point-query" not in out
    assert cli_main.main(["history", "--store", str(store_path), "--tests", "pointy"]) == 2
    assert "did you mean" in capsys.readouterr().err


def test_commits_of_one_version_are_their_own_points_in_commit_order_even_made_in_one_second(tmp_path):
    store = Store(tmp_path / "c.db")
    # neither the shas nor the digits in them follow the history
    commits = [("c3" * 20, 3, 9000.0), ("a9" * 20, 1, 10000.0), ("b2" * 20, 2, 10010.0)]
    for sha, depth, value in commits:
        cid = add_campaign(store, f"bisect-{sha[:9]}", {"15.18": value})
        tid = store.targets(cid)[0].id
        store.set_target_facts(tid, install={"version": "15.18", "source": "basedir", "build": {
            "commit": sha, "committed_at": "2026-11-26T04:00:00+00:00", "depth": depth, "subject": "x"}})
    found = history.points(store, MICROBENCHMARKS, "qps", ["point-query"])
    store.close()
    (series,) = history.build_series(found, MICROBENCHMARKS)
    assert [p.label for p in series.points] == ["15.18@a9a9a9a9a", "15.18@b2b2b2b2b", "15.18@c3c3c3c3c"]


def test_a_setup_is_named_by_its_settings_not_a_hash():
    label = history.setup_label({"rows": 1000, "tables": 1}, {"settings": {"enable_indexonlyscan": "off"}})
    assert label == "1000 rows x 1, enable_indexonlyscan=off"
    many = {f"setting_number_{i}": "on" for i in range(9)}
    long = history.setup_label({"rows": 1000}, {"settings": many})
    assert all(f"setting_number_{i}=on" in long for i in range(9)) and "#" not in long
    assert long != history.setup_label({"rows": 1000}, {"settings": {**many, "setting_number_8": "off"}})


@pytest.mark.fault("publish")
def test_a_workload_s_setup_says_on_and_off_and_whole_numbers_as_they_are_written():
    ib = {"clients": 1, "rows_l_i0": 10_000_000, "rows_l_i1": 4_000_000, "rows_l_i2": 1_000_000, "query_s": 1800.0,
          "deletes": True, "shared_table": False, "io_bound": False, "steps": ["l.i0", "l.x"]}
    label = history.setup_label({"workload": "insert-benchmark", "insert_benchmark": ib}, {})
    assert label == ("insert-benchmark clients=1, deletes on, io_bound off, query_s=1800, rows_l_i0=10000000, "
                     "rows_l_i1=4000000, rows_l_i2=1000000, shared_table off")


def history_chart(by: str, tmp_path) -> str:
    from dbdrift.report.history import blocks, line_chart
    store = Store(tmp_path / f"{by}.db")
    add_campaign(store, "a", {"17.0": 10000, "17.4": 9990}, created="2026-11-01T10:00:00+00:00")
    add_campaign(store, "b", {"17.2": 10010}, created="2026-11-02T10:00:00+00:00")
    key, members, labels = blocks(history.build_series(history.points(store, MICROBENCHMARKS, "qps"), MICROBENCHMARKS, by))[0]
    return line_chart(members, labels, "c")


@pytest.mark.parametrize("by", ["version", "time"])
def test_a_history_chart_titles_its_axes_and_marks_the_worse_direction(by, tmp_path):
    chart = history_chart(by, tmp_path)
    assert 'class="y-title"' in chart and "qps ÷ the line's first point" in chart
    assert ("campaign (date, time, #id)" if by == "time" else ">version</text>") in chart
    assert "↓ worse" in chart and "↑ better" in chart  # qps: higher is better


def test_by_time_every_one_point_series_is_drawn_beside_the_others_of_its_column(tmp_path):
    import re
    chart = history_chart("time", tmp_path)
    dots = re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)" r="4"', chart)  # ringed: one point, no line
    assert len(dots) >= 3 and len(set(dots)) == len(dots), dots


def test_a_history_charts_slanted_labels_end_above_its_legend(tmp_path):
    import re
    chart = history_chart("time", tmp_path)
    longest = max(len(t) for t in re.findall(r'transform="rotate\(-40[^"]*"\>([^<]*)<', chart))
    label_top = float(re.search(r'transform="rotate\(-40 [\d.]+ ([\d.]+)\)"', chart).group(1))
    legend_top = min(float(v) for v in re.findall(r'<rect class="legend" x="[\d.]+" y="([\d.]+)"', chart))
    assert label_top + longest * 7.2 * 0.643 < legend_top
