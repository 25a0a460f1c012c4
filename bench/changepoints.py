"""False positives of `dbdrift history`'s change points on A/A data, and how often a planted
step is found.

    .venv/bin/python bench/changepoints.py [--servers 8] [--version 17.10] [--duration 10]
                                           [--store bench/out/changepoints.db] [--series 2000]

Runs (or, with an existing --store, reuses) one campaign of N targets that are all the same
PostgreSQL version, each a fresh server run in turn (order = "sequential"), as a history of N
versions where nothing changed would be measured. Each target's throughput per test is a point,
read back with results.history exactly as `dbdrift history` reads it. Then per test:
- the series as measured (targets in run order): change points found;
- `--series` series of 10 points drawn with replacement from the test's N points (A/A):
  the share with at least one change point (the false-positive rate per series);
- the same series with a step of --plant (default 5%) from a random position between 3 and 7
  on: the share where a change is found between the right pair of points (power).
Both use analysis.changepoints.change_points with history's defaults (Otava e-divisive,
p < 0.001, minimum step 2%). Instruction counts are left out: their A/A spread (0.01-0.03%)
is far below the 2% minimum step, so they cannot give a false positive.
"""
from __future__ import annotations

import argparse
import random
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from dbdrift.analysis.changepoints import change_points  # noqa: E402
from dbdrift.results import history  # noqa: E402
from dbdrift.store.store import Store  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
TESTS = ["point-query", "random-points", "range-covered-pk", "update-index", "insert"]
LENGTH = 10


def campaign_file(servers: int, version: str, duration: float) -> str:
    lines = ['name = "aa-history"', "rows = 100000", 'order = "sequential"', f"read_s = {duration}",
             f"write_s = {duration}", "warmup_s = 2", "settle_s = 2", "warm_runs = false",
             f"tests = {TESTS!r}".replace("'", '"')]
    for i in range(servers):
        lines += ["", "[[targets]]", f'name = "aa{i}"', f'version = "{version}"']
    return "\n".join(lines) + "\n"


def measure(store: Path, servers: int, version: str, duration: float) -> None:
    toml = store.with_suffix(".toml")
    toml.write_text(campaign_file(servers, version, duration))
    dbdrift = Path(sys.executable).with_name("dbdrift")
    subprocess.run([str(dbdrift), "run", str(toml), "--store", str(store), "--no-report"], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", type=int, default=8)
    parser.add_argument("--version", default="17.10")
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--store", type=Path, default=OUT / "changepoints.db")
    parser.add_argument("--series", type=int, default=2000)
    parser.add_argument("--plant", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    if not args.store.exists():
        measure(args.store, args.servers, args.version, args.duration)
    store = Store(args.store)
    try:
        found = [p for p in history.points(store, "qps") if p.campaign == "aa-history"]
    finally:
        store.close()
    rng = random.Random(args.seed)
    print(f"A/A: {len({p.target for p in found})} fresh servers of postgres {args.version}, store {args.store}")
    print(f"{'test':<24} {'sd %':>6} {'as run':>7} {'FP/series':>10} {'found ' + format(args.plant, '.0%'):>10}")
    total_fp = total_power = total = 0
    for test in sorted({p.test for p in found}):
        values = [p.value for p in sorted((p for p in found if p.test == test), key=lambda p: p.target[2:].zfill(3))]
        if len(values) < 3:
            continue
        mean = sum(values) / len(values)
        sd = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5 / mean
        as_run = len(change_points(values))
        fp = power = 0
        for _ in range(args.series):
            series = [rng.choice(values) for _ in range(LENGTH)]
            fp += bool(change_points(series))
            at = rng.randint(3, 7)
            planted = [v * (1 - args.plant) if i >= at else v for i, v in enumerate(series)]
            power += any(c.index == at for c in change_points(planted))
        total_fp, total_power, total = total_fp + fp, total_power + power, total + args.series
        print(f"{test:<24} {sd:6.2%} {as_run:>7} {fp / args.series:>10.2%} {power / args.series:>10.1%}")
    print(f"{'all':<24} {'':>6} {'':>7} {total_fp / total:>10.2%} {total_power / total:>10.1%}")
    print(f"series of {LENGTH} points drawn from the A/A points; change points: Otava e-divisive, p < 0.001, "
          "minimum step 2% (history's defaults)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
