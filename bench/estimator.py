"""Does the cell's estimator see a stall, and do its intervals hold 1.0 in A/A? The cell as
reports give it (the ratio of the two targets' throughputs, analysis.noise.relative) beside the
estimator reports used before it (exp of the 20%-trimmed mean of paired turns' log ratios, t
over 20 batches' trimmed means), both from the same stored runs.

  stall  two identical PostgreSQL servers (a, b) in turns; while the campaign runs, an outside
         session holds an ACCESS EXCLUSIVE lock on b's sbtest1 for --lock-ms every
         --every-s seconds (a stall of the kind a checkpoint, a vacuum or a lock convoy gives).
         Per test: both absolute throughputs, their ratio, the cell and the trimmed estimate with
         their verdicts. What b loses is the lock's time: the cell should be about the absolute
         ratio and a regression, the trimmed estimate about 1.
  aa     four identical servers (a, a2, a3, a4) in turns on the default tests: each of a2..a4
         against a. Per estimator: how many 95% intervals hold 1.0, how many cells got a
         verdict, the detectable change per cell (median, largest), and the cells flagged s.

    .venv/bin/python bench/estimator.py [--only stall aa] [--seconds S] [--rows 200000] [--repeats N]
    .venv/bin/python bench/estimator.py --analyse STORE.db     (the figures of a store it wrote)

Run on an otherwise idle machine: each part starts its own servers.
"""
from __future__ import annotations

import glob
import math
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import campaign_output, campaign_parser, finish, run_campaign, sysbench_options  # noqa: E402

from dbdrift import env  # noqa: E402
from dbdrift.analysis.noise import (Estimate, Method, RunSample, crossover, t975, t_interval, trimmed_mean,  # noqa: E402
                                    verdict)
from dbdrift.analysis.power import detectable_change  # noqa: E402
from dbdrift.workloads.sysbench.results.build import build_report  # noqa: E402
from dbdrift.results.measurements import measurements_of
from dbdrift.store.store import Store  # noqa: E402
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS  # noqa: E402

STALL_TESTS = ["point-query", "range-covered-pk", "read-only_range=10"]


def toml(name: str, targets: list[str], args, tests: list[str] | None, repeats: int = 1) -> str:
    lines = [f'name = "{name}"', "tables = 1", f"rows = {args.rows}", "threads = [1]", "warmup_s = 2",
             f"read_s = {args.seconds}", f"write_s = {args.seconds}", 'order = "turns"', "warm_runs = false",
             f"repeats = {repeats}", 'restart = "repeat"']
    if tests:
        lines.append(f"tests = {tests!r}".replace("'", '"'))
    for i, target in enumerate(targets):
        lines += ["[[targets]]", f'name = "{target}"', f'version = "{args.version}"'] + (["base = true"] if i == 0 else [])
    return "\n".join(lines) + "\n"


class Locker:
    """An outside session that holds an ACCESS EXCLUSIVE lock on sbtest1 of one server for
    `lock_s` every `every_s` seconds, from the moment the table exists until stopped. It finds
    the server's socket in the work directory by the campaign's and target's names (the run
    directory's prefix, server/rundir.py) and speaks to it with psql."""

    def __init__(self, campaign: str, target: str, lock_s: float, every_s: float) -> None:
        self.pattern = str(env.work_dir() / f"{campaign[:16]}-{target[:16]}-*" / "sock" / ".s.PGSQL.*")
        self.lock_s, self.every_s = lock_s, every_s
        self.stop = threading.Event()
        self.locks = 0
        self.error = ""  # psql's last complaint (before the table exists: no relation sbtest1)
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> "Locker":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=10)

    def _loop(self) -> None:
        sql = (f"BEGIN; LOCK TABLE sbtest1 IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep({self.lock_s}); COMMIT;")
        while not self.stop.wait(self.every_s - self.lock_s):
            sockets = [p for p in glob.glob(self.pattern) if not p.endswith(".lock")]
            if not sockets:
                continue
            sock = Path(sockets[0])
            done = subprocess.run(["psql", "-X", "-q", "-h", str(sock.parent), "-p", sock.name.rsplit(".", 1)[1],
                                   "-U", "postgres", "-d", "sbtest", "-c", sql], capture_output=True, text=True)
            self.locks += done.returncode == 0
            if done.returncode != 0:
                self.error = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"


def trimmed(new: RunSample, base: RunSample) -> Estimate:
    """The estimator reports used before the throughput ratio: exp(20%-trimmed mean of
    d = ln(new/base) over the paired turns), t over 20 contiguous batches' trimmed means around it."""
    a = {iv.round: iv for iv in new.intervals if iv.duration_s > 0}
    b = {iv.round: iv for iv in base.intervals if iv.duration_s > 0}
    logs = [math.log(a[k].value / b[k].value) for k in sorted(set(a) & set(b)) if a[k].value > 0 and b[k].value > 0]
    center = trimmed_mean(logs, 0.2)
    batches = min(20, len(logs) // 4)
    if batches >= 3:
        size = len(logs) / batches
        samples = [trimmed_mean(logs[round(i * size):round((i + 1) * size)], 0.2) for i in range(batches)]
    else:  # few pairs (a scan's second-long turns): the pairs themselves, as that estimator did
        samples = logs
    if len(samples) < 2:
        return Estimate(math.exp(center), None, None, len(samples), Method.PAIRED_TURNS)
    m, lo, hi = t_interval(samples)
    return Estimate(math.exp(center), math.exp(center + lo - m), math.exp(center + hi - m), len(samples),
                    Method.PAIRED_TURNS_BATCHED)


def trimmed_over_repeats(news: dict[int, RunSample], bases: dict[int, RunSample]) -> Estimate:
    """The estimator reports used before, over repeats: each repeat's trimmed estimate, then t
    over their logs (repeats - 1 df), or from 2 repeats of each parity the crossover's."""
    found = {rep: trimmed(news[rep], bases[rep]).value for rep in sorted(set(news) & set(bases))}
    logs = {rep: math.log(v) for rep, v in found.items() if v}
    if len(logs) < 2:
        return Estimate(None, None, None, len(logs), Method.NONE)
    arms = [[x for rep, x in logs.items() if rep % 2 == parity] for parity in (0, 1)]
    if min(len(arm) for arm in arms) >= 2:
        m, se, df = crossover(arms[0], arms[1])
        half = t975(df) * se
        return Estimate(math.exp(m), math.exp(m - half), math.exp(m + half), len(logs), Method.CROSSOVER, df=df)
    m, lo, hi = t_interval(list(logs.values()))
    return Estimate(math.exp(m), math.exp(lo), math.exp(hi), len(logs), Method.OVER_REPEATS)


def cells(store: Path, campaign: str) -> list[tuple[str, str, float, float, Estimate, Estimate]]:
    """(test, target, its throughput, the base's, the cell, the trimmed estimate) of every
    compared target against the base: over one start, or over the repeats' starts."""
    s = Store(store)
    cid = s.latest_campaign_id(campaign)
    report = build_report(s, MICROBENCHMARKS, str(cid), None, False, noise_floor="none")
    by_repeat: dict[tuple[str, str], dict[int, RunSample]] = {}
    for m in measurements_of(s, MICROBENCHMARKS, cid):
        if m.status == "ok":
            by_repeat.setdefault((m.test, m.target), {})[m.round] = m.sample()
    s.close()
    base = report.comparison.base
    out = []
    for row in report.comparison.rows:
        for target in report.comparison.compared:
            cell = row.cells[target]
            mine, theirs = by_repeat.get((row.test, target), {}), by_repeat.get((row.test, base), {})
            if cell.estimate is None or cell.estimate.lower is None or not mine or not theirs:
                continue
            old = (trimmed_over_repeats(mine, theirs) if len(mine) >= 3 else
                   trimmed(next(iter(mine.values())), next(iter(theirs.values()))))
            if old.lower is None:
                continue
            out.append((row.test, target, cell.absolute.value or 0.0, row.cells[base].absolute.value or 0.0,
                        cell.estimate, old))
    return out


def foreign_warned(store: Path, campaign: str) -> set[str]:
    """`test target` of every compared cell whose run or its base's carries a foreign-load warning."""
    s = Store(store)
    cid = s.latest_campaign_id(campaign)
    report = build_report(s, MICROBENCHMARKS, str(cid), None, False, noise_floor="none")
    s.close()
    out = set()
    for row in report.comparison.rows:
        for target in report.comparison.compared:
            warnings = row.cells[target].warnings + row.cells[report.comparison.base].warnings
            if any(w.startswith("foreign") for w in warnings):
                out.add(f"{row.test} {target}")
    return out


def text(est: Estimate) -> str:
    return f"{est.value:.3f} [{est.lower:.3f},{est.upper:.3f}] {verdict(est).mark}"


def show_stall(out, store: Path, campaign: str) -> None:
    out(f"{'test':<20} {'a QPS':>8} {'b QPS':>8} {'b/a':>6}  {'cell (throughput ratio)':<26} {'trimmed (before)':<24}"
        " typical s")
    for test, target, mine, theirs, new, old in cells(store, campaign):
        flag = "s" if new.bursty else ""
        out(f"{test:<20} {theirs:8.0f} {mine:8.0f} {mine / theirs:6.3f}  {text(new):<26} {text(old):<24} "
            f"{new.typical:.3f} {flag}")


def show_aa(out, store: Path, campaign: str) -> None:
    found = cells(store, campaign)
    out(f"{len(found)} A/A cells (a2, a3, a4 against a)")
    for label, pick in (("throughput ratio (now)", 4), ("trimmed (before)", 5)):
        ests = [c[pick] for c in found]
        hold = sum(e.lower <= 1.0 <= e.upper for e in ests)
        verdicts = [verdict(e) for e in ests]
        called = sum(v in ("regression", "improvement") for v in verdicts)
        mdes = sorted(d for e in ests if (d := detectable_change(e)) is not None)
        out(f"  {label:<24} hold 1.0: {hold}/{len(ests)} ({hold / len(ests):.1%}); called a change: {called}; "
            f"detectable change median {statistics.median(mdes):.2%}, largest {mdes[-1]:.2%}, "
            f"half width median ±{statistics.median(e.half_width for e in ests):.2%}")
    out(f"  flagged s (typical turn outside the interval): {sum(c[4].bursty for c in found)}/{len(found)}")
    warned = foreign_warned(store, campaign)
    out(f"  cells whose runs saw foreign load (!): {len(warned)} of {len(found)}"
        + (": " + ", ".join(sorted(warned)) if warned else ""))
    out(f"  {'test':<24} {'target':<6} {'now':<26} {'before':<24} {'mde now':>8} {'mde before':>10}")
    for test, target, _, _, new, old in found:
        miss = "" if new.lower <= 1.0 <= new.upper else " x"
        out(f"  {test:<24} {target:<6} {text(new):<26} {text(old):<24} {detectable_change(new):8.2%} "
            f"{detectable_change(old):10.2%}{miss}")


def analyse(path: Path) -> int:
    if not path.is_file():
        raise SystemExit(f"error: {path}: no such store (give the .db a run of this script wrote)")
    out, _, _ = campaign_output("estimator", path)
    s = Store(path)
    names = [r["name"] for r in s.db.execute("SELECT name FROM campaigns ORDER BY id")]
    s.close()
    for name in names:
        out(f"== {name}")
        (show_stall if "-stall" in name else show_aa)(out, path, name)
    return finish(out, path)


def main() -> int:
    parser = campaign_parser(__doc__)
    parser.add_argument("--only", nargs="+", choices=["stall", "aa"], default=["stall", "aa"])
    sysbench_options(parser, 200_000, None,
                     "each run's measured seconds (default: 30 for stall, 5 for aa, as the demo)")
    parser.add_argument("--lock-ms", type=float, default=300.0)
    parser.add_argument("--every-s", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=1,
                        help="aa: starts of every server per test (3 or more: intervals over the starts)")
    parser.add_argument("--analyse", type=Path)
    args = parser.parse_args()
    if args.analyse:
        return analyse(args.analyse)
    out, stamp, store = campaign_output("estimator")
    seconds = args.seconds
    if "stall" in args.only:
        args.seconds = seconds or 30.0
        name = f"est-{stamp}-stall"
        out(f"== {name}: b's sbtest1 locked {args.lock_ms:g} ms every {args.every_s:g} s; {args.seconds:g} s runs, "
            f"{args.rows} rows, PostgreSQL {args.version}")
        with Locker(name, "b", args.lock_ms / 1000, args.every_s) as locker:
            started = time.monotonic()
            run_campaign(out, store, name, toml(name, ["a", "b"], args, STALL_TESTS))
        out(f"  {locker.locks} locks held in {time.monotonic() - started:.0f} s"
            + (f"; psql's last error: {locker.error}" if locker.error else ""))
        show_stall(out, store, name)
    if "aa" in args.only:
        args.seconds = seconds or 5.0
        name = f"est-{stamp}-aa"
        out(f"== {name}: four identical PostgreSQL {args.version} servers in turns, the default tests, "
            f"{args.seconds:g} s runs, {args.rows} rows, {args.repeats} start(s) of every server per test")
        run_campaign(out, store, name, toml(name, ["a", "a2", "a3", "a4"], args, None, args.repeats))
        show_aa(out, store, name)
    return finish(out, store)


if __name__ == "__main__":
    sys.exit(main())
