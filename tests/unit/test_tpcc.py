"""TPROC-C: the [tpcc] table, the summary (NOPM, relative NOPM over repeats, hardware per new
order, latencies) on literal runs with hand-computed answers, and the report formats."""
from __future__ import annotations

import csv
import io
import json
import math
import statistics
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from dbdrift.report.envelope import CAMPAIGN_COLUMNS
from dbdrift.analysis.tpcc import hardware_per_new_order, latencies, summarize
from dbdrift.driver.protocol import bucket_index
from dbdrift.errors import UserError
from dbdrift.model import TpccResult
from dbdrift.plan.campaign import parse_campaign
from dbdrift.workloads.tpcc.report import CSV_HEADER, render_csv, render_html, render_json, render_text
from dbdrift.workloads.tpcc.catalog import setup_text
from dbdrift.workloads.tpcc.results import tpcc_report


def campaign(extra: str) -> str:
    return f'workload = "tpcc"\n{extra}\n[[targets]]\nname = "a"\nversion = "17.10"\n'


def test_a_tpcc_campaign_reads_its_sizes():
    spec = parse_campaign(tomllib.loads(campaign(
        'repeats = 3\n[tpcc]\nwarehouses = 8\nclients = 16\nload_clients = 4\nrampup_s = "1m"\nduration_s = "10m"\n'
        "procedures = true")), "c.toml", Path("."), "c")
    t = spec.tpcc
    assert (t.warehouses, t.clients, t.load_clients, t.rampup_s, t.duration_s, t.procedures) == (8, 16, 4, 60, 600,
                                                                                                 True)
    assert spec.repeats == 3 and spec.to_dict()["tpcc"]["warehouses"] == 8
    assert t.loaders(2) == 4 and parse_campaign(tomllib.loads(campaign("[tpcc]\nwarehouses = 1")), "c", Path("."),
                                                "c").tpcc.loaders(8) == 1  # never more loaders than warehouses


@pytest.mark.parametrize("extra, needle", [
    ("[tpcc]\nwarehouses = 0", "warehouses must be a positive integer"),
    ("[tpcc]\nwarehouse = 3", "warehouse"),
    ("[tpcc]\nduration_s = 0", "duration_s"),
    ("[tpcc]\nwarehouses = 6000", "allow_large"),
    ('tests = ["point-query"]', "tests applies to the sysbench workload, not TPROC-C"),
    ("[insert_benchmark]\nclients = 2", r"\[insert_benchmark\] is set but workload is tpcc"),
])
def test_bad_tpcc_keys_name_the_key(extra, needle):
    with pytest.raises(UserError, match=needle):
        parse_campaign(tomllib.loads(campaign(extra)), "c.toml", Path("."), "c")


def test_a_tpcc_table_in_a_sysbench_campaign_is_refused():
    with pytest.raises(UserError, match=r'add workload = "tpcc"'):
        parse_campaign(tomllib.loads('[tpcc]\nwarehouses = 2\n[[targets]]\nname = "a"\nversion = "17.10"\n'),
                       "c.toml", Path("."), "c")


def hist(*values_us: int) -> list[list[int]]:
    counts: dict[int, int] = {}
    for v in values_us:
        counts[bucket_index(v * 1000)] = counts.get(bucket_index(v * 1000), 0) + 1
    return [[k, c] for k, c in sorted(counts.items())]


WINDOW = {"elapsed_s": 60.0, "cpu_user_pct": 40.0, "cpu_sys_pct": 10.0, "cs": 120_000, "write_kb": 6_000.0,
          "server_cpu_s": 45.0, "client_cpu_s": 15.0, "reads": 0, "read_kb": 0.0, "writes": 10}


def run(target: str, nopm: float, repeat: int = 0, status: str = "ok", **extra) -> TpccResult:
    orders = int(nopm)  # a 60 s window: NOPM = new orders
    by_type = {"new_order": {"count": orders, "rollbacks": 3, "errors": 1, "histogram": hist(1000, 2000, 30_000),
                             "p50_us": nopm / 1000, "p95_us": 20_000, "p99_us": 30_000, "max_us": 30_000},
               "payment": {"count": 10, "rollbacks": 0, "errors": 0, "histogram": hist(500), "p50_us": 500,
                           "p95_us": 500, "p99_us": 500, "max_us": 500}}
    return TpccResult(target=target, status=status, warehouses=4, clients=2, procedures=False, elapsed_s=60.0,
                      new_orders=orders, transactions=2 * orders, nopm=nopm, tpm=2 * nopm, by_type=by_type,
                      intervals=[{"t_sec": float(i + 1), "i_sec": 1.0, "nopm": nopm, "phase": "measure"}
                                 for i in range(5)],
                      repeat=repeat, **{"hardware": WINDOW, "consistency": [{"clause": "3.3.2.1", "ok": True}],
                                        **extra})


def test_hardware_per_new_order_is_the_windows_cpu_and_writes_over_its_new_orders():
    hw = hardware_per_new_order([run("a", 3000.0)], ncpu=2)
    # host: 50% of 2 CPUs for 60 s = 60 CPU s over 3000 new orders = 20,000 µs each
    assert hw["cpu/no"] == pytest.approx(20_000)
    assert hw["server/no"] == pytest.approx(15_000) and hw["client/no"] == pytest.approx(5_000)
    assert hw["client%"] == pytest.approx(25.0)
    assert hw["cs/no"] == pytest.approx(40.0) and hw["wkb/no"] == pytest.approx(2.0)
    assert hardware_per_new_order([run("a", 3000.0, hardware=None)], 2)["cpu/no"] is None


def test_summary_means_repeats_and_gives_relative_nopm_a_paired_interval():
    base = [run("a", v, r) for r, v in enumerate((1000.0, 1100.0, 900.0))]
    new = [run("b", v, r) for r, v in enumerate((1200.0, 1210.0, 1100.0))]
    a, b = summarize(base + new + [run("b", 1.0, 3, status="failed", error="lost connection")], ["a", "b"], 2)
    assert a.nopm == pytest.approx(1000.0) and a.relative is None and a.runs == 3
    logs = [math.log(1.2), math.log(1.1), math.log(1100 / 900)]
    mean, half = statistics.fmean(logs), 4.303 * statistics.stdev(logs) / math.sqrt(3)
    ratio = b.nopm / a.nopm  # the mean NOPMs' ratio, the interval's width from the paired repeats
    assert ratio == pytest.approx(3510 / 3000) and b.relative.value == pytest.approx(ratio)
    assert mean != pytest.approx(math.log(ratio))
    assert (b.relative.lower, b.relative.upper) == (pytest.approx(ratio * math.exp(-half)),
                                                    pytest.approx(ratio * math.exp(half)))
    assert b.runs == 3 and b.failed == 1 and b.errors == ["lost connection"]
    lat = a.latency["new_order"]
    assert (lat.count, lat.rollbacks, lat.errors, lat.max_us) == (3000, 9, 3, 30_000)
    assert lat.p50_us == 1.0 and lat.p99_us == 30_000  # the median of the runs' own: p50 = 1.0, 1.1, 0.9
    assert a.consistency_ok is True


def test_a_stored_percentile_above_its_runs_max_reads_as_the_max():
    delivery = {"count": 100, "rollbacks": 0, "errors": 0, "histogram": hist(20_000, 36_190),
                "p50_us": 20_480.0, "p95_us": 37_748.736, "p99_us": 37_748.736, "max_us": 36_190.0}
    runs = [replace(run("a", 1000.0, r), by_type={"delivery": delivery}) for r in range(2)]
    lat = latencies(runs)["delivery"]
    assert (lat.p50_us, lat.p95_us, lat.p99_us, lat.max_us) == (20_480.0, 36_190.0, 36_190.0, 36_190.0)


@pytest.fixture
def data():
    return tpcc_report([run("a", 1000.0), run("b", 1500.0)], ["a", "b"], {"a": "postgres 17.10"}, 2, "tp",
                       "4 warehouse(s), 2 virtual user(s), 15 s ramp-up, 60 s measured")


def test_text_and_markdown_show_nopm_relative_and_the_hardware_table(data):
    text = render_text(data)
    assert "TPROC-C: 4 warehouse(s)" in text
    row = next(line for line in text.splitlines() if line.startswith("b "))
    assert row.split() == ["b", "1,500", "1.50", "?", "3,000", "1", "passed"]  # ?: one repeat, no interval
    header = next(line for line in text.splitlines() if line.startswith("target") and "cpu/no" in line)
    assert header.split() == ["target", "cpu/no", "server/no", "client/no", "client%", "bg/no", "bg%", "cs/no",
                              "wkb/no", "fl/no", "fl/s", "w_ms", "aqu"]
    md = render_text(data, markdown=True)
    assert md.startswith("# TPROC-C: tp") and "| a (postgres 17.10) | 1,000 | 1.00 | 2,000 | 1 | passed |" in md


def test_csv_json_and_html_carry_the_runs(data):
    rows = list(csv.DictReader(io.StringIO(render_csv(data))))
    assert list(rows[0]) == [*CSV_HEADER, *CAMPAIGN_COLUMNS] and [r["nopm"] for r in rows] == ["1000.0", "1500.0"]
    doc = json.loads(render_json(data))
    assert doc["targets"][1]["relative_nopm"]["value"] == pytest.approx(1.5)
    assert doc["runs"][0]["intervals"][0]["nopm"] == 1000.0
    page = render_html(replace(data, host={"hostname": "h"}))
    assert page.count("<svg") == 1 and page.count("<polyline") == 2 and "NOPM per interval" in page


def test_a_failed_run_is_listed_with_its_reason():
    data = tpcc_report([run("a", 1000.0), run("b", 0.0, status="failed", error="consistency check failed: 3.3.2.1")],
                       ["a", "b"])
    assert "b: consistency check failed: 3.3.2.1" in render_text(data)


def test_consistency_checks_are_on_unless_the_campaign_turns_them_off():
    spec = parse_campaign(tomllib.loads(campaign("[tpcc]\nwarehouses = 1")), "c.toml", Path("."), "c")
    off = parse_campaign(tomllib.loads(campaign("[tpcc]\nconsistency_checks = false")), "c.toml", Path("."), "c")
    assert spec.tpcc.consistency_checks is True and off.tpcc.consistency_checks is False
    assert off.to_dict()["tpcc"]["consistency_checks"] is False  # stored with the campaign, so reports know
    assert "consistency not checked" in setup_text(off.to_dict()) and "not checked" not in setup_text(spec.to_dict())


def test_runs_without_consistency_checks_read_as_not_checked_not_as_passed():
    unchecked = [run("a", 1000.0, consistency=[]), run("b", 1100.0, consistency=[])]
    data = tpcc_report(unchecked, ["a", "b"], setup=setup_text({"tpcc": {"consistency_checks": False}}))
    assert [s.consistency_ok for s in data.summaries] == [None, None]
    text = render_text(data)
    assert "passed" not in text and "consistency not checked" in text
    failed = [run("a", 1000.0, consistency=[{"clause": "3.3.2.1", "ok": False}]), run("a", 900.0, repeat=1)]
    assert tpcc_report(failed, ["a"]).summaries[0].consistency_ok is False
