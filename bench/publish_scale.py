"""What `dbdrift publish` costs on a large store: a generated store of N campaigns (each two
adjacent PostgreSQL versions of a chain of 48, the 32 default tests, 4 rounds of 3 one-second
intervals per cell with a hardware window, 4 tests counted under callgrind), published into an
empty site, again with nothing changed, and again after one more campaign; then the pages'
sizes (the issue's bound: no page over 1 MB).

    .venv/bin/python bench/publish_scale.py [--campaigns 1000] [--keep DIR]

Needs no server. The store is built through Store's own inserts, a transaction per campaign.
"""
from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import Output, run_main  # noqa: E402
from dbdrift.cli import main as cli  # noqa: E402
from dbdrift.store import facts  # noqa: E402
from dbdrift.store.store import InstructionRecord, RunRecord, Store  # noqa: E402
from dbdrift.workloads.sysbench.catalog import CATALOG, DEFAULT_32  # noqa: E402

VERSIONS = [f"{major}.{minor}" for major in (13, 14, 15, 16, 17, 18) for minor in range(8)]  # 48
COUNTED = ("point-query", "update-index", "random-points_range=100", "scan")
HOST = {"hostname": "bench1", "cpu_model": "AMD EPYC", "cpus": 2, "memory_bytes": 24 * 2**30}
MB = 1_000_000


def add_campaign(store: Store, k: int) -> None:
    """Campaign k: VERSIONS[k % 47] (base) against the next version, the older a little faster
    on even versions, so the history has steps to find."""
    pair = (VERSIONS[k % 47], VERSIONS[k % 47 + 1])
    targets = [{"name": f"pg{v}", "engine": "postgres", "version": v} for v in pair]
    cid = store.add_campaign(f"chain-{k}", {"name": f"chain-{k}", "rows": 1_000_000, "tables": 1, "targets": targets},
                             HOST, "bench")
    store.db.execute("UPDATE campaigns SET created_at = ? WHERE id = ?",
                     (f"2026-{1 + k // 28 % 12:02d}-{1 + k % 28:02d}T{k % 24:02d}:00:00+00:00", cid))
    with store.db:  # one transaction for the campaign's runs
        for pos, v in enumerate(pair):
            tid = store.ensure_target(cid, f"pg{v}", "postgres", pos, pos == 0, targets[pos])
            facts.update_target_facts(store.db, tid, None, {"version": v})
            level = 10_000 * (1 - 0.03 * (VERSIONS.index(v) % 2)) * (1 + 0.002 * (k % 5))
            for t, test in enumerate(DEFAULT_32):
                value = level * (1 + t / 50)
                for round_ in range(4):
                    facts.insert_run(store.db, tid, _run(test, round_, value, pos))
            for test in COUNTED:
                ir = 45_000 * (1 + 0.01 * VERSIONS.index(v))
                facts.insert_instructions(store.db, tid, InstructionRecord(test, "ok", 1000, 5000, 3.0, [[1, 2], [1, 2]], ir,
                                                                            0.01, {"LWLockRelease": 600.0}, {}))


def _run(test: str, round_: int, value: float, pos: int) -> RunRecord:
    metric = "krps" if test == "scan" else "qps"
    intervals = [{"index": i, "round": round_, "start_s": float(i), "end_s": i + 1.0,
                  "events": round(value * (1 + 0.01 * ((i + round_ + pos) % 3 - 1))), "statements": round(value),
                  "rows": round(value), "errors": {}, "latency_us": {}, "steal_pct": 0.0} for i in range(3)]
    ops = value * 3
    hardware = {"elapsed_s": 3.0, "cpu_user_pct": 40.0, "cpu_sys_pct": 10.0, "cpu_iowait_pct": 0.0,
                "cpu_steal_pct": 0.0, "cs": round(2 * ops), "reads": 0, "read_kb": 0.0, "writes": round(ops / 100),
                "write_kb": ops / 10, "server_cpu_s": ops * 20 / 1e6, "client_cpu_s": ops * 7 / 1e6,
                "server_rss_bytes": 150_000_000}
    return RunRecord(test=test, test_group=CATALOG[test].group, threads=1, repeat=round_, status="ok", warmup_s=1,
                     duration_s=3, metric=metric, driver_spec={}, value=value, intervals=intervals, hardware=hardware)


def publish(store: Path, site: Path) -> tuple[float, str]:
    """One `dbdrift publish` in this process: its seconds and the line it printed."""
    printed, errors = io.StringIO(), io.StringIO()
    started = time.perf_counter()
    with redirect_stdout(printed), redirect_stderr(errors):
        code = cli.main(["publish", str(store), "--out", str(site)])
    seconds = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"publish exited {code}: {errors.getvalue()[-2000:]}")
    return seconds, printed.getvalue().splitlines()[0]


def main(out: Output) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaigns", type=int, default=1000)
    parser.add_argument("--keep", type=Path, help="build the store and the site in DIR and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="publish-scale-", dir="/var/tmp") as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        path, site = root / "scale.db", root / "site"
        started = time.perf_counter()
        store = Store(path)
        for k in range(args.campaigns):
            add_campaign(store, k)
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.close()
        out(f"store: {args.campaigns} campaigns x 32 tests x 2 targets (+{len(COUNTED)} counted tests), "
            f"{path.stat().st_size / 2**20:.0f} MiB, built in {time.perf_counter() - started:.0f} s")
        out(f"{'publish':<28} {'s':>7}  what it printed")
        for label in ("full, into an empty site", "again, nothing changed"):
            seconds, line = publish(path, site)
            out(f"{label:<28} {seconds:>7.1f}  {line}")
        store = Store(path)
        add_campaign(store, args.campaigns)
        store.close()
        seconds, line = publish(path, site)
        out(f"{'after one new campaign':<28} {seconds:>7.1f}  {line}")
        pages = sorted((p.stat().st_size, str(p.relative_to(site))) for p in site.rglob("*.html"))
        total = sum(size for size, _ in pages)
        over = [rel for size, rel in pages if size > MB]
        out(f"pages: {len(pages)}, {total / 2**20:.1f} MiB in all, over 1 MB: {len(over)}")
        for size, rel in pages[-3:][::-1]:
            out(f"  {size / 1e3:>8,.0f} kB  {rel}")
        index = [(size, rel) for size, rel in pages if rel.startswith("index")]
        out(f"index pages: {len(index)}, " + ", ".join(f"{rel} {size / 1e3:,.0f} kB" for size, rel in sorted(
            index, key=lambda p: p[1])))


if __name__ == "__main__":
    sys.exit(run_main("publish_scale", main))
