"""One 8-test campaign run locally and on a two-worker Dask cluster: both wall times, whether
the two runs' rQPS agree within their intervals, and the CPU the Dask workers used.

    .venv/bin/python bench/cluster_local.py [--rows 100000] [--read-s 10] [--out bench/out/cluster]

PostgreSQL 17.10 vs 18.4 on eight tests, run first with `dbdrift run` and then with
`dbdrift run --cluster` against a LocalCluster of two worker processes on this machine (each a
"host" with its own work directory, the tests split into two units). On one 2-CPU machine the
cluster cannot be faster: its two units run at once and share the CPUs the local run has to
itself. What it shows is that the cluster run completes and measures the same thing. The CPU
time of the two worker processes (Dask's heartbeats, the task that forwards a unit's facts; the
unit's own process and its servers are not in it) over the cluster run is what a worker costs
the host it measures.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DBDRIFT = [sys.executable, "-m", "dbdrift"]
TESTS = ["point-query", "random-points_range=100", "read-only_range=100", "scan", "range-notcovered-pk",
         "update-index", "update-nonindex", "insert"]


def campaign(args: argparse.Namespace) -> str:
    return "\n".join([
        'name = "cluster-bench"', f"rows = {args.rows}", f"read_s = {args.read_s}", f"write_s = {args.read_s}",
        "tests = [" + ", ".join(f'"{t}"' for t in TESTS) + "]",
        '[[targets]]', 'name = "pg17"', 'version = "17.10"', '[[targets]]', 'name = "pg18"', 'version = "18.4"',
        ""])


def run(args: list[str]) -> float:
    started = time.monotonic()
    subprocess.run([*DBDRIFT, *args], check=True, cwd=ROOT)
    return time.monotonic() - started


def _cpu_s() -> float:
    """User + system CPU seconds of the calling process (run in each worker by client.run)."""
    import os
    times = os.times()
    return times.user + times.system


def cells(store: Path) -> dict[str, dict]:
    doc = json.loads(subprocess.run([*DBDRIFT, "report", "--store", str(store), "--format", "json"], check=True,
                                    capture_output=True, text=True, cwd=ROOT).stdout)
    return {r["test"]: r for r in doc["rows"] if r["target"] == "pg18"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--read-s", type=float, default=10)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "cluster")
    args = parser.parse_args()
    import distributed

    from dbdrift.cluster.worker import WorkDirs

    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "cluster-bench.toml"
    path.write_text(campaign(args))
    local_store, cluster_store = args.out / "local.db", args.out / "cluster.db"
    for store in (local_store, cluster_store):
        store.unlink(missing_ok=True)
    local_s = run(["run", str(path), "--store", str(local_store), "--no-report"])
    work = Path("/var/tmp/dbdrift-bench-cluster")
    work.mkdir(mode=0o755, exist_ok=True)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, resources={"dbdrift": 1},
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        client.register_plugin(WorkDirs(str(work)))
        before = client.run(_cpu_s)
        cluster_s = run(["run", str(path), "--store", str(cluster_store), "--no-report", "--cluster",
                         cluster.scheduler_address])
        after = client.run(_cpu_s)
    worker_cpu = {addr: after[addr] - before[addr] for addr in after if addr in before}
    local, remote = cells(local_store), cells(cluster_store)
    print(f"\n8 tests, PostgreSQL 17.10 vs 18.4, {args.rows} rows, {args.read_s:g} s per run")
    print(f"wall time: local {local_s:.0f} s, two-worker cluster {cluster_s:.0f} s "
          f"(cluster / local = {cluster_s / local_s:.2f})")
    for addr, seconds in sorted(worker_cpu.items()):
        print(f"Dask worker {addr}: {seconds:.1f} CPU s over the {cluster_s:.0f} s cluster run "
              f"({100 * seconds / cluster_s:.2f}% of one CPU)")
    print(f"\n{'test':28} {'rQPS local':>22} {'rQPS cluster':>22}  agree")
    agree = 0
    for test in TESTS:
        a, b = local.get(test), remote.get(test)
        if not a or not b or a.get("rqps_lower") is None or b.get("rqps_lower") is None:
            print(f"{test:28} not measured in both")
            continue
        fmt = lambda r: f"{r['rqps']:.3f} [{r['rqps_lower']:.3f},{r['rqps_upper']:.3f}]"  # noqa: E731
        overlap = a["rqps_lower"] <= b["rqps_upper"] and b["rqps_lower"] <= a["rqps_upper"]
        agree += overlap
        print(f"{test:28} {fmt(a):>22} {fmt(b):>22}  {'yes' if overlap else 'NO'}")
    print(f"\nintervals overlap on {agree} of {len(TESTS)} tests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
