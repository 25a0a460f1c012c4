"""Change points in timed histories: how often `dbdrift history` finds a change that is not there,
how often it finds a planted 5% or 2% step, and what a version costs, by how each version's point
is measured.

    .venv/bin/python bench/changepoints.py [--targets 6] [--starts 4] [--version 17.10] [--seconds 5]
                                           [--store bench/out/changepoints.db] [--series 1000]
                                           [--sequential bench/out/starts-183538.db]

Measures (or, with an existing --store, reuses) one campaign of N targets that are all the same
PostgreSQL version, in turns with a fresh server per start (order = "turns", restart = "repeat",
repeats = the starts): a history of N versions where nothing changed, measured as docs/history.md
recommends (every version of the history a target of one campaign). Then, per test:

- as run: the change points `dbdrift history` finds in the N targets' points (each the estimate
  over all starts), read back as history reads them;
- in turns, n starts: series of 10 points, each the mean of n per-start values drawn without
  replacement from the pool of every (target, start) value less its start's mean over the targets
  (what all targets of one start share cancels in a history measured in one campaign; the
  deviations are scaled by sqrt(N/(N-1)) to restore the variance the mean removed);
- own campaign, n starts (with --sequential STORE, a bench/starts.py store of fresh servers
  measured one after the other): each point the mean of n values drawn from those starts, as
  when every version of a history is measured in a campaign of its own at another time.

Each row: FP/series, the share of series with any change point; found 5% and found 2%, the share
where a step of that size, planted from a random position between the 3rd and the 7th point, is
found at its place. Change points use analysis.changepoints.change_points with history's defaults
(Otava e-divisive, p < 0.001, minimum step 2%); the last two columns lower the minimum step to 1%
(`history --min-effect 1%`). cost/version: the wall time of one target's share of one start,
times n.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from dbdrift.analysis.changepoints import change_points  # noqa: E402
from dbdrift.results import history  # noqa: E402
from dbdrift.store.store import Store  # noqa: E402
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
TESTS = ["point-query", "random-points_range=100", "range-covered-pk", "update-index", "insert"]
NAME = "aa-history"
LENGTH = 10
STARTS = (1, 2, 3, 4)
STEPS = (0.05, 0.02)


def campaign_file(targets: int, starts: int, version: str, seconds: float) -> str:
    lines = [f'name = "{NAME}"', "tables = 1", "rows = 100000", "threads = [1]", 'order = "turns"',
             'restart = "repeat"', f"repeats = {starts}", f"read_s = {seconds}", f"write_s = {seconds}",
             "warmup_s = 1", "settle_s = 5", "warm_runs = false",
             "tests = [" + ", ".join(f'"{t}"' for t in TESTS) + "]"]
    for i in range(targets):
        lines += ["", "[[targets]]", f'name = "aa{i}"', f'version = "{version}"']
    return "\n".join(lines) + "\n"


def measure(store: Path, targets: int, starts: int, version: str, seconds: float) -> None:
    toml = store.with_suffix(".toml")
    toml.write_text(campaign_file(targets, starts, version, seconds))
    dbdrift = Path(sys.executable).with_name("dbdrift")
    began = time.monotonic()
    subprocess.run([str(dbdrift), "run", str(toml), "--store", str(store), "--no-report"], check=True)
    store.with_suffix(".json").write_text(json.dumps({"wall_s": time.monotonic() - began}))


def per_start(store: Store, campaign_id: int) -> dict[str, dict[str, dict[int, float]]]:
    """test -> target -> start (repeat) -> ln throughput, of the campaign's ok timed runs."""
    out: dict[str, dict[str, dict[int, float]]] = {}
    for r in store.runs(campaign_id):
        if r["status"] == "ok" and r["value"] and not r["superseded"] and not r["test"].endswith(".warm"):
            out.setdefault(r["test"], {}).setdefault(r["target"], {})[r["repeat"]] = math.log(r["value"])
    return out


def deviations(values: dict[str, dict[int, float]]) -> list[float]:
    """Each (target, start) value less its start's mean over the targets, scaled to the variance
    of one target's value (the mean of N removes 1/N of it)."""
    starts = sorted(set.intersection(*(set(v) for v in values.values())))
    n = len(values)
    out = []
    for s in starts:
        mean = sum(v[s] for v in values.values()) / n
        out += [(v[s] - mean) * math.sqrt(n / (n - 1)) for v in values.values()]
    return out


def power(rng: random.Random, pool: list[float], n: int, series: int) -> tuple[float, ...]:
    """(FP, found per step) at the 2% minimum step, then (FP, found 2%) at 1%, over `series`
    series of LENGTH points, each the mean of n values from `pool`."""
    hits = [0] * (2 + len(STEPS) + 1)
    for _ in range(series):
        base = [sum(rng.sample(pool, n)) / n for _ in range(LENGTH)]
        values = [math.exp(v) for v in base]
        hits[0] += bool(change_points(values))
        hits[1 + len(STEPS)] += bool(change_points(values, min_magnitude=0.01))
        at = rng.randint(3, 7)
        for k, step in enumerate(STEPS):
            planted = [v * (1 - step) if i >= at else v for i, v in enumerate(values)]
            hits[1 + k] += any(c.index == at for c in change_points(planted))
            if step == 0.02:
                hits[-1] += any(c.index == at for c in change_points(planted, min_magnitude=0.01))
    return tuple(h / series for h in hits)


def sd(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def duration(value: float) -> str:
    seconds = round(value)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=6)
    parser.add_argument("--starts", type=int, default=4)
    parser.add_argument("--version", default="17.10")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--store", type=Path, default=OUT / "changepoints.db")
    parser.add_argument("--series", type=int, default=1000)
    parser.add_argument("--sequential", type=Path, help="a bench/starts.py store: points from fresh servers "
                        "measured one after the other")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    if not args.store.exists():
        measure(args.store, args.targets, args.starts, args.version, args.seconds)
    lines: list[str] = []

    def out(line: str = "") -> None:
        print(line, flush=True)
        lines.append(line)

    rng = random.Random(args.seed)
    header = (f"{'test':<24} {'design':<20} {'n':>2} {'cost/version':>12} {'sd/point':>8} {'FP':>6} "
              f"{'found 5%':>8} {'found 2%':>8} {'FP@1%':>6} {'2%@1%':>6}")
    store = Store(args.store)
    try:
        campaign = next(c for c in store.campaigns() if c["name"] == NAME)
        found = [p for p in history.points(store, MICROBENCHMARKS, "qps") if p.campaign == NAME]
        values = per_start(store, campaign["id"])
        targets = len(store.targets(campaign["id"]))
        starts = max(len(v) for t in values.values() for v in t.values())
    finally:
        store.close()
    sidecar = args.store.with_suffix(".json")
    wall = json.loads(sidecar.read_text())["wall_s"] if sidecar.exists() else None
    share = wall / (targets * starts) if wall else None  # one target's share of one start
    out(f"A/A history: {targets} targets of postgres {args.version} in turns, {starts} fresh starts each, "
        f"{len(values)} tests, store {args.store}" + (f", {duration(wall)} in all" if wall else ""))
    out()
    out(f"as run (each target's point over its {starts} starts, as history reads them):")
    for test in sorted(values):
        points = [p.value for p in sorted((p for p in found if p.test == test), key=lambda p: p.target[2:].zfill(3))]
        out(f"  {test:<24} {len(change_points(points))} change points in {len(points)} points")
    out()
    out(header)
    total: dict[tuple[str, int], list[tuple[float, ...]]] = {}
    for test in sorted(values):
        pool = deviations(values[test])
        for n in STARTS:
            if n > len(pool) // 2:
                continue
            row = power(rng, pool, n, args.series)
            total.setdefault(("in turns", n), []).append(row)
            cost = duration(share * n) if share else "?"
            out(f"{test:<24} {'in turns':<20} {n:>2} {cost:>12} {sd(pool) / math.sqrt(n):8.2%} "
                + " ".join(f"{v:>{w}.1%}" for v, w in zip(row, (6, 8, 8, 6, 6))))
    if args.sequential:
        store = Store(args.sequential)
        try:
            pools: dict[str, list[float]] = {}
            for c in store.campaigns():
                for test, per_target in per_start(store, c["id"]).items():
                    for by_start in per_target.values():
                        pools.setdefault(test, []).extend(by_start.values())
        finally:
            store.close()
        for test, pool in sorted(pools.items()):
            for n in STARTS:
                row = power(rng, pool, n, args.series)
                total.setdefault(("own campaign", n), []).append(row)
                out(f"{test:<24} {'own campaign':<20} {n:>2} {'':>12} {sd(pool) / math.sqrt(n):8.2%} "
                    + " ".join(f"{v:>{w}.1%}" for v, w in zip(row, (6, 8, 8, 6, 6))))
    out()
    for (design, n), rows in total.items():
        mean = [sum(r[i] for r in rows) / len(rows) for i in range(len(rows[0]))]
        cost = duration(share * n) if share and design == "in turns" else ""
        out(f"{'all':<24} {design:<20} {n:>2} {cost:>12} {'':>8} "
            + " ".join(f"{v:>{w}.1%}" for v, w in zip(mean, (6, 8, 8, 6, 6))))
    out(f"series of {LENGTH} points, {args.series} per row; change points: Otava e-divisive, p < 0.001, "
        "minimum step 2% (history's defaults), and 1% in the last two columns")
    saved = OUT / f"changepoints-{datetime.now():%Y%m%d-%H%M%S}.txt"
    saved.write_text("\n".join(lines) + "\n")
    print(f"saved: {saved}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
