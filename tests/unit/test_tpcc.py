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
from dbdrift.analysis.tpcc import hardware_per_new_order, host_cpu, latencies, procedures_table, summarize
from dbdrift.driver.protocol import bucket_index
from dbdrift.errors import UserError
from dbdrift.model import TpccResult
from dbdrift.workloads.registry import parse_campaign
from dbdrift.workloads.tpcc.report import CSV_HEADER, render_csv, render_html, render_json, render_text
from dbdrift.workloads.tpcc.catalog import setup_text
from dbdrift.workloads.tpcc.plan import procedures_of
from dbdrift.workloads.tpcc.results import tpcc_report


def campaign(extra: str) -> str:
    return f'workload = "tpcc"\n{extra}\n[[targets]]\nname = "a"\nversion = "17.10"\n'


def test_a_tpcc_campaign_reads_its_sizes():
    spec = parse_campaign(tomllib.loads(campaign(
        'repeats = 3\n[tpcc]\nwarehouses = 8\nclients = 16\nload_clients = 4\nrampup_s = "1m"\nduration_s = "10m"\n'
        "procedures = true")), "c.toml", Path("."), "c")
    t = spec.params
    assert (t.warehouses, t.clients, t.load_clients, t.rampup_s, t.duration_s, t.procedures) == (8, 16, 4, 60, 600,
                                                                                                 True)
    assert spec.repeats == 3 and spec.to_dict()["tpcc"]["warehouses"] == 8
    assert t.loaders(2) == 4 and parse_campaign(tomllib.loads(campaign("[tpcc]\nwarehouses = 1")), "c", Path("."),
                                                "c").params.loaders(8) == 1  # never more loaders than warehouses


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
    assert spec.params.consistency_checks is True and off.params.consistency_checks is False
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


def test_procedures_false_and_true_make_each_target_two_variants_sp0_and_sp1():
    spec = parse_campaign(tomllib.loads(
        'workload = "tpcc"\n[tpcc]\nprocedures = [false, true]\n[[targets]]\nname = "pg"\nversion = "17.10"\n'
        '[[targets]]\nname = "ma"\nengine = "mariadb"\nversion = "11.4.5"\n'), "c.toml", Path("."), "c")
    assert [(t.name, t.base) for t in spec.targets] == [("pg-sp0", True), ("pg-sp1", False), ("ma-sp0", False),
                                                        ("ma-sp1", False)]
    assert [procedures_of(t, spec.params) for t in spec.targets] == [False, True, False, True]
    assert "without and with stored procedures (sp0, sp1)" in setup_text(spec.to_dict())


def test_the_procedures_axis_changes_fastest_after_the_campaigns_own_axes():
    spec = parse_campaign(tomllib.loads(campaign(
        '[axes.sync]\n0 = { postgres = { synchronous_commit = "off" } }\n1 = { postgres = { synchronous_commit = "on" } }\n'
        '[tpcc]\nprocedures = [true, false]')), "c.toml", Path("."), "c")
    assert [t.name for t in spec.targets] == ["a-sync0_sp1", "a-sync0_sp0", "a-sync1_sp1", "a-sync1_sp0"]
    assert spec.targets[0].settings == {} and spec.targets[0].base  # the first value written is the base


@pytest.mark.parametrize("value, needle", [("[true]", "neither a boolean nor both"),
                                           ("[true, true]", "neither a boolean nor both"),
                                           ("[0, 1]", "neither a boolean nor both")])
def test_procedures_as_a_list_needs_both_booleans(value, needle):
    with pytest.raises(UserError, match=needle):
        parse_campaign(tomllib.loads(campaign(f"[tpcc]\nprocedures = {value}")), "c.toml", Path("."), "c")


def test_the_procedures_axis_refuses_an_axis_of_the_same_name():
    with pytest.raises(UserError, match=r"\[axes.sp\] names too"):
        parse_campaign(tomllib.loads(campaign(
            '[axes.sp]\n0 = { postgres = {} }\n1 = { postgres = {} }\n[tpcc]\nprocedures = [false, true]')),
            "c.toml", Path("."), "c")


def sp_data():
    runs = [replace(run("pg-sp0", 3000.0), procedures=False), replace(run("pg-sp1", 6000.0), procedures=True),
            replace(run("ma-sp0", 1500.0), procedures=False), replace(run("ma-sp1", 1500.0), procedures=True)]
    return tpcc_report(runs, ["pg-sp0", "pg-sp1", "ma-sp0", "ma-sp1"], ncpu=2)


def test_the_posts_table_pairs_sp0_and_sp1_per_dbms_with_nopm_and_cpu_per():
    rows = procedures_table(sp_data().summaries)
    # cpuPer = ((us + sy) / NOPM) * 1000: (40 + 10) / 3000 * 1000
    assert [(r.name, r.nopm[False], r.nopm[True], r.ratio) for r in rows] == [("pg", 3000.0, 6000.0, 2.0),
                                                                               ("ma", 1500.0, 1500.0, 1.0)]
    assert rows[0].cpu_per == {False: pytest.approx(50 / 3000 * 1000), True: pytest.approx(50 / 6000 * 1000)}
    text = render_text(sp_data())
    assert "-- NOPM and cpuPer without and with stored procedures" in text
    assert next(ln for ln in text.splitlines() if ln.startswith("pg ")).split() == ["pg", "3,000", "6,000", "2.00",
                                                                                   "16.667", "8.333"]
    assert json.loads(render_json(sp_data()))["procedures_table"][1] == {
        "dbms": "ma", "nopm_sp0": 1500.0, "nopm_sp1": 1500.0, "sp1_over_sp0": 1.0,
        "cpu_per_sp0": pytest.approx(100 / 3), "cpu_per_sp1": pytest.approx(100 / 3)}


def test_targets_that_ran_one_way_only_get_no_procedures_table(data):
    assert procedures_table(data.summaries) == [] and "stored procedures" not in render_text(data)


def test_the_vmstat_block_splits_cpu_per_new_order_into_user_and_system_beside_r_and_cs_per_s():
    host = host_cpu([run("a", 3000.0, hardware={**WINDOW, "runnable": 1.75})], ncpu=2)
    # 40% user, 10% system of 2 CPUs for 60 s over 3000 new orders: 16,000 and 4,000 µs
    assert (host["us/no"], host["sy/no"], host["cpu/no"]) == (pytest.approx(16_000), pytest.approx(4_000),
                                                              pytest.approx(20_000))
    assert (host["us"], host["sy"], host["r"], host["cs/s"]) == (40.0, 10.0, 1.75, 2000.0)
    assert host_cpu([run("a", 3000.0)], 2)["r"] is None  # windows stored before the runnable count was read


def test_a_tpcc_run_with_flamegraphs_gets_an_area_table_with_the_base_beside_in_every_format():
    fg = "postgres;PostgresMain;exec_execute_message;standard_ExecutorRun;ExecModifyTable;ExecUpdate"
    runs = [run("a", 1000.0, folded={fg: 1, "dbdrift-driver;main": 1}), run("b", 1000.0, folded={fg: 4}),
            run("b", 1000.0, repeat=1, folded={fg: 4})]
    data = tpcc_report(runs, ["a", "b"])
    text = render_text(data)
    assert next(ln for ln in text.splitlines() if ln.startswith("  update")).split() == ["update", "50.0", "100.0"]
    assert next(ln for ln in text.splitlines() if ln.startswith("samples")).split() == ["samples", "2", "8"]
    assert "| client | 50.0 | 0.0 |" in render_text(data, markdown=True)
    assert json.loads(render_json(data))["flame_areas"]["a"]["areas"]["client"] == 0.5
    assert [r["flame_update"] for r in csv.DictReader(io.StringIO(render_csv(data)))] == ["0.5", "1.0", "1.0"]
    assert "flamegraph areas (% of samples)" in render_html(data)
