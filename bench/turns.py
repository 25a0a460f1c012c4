"""Which turn length and which estimator give the narrowest honest A/A intervals?

Runs one A/A campaign (a target against an identical second server, taking turns) per turn
length through the dbdrift CLI, then prints per test: the number of paired turns, the spread
of the per-pair log ratios d, the rQPS with its interval as dbdrift reports it (the ratio of
the two servers' throughputs, t over 20 batches' ratios), and the typical turn beside it (the
20%-trimmed mean of d). The campaigns run one after the other, so each turn length meets its
own stretch of host noise: compare within a row more than across rows (turn lengths).

    .venv/bin/python bench/turns.py [--slices 0.01 0.02 0.05 0.1] [--seconds 20]
                                    [--tests point-query range-covered-pk update-index]
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import OUT_DIR, campaign_output, campaign_parser, dbdrift_cli, finish, sysbench_options  # noqa: E402

from dbdrift.analysis.noise import paired_turns  # noqa: E402
from dbdrift.results.measurements import measurements  # noqa: E402
from dbdrift.store.store import Store  # noqa: E402
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS  # noqa: E402


def campaign_toml(name: str, turn_s: float, args: argparse.Namespace) -> str:
    return "\n".join([
        f'name = "{name}"', "tables = 1", f"rows = {args.rows}", "threads = [1]", "warmup_s = 1",
        f"read_s = {args.seconds}", f"write_s = {args.seconds}", 'order = "turns"', f"turn_s = {turn_s}",
        "settle_s = 0", "warm_runs = false", f"tests = {args.tests!r}".replace("'", '"'),
        "[[targets]]", 'name = "a"', f'version = "{args.version}"', "base = true",
        "[[targets]]", 'name = "a2"', f'version = "{args.version}"',
    ]) + "\n"


def cells(store: Path, campaign: str, rows: int) -> dict[str, tuple]:
    """test -> (a's runs, a2's runs) as the analysis sees them."""
    s = Store(store)
    campaign_id = s.latest_campaign_id(campaign)
    out: dict[str, tuple[list, list]] = {}
    for run in s.runs(campaign_id):
        if run["status"] != "ok":
            continue
        sample = measurements(s, MICROBENCHMARKS, [run], rows)[0].sample()
        out.setdefault(run["test"], ([], []))[0 if run["target"] == "a" else 1].append(sample)
    s.close()
    return out


def spread(a: list, b: list) -> tuple[int, float]:
    base = {(r.round, iv.round): iv for r in a for iv in r.intervals}
    logs = [math.log(iv.value / base[(r.round, iv.round)].value) for r in b for iv in r.intervals
            if (r.round, iv.round) in base and iv.value > 0 and base[(r.round, iv.round)].value > 0]
    return len(logs), statistics.stdev(logs) if len(logs) > 1 else float("nan")


def text(est) -> str:
    if est is None or est.lower is None:
        return "-"
    return f"{est.value:.3f} [{est.lower:.3f}, {est.upper:.3f}] ±{est.half_width * 100:.2f}%"


def main() -> int:
    parser = campaign_parser(__doc__)
    sysbench_options(parser, 50_000, 20.0, "measured seconds per target per test")
    parser.add_argument("--slices", type=float, nargs="+", default=[0.01, 0.02, 0.05, 0.1])
    parser.add_argument("--tests", nargs="+", default=["point-query", "range-covered-pk", "update-index"])
    args = parser.parse_args()
    out, stamp, store = campaign_output("turns")
    out(f"A/A, postgres {args.version}, {args.rows:,} rows, {args.seconds:g} s per target per test; store {store}")
    out(f"{'turn':>6} {'test':<18} {'pairs':>6} {'sd(d)':>6}  {'throughput ratio (reported)':<32} typical turn")
    for turn_s in args.slices:
        name = f"turns-{stamp}-{turn_s:g}"
        path = OUT_DIR / f"{name}.toml"
        path.write_text(campaign_toml(name, turn_s, args))
        result = dbdrift_cli("run", str(path), "--store", str(store), "--no-report")
        if result.returncode != 0:
            out(result.stderr[-3000:])
            raise SystemExit(f"error: campaign {name} failed (exit {result.returncode})")
        for test, (a, b) in cells(store, name, args.rows).items():
            pairs, sd = spread(a, b)
            est = paired_turns(b, a)
            typical = f"{est.typical:.3f}" if est is not None and est.typical is not None else "-"
            out(f"{turn_s:6g} {test:<18} {pairs:6d} {sd:6.3f}  {text(est):<32} {typical}")
    return finish(out, store)


if __name__ == "__main__":
    sys.exit(main())
