"""The Insert Benchmark and TPROC-C reports, each format against a golden file built from a small
stored campaign and read back through `dbdrift report`, as the sysbench formats are."""
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from dbdrift.cli.main import main
from dbdrift.model import IBENCH_STEPS
from dbdrift.report.charts import CHART_CSS, CHART_SCRIPT
from dbdrift.report.page import CSS
from dbdrift.store.store import Store
from dbdrift.version import __version__
from tests.unit.test_ibench_report import step
from tests.unit.test_tpcc import WINDOW, run

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
CREATED_AT = "2026-01-02T03:04:05+00:00"
HOST = {"cpus": 4, "hostname": "golden-host", "cpu_model": "Test CPU",
        "warnings": [{"kind": "load", "message": "host 99% busy before the run", "hint": "stop what else runs"}]}
FORMATS = {"text": "txt", "markdown": "md", "csv": "csv", "json": "json", "html": "html", "post": "post.md"}


def _targets(store: Store, cid: int, names: tuple[str, ...]) -> list[int]:
    ids = []
    for pos, name in enumerate(names):
        tid = store.ensure_target(cid, name, "postgres", pos, pos == 0, {"name": name})
        store.set_target_facts(tid, server={"version": f"{17 + pos}.1"}, install=None)
        ids.append(tid)
    return ids


JITTER = (0.004, -0.006, 0.003)  # per repeat, so the intervals over repeats have a width


def _fixed_date(store: Store) -> None:
    with store.db:
        store.db.execute("UPDATE campaigns SET created_at = ?", (CREATED_AT,))


def ibench_store(path: Path) -> Path:
    """pg17 (base) and pg18, three repeats: pg18 loads about 20% faster, misses the SLA in qr100 and
    fails qp100 in its second repeat."""
    store = Store(path)
    cid = store.add_campaign("ib-golden", {"name": "ib-golden", "workload": "insert-benchmark", "repeats": 3,
                                           "insert_benchmark": {"clients": 2, "rows_l_i0": 1000, "query_s": 5,
                                                                "steps": list(IBENCH_STEPS[:6])}}, HOST, "0.1.0")
    for tid, (name, rate, ok) in zip(_targets(store, cid, ("pg17", "pg18")),
                                     (("pg17", 10_000.0, True), ("pg18", 12_000.0, False))):
        for r in range(3):
            jitter = 1 + (JITTER[r] if name == "pg18" else 0.0)
            results = [step(name, s, rate * (1 + 0.01 * r) * jitter) for s in IBENCH_STEPS[:4]]
            results += [step(name, "qr100", (200.0 if ok else 150.0) * jitter, 3000.0 + r),
                        step(name, "qp100", 200.0, 3000.0 - r, status="ok" if ok or r != 1 else "failed")]
            for result in results:
                store.add_ibench_step(tid, type(result)(**{**result.__dict__, "repeat": r}))
    _fixed_date(store)
    store.close()
    return path


def tpcc_store(path: Path) -> Path:
    """a (base) and b, three repeats each, b about 10% faster; a fourth run of b failed."""
    store = Store(path)
    cid = store.add_campaign("tp-golden", {"name": "tp-golden", "workload": "tpcc", "repeats": 3,
                                           "tpcc": {"warehouses": 4, "clients": 2, "rampup_s": 5, "duration_s": 60}},
                             HOST, "0.1.0")
    for tid, (name, nopm) in zip(_targets(store, cid, ("a", "b")), (("a", 1000.0), ("b", 1100.0))):
        for r in range(3):
            store.add_tpcc_run(tid, run(name, nopm * (1 + 0.01 * r) * (1 + (JITTER[r] if name == "b" else 0.0)),
                                        repeat=r))
        if name == "b":
            store.add_tpcc_run(tid, run(name, 1.0, repeat=3, status="failed", error="lost connection"))
    _fixed_date(store)
    store.close()
    return path


PG_FG = "postgres;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;exec_execute_message;PortalRun"
MY_FG = "connection;start_thread;do_handle_one_connection;do_command;dispatch_command;mysql_execute_command"
SP_STACKS = {  # pg sends statements in sp0 and calls PL/pgSQL functions in sp1; MariaDB the same in SQL procedures
    "pg": {PG_FG + ";standard_ExecutorRun;ExecModifyTable;ExecUpdate": 30, PG_FG + ";standard_ExecutorRun;ExecScan": 20,
           "postgres;main;PostgresMain;finish_xact_command;CommitTransactionCommand": 10,
           "postgres;main;PostgresMain;ReadCommand;pq_getbyte;secure_read": 10,
           "postgres;main;PostmasterMain;ServerLoop;AutoVacWorkerMain;do_autovacuum": 5, "dbdrift-driver;main": 25},
    "ma": {MY_FG + ";mysql_update;ha_innobase::update_row": 20, MY_FG + ";mysql_insert;write_record": 15,
           MY_FG + ";trans_commit_stmt;ha_commit_trans": 10, "connection;do_command;my_net_read;vio_read": 15,
           "mariadbd;start_thread;buf_flush_page_cleaner": 10, "dbdrift-driver;main": 30},
}


def tpcc_sp_store(path: Path) -> Path:
    """PostgreSQL and MariaDB, each without and with stored procedures (the sp axis), one repeat,
    with flamegraphs and the runnable count: the posts' sp0/sp1 table and the area table."""
    store = Store(path)
    axis = {"name": "sp", "levels": ["0", "1"], "engines": ["postgres", "mysql", "mariadb"], "settings": {}}
    cid = store.add_campaign("sp-golden", {"name": "sp-golden", "workload": "tpcc", "repeats": 1, "axes": [axis],
                                           "tpcc": {"warehouses": 1, "clients": 2, "rampup_s": 2, "duration_s": 60}},
                             HOST, "0.1.0")
    names = ("pg-sp0", "pg-sp1", "ma-sp0", "ma-sp1")
    for pos, (name, nopm) in enumerate(zip(names, (3000.0, 5400.0, 2400.0, 3000.0))):
        engine = "postgres" if name.startswith("pg") else "mariadb"
        tid = store.ensure_target(cid, name, engine, pos, pos == 0, {"name": name})
        store.set_target_facts(tid, server={"version": "17.10" if engine == "postgres" else "11.4.5"}, install=None)
        sp = name.endswith("sp1")
        stacks = {k: v * (2 if sp and "driver" not in k else 1) for k, v in SP_STACKS[name[:2]].items()}
        store.add_tpcc_run(tid, replace(run(name, nopm, folded=stacks, hardware={**WINDOW, "runnable": 1.5 + pos / 4}),
                                        procedures=sp))
    _fixed_date(store)
    store.close()
    return path


def as_golden(output: str) -> str:
    """A report as its golden file holds it: without what changes from run to run or version to version."""
    output = output.replace(__version__, "VERSION")  # goldens outlive a version bump
    output = re.sub(r'"generated_at": "[^"]*"', '"generated_at": "GENERATED"', output)  # the report's own date
    # the shared stylesheet and the charts' script stand as placeholders: test_html_report checks them whole in a page
    output = output.replace(f"<style>{CSS}", "<style>/* report/page.py CSS */\n")
    output = output.replace(CHART_CSS, "/* report/charts.py CHART_CSS */\n")
    return output.replace(CHART_SCRIPT, "<script>/* report/charts.py CHART_SCRIPT */</script>")


@pytest.mark.parametrize("make, stem", [(ibench_store, "ibench"), (tpcc_store, "tpcc"), (tpcc_sp_store, "tpcc-sp")])
@pytest.mark.parametrize("fmt", FORMATS)
def test_workload_report_format_matches_its_golden_file(tmp_path, capsys, make, stem, fmt):
    assert main(["report", "--store", str(make(tmp_path / "s.db")), "--format", fmt]) == 0
    output = as_golden(capsys.readouterr().out)
    golden = GOLDEN / f"{stem}.{FORMATS[fmt]}"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.write_text(output)
    assert output == golden.read_text()
