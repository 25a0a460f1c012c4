"""Campaigns planned to a detectable change (`detect`): is the stopping rule valid, and what does a
plan cost on this host.

Part 1 (always; seconds, no server): null campaigns of one test simulated with the rule `run`
follows (analysis/planning.py: starts fixed by the plan, decided once more after the first 3 from
their spread only) and with peeking (stop as soon as the interval excludes 1), for a few noise
levels: how often a change is called where there is none (at 95%: 5% is right), the starts
used, and how often a planted change of the threshold's size is found (80% is the aim).

Part 2 (--campaign FILE): the plan for that campaign on this host. It calibrates the campaign's
base against a copy of itself with --calibration-repeats starts (unless --store already holds a
calibration), then prints `run --check --detect PCT [--budget]`: each test's starts, run lengths
and the cost. With --run it runs the campaign and prints the report's detect note.

    .venv/bin/python bench/detect.py [--trials 4000]
    .venv/bin/python bench/detect.py --campaign bench/campaigns/pg17-vs-18.toml --detect 2% [--budget 30m]
                                     [--calibration-repeats 3] [--store S] [--run]
"""
from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import campaign_output, campaign_parser, dbdrift_cli, finish, progress  # noqa: E402

from dbdrift.analysis import planning  # noqa: E402
from dbdrift.analysis.noise import over_repeats  # noqa: E402
from dbdrift.cli.options import percent  # noqa: E402


def one(rng: random.Random, sd: float, p: planning.TestPlan, detect: float, shift: float, rule: str) -> tuple[bool, int]:
    """One simulated campaign of one test: per-start ln ratios N(shift, sd). Returns whether its
    final interval excludes 1 and how many starts it ran."""
    values = [rng.gauss(shift, sd) for _ in range(planning.MIN_STARTS)]
    if rule == "peek":
        while True:
            est = over_repeats(values)
            outside = not (est.lower <= 1.0 <= est.upper)  # type: ignore[operator]
            if outside or len(values) >= p.most:
                return outside, len(values)
            values.append(rng.gauss(shift, sd))
    total = p.starts if rule == "fixed" else planning.replan(p, [over_repeats(values)], planning.MIN_STARTS, detect)
    values += [rng.gauss(shift, sd) for _ in range(total - planning.MIN_STARTS)]
    est = over_repeats(values)
    return not (est.lower <= 1.0 <= est.upper), total  # type: ignore[operator]


def simulate(out, trials: int, detect: float) -> None:
    out(f"stopping rule, simulated: {trials} campaigns per row, threshold {detect:.0%}; the plan from a calibration "
        "of 4 starts with the true sd")
    out(f"{'sd/start':>8} {'rule':<8} {'starts':>6} {'false (no change)':>18} {'found (planted)':>16}")
    for sd in (0.005, 0.010, 0.015, 0.020):
        noise = planning.TestNoise("t", within=0.0, between=sd * sd, seconds=30.0, starts=4)
        p = planning.plan([planning.Cell("t", 1, "read", noise)], detect).tests[0]
        for rule in ("fixed", "planned", "peek"):
            rng = random.Random(int(sd * 1e4))
            null = [one(rng, sd, p, detect, 0.0, rule) for _ in range(trials)]
            planted = [one(rng, sd, p, detect, -math.log1p(detect), rule) for _ in range(trials)]
            starts = sum(n for _, n in null) / trials
            out(f"{sd:8.1%} {rule:<8} {starts:6.1f} {sum(f for f, _ in null) / trials:18.1%} "
                f"{sum(f for f, _ in planted) / trials:16.1%}")


def campaign(out, args, store: Path) -> None:
    if args.calibration_repeats:
        progress(f"calibrating the base of {args.campaign} with {args.calibration_repeats} starts")
        done = dbdrift_cli("calibrate", str(args.campaign), "--store", str(store), "--no-report",
                           "--set", f"repeats={args.calibration_repeats}")
        if done.returncode != 0:
            raise SystemExit(f"error: calibrate failed (exit {done.returncode}): {done.stderr[-2000:]}")
    budget = ("--budget", args.budget) if args.budget else ()
    check = dbdrift_cli("run", str(args.campaign), "--store", str(store), "--check", "--detect", args.detect, *budget)
    if check.returncode != 0:
        raise SystemExit(f"error: run --check failed (exit {check.returncode}): {check.stderr[-2000:]}")
    out(check.stdout.rstrip())
    if args.run:
        progress(f"running {args.campaign} planned to {args.detect}")
        done = dbdrift_cli("run", str(args.campaign), "--store", str(store), "--detect", args.detect, *budget,
                           "--format", "json")
        if done.returncode not in (0, 1):
            raise SystemExit(f"error: run failed (exit {done.returncode}): {done.stderr[-2000:]}")
        report = json.loads(done.stdout)
        for note in report.get("notes", []):
            if note.startswith("detect"):
                out(note)


def main() -> int:
    parser = campaign_parser(__doc__)
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--campaign", type=Path, help="plan this campaign on this host (part 2)")
    parser.add_argument("--detect", default="2%")
    parser.add_argument("--budget")
    parser.add_argument("--calibration-repeats", type=int, default=3, help="0: use the store's calibration")
    parser.add_argument("--store", type=Path)
    parser.add_argument("--run", action="store_true", help="run the planned campaign too")
    args = parser.parse_args()
    out, _, store = campaign_output("detect", args.store)
    simulate(out, args.trials, percent(args.detect))
    if args.campaign:
        out()
        campaign(out, args, store)
        return finish(out, store)
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
