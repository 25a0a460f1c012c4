"""What the store's checks at open (recognised, `PRAGMA quick_check`, every table) cost on
stores of growing size: the time of `Store(path)` (writing commands: run, compare, bisect) and
`Store(path, read_only=True)` (report, campaigns, history) beside a bare SQLite open, with the
file in the page cache (the usual case right after a campaign wrote it).

    .venv/bin/python bench/store_open.py [--sizes 10,100,400] [--rounds 5]

Sizes are in MB; each store is made of stored runs with one-second samples and intervals,
as a campaign stores them. Needs no server.
"""
from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import Output, run_main  # noqa: E402
from dbdrift.store.store import RunRecord, Store  # noqa: E402

SECONDS = 300  # samples and intervals per run: a 5-minute run


def a_run(i: int) -> RunRecord:
    sample = {"elapsed_s": 1.0, "cpu_user_pct": 51.0, "cpu_sys_pct": 9.0, "cpu_iowait_pct": 0.0, "cpu_steal_pct": 0.0,
              "cs": 1000, "reads": 0, "read_kb": 0, "writes": 10, "write_kb": 80, "server_cpu_s": 0.5,
              "client_cpu_s": 0.4, "server_rss_bytes": 10**9}
    return RunRecord(test=f"t{i % 42}", test_group="point", threads=1, repeat=i // 42, status="ok", warmup_s=10,
                     duration_s=SECONDS, metric="qps", driver_spec={"threads": 1}, measured_s=SECONDS,
                     events=10**6, statements=10**6, value=3333.0,
                     intervals=[{"index": s, "start_s": float(s), "end_s": s + 1.0, "events": 3333,
                                 "statements": 3333, "rows": 3333, "steal_pct": 0.0, "round": None}
                                for s in range(SECONDS)],
                     samples=[(float(s), dict(sample)) for s in range(SECONDS)])


def build(path: Path, megabytes: int) -> int:
    store = Store(path)
    cid = store.add_campaign("bench", {}, {}, "0")
    tid = store.ensure_target(cid, "pg", "postgres", 0, True, {})
    runs, run = 0, a_run(0)
    while path.stat().st_size < megabytes * 2**20:
        for _ in range(20):
            store.add_run(tid, replace(run, test=f"t{runs % 42}", repeat=runs // 42))
            runs += 1
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return runs


def timed(action, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bare(path: Path) -> None:
    db = sqlite3.connect(str(path))
    db.execute("SELECT count(*) FROM campaigns").fetchone()
    db.close()


def quick_check(path: Path) -> None:
    db = sqlite3.connect(str(path))
    db.execute("PRAGMA quick_check").fetchall()
    db.close()


def main(out: Output) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,400", help="store sizes in MB, comma-separated")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    out(f"store open cost, median of {args.rounds} opens, file in the page cache")
    out(f"{'size MB':>8} {'runs':>6} {'bare open ms':>13} {'quick_check ms':>15} {'Store() ms':>11} "
        f"{'read-only ms':>13} {'Store() / MB':>13}")
    with tempfile.TemporaryDirectory(prefix="store-open-", dir="/var/tmp") as tmp:
        for megabytes in (int(s) for s in args.sizes.split(",")):
            path = Path(tmp) / f"s{megabytes}.db"
            runs = build(path, megabytes)
            size = path.stat().st_size / 2**20
            bare_s = timed(lambda: bare(path), args.rounds)
            check_s = timed(lambda: quick_check(path), args.rounds)
            write_s = timed(lambda: Store(path).close(), args.rounds)
            read_s = timed(lambda: Store(path, read_only=True).close(), args.rounds)
            out(f"{size:>8.0f} {runs:>6} {bare_s * 1e3:>13.1f} {check_s * 1e3:>15.1f} {write_s * 1e3:>11.1f} "
                f"{read_s * 1e3:>13.1f} {write_s * 1e3 / size:>10.2f} ms")
            path.unlink()


if __name__ == "__main__":
    sys.exit(run_main("store_open", main))
