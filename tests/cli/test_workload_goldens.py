"""The Insert Benchmark and TPROC-C reports, each format against a golden file built from a small
stored campaign and read back through `dbdrift report`, as the sysbench formats are."""
import os
import re
from pathlib import Path

import pytest

from dbdrift.cli.main import main
from dbdrift.model import IBENCH_STEPS
from dbdrift.report.page import CSS
from dbdrift.store.store import Store
from dbdrift.version import __version__
from tests.unit.test_ibench_report import step
from tests.unit.test_tpcc import run

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


@pytest.mark.parametrize("make, stem", [(ibench_store, "ibench"), (tpcc_store, "tpcc")])
@pytest.mark.parametrize("fmt", FORMATS)
def test_workload_report_format_matches_its_golden_file(tmp_path, capsys, make, stem, fmt):
    assert main(["report", "--store", str(make(tmp_path / "s.db")), "--format", fmt]) == 0
    output = capsys.readouterr().out.replace(__version__, "VERSION")  # goldens outlive a version bump
    output = re.sub(r'"generated_at": "[^"]*"', '"generated_at": "GENERATED"', output)  # the report's own date
    # the shared stylesheet is pinned once, by the sysbench page's golden (report.html)
    output = output.replace(f"<style>{CSS}", "<style>/* report/page.py CSS */\n")
    golden = GOLDEN / f"{stem}.{FORMATS[fmt]}"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.write_text(output)
    assert output == golden.read_text()
