"""A/A coverage with the between-campaign part: do intervals widened by what earlier A/A
campaigns measured hold 1.0 in later ones?

    .venv/bin/python bench/aa_coverage.py [STORE.db ...]      (default: bench/out/noise-*.db)

Reads stored campaigns of bench/noise.py (targets `a` and a second server: A/A when it is not
named `planted`). With --identical it reads instead every campaign of three or more targets that
are all the same server (same engine, version and settings: bench/changepoints.py's six, the
A/A/A/A of bench/position.py), each target but the first against the first, as a report has it:
the coverage of the balanced cycle of turns with more than two targets. For each A/A campaign, in the order they were run, the between-campaign sd
is measured on the A/A campaigns run before it (analysis.noise.between_campaign_sd, per
interval method, as `dbdrift report` does with the calibrations of a store), and its cells'
intervals are widened by it (with_campaign_sd); a second figure measures it on all the other
A/A campaigns (leave one out). Planted campaigns are widened by the sd of every A/A campaign
before them. Prints per campaign and in total: cells whose interval holds 1.0 as measured and
as widened, and planted cells called a regression as measured and as widened.
"""
from __future__ import annotations

import argparse
import json
import math
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from dbdrift.analysis.noise import Z975, Estimate, between_campaign_sd, verdict, with_campaign_sd  # noqa: E402
from dbdrift.workloads.sysbench.results.build import build_report  # noqa: E402
from dbdrift.store.store import Store  # noqa: E402
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"


@dataclass
class Campaign:
    label: str
    created: str
    planted: bool
    cells: list[tuple[str, Estimate]]  # (test, rQPS estimate of the second server against `a`)


def identical(paths: list[Path]) -> list[Campaign]:
    """Each target but the first of every campaign whose 3 or more targets are the same server,
    against the first: one Campaign per such target."""
    found = []
    for path in paths:
        store = Store(path)
        for row in store.campaigns():
            targets = store.targets(row["id"])
            same = {json.dumps({k: v for k, v in t.spec.items() if k not in ("name", "base", "port")},
                               sort_keys=True) for t in targets}
            if len(targets) < 3 or len(same) != 1:
                continue
            base = targets[0]["name"]
            report = build_report(store, MICROBENCHMARKS, str(row["id"]), base, False, noise_floor="none")
            for t in targets[1:]:
                cells = [(r.test, r.cells[t["name"]].estimate) for r in report.comparison.rows
                         if r.cells[t["name"]].estimate is not None and r.cells[t["name"]].estimate.lower is not None]
                if cells:
                    found.append(Campaign(f"{path.stem}:{row['name']}:{t['name']}", row["created_at"], False, cells))
    return found


def load(paths: list[Path]) -> list[Campaign]:
    found, seen = [], set()
    for path in paths:
        db = sqlite3.connect(path)
        rows = db.execute("SELECT c.id, c.name, c.created_at, group_concat(t.name) FROM campaigns c "
                          "JOIN targets t ON t.campaign_id = c.id GROUP BY c.id").fetchall()
        store = Store(path)
        complete = {cid for cid, *_ in rows if ran_every_repeat(db, cid)}
        db.close()
        for cid, name, created, targets in rows:
            names = set(targets.split(","))
            if "a" not in names or len(names) != 2 or (name, created) in seen:
                continue  # a store copied to add campaigns to it holds the same ones again
            if cid not in complete:
                print(f"{path.stem}:{name}: left out, interrupted before every test ran all its repeats")
                continue
            seen.add((name, created))
            report = build_report(store, MICROBENCHMARKS, str(cid), "a", False, noise_floor="none")
            other = next(n for n in names if n != "a")
            cells = [(row.test, row.cells[other].estimate) for row in report.comparison.rows
                     if row.cells[other].estimate is not None and row.cells[other].estimate.lower is not None]
            if cells:
                found.append(Campaign(f"{path.stem}:{name}", created, other == "planted", cells))
    return sorted(found, key=lambda c: c.created)


def ran_every_repeat(db: sqlite3.Connection, cid: int) -> bool:
    """Whether every test of campaign `cid` has all its repeats stored: the cells of an
    interrupted campaign hold fewer starts than the others and are not counted."""
    spec = json.loads(db.execute("SELECT spec_json FROM campaigns WHERE id = ?", (cid,)).fetchone()[0])
    done = dict(db.execute("SELECT r.test, count(DISTINCT r.repeat) FROM runs r JOIN targets t ON t.id = r.target_id "
                           "WHERE t.campaign_id = ? AND r.status = 'ok' GROUP BY r.test", (cid,)).fetchall())
    return all(done.get(test, 0) >= spec.get("repeats", 1) for test in spec.get("tests", []))


def widened(cells, calibration: list[Campaign]):
    sd = between_campaign_sd([[est for _, est in c.cells] for c in calibration])
    return [(test, with_campaign_sd(est, *sd[est.method]) if est.method in sd else est) for test, est in cells], sd


def holds(est: Estimate) -> bool:
    return est.lower <= 1.0 <= est.upper


def binomial_tail(held: int, n: int, p: float = 0.95) -> float:
    """P(at most `held` of `n` intervals hold 1.0) if each holds it with probability `p` alone."""
    return sum(math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(held + 1))


def wilson(held: int, n: int, z: float = Z975) -> tuple[float, float]:
    """The Wilson score 95% interval of the share held/n (sound at small n and near 0 or 1)."""
    share, z2 = held / n, z * z
    centre = (share + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def coverage_text(held: int, n: int) -> str:
    """held/n with what it says about the intervals' true coverage: a share below 95% from a
    few dozen cells is what exactly-95% intervals give about half the time, so the figure to
    read is the Wilson interval of the share and how often 95% intervals would do this badly."""
    lo, hi = wilson(held, n)
    return (f"{held}/{n} = {held / n:.0%} (share's 95% interval {lo:.0%}-{hi:.0%}; intervals that hold 1.0 "
            f"95% of the time give {held}/{n} or fewer with probability {binomial_tail(held, n):.2f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("stores", nargs="*", type=Path)
    parser.add_argument("--identical", action="store_true",
                        help="campaigns of 3 or more identical targets, each against the first")
    args = parser.parse_args()
    if args.identical:
        campaigns = identical(args.stores or sorted(OUT.glob("changepoints*.db")))
        held = sum(holds(e) for c in campaigns for _, e in c.cells)
        cells = sum(len(c.cells) for c in campaigns)
        for c in campaigns:
            misses = ", ".join(f"{t} {e.value:.3f} [{e.lower:.3f}, {e.upper:.3f}]" for t, e in c.cells if not holds(e))
            print(f"{c.label:50s} {sum(holds(e) for _, e in c.cells):>3d}/{len(c.cells):<3d} {misses}")
        print(f"\nA/A intervals holding 1.0 (identical targets, as measured): "
              f"{coverage_text(held, cells) if cells else '-'}")
        return 0
    campaigns = load(args.stores or sorted(OUT.glob("noise-*.db")))
    aa = [c for c in campaigns if not c.planted]
    totals = {"plain": [0, 0], "before": [0, 0], "loo": [0, 0], "planted": [0, 0], "planted_wide": [0, 0]}
    print(f"{'campaign':40s} {'cells':>5s} {'sd before':>9s} {'holds 1.0':>9s} {'widened':>8s} {'leave-one-out':>13s}")
    for c in campaigns:
        before = [o for o in aa if o.created < c.created]
        wide, sd = widened(c.cells, before)
        method = c.cells[0][1].method
        shown = f"{sd[method][0]:.2%}" if method in sd else "-"
        if c.planted:
            plain = sum(verdict(e) == "regression" for _, e in c.cells)
            calls = sum(verdict(e) == "regression" for _, e in wide)
            totals["planted"][0] += plain
            totals["planted"][1] += len(c.cells)
            if before:
                totals["planted_wide"][0] += calls
                totals["planted_wide"][1] += len(c.cells)
            print(f"{c.label:40s} {len(c.cells):5d} {shown:>9s}  planted: {plain}/{len(c.cells)} regression, "
                  f"widened {calls if before else '-'}/{len(c.cells)}")
            continue
        loo, _ = widened(c.cells, [o for o in aa if o is not c])
        h_plain, h_before, h_loo = (sum(holds(e) for _, e in cells) for cells in (c.cells, wide, loo))
        n = len(c.cells)
        for key, h, counted in (("plain", h_plain, True), ("before", h_before, bool(before)), ("loo", h_loo, True)):
            if counted:
                totals[key][0] += h
                totals[key][1] += n
        misses = ", ".join(f"{t} {e.value:.3f} [{e.lower:.3f}, {e.upper:.3f}]" for t, e in wide if not holds(e))
        print(f"{c.label:40s} {n:5d} {shown:>9s} {h_plain:>5d}/{n:<3d} {(f'{h_before}/{n}' if before else '-'):>8s} "
              f"{h_loo:>9d}/{n:<3d} {misses}")

    def share(key, coverage=False):
        h, n = totals[key]
        if not n:
            return "-"
        return coverage_text(h, n) if coverage else f"{h}/{n} = {h / n:.0%}"
    print(f"\nA/A intervals holding 1.0:\n  as measured {share('plain', True)}\n  widened by the sd of earlier "
          f"A/A campaigns {share('before', True)}\n  widened by the sd of all the others {share('loo', True)}")
    print(f"planted cells called a regression: as measured {share('planted')}; widened {share('planted_wide')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
