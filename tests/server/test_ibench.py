"""The Insert Benchmark end to end through the CLI at tiny sizes, on PostgreSQL and MariaDB:
every step runs, the table keeps its size from l.i1 on, the background insert rate is held,
and a server that cannot hold it is reported as an SLA miss."""
from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from tests.helpers import (dbdrift, interrupt_mid_run, postgres_processes_under, query, run_campaign, shared_work_dir,
                           start_dbdrift, write_campaign)

pytestmark = pytest.mark.server

SIZES = "[insert_benchmark]\nclients = 1\nrows_l_i0 = 5000\nrows_l_i1 = 2000\nrows_l_i2 = 500\nquery_s = 3\n"
STEPS = ["l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000"]
# Every commit waits 100 ms (commit_siblings = 0 applies commit_delay to every flush): at most
# ten 50-row INSERTs a second, so 1000 inserts/s per client cannot be held.
SLOW = 'settings = { synchronous_commit = "on", commit_delay = 100000, commit_siblings = 0 }'


def campaign(tmp: Path, name: str, targets: list[tuple[str, str]], extra: str = "") -> Path:
    return write_campaign(tmp, name, ['workload = "insert-benchmark"', "settle_s = 1", extra, SIZES], targets)


# a stored result's fields (workload_runs.record_json) as the columns of the table it had before schema 22
IBENCH_FIELDS = ", ".join([*(f"json_extract(s.record_json, '$.{c}') AS {c}" for c in (
    "step clients inserted deleted queries ips dps qps target_ips max_insert_us max_delete_us max_query_us "
    "table_rows db_bytes datadir_bytes").split()),
    *(f"json_extract(s.record_json, '$.{c}') AS {c}_json" for c in (
        "histograms per_second hardware events folded driver_spec").split())])


def steps(store: Path) -> dict[tuple[str, str], sqlite3.Row]:
    rows = query(store, f"SELECT t.name AS target, s.*, {IBENCH_FIELDS} FROM workload_runs s "
                        "JOIN targets t ON t.id = s.target_id WHERE s.workload = 'insert-benchmark' AND s.superseded = 0")
    return {(r["target"], r["step"]): r for r in rows}


@pytest.fixture(scope="module")
def postgres_run(tmp_path_factory):
    path = campaign(tmp_path_factory.mktemp("ibench-pg"), "ib-pg",
                    [("pg17", 'version = "17.10"\nsettings = { shared_buffers = "256MB" }'),
                     ("pg17slow", f'version = "17.10"\n{SLOW}')], "flamegraphs = true")
    return run_campaign(path, "--format", "json", timeout=900)


def test_every_step_runs_on_postgres_and_is_stored(postgres_run):
    store, result = postgres_run
    assert result.returncode == 0, result.stderr[-3000:]
    stored = steps(store)
    assert sorted(stored) == sorted((t, s) for t in ("pg17", "pg17slow") for s in STEPS)
    assert all(r["status"] == "ok" for r in stored.values())
    assert stored[("pg17", "l.i0")]["inserted"] == 5000 and stored[("pg17", "l.i0")]["deleted"] == 0
    assert stored[("pg17", "qr100")]["queries"] > 0 and stored[("pg17", "qp1000")]["queries"] > 0


def test_the_table_keeps_its_size_from_l_i1_on(postgres_run):
    stored = steps(postgres_run[0])
    for target in ("pg17", "pg17slow"):
        assert stored[(target, "l.x")]["table_rows"] == 5100
        for step in STEPS[2:]:
            row = stored[(target, step)]
            assert row["inserted"] == row["deleted"] > 0, step
            assert row["table_rows"] == 5100, step


def test_database_sizes_are_measured_after_every_step(postgres_run):
    stored = steps(postgres_run[0])
    for step in STEPS:
        row = stored[("pg17", step)]
        # pg_database_size of a few thousand rows: megabytes; the data directory holds it and the WAL
        assert 1_000_000 < row["db_bytes"] < row["datadir_bytes"] < 2 ** 31, (step, row["db_bytes"])
    assert stored[("pg17", "l.x")]["db_bytes"] > stored[("pg17", "l.i0")]["db_bytes"]  # the secondary indexes
    text = dbdrift("report", "--store", postgres_run[0])
    header = next(line for line in text.stdout.splitlines() if line.split()[:2] == ["target", "ips"])
    assert header.split().index("dbgb2") == header.split().index("dbgb1") + 1
    sizes = next(line for line in text.stdout.splitlines() if line.split()[:3] == ["target", "wkbpi", "l.i0"])
    assert "dbgb1 l.x" in sizes and "dbgb2 qp1000" in sizes  # the write and size table
    ratio = next(line for line in text.stdout.splitlines() if line.startswith("pg17slow ÷ pg17"))
    assert len(ratio.split()) >= 5


def test_the_background_insert_rate_is_held_and_a_slow_server_misses_the_sla(postgres_run):
    store, result = postgres_run
    stored = steps(store)
    for step in ("qr100", "qp100"):  # far below what the server can do, even on a busy machine
        row = stored[("pg17", step)]
        assert row["ips"] >= 0.95 * row["target_ips"], (step, row["ips"])
        # client 1's full seconds (a short tail is in the totals only) ran at the target rate
        per_second = json.loads(row["per_second_json"])
        assert per_second and per_second[-1]["t_ins"] <= row["inserted"]
        rates = [line["i_ips"] for line in per_second]
        assert abs(sum(rates) / len(rates) - row["target_ips"]) <= 0.1 * row["target_ips"], (step, rates)
    slow = stored[("pg17slow", "qp1000")]
    assert slow["ips"] < 0.95 * slow["target_ips"] == 950
    background = json.loads(result.stdout)["tables"]["background"]
    misses = {(row["name"], step) for row in background["rows"]
              for step, cell in zip(background["columns"], row["cells"]) if cell["color"] == "red"}
    assert ("pg17slow", "qp1000") in misses and ("pg17", "qr100") not in misses


def test_the_text_report_shows_the_three_summary_tables(postgres_run):
    store, _ = postgres_run
    text = dbdrift("report", "--store", store)
    assert text.returncode == 0, text.stderr
    for title in ("absolute throughput", "relative throughput", "background insert rate"):
        assert title in text.stdout.lower()
    assert "qp1000" in text.stdout and "pg17slow" in text.stdout


def test_every_step_runs_on_mariadb_with_a_constant_table_size(tmp_path):
    store = tmp_path / "store.db"
    path = campaign(tmp_path, "ib-ma", [("ma11.4", 'engine = "mariadb"\nversion = "11.4.5"')])
    result = dbdrift("run", path, "--store", store, work_dir=shared_work_dir("ibench-ma"), timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    stored = steps(store)
    assert sorted(s for _, s in stored) == sorted(STEPS)
    assert all(r["status"] == "ok" for r in stored.values())
    for step in STEPS[2:]:
        row = stored[("ma11.4", step)]
        assert row["inserted"] == row["deleted"] and row["table_rows"] == 5100, step
    qr100 = stored[("ma11.4", "qr100")]
    assert qr100["ips"] >= 0.95 * qr100["target_ips"] and qr100["queries"] > 0
    # InnoDB: the database's directory (its .ibd files) inside the data directory (ibdata, redo, undo)
    assert 100_000 < qr100["db_bytes"] < qr100["datadir_bytes"], (qr100["db_bytes"], qr100["datadir_bytes"])
    engine = json.loads(qr100["events_json"])  # InnoDB's own counters each second of the step
    assert engine["error"] == "" and len(engine["t"]) >= 2, engine
    assert all(v is not None and v >= 0 for v in engine["series"]["dirty_pages"] + engine["series"]["redo_mb"])
    assert engine["series"]["history_length"][0] is not None and engine["series"]["checkpoint_age_mb"][0] is not None


def test_postgres_steps_store_the_engines_counters_each_second_and_the_report_draws_them(postgres_run):
    store, _ = postgres_run
    for (target, step), row in steps(store).items():
        if row["elapsed_s"] < 2.5:
            assert row["events_json"] is None, (target, step)  # fewer than two readings: nothing to store
            continue
        engine = json.loads(row["events_json"])
        assert engine["error"] == "" and len(engine["t"]) >= 2, (target, step, engine)
        assert engine["t"] == sorted(engine["t"]) and set(engine["series"]) == {"wal_mb", "dead_tuples",
                                                                                 "checkpoint_buffers"}
        if step in ("l.i1", "l.i2"):  # every insert writes WAL and every delete leaves a dead tuple
            assert sum(engine["series"]["wal_mb"]) > 0 and max(engine["series"]["dead_tuples"]) > 0, (target, step)
    page = dbdrift("report", "--store", store, "--format", "html").stdout
    assert "l.i2: WAL written (MB/s)" in page and "l.i2: dead tuples" in page  # pg17slow's l.i2 lasts 10 s
    doc = json.loads(dbdrift("report", "--store", store, "--format", "json").stdout)
    li1 = next(s for s in doc["steps"] if s["step"] == "l.i2")["targets"]["pg17slow"]
    assert li1["engine_events"]["series"]["wal_mb"] and isinstance(li1["dips"], list)


def test_steps_store_the_servers_stacks_and_the_report_draws_one_per_step_and_target(postgres_run, tmp_path):
    store, run = postgres_run
    why = [line for line in run.stderr.splitlines() if "flamegraph" in line]  # a step without stacks says why
    for step in ("l.i1", "l.i2"):  # pg17slow's insert steps last seconds: perf has samples of them
        folded = json.loads(steps(store)[("pg17slow", step)]["folded_json"] or "{}")
        assert sum(folded.values()) > 10 and all(stack.startswith("postgres") for stack in folded), list(folded)[:3]
    result = dbdrift("report", "--store", store, "--flamegraphs", tmp_path / "f")
    assert result.returncode == 0, result.stderr
    names = {p.name for p in (tmp_path / "f").iterdir()}  # pg17's insert steps last 0.1 s: too short for samples
    assert {"l.i1.pg17slow.svg", "l.i1.pg17slow.folded", "qr100.pg17slow-vs-pg17.diff.svg"} <= names, (sorted(names),
                                                                                                        why)


def test_ctrl_c_keeps_the_stored_steps_stops_the_server_and_resume_runs_the_target_again(tmp_path):
    work = shared_work_dir("ibench-intr")
    store = tmp_path / "store.db"
    path = campaign(tmp_path, "ib-intr", [("pg17", 'version = "17.10"')])
    path.write_text(path.read_text().replace("query_s = 3", 'query_s = 20\nsteps = ["l.i0", "l.x", "l.i1", "qr100"]'))
    proc = start_dbdrift("run", path, "--store", store, "--no-report", work_dir=work)
    interrupt_mid_run(proc, lambda: _has_step(store, "l.i1"), after_s=2.0)  # inside qr100 (20 s)
    stored = steps(store)
    assert [stored[("pg17", s)]["status"] for s in ("l.i0", "l.x", "l.i1", "qr100")] == ["ok", "ok", "ok", "interrupted"]
    assert postgres_processes_under(work) == []
    result = dbdrift("run", path, "--store", store, "--resume", "--no-report", work_dir=work, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    again = steps(store)  # the rerun superseded the first attempt
    assert all(again[("pg17", s)]["status"] == "ok" for s in ("l.i0", "l.x", "l.i1", "qr100"))


def _has_step(store: Path, step: str) -> bool:
    return store.exists() and any(s == step for _, s in steps(store))


def test_clients_sharing_one_table_build_its_indexes_once(tmp_path):
    """shared_table with two clients: l.x creates the secondary indexes once (the first client
    of the table), not once per client, which failed with "already exists"."""
    path = tmp_path / "shared.toml"
    path.write_text('name = "ib-shared"\nworkload = "insert-benchmark"\nsettle_s = 0\n[insert_benchmark]\n'
                    "clients = 2\nrows_l_i0 = 4000\nrows_l_i1 = 1000\nquery_s = 2\nshared_table = true\n"
                    'deletes = false\nsteps = ["l.i0", "l.x", "l.i1"]\n'
                    '[[targets]]\nname = "pg17"\nversion = "17.10"\n')
    store = tmp_path / "s.db"
    result = dbdrift("run", path, "--store", store, work_dir=shared_work_dir("ibench-shared"), timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    done = steps(store)
    assert {step for _, step in done} == {"l.i0", "l.x", "l.i1"}
    assert all(row["error"] is None for row in done.values())
    assert done[("pg17", "l.i1")]["table_rows"] == 4000 + 200 + 1000  # l.x adds 100 rows per client


@pytest.fixture(scope="module")
def repeated_io_bound(tmp_path_factory):
    """Two PostgreSQL targets, three repeats each (fresh servers: an interval over repeats needs
    three), the IO-bound cache, three steps."""
    tmp = tmp_path_factory.mktemp("ibench-rep")
    path = tmp / "rep.toml"
    path.write_text('name = "ib-rep"\nworkload = "insert-benchmark"\nrepeats = 3\nsettle_s = 1\n'
                    "[insert_benchmark]\nrows_l_i0 = 20000\nrows_l_i1 = 4000\nio_bound = true\n"
                    'steps = ["l.i0", "l.x", "l.i1"]\n'
                    '[[targets]]\nname = "a"\nversion = "17.10"\n[[targets]]\nname = "b"\nversion = "17.10"\n')
    return run_campaign(path, "--format", "json", timeout=900)


def test_repeats_run_on_fresh_servers_in_abba_order_and_give_the_relative_table_an_interval(repeated_io_bound):
    store, result = repeated_io_bound
    assert result.returncode == 0, result.stderr[-3000:]
    rows = query(store, "SELECT t.name, s.repeat, json_extract(s.record_json, '$.step'), s.status, s.position "
                        "FROM workload_runs s JOIN targets t ON t.id = s.target_id ORDER BY s.id")
    assert all(status == "ok" for *_, status, _ in rows)
    order = [(name, repeat, place) for name, repeat, step, _, place in rows if step == "l.i0"]
    # A B, then B A, then A B again; each run's place stored
    assert order == [("a", 0, 0), ("b", 0, 1), ("b", 1, 0), ("a", 1, 1), ("a", 2, 0), ("b", 2, 1)]
    assert [line for line in result.stderr.splitlines() if "repeat 3/3" in line]  # progress names the repeat
    relative = json.loads(result.stdout)["tables"]["relative"]
    cell = next(r for r in relative["rows"] if r["name"] == "b")["cells"][0]
    assert cell["lower"] < cell["value"] < cell["upper"], cell
    assert next(r for r in json.loads(result.stdout)["tables"]["throughput"]["rows"]
                if r["name"] == "a")["cells"][0]["repeats"] == 3


def test_io_bound_gives_every_server_the_small_cache(repeated_io_bound):
    facts = [json.loads(r[0]) for r in query(repeated_io_bound[0], "SELECT server_json FROM targets")]
    assert [f["settings"]["shared_buffers"] for f in facts] == ["2048", "2048"]  # 16MB in 8 kB pages


def test_an_insert_benchmark_planned_to_detect_runs_the_repeats_its_calibration_plans(tmp_path):
    """detect over whole repeats: calibrate (A/A, 3 starts), plan, run within the budget, and name
    in the report which steps reached the threshold."""
    work, store = shared_work_dir("ibench-detect"), tmp_path / "s.db"
    lines = ['name = "ib-detect"', 'workload = "insert-benchmark"', "settle_s = 0",
             "[insert_benchmark]\nclients = 1\nrows_l_i0 = 5000\nrows_l_i1 = 2000\nquery_s = 2\n"
             'steps = ["l.i0", "l.i1", "qr100"]',
             "[[targets]]", 'name = "pg17"', 'version = "17.10"', "[[targets]]", 'name = "pg18"', 'version = "18.4"']
    path = tmp_path / "ib.toml"
    path.write_text("\n".join(lines) + "\n")
    calibrated = dbdrift("calibrate", path, "--store", store, "--set", "repeats=3", "--no-report", work_dir=work)
    assert calibrated.returncode == 0, calibrated.stderr[-2000:]
    check = dbdrift("run", path, "--store", store, "--check", "--detect", "50%", "--budget", "40s", work_dir=work)
    assert check.returncode == 0, check.stderr[-2000:]
    assert "detect 50.0%: planned from calibration calibrate-pg17 (#1, " in check.stdout
    planned = {m.group(1): int(m.group(2))  # the most starts of each step (sequential: "3 to M starts, stopping")
               for m in re.finditer(r"^    (l\.i0|l\.i1|qr100): (?:\d+ to )?(\d+) starts[,(]", check.stdout, re.M)}
    assert sorted(planned) == ["l.i0", "l.i1", "qr100"], check.stdout
    assert "  repeats: each start runs every test; another runs while a test is undecided" in check.stdout
    result = dbdrift("run", path, "--store", store, "--detect", "50%", "--budget", "40s", "--format", "json",
                     work_dir=work)
    assert result.returncode == 0, result.stderr[-3000:]
    db = sqlite3.connect(store)
    (campaign_id,) = db.execute("SELECT id FROM campaigns WHERE name = 'ib-detect'").fetchone()
    ran = {r[0] for r in db.execute("SELECT s.repeat FROM workload_runs s JOIN targets t ON t.id = s.target_id "
                                    "WHERE t.campaign_id = ? AND t.name = 'pg18' "
                                    "AND json_extract(s.record_json, '$.step') = 'qr100'",
                                    (campaign_id,))}
    most = max(planned.values())
    assert ran == set(range(len(ran))) and 3 <= len(ran) <= most, (ran, most)
    for step in ("l.i0", "l.i1", "qr100"):  # the sequential rule (the default) says where each step stopped
        assert re.search(rf"^detect: {re.escape(step)}: (different|same|unknown) after [3-{len(ran)}] starts \(",
                         result.stderr, re.M), result.stderr[-3000:]
    notes = json.loads(result.stdout)["notes"]
    note = next(n for n in notes if n.startswith("detect 50.0%:"))
    assert re.match(rf"detect 50.0%: [0-3] of 3 steps reached it after {len(ran)} starts", note), note
    assert any(n.startswith("stops (sequential, detect 50.0%): ") for n in notes), notes
    spec = json.loads(db.execute("SELECT spec_json FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()[0])
    db.close()
    assert spec["detect"] == 0.5 and spec["budget"] == 40
    assert [t["test"] for t in spec["detect_plan"]["tests"]] == ["l.i0", "l.i1", "qr100"]
    assert postgres_processes_under(work) == []
