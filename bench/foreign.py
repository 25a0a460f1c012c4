"""Does foreign load mark the cells it touched, and only those?

Runs one short A/A campaign (a PostgreSQL target against an identical second server, taking
turns) three times through the dbdrift CLI: quiet; with a CPU hog (a busy Python loop, one
CPU's worth, like `stress-ng --cpu 1`) started once half of the runs are stored and kept for
--hog-s seconds; and with a `dd` writer to the data directory's device started the same way.
Prints per run the foreign CPU share, the foreign share of the device's bytes, and the
warnings that mark its cell `!` (docs/hardware.md, "Foreign load").

    .venv/bin/python bench/foreign.py [--seconds 8] [--hog-s 60]
                                      [--tests point-query range-covered-pk update-index insert]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import OUT_DIR, campaign_output, campaign_parser, dbdrift_cli, finish, sysbench_options  # noqa: E402

from dbdrift.analysis.foreign import foreign_io_pct  # noqa: E402
from dbdrift.server import rundir  # noqa: E402


def campaign_toml(name: str, args: argparse.Namespace) -> str:
    return "\n".join([
        f'name = "{name}"', "tables = 1", f"rows = {args.rows}", "threads = [1]", "warmup_s = 1",
        f"read_s = {args.seconds}", f"write_s = {args.seconds}", 'order = "turns"', "settle_s = 0",
        "warm_runs = false", f"tests = {json.dumps(args.tests)}",
        "[[targets]]", 'name = "a"', f'version = "{args.version}"', "base = true",
        "[[targets]]", 'name = "a2"', f'version = "{args.version}"',
    ]) + "\n"


def stored_runs(store: Path, campaign: str) -> list[sqlite3.Row]:
    if not store.exists():
        return []
    try:
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        db.row_factory = sqlite3.Row
        rows = db.execute(
            "SELECT runs.*, targets.name AS target FROM runs JOIN targets ON targets.id = runs.target_id "
            "JOIN campaigns ON campaigns.id = targets.campaign_id WHERE campaigns.name = ? ORDER BY runs.id",
            (campaign,)).fetchall()
        db.close()
        return rows
    except sqlite3.Error:  # the store is still being made
        return []


def cpu_hog() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)


def dd_writer() -> subprocess.Popen:
    """Writes 64 MB files to the servers' work directory (their data directories' device),
    with O_DIRECT and an fsync, over and over."""
    target = rundir.work_dir() / "bench-foreign-dd.bin"
    script = (f"while true; do dd if=/dev/zero of={target} bs=1M count=64 oflag=direct conv=fsync "
              f"status=none; done; rm -f {target}")
    return subprocess.Popen(["sh", "-c", script], start_new_session=True)


def halfway(store: Path, campaign: str, runs: int, seconds: float, start: Callable[[], subprocess.Popen],
            log: list[str]) -> threading.Thread:
    """Start `start()` once half of the campaign's `runs` are stored, stop it `seconds` later."""
    def watch() -> None:
        deadline = time.monotonic() + 1800
        while len(stored_runs(store, campaign)) < runs // 2:
            if time.monotonic() > deadline:
                return
            time.sleep(0.5)
        proc = start()
        log.append(f"neighbour started after {len(stored_runs(store, campaign))} stored runs")
        time.sleep(seconds)
        os.killpg(proc.pid, signal.SIGKILL)  # its own session: the shell and its dd, nothing else
        proc.wait()
        (rundir.work_dir() / "bench-foreign-dd.bin").unlink(missing_ok=True)
    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value:5.1f}%"


def main() -> int:
    parser = campaign_parser(__doc__)
    sysbench_options(parser, 20_000, 8.0, "measured seconds per target per test")
    parser.add_argument("--hog-s", type=float, default=60.0, help="how long the neighbour runs, from halfway")
    parser.add_argument("--tests", nargs="+", default=["point-query", "range-covered-pk", "update-index", "insert"])
    args = parser.parse_args()
    out, stamp, store = campaign_output("foreign")
    out(f"A/A in turns, postgres {args.version} x2, {args.rows:,} rows, {args.seconds:g} s per target per test, "
        f"{len(args.tests)} tests; neighbours start halfway for {args.hog_s:g} s; store {store}")
    for phase, start in (("quiet", None), ("cpu-hog", cpu_hog), ("dd-writer", dd_writer)):
        name = f"foreign-{stamp}-{phase}"
        path = OUT_DIR / f"{name}.toml"
        path.write_text(campaign_toml(name, args))
        log: list[str] = []
        watcher = halfway(store, name, 2 * len(args.tests), args.hog_s, start, log) if start else None
        result = dbdrift_cli("run", str(path), "--store", str(store), "--no-report")
        if watcher is not None:
            watcher.join(timeout=args.hog_s + 5)
        if result.returncode != 0:
            out(result.stderr[-3000:])
            raise SystemExit(f"error: campaign {name} failed (exit {result.returncode})")
        out(f"\n{phase}: {'; '.join(log) or 'no neighbour'}")
        out(f"  {'test':<18} {'target':<6} {'fcpu':>6} {'fio':>6} {'dev MB/s':>8}  marks")
        for run in stored_runs(store, name):
            hw = json.loads(run["hardware_json"] or "{}")
            kinds = [w["kind"] for w in json.loads(run["warnings_json"] or "[]") if w["kind"].startswith("foreign")]
            device_mb_s = ((hw.get("read_kb") or 0) + (hw.get("write_kb") or 0)) / 1024 / (hw.get("elapsed_s") or 1)
            out(f"  {run['test']:<18} {run['target']:<6} {pct(hw.get('foreign_cpu_pct')):>6} "
                f"{pct(foreign_io_pct(hw)):>6} {device_mb_s:8.1f}  {'! ' + ', '.join(kinds) if kinds else ''}")
    return finish(out, store)


if __name__ == "__main__":
    sys.exit(main())
