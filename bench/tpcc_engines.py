"""TPROC-C on PostgreSQL, MariaDB and MySQL: NOPM, CPU per new order and the driver's share of
the CPU, load speed, and the demo's wall time.

    .venv/bin/python bench/tpcc_engines.py [--warehouses 4] [--clients 2] [--rampup 15]
                                           [--duration 60] [--store bench/out/tpcc.db] [--demo]

Runs one campaign (or, with an existing --store, reuses it) with PostgreSQL 17.10, MariaDB
10.11.5 and MySQL 8.0.31 as targets, one after the other, each on a fresh server: load W
warehouses, ramp up, measure. Prints the report's NOPM and hardware-per-new-order tables, then
per target the load time and rows/s, the driver's CPU share (client% of server + driver
process CPU) and whether the consistency checks passed. With --demo it also times
`dbdrift demo --workload tpcc` (PostgreSQL 17.10 vs 18.4, 3 repeats) from start to exit.
"""
from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
DBDRIFT = Path(sys.executable).parent / "dbdrift"
TARGETS = (("pg17.10", "postgres", "17.10"), ("ma10.11", "mariadb", "10.11.5"), ("my8.0", "mysql", "8.0.31"))


def campaign(args: argparse.Namespace) -> str:
    lines = ['name = "tpcc-engines"', 'workload = "tpcc"', "[tpcc]", f"warehouses = {args.warehouses}",
             f"clients = {args.clients}", f"rampup_s = {args.rampup}", f"duration_s = {args.duration}"]
    for name, engine, version in TARGETS:
        lines += ["[[targets]]", f'name = "{name}"', f'engine = "{engine}"', f'version = "{version}"']
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warehouses", type=int, default=4)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--rampup", type=float, default=15)
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--store", type=Path, default=OUT / "tpcc.db")
    parser.add_argument("--demo", action="store_true", help="also time `dbdrift demo --workload tpcc`")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    if not args.store.exists():
        path = OUT / "tpcc-engines.toml"
        path.write_text(campaign(args))
        started = time.monotonic()
        subprocess.run([str(DBDRIFT), "run", str(path), "--store", str(args.store), "--no-report"], check=True)
        print(f"campaign: {time.monotonic() - started:.0f} s")
    report = subprocess.run([str(DBDRIFT), "report", "--store", str(args.store)], check=True,
                            capture_output=True, text=True).stdout
    print(report.split("-- new_order response time")[0].rstrip())
    print()
    doc = json.loads(subprocess.run([str(DBDRIFT), "report", "--store", str(args.store), "--format", "json"],
                                    check=True, capture_output=True, text=True).stdout)
    db = sqlite3.connect(args.store)
    loads = dict(db.execute("SELECT t.name, s.elapsed_s FROM steps s JOIN targets t ON t.id = s.target_id "
                            "WHERE s.kind = 'load' AND s.status = 'ok'").fetchall())
    rows = {name: sum(json.loads(detail).get("rows", {}).values()) for name, detail in db.execute(
        "SELECT t.name, s.detail_json FROM steps s JOIN targets t ON t.id = s.target_id "
        "WHERE s.kind = 'load' AND s.status = 'ok'")}
    db.close()
    print(f"{'target':<10} {'load s':>7} {'rows':>10} {'rows/s':>9} {'client%':>8}  consistency")
    for t in doc["targets"]:
        name = t["name"]
        load_s, n = loads.get(name), rows.get(name, 0)
        share = t["hardware"].get("client%")
        print(f"{name:<10} {load_s or 0:>7.1f} {n:>10,} {n / load_s if load_s else 0:>9,.0f} "
              f"{share if share is not None else float('nan'):>8.1f}  "
              f"{'passed' if t['consistency_ok'] else 'FAILED'}")
    if args.demo:
        started = time.monotonic()
        subprocess.run([str(DBDRIFT), "demo", "--workload", "tpcc", "--store", str(OUT / "tpcc-demo.db"),
                        "--no-report"], check=True)
        print(f"\ndbdrift demo --workload tpcc: {time.monotonic() - started:.0f} s wall time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
