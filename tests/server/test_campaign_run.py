"""End to end through the CLI against real PostgreSQL servers (17.10 and 18.4, fetched)."""
from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from dbdrift import cpus
from dbdrift.plan import rounds
from tests.helpers import (allowed_of, assert_one_failed_run, dbdrift, interrupt_mid_run, kill_server_mid_run,
                           postgres_processes_under, process_tree, shared_work_dir, start_dbdrift, tasks_of, wait_for)

pytestmark = pytest.mark.server

TESTS = ["point-query", "random-points_range=10", "range-covered-pk", "scan", "read-only_range=10",
         "read-only-count", "update-index", "write-only", "delete", "insert"]


def campaign(tmp: Path, name: str, tests=TESTS, read_s=1.5, targets=(("pg17", "17.10"), ("pg18", "18.4")),
             extra: str = "") -> Path:
    lines = [f'name = "{name}"', "tables = 1", "rows = 20000", "threads = [1]", "warmup_s = 0.5",
             f"read_s = {read_s}", f"write_s = {read_s}", "scan_warm_s = 0.5", "settle_s = 0",
             "warm_runs = false", f"tests = {json.dumps(list(tests))}", extra]
    for i, (tname, version) in enumerate(targets):
        lines += ["[[targets]]", f'name = "{tname}"', f'version = "{version}"', f"base = {str(i == 0).lower()}",
                  'settings = { shared_buffers = "256MB" }']
    path = tmp / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def runs(store: Path) -> list[dict]:
    """The store's current runs with their target's name ([] before dbdrift has made the store)."""
    if not store.exists():
        return []
    db = sqlite3.connect(store)
    db.row_factory = sqlite3.Row
    rows = [dict(r) for r in db.execute(
        "SELECT runs.*, targets.name AS target FROM runs JOIN targets ON targets.id = runs.target_id "
        "WHERE runs.superseded = 0 ORDER BY runs.id")]
    db.close()
    return rows


WORK: dict[str, Path] = {}  # each module fixture's work directory, for its leak check


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("e2e")
    store = tmp / "store.db"
    WORK["e2e"] = shared_work_dir("e2e")
    result = dbdrift("run", campaign(tmp, "e2e"), "--store", store, "--format", "json", work_dir=WORK["e2e"])
    return tmp, store, result


def test_campaign_runs_every_test_on_both_versions(finished):
    tmp, store, result = finished
    assert result.returncode == 0, result.stderr[-3000:]
    stored = runs(store)
    assert sorted((r["target"], r["test"]) for r in stored) == sorted((t, x) for t in ("pg17", "pg18") for x in TESTS)
    assert all(r["status"] == "ok" and r["value"] > 0 for r in stored)


def test_each_run_stores_its_intervals_and_sysbench_style_counts(finished):
    _, store, _ = finished
    db = sqlite3.connect(store)
    for test, stmts in (("read-only_range=10", 16), ("write-only", 6), ("point-query", 1)):
        events, statements, nint = db.execute(
            "SELECT r.events, r.statements, (SELECT count(*) FROM intervals i WHERE i.run_id = r.id) "
            "FROM runs r WHERE r.test = ?", (test,)).fetchone()
        assert statements == events * stmts and nint >= 1
    db.close()


def test_each_run_stores_the_hardware_of_its_measured_window_and_1s_samples(finished):
    _, store, _ = finished
    db = sqlite3.connect(store)
    db.row_factory = sqlite3.Row
    for row in db.execute("SELECT * FROM runs WHERE test IN ('point-query', 'update-index')"):
        hw = json.loads(row["hardware_json"])
        # in turns: this target's share of the window between the driver's stamped edges, so its
        # measured seconds give or take the switches between turns (docs/hardware.md)
        assert abs(hw["elapsed_s"] - row["measured_s"]) < 0.3 + 0.2 * row["measured_s"]
        assert hw["server_cpu_s"] > 0 and hw["client_cpu_s"] > 0 and hw["cs"] > 0
        assert hw["cpu_user_pct"] + hw["cpu_sys_pct"] > 0
        assert db.execute("SELECT count(*) FROM samples WHERE run_id = ?", (row["id"],)).fetchone()[0] >= 1
        assert "warnings" in json.loads(row["host_json"])
    db.close()


def test_report_metrics_shows_hardware_per_operation_absolute_and_relative(finished):
    _, store, _ = finished
    text = dbdrift("report", "--store", store, "--metrics")
    assert text.returncode == 0, text.stderr
    assert "hardware per operation" in text.stdout and "-- update-index x1" in text.stdout
    assert "pg18 (relative)" in text.stdout
    doc = json.loads(dbdrift("report", "--store", store, "--metrics", "--format", "json").stdout)
    point = [m for m in doc["metrics"] if m["test"] == "point-query"]
    assert {m["target"] for m in point} == {"pg17", "pg18"}
    assert all(m["absolute"]["srv_us/o"] > 0 and m["absolute"]["cli_us/o"] > 0 for m in point)
    assert next(m for m in point if m["target"] == "pg18")["relative"]["cpu_us/o"] > 0


def test_the_servers_cpu_is_split_by_process_title_and_the_device_counts_flushes_and_waits(finished):
    """PostgreSQL's background processes by title (metrics/roles.py): a write test's window holds
    their CPU apart from the backends', and the data directory's device its flushes and times."""
    _, store, _ = finished
    db = sqlite3.connect(store)
    host = json.loads(db.execute("SELECT host_json FROM campaigns").fetchone()[0])
    assert host["fsync"]["ops"] >= 5 and host["fsync"]["p50_us"] > 0  # measured in the work directory
    devices = set()
    for (raw,) in db.execute("SELECT hardware_json FROM runs WHERE test = 'update-index'"):
        hw = json.loads(raw)
        devices.add(hw.get("device"))
        assert set(hw["background"]) <= {"postmaster", "autovacuum", "checkpointer", "bgwriter", "walwriter",
                                         "walsummarizer", "io workers", "replication"}, hw["background"]
        assert hw["background"] and 0 <= hw["server_bg_cpu_s"] < hw["server_cpu_s"], hw  # the backend did the work
        assert abs(sum(hw["background"].values()) - hw["server_bg_cpu_s"]) < 1e-3
        if hw.get("device"):  # a block device (not tmpfs): every commit's WAL flush reaches it
            assert hw["flushes"] > 0 and hw["writes"] > 0 and hw["write_ms"] >= 0 and hw["queue_ms"] >= 0, hw
    db.close()
    doc = json.loads(dbdrift("report", "--store", store, "--metrics", "--format", "json").stdout)
    update = [m["absolute"] for m in doc["metrics"] if m["test"] == "update-index"]
    assert all(0 <= m["bg%"] < 100 and m["bg_us/o"] >= 0 for m in update), update
    if None not in devices:  # the WAL writer flushes what the commits wrote (synchronous_commit = off)
        assert all(m["fl/s"] > 0 and m["fl/o"] > 0 and m["w_ms"] is not None for m in update), update


@pytest.fixture(scope="module")
def rechecked(finished, tmp_path_factory):
    """`recheck --pin-defaults` of update-index on a copy of the store, its writes 1 s (--set)."""
    _, store, _ = finished
    copy = tmp_path_factory.mktemp("recheck") / "store.db"
    source, target = sqlite3.connect(store), sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    result = dbdrift("recheck", "--pin-defaults", "--store", copy, "--tests", "update-index", "--set", "write_s=1",
                     "--format", "json", work_dir=shared_work_dir("e2e"))
    return copy, result


def test_recheck_runs_the_newer_server_with_the_older_ones_defaults_and_the_report_reads_it(rechecked):
    """pg18 runs beside pg17 with pg17's values of the defaults that differ (17 -> 18:
    effective_io_concurrency 1 vs 16), on a real server that takes them, as campaign e2e-pinned."""
    copy, result = rechecked
    assert result.returncode == 0, result.stderr[-3000:]
    db = sqlite3.connect(copy)
    db.row_factory = sqlite3.Row
    (campaign_id,) = db.execute("SELECT id FROM campaigns WHERE name = 'e2e-pinned'").fetchone()
    servers = {r["name"]: json.loads(r["server_json"]) for r in
               db.execute("SELECT name, server_json FROM targets WHERE campaign_id = ?", (campaign_id,))}
    assert sorted(servers) == ["pg17", "pg18"]
    pinned, older = servers["pg18"]["settings"], servers["pg17"]["settings"]
    assert pinned["effective_io_concurrency"] == older["effective_io_concurrency"] == "1"
    assert pinned["maintenance_io_concurrency"] == older["maintenance_io_concurrency"]
    assert "effective_io_concurrency" in servers["pg18"]["config_text"]
    ok = db.execute("SELECT count(*) FROM runs WHERE status = 'ok' AND target_id IN "
                    "(SELECT id FROM targets WHERE campaign_id = ?)", (campaign_id,)).fetchone()[0]
    assert ok == 2  # update-index on each
    db.close()
    drift = json.loads(result.stdout)["default_drift"]  # the recheck's own report: nothing left to drift in what it pinned
    assert all(row["setting"] not in ("effective_io_concurrency", "maintenance_io_concurrency")
               for table in drift for row in table["settings"]), drift


@pytest.mark.fault("store")
def test_recheck_runs_with_the_values_its_set_gives(rechecked):
    """--set write_s=1 reaches the recheck's campaign and its runs (the campaign's own is 1.5 s)."""
    copy, result = rechecked
    assert result.returncode == 0, result.stderr[-3000:]
    db = sqlite3.connect(copy)
    spec = json.loads(db.execute("SELECT spec_json FROM campaigns WHERE name = 'e2e-pinned'").fetchone()[0])
    durations = {r[0] for r in db.execute("SELECT r.duration_s FROM runs r JOIN targets t ON t.id = r.target_id "
                                          "JOIN campaigns c ON c.id = t.campaign_id WHERE c.name = 'e2e-pinned'")}
    db.close()
    assert spec["write_s"] == 1 and durations == {1.0}


def test_report_json_has_rqps_for_every_test(finished):
    _, _, result = finished
    doc = json.loads(result.stdout)
    rows = [r for r in doc["rows"] if r["target"] == "pg18"]
    assert {r["test"] for r in rows} == set(TESTS)
    assert all(r["reference"] == "pg17" and r["rqps"] > 0 for r in rows)
    assert {r["group"] for r in rows} == {"point", "range-noagg", "range-agg", "writes"}


def test_server_facts_are_recorded(finished):
    _, store, _ = finished
    db = sqlite3.connect(store)
    facts = {name: json.loads(server) for name, server in db.execute("SELECT name, server_json FROM targets")}
    assert facts["pg17"]["version"] == "17.10" and facts["pg18"]["version"] == "18.4"
    assert "PostgreSQL 18.4" in facts["pg18"]["version_string"]
    assert facts["pg18"]["settings"]["data_checksums"] == "off" == facts["pg17"]["settings"]["data_checksums"]
    assert facts["pg18"]["settings"]["synchronous_commit"] == "off"
    # no TCP: a socket in the server's private run directory is the only way in
    assert facts["pg18"]["settings"]["listen_addresses"] == ""
    assert facts["pg18"]["settings"]["unix_socket_permissions"] == "0700"
    db.close()


def test_every_settle_leaves_each_table_all_visible_for_index_only_scans(finished):
    _, store, _ = finished
    db = sqlite3.connect(store)
    settles = [(name, label, json.loads(detail)) for name, label, detail in db.execute(
        "SELECT t.name, s.label, s.detail_json FROM steps s JOIN targets t ON t.id = s.target_id "
        "WHERE s.kind = 'settle' ORDER BY s.id")]
    db.close()
    # after the load and after the write phase, on both versions
    assert sorted((name, label) for name, label, _ in settles) == sorted(
        (t, f"settle after {what}") for t in ("pg17", "pg18") for what in ("load", "the write phase"))
    assert all(d["pages_not_all_visible"] == {} and 1 <= d["vacuum_passes"] <= 5 for *_, d in settles), settles


def test_report_text_and_markdown_render_from_the_store(finished):
    _, store, _ = finished
    text = dbdrift("report", "--store", store)
    assert text.returncode == 0 and "col-1 : pg18 (postgres 18.4)" in text.stdout
    md = dbdrift("report", "--store", store, "--format", "markdown")
    assert "### range queries with aggregation" in md.stdout


def test_no_server_is_left_running(finished):
    """This run's own work directory: the other test worker's servers live beside it."""
    assert postgres_processes_under(WORK["e2e"]) == []


def test_resume_runs_nothing_when_everything_is_stored(finished):
    tmp, store, _ = finished
    before = len(runs(store))
    result = dbdrift("run", tmp / "e2e.toml", "--store", store, "--resume", work_dir=shared_work_dir("e2e"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "already stored" in result.stderr
    assert len(runs(store)) == before


def _affinities_during_a_run(proc, work: Path) -> tuple[set, dict]:
    """While a timed run is on: the CPU sets of the driver's threads and of every server process
    (postmaster, background processes and the driver's backends)."""
    def timed_driver():
        for pid in process_tree(proc.pid):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if cmd[0].endswith(b"dbdrift-driver") and cmd[1:2] == [b"run"]:
                return pid
        return None

    driver = wait_for(timed_driver, 240, "a timed driver run", proc)
    time.sleep(1.0)  # inside the run: every backend is connected
    driver_sets = {allowed_of(tid) for tid in tasks_of(driver)} - {None}
    pids = [pid for postmaster in postgres_processes_under(work) for pid in process_tree(postmaster)]
    return driver_sets, {"pids": pids, "sets": {allowed_of(pid) for pid in pids} - {None}}


def _postmaster_pid(work: Path, name: str, target: str) -> int | None:
    """The postmaster of the running server of `target` (each server has a run directory of
    its own, named after campaign and target)."""
    for pidfile in work.glob(f"{name}-{target}-*/data/postmaster.pid"):
        try:
            return int(pidfile.read_text().splitlines()[0])
        except (OSError, ValueError, IndexError):
            continue
    return None


@pytest.mark.parametrize("order", ["sequential", "turns"])
def test_a_server_killed_mid_run_is_stored_as_failed_and_the_next_target_still_runs(tmp_path, order):
    # sequential: the kill lands inside pg17's second run; turns: inside the second run in
    # which both take turns, which pg18 then runs again alone. Either way one failed run is stored.
    work = shared_work_dir("crash")
    store = tmp_path / "s.db"
    tests = ["point-query", "update-index", "point-query.pre", "range-covered-pk"]
    proc = start_dbdrift("run", campaign(tmp_path, "crash", tests=tests, read_s=3, extra=f'order = "{order}"'),
                         "--store", store, "--no-report", work_dir=work)
    # a second in: well inside the next run (0.5 s warmup + 3 s)
    err = kill_server_mid_run(proc, lambda: any(r["target"] == "pg17" for r in runs(store)),
                              lambda: _postmaster_pid(work, "crash", "pg17"))
    stored = runs(store)
    assert_one_failed_run(stored, "pg17")
    # what pg17 did not run is stored as skipped, said in the summary and in the report
    skipped = [r for r in stored if r["status"] == "skipped"]
    assert skipped and {r["target"] for r in skipped} == {"pg17"}
    assert all(r["error"] == "skipped: server died" for r in skipped)
    assert f"{len(skipped)} skipped: pg17 server died" in err
    report = dbdrift("report", "--store", store, "--format", "json").stdout
    cells = {r["test"]: r["status"] for r in json.loads(report)["rows"] if r["target"] == "pg18"}
    assert "pg17: skipped: server died" in cells.values()
    assert [r["test"] for r in stored if r["target"] == "pg18" and r["status"] == "ok"] == \
        ["point-query.pre_range=100", "update-index", "point-query", "range-covered-pk"]
    assert postgres_processes_under(work) == []
    # --resume completes the crashed target only
    result = dbdrift("run", tmp_path / "crash.toml", "--store", store, "--resume", "--no-report", work_dir=work)
    assert result.returncode == 0, result.stderr[-2000:]
    ok = [(r["target"], r["test"]) for r in runs(store) if r["status"] == "ok"]
    assert len([t for t in ok if t[0] == "pg17"]) == 4 and len([t for t in ok if t[0] == "pg18"]) == 4


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_stops_the_servers_and_keeps_what_was_measured(tmp_path, signum):
    work = shared_work_dir("intr")
    store = tmp_path / "s.db"
    proc = start_dbdrift("run", campaign(tmp_path, "intr", tests=["point-query", "range-covered-pk", "update-index"],
                                         read_s=4), "--store", store, "--no-report", work_dir=work)
    err = interrupt_mid_run(proc, lambda: runs(store), after_s=1.5, signum=signum)  # inside the second run
    stored = runs(store)
    assert stored[0]["status"] == "ok"
    assert stored[-1]["status"] == "interrupted"
    # counted as interrupted, not failed, and named by what stopped it
    summary = next(line for line in err.splitlines() if line.startswith("stored "))
    assert "(0 failed, 2 interrupted)" in summary, err[-3000:]
    if signum == signal.SIGTERM:
        assert stored[-1]["error"] == "interrupted by SIGTERM" and "Ctrl-C" not in err, err[-3000:]
    assert postgres_processes_under(work) == []


def test_targets_take_turns_in_one_run_and_get_paired_intervals_and_verdicts(tmp_path):
    work = shared_work_dir("inter")
    store = tmp_path / "s.db"
    path = campaign(tmp_path, "inter", tests=["point-query", "update-index"], read_s=3,
                    extra='order = "turns"\nturn_s = 0.02')
    proc = start_dbdrift("run", path, "--store", store, "--format", "json", work_dir=work)
    try:
        driver, server = _affinities_during_a_run(proc, work)
        out, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 0, err[-2000:]
    # cpus = "auto": the timed driver (every thread) on one set, every server process on the other
    placement = cpus.place("auto")
    assert placement.pinned == (len(cpus.available()) >= 2)
    assert driver == {placement.driver or cpus.available()}
    assert len(server["pids"]) >= 2 * 6 and server["sets"] == {placement.server or cpus.available()}
    if placement.pinned:
        assert f"cpus: {placement.describe()}" in err
    result = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    stored = [r for r in runs(store) if r["test"] == "point-query"]
    assert [(r["repeat"], r["target"]) for r in stored] == [(0, "pg17"), (0, "pg18")]
    assert all(abs(r["measured_s"] - 3) < 0.3 and r["warmup_s"] == 0.5 for r in stored)
    # the turn is turn_s, or the longer one the driver settled on when a busy host made 10 point
    # queries take more than 20 ms (docs/protocol.md "Turns"): both targets share it
    [turn_s] = {json.loads(r["driver_spec_json"])["turns"]["measured_turn_s"] for r in stored}
    assert turn_s >= 0.02
    db = sqlite3.connect(store)
    turns = {name: db.execute("SELECT idx, round, steal_pct, events FROM intervals WHERE run_id = ? ORDER BY idx",
                              (r["id"],)).fetchall() for name, r in ((r["target"], r) for r in stored)}
    db.close()
    # 3 s per target in turns of 20 ms (150 rounds) or of the settled turn; pg17 first in even
    # rounds, pg18 in odd ones
    assert len(turns["pg17"]) == len(turns["pg18"]) == round(3 / turn_s)
    assert all(idx == 2 * rnd + (rnd % 2) for idx, rnd, _, _ in turns["pg17"])
    assert all(idx == 2 * rnd + 1 - (rnd % 2) for idx, rnd, _, _ in turns["pg18"])
    assert all(steal is not None and 0 <= steal <= 100 for t in turns.values() for _, _, steal, _ in t)
    assert sum(events for _, _, _, events in turns["pg17"]) == stored[0]["events"]
    doc = json.loads(result.stdout)
    row = next(r for r in doc["rows"] if r["test"] == "point-query" and r["target"] == "pg18")
    # 20 batches of pairs, fewer when pairs in seconds of host steal (> 10%) were left out
    steal = {name: {rnd: st for _, rnd, st, _ in t} for name, t in turns.items()}
    calm = sum(max(steal["pg17"][k], steal["pg18"][k]) <= 10 for k in steal["pg17"]) or len(turns["pg17"])
    assert row["method"] == "paired turns, batch ratios" and row["samples"] == min(20, calm // 4)
    assert row["rqps_lower"] <= row["rqps"] <= row["rqps_upper"]
    assert any(n.startswith("intervals: one start of each server per test") for n in doc["notes"])
    assert row["verdict"] in ("regression", "improvement", "no significant change", "too noisy")
    assert postgres_processes_under(work) == []


@pytest.mark.parametrize("round_order", ["balanced", "alternating"])
def test_three_targets_take_turns_in_the_round_order_and_each_turn_stores_its_place(tmp_path, round_order):
    work = shared_work_dir(f"places-{round_order}")
    store = tmp_path / "s.db"
    targets = (("a", "17.10"), ("b", "17.10"), ("c", "17.10"))
    path = campaign(tmp_path, "places", tests=["point-query"], read_s=1.8, targets=targets,
                    extra=f'order = "turns"\nround_order = "{round_order}"')
    result = dbdrift("run", path, "--store", store, "--format", "json", work_dir=work)
    assert result.returncode == 0, result.stderr[-2000:]
    db = sqlite3.connect(store)
    turns = db.execute("SELECT i.idx, i.round, i.position, t.position FROM intervals i JOIN runs r ON r.id = i.run_id "
                       "JOIN targets t ON t.id = r.target_id ORDER BY i.idx").fetchall()
    [turn_s] = {json.loads(r[0])["turns"]["measured_turn_s"]
                for r in db.execute("SELECT driver_spec_json FROM runs WHERE test = 'point-query'")}
    db.close()
    # 1.8 s per target in turns of 10 ms, or of the longer turn the driver settled on when a busy
    # host made 10 point queries take more than 10 ms (docs/protocol.md "Turns")
    assert turn_s >= 0.01 and len(turns) == 3 * round(1.8 / turn_s)
    assert all(place == idx % 3 and rnd == idx // 3 for idx, rnd, place, _ in turns)
    order = rounds.rounds_for(3, round_order)
    assert all(order[rnd % len(order)][place] == target for _, rnd, place, target in turns)
    held = {(target, place) for _, _, place, target in turns}
    notes = json.loads(result.stdout)["notes"]
    kept = [n for n in notes if n.startswith("order: the targets' turns kept to some places only")]
    if round_order == "balanced":
        assert len(held) == 9 and kept == []  # every target in every place
    else:
        assert held == {(0, 0), (0, 2), (1, 1), (2, 2), (2, 0)} and len(kept) == 1
    assert postgres_processes_under(work) == []


def test_calibrate_stores_an_aa_campaign_whose_noise_floor_later_reports_use(tmp_path):
    work = shared_work_dir("calib")
    store = tmp_path / "s.db"
    path = campaign(tmp_path, "calib", tests=["point-query"], read_s=3, targets=(("pg17", "17.10"),))
    result = dbdrift("calibrate", path, "--store", store, "--format", "json", work_dir=work)
    assert result.returncode == 0, result.stderr[-2000:]
    doc = json.loads(result.stdout)
    assert doc["campaign"] == "calibrate-pg17"
    assert [t["name"] for t in doc["targets"]] == ["pg17", "pg17-aa"]
    row = next(r for r in doc["rows"] if r["target"] == "pg17-aa")
    assert row["samples"] == 20 and row["rqps_lower"] <= row["rqps"] <= row["rqps_upper"]
    # a second calibration's intervals take in what the first one measured beyond its own interval
    result = dbdrift("calibrate", path, "--store", store, "--format", "json", work_dir=work)
    assert result.returncode == 0, result.stderr[-2000:]
    doc = json.loads(result.stdout)
    note = next(n for n in doc["notes"] if n.startswith("intervals (paired turns, batch ratios) include"))
    assert note.endswith("measured on 1 A/A calibration campaign(s)")
    assert any(n.startswith("a between-campaign sd from 1 calibration(s) is uncertain") for n in doc["notes"])
    sd = float(note.split("sd of ")[1].split("%")[0]) / 100
    wide = next(r for r in doc["rows"] if r["target"] == "pg17-aa")
    plain = next(r for r in json.loads(dbdrift("report", "--store", store, "--format", "json", "--noise-floor",
                                               "none", work_dir=work).stdout)["rows"] if r["target"] == "pg17-aa")
    assert plain["campaign_sd"] is None and wide["rqps"] == plain["rqps"]
    if wide["campaign_sd"] is None:  # the first calibration's offset lay inside its own interval
        assert sd == 0 and (wide["rqps_lower"], wide["rqps_upper"]) == (plain["rqps_lower"], plain["rqps_upper"])
    else:
        assert wide["campaign_sd"] == pytest.approx(sd, abs=1e-4)
        assert wide["rqps_lower"] <= plain["rqps_lower"] and wide["rqps_upper"] >= plain["rqps_upper"]
        assert wide["rqps_upper"] - wide["rqps_lower"] > plain["rqps_upper"] - plain["rqps_lower"]
    # a later campaign's report names the calibration its verdicts used
    result = dbdrift("run", path, "--store", store, "--format", "json", work_dir=work)
    assert result.returncode == 0, result.stderr[-2000:]
    notes = json.loads(result.stdout)["notes"]
    assert notes and notes[0].startswith("noise floor: A/A campaign calibrate-pg17")
    assert postgres_processes_under(work) == []


def test_a_campaign_planned_to_detect_runs_the_starts_its_calibration_plans_and_names_what_it_reached(tmp_path):
    work = shared_work_dir("detect")
    store = tmp_path / "s.db"
    calibration = campaign(tmp_path, "detect-aa", tests=["point-query"], read_s=1, targets=(("pg17", "17.10"),),
                           extra="repeats = 3")
    result = dbdrift("calibrate", calibration, "--store", store, "--no-report", work_dir=work)
    assert result.returncode == 0, result.stderr[-2000:]
    path = campaign(tmp_path, "detect", tests=["point-query"], read_s=1)
    check = dbdrift("run", path, "--store", store, "--check", "--detect", "20%", "--budget", "10m", work_dir=work)
    assert check.returncode == 0, check.stderr[-2000:]
    assert "detect 20.0%: planned from calibration calibrate-pg17 (#1, " in check.stdout
    planned = re.search(r"point-query x1: (?:\d+ to )?(\d+) starts[,(]", check.stdout)
    assert planned and "  sequential: after 3 starts each test is looked at" in check.stdout, check.stdout
    result = dbdrift("run", path, "--store", store, "--detect", "20%", "--budget", "10m", "--format", "json",
                     work_dir=work)
    assert result.returncode == 0, result.stderr[-2000:]
    starts = {r["repeat"] for r in runs(store) if r["target"] == "pg18" and r["test"] == "point-query"}
    assert starts == set(range(len(starts))) and 3 <= len(starts) <= int(planned.group(1))
    assert re.search(rf"detect: point-query x1: (different|same|unknown) after {len(starts)} starts \(",
                     result.stderr), result.stderr[-3000:]
    report = json.loads(result.stdout)
    note = next(n for n in report["notes"] if n.startswith("detect 20.0%:"))
    assert re.match(r"detect 20.0%: [01] of 1 tests reached it", note)
    assert any(n.startswith("stops (sequential, detect 20.0%): ") for n in report["notes"])
    row = next(r for r in report["rows"] if r["target"] == "pg18" and r["test"] == "point-query")
    assert row["stop_starts"] == len(starts) and row["stopped"] in ("decided", "cap", "budget")
    db = sqlite3.connect(store)
    spec = json.loads(db.execute("SELECT spec_json FROM campaigns WHERE name = 'detect'").fetchone()[0])
    assert spec["detect"] == 0.2 and spec["budget"] == 600 and spec["detect_plan"]["tests"][0]["test"] == "point-query"
    assert postgres_processes_under(work) == []
    # another machine's calibration plans nothing here: the same store, its calibration moved to another host
    host = json.loads(db.execute("SELECT host_json FROM campaigns WHERE name = 'calibrate-pg17'").fetchone()[0])
    db.execute("UPDATE campaigns SET host_json = ? WHERE name = 'calibrate-pg17'",
               (json.dumps({**host, "hostname": "elsewhere"}),))
    db.commit()
    db.close()
    moved = dbdrift("run", path, "--store", store, "--check", "--detect", "20%", work_dir=work)
    assert moved.returncode == 2
    assert "has none; it has calibrations of other hosts only: calibrate-pg17 (#1) on elsewhere (" in moved.stderr, \
        moved.stderr[-2000:]


def test_a_campaign_with_an_aa_twin_runs_the_bases_build_again_and_counts_the_twins_false_verdicts(tmp_path):
    work = shared_work_dir("twin")
    store = tmp_path / "s.db"
    path = campaign(tmp_path, "twin", tests=["point-query"], read_s=1, extra="repeats = 3")
    result = dbdrift("run", path, "--store", store, "--aa-twin", "--format", "json", work_dir=work)
    assert result.returncode == 0, result.stderr[-2000:]
    assert {(r["target"], r["status"]) for r in runs(store)} == {("pg17", "ok"), ("pg18", "ok"), ("pg17-aa", "ok")}
    report = json.loads(result.stdout)
    versions = {t["name"]: t["version"] for t in report["meta"]["targets"]}
    assert versions["pg17-aa"] == versions["pg17"] == "17.10"
    twin = report["meta"]["aa_twin"]
    assert (twin["twin"], twin["base"], twin["cells"]) == ("pg17-aa", "pg17", 1) and twin["false_verdicts"] in (0, 1)
    assert any(n.startswith("A/A twin pg17-aa (pg17's build and config): ") for n in report["notes"])
    assert postgres_processes_under(work) == []


def _three_repeats(tmp_path: Path, name: str, extra: str = "") -> tuple[Path, Path, dict]:
    """Run point-query 3 times per target; returns the work dir, the store and the JSON report
    after checking that all six runs are stored ok."""
    work = shared_work_dir(name)
    store = tmp_path / "s.db"
    path = campaign(tmp_path, name, tests=["point-query"], read_s=1, extra="repeats = 3\n" + extra)
    result = dbdrift("run", path, "--store", store, "--format", "json", work_dir=work)
    assert result.returncode == 0, result.stderr[-2000:]
    stored = runs(store)
    assert sorted((r["target"], r["repeat"]) for r in stored) == [(t, r) for t in ("pg17", "pg18") for r in range(3)]
    assert all(r["status"] == "ok" and r["value"] > 0 for r in stored)
    # the progress counts every step it shows, restarts and new servers included
    total = int(re.search(r"campaign: (\d+) steps", result.stderr).group(1))
    assert [int(n) for n in re.findall(r"^\[(\d+)/\d+\]", result.stderr, re.M)] == list(range(1, total + 1))
    return work, store, json.loads(result.stdout)


def _log_times(log: Path, message: str) -> list[str]:
    """The timestamps (`2026-11-24 09:55:25.061`, sortable as text) of a server log's lines
    that end with `message`."""
    return [line[:23] for line in log.read_text().splitlines() if line.endswith(message)]


def test_each_repeat_runs_on_a_fresh_start_of_every_server_and_the_interval_is_over_repeats(tmp_path):
    work, store, report = _three_repeats(tmp_path, "restarts")
    db = sqlite3.connect(store)
    restarts = db.execute("SELECT t.name, s.label, s.status, s.detail_json FROM steps s JOIN targets t "
                          "ON t.id = s.target_id WHERE s.label LIKE 'restart%' ORDER BY s.id").fetchall()
    db.close()
    # in listed order before even repeats, reversed before odd ones (#2 is repeat 1)
    assert [(name, label, status) for name, label, status, _ in restarts] == [
        (t, f"restart before point-query x1 #{n}", "ok") for n, order in ((2, ("pg18", "pg17")), (3, ("pg17", "pg18")))
        for t in order]
    assert all(json.loads(detail)["prewarm"] == "pg_prewarm" for *_, detail in restarts)
    # every server log kept beside the store shows three starts, on the same data
    logs = sorted((store.parent / "dbdrift-logs").glob("s-c1-restarts-*-server.log"))
    assert len(logs) == 2
    assert [log.read_text().count("database system is ready to accept connections") for log in logs] == [3, 3]
    # both stop before either starts again (so the two trade the memory they gave back): each
    # server's k-th shutdown comes before either server's (k+1)-th start
    ready = [_log_times(log, "database system is ready to accept connections") for log in logs]
    down = [_log_times(log, "database system is shut down") for log in logs]
    assert all(len(r) == 3 and len(d) >= 2 for r, d in zip(ready, down))
    assert all(max(d[k] for d in down) < min(r[k + 1] for r in ready) for k in (0, 1))
    # the second listed starts first before repeat #2, second before #3
    assert ready[1][1] < ready[0][1] and ready[0][2] < ready[1][2]
    row = next(r for r in report["rows"] if r["target"] == "pg18")
    assert row["method"] == "paired turns, t over repeats" and row["samples"] == 3
    assert row["rqps_lower"] <= row["rqps"] <= row["rqps_upper"]
    # what each start draws is in the interval; what the campaign draws is not, with no calibration
    assert [n[:50] for n in report["notes"] if n.startswith("intervals:")] == [
        "intervals: over this campaign's server starts only"]
    assert postgres_processes_under(work) == []


def test_reload_runs_each_repeat_on_a_new_server_loaded_afresh_and_keeps_every_log(tmp_path):
    work, store, report = _three_repeats(tmp_path, "reload", 'restart = "reload"')
    db = sqlite3.connect(store)
    steps = db.execute("SELECT t.name, s.kind, s.label, s.status FROM steps s JOIN targets t "
                       "ON t.id = s.target_id ORDER BY s.id").fetchall()
    db.close()
    for name in ("pg17", "pg18"):
        mine = [(kind, label) for who, kind, label, status in steps if who == name and status == "ok"]
        assert [label for kind, label in mine if label.startswith("stop for")] == [
            "stop for new server for repeat #2", "stop for new server for repeat #3"]
        assert sum(kind == "load" for kind, _ in mine) == 3  # each new server loaded afresh
        assert sum(label.startswith("start postgres") for _, label in mine) == 3
    # both retire before either starts anew, so the two trade the memory they gave back
    turns = [(label.split()[0], name) for name, _, label, status in steps
             if status == "ok" and (label.startswith("stop for") or label.startswith("start postgres"))]
    # listed order before even repeats, reversed before odd ones (#2 is repeat 1)
    assert turns == [("start", "pg17"), ("start", "pg18"), ("stop", "pg18"), ("stop", "pg17"), ("start", "pg18"),
                     ("start", "pg17"), ("stop", "pg17"), ("stop", "pg18"), ("start", "pg17"), ("start", "pg18")]
    # each server's log kept beside the store before its data directory went: one start each
    logs = sorted((store.parent / "dbdrift-logs").glob("s-c1-reload-*-server*.log"))
    assert len(logs) == 6
    assert [log.read_text().count("database system is ready to accept connections") for log in logs] == [1] * 6
    row = next(r for r in report["rows"] if r["target"] == "pg18")
    assert row["method"] == "paired turns, t over repeats" and row["samples"] == 3
    assert postgres_processes_under(work) == []
