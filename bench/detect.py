"""Campaigns planned to a detectable change (`detect`): is the stopping rule valid, and what does a
plan cost on this host.

Part 1 (always; a few minutes, no server): campaigns of one test simulated with each rule: the
plan's starts fixed (`fixed`), the fixed plan raised once after 3 starts from their spread
(`planned`, analysis/planning.py: `sequential = false`), peeking (stop as soon as the interval
excludes 1), and the sequential rule `run` follows by default (analysis/sequential.py: stop once
different or same, alpha spent per look), for a few noise levels: how often a change is called
where there is none (5% is right) and how often "same" is said, how often a planted change of the
threshold's size is found (80% is the aim) or wrongly called "same", and the starts each used.

Part 2 (--campaign FILE): the plan for that campaign on this host. It calibrates the campaign's
base against a copy of itself with --calibration-repeats starts (unless --store already holds a
calibration), then prints `run --check --detect PCT [--budget]`: each test's starts, run lengths
and the cost. With --run it runs the campaign and prints the report's detect note.

    .venv/bin/python bench/detect.py [--trials 2000]
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

from dbdrift.analysis import planning, sequential  # noqa: E402
from dbdrift.analysis.noise import Estimate, over_repeats  # noqa: E402
from dbdrift.cli.options import percent  # noqa: E402


def one(rng: random.Random, sd: float, p: planning.TestPlan, detect: float, shift: float, rule: str
        ) -> tuple[bool, int, bool]:
    """One simulated campaign of one test: per-start ln ratios N(shift, sd). Returns whether it
    calls a change (its final interval excludes 1; the sequential rule: its outcome is
    different), how many starts it ran, and whether it says same (its final 95% interval lies
    inside the threshold; the sequential rule: its outcome is same)."""
    values = [rng.gauss(shift, sd) for _ in range(planning.MIN_STARTS)]
    if rule == "sequential":
        while True:
            found = sequential.look_at([over_repeats(values)], len(values), planning.MIN_STARTS, p.most, detect)
            if found is not sequential.Outcome.UNKNOWN or len(values) >= p.most:
                return found is sequential.Outcome.DIFFERENT, len(values), found is sequential.Outcome.SAME
            values.append(rng.gauss(shift, sd))
    if rule == "peek":
        while True:
            est = over_repeats(values)
            outside = not (est.lower <= 1.0 <= est.upper)  # type: ignore[operator]
            if outside or len(values) >= p.most:
                return outside, len(values), _inside(est, detect)
            values.append(rng.gauss(shift, sd))
    total = p.starts if rule == "fixed" else planning.replan(p, [over_repeats(values)], planning.MIN_STARTS, detect)
    values += [rng.gauss(shift, sd) for _ in range(total - planning.MIN_STARTS)]
    est = over_repeats(values)
    return not (est.lower <= 1.0 <= est.upper), total, _inside(est, detect)  # type: ignore[operator]


def _inside(est: Estimate, detect: float) -> bool:
    """The interval lies inside 1/(1+d) .. 1+d: no change of the threshold or more."""
    return est.lower is not None and est.upper is not None and 1 / (1 + detect) < est.lower and est.upper < 1 + detect


RULES = ("fixed", "planned", "peek", "sequential")


def simulate(out, trials: int, detect: float) -> None:
    out(f"stopping rule, simulated: {trials} campaigns per row, threshold {detect:.0%}; the plan from a calibration "
        "of 4 starts with the true sd; per start ln rQPS ~ N(change, sd)")
    out("  no change: how often a change is called (5% is right), how often 'same' (no change >= threshold) is said,"
        " mean starts")
    out(f"  planted: a change of the threshold ({detect:.0%}) found (80% is the aim), called 'same' (wrongly), "
        "mean starts; twice the threshold: mean starts")
    out(f"{'sd/start':>8} {'rule':<10} {'plan':>5} | {'change':>7} {'same':>6} {'starts':>6} | "
        f"{'found':>6} {'same':>6} {'starts':>6} | {'2x':>5}")
    for sd in (0.005, 0.010, 0.015, 0.020):
        noise = planning.TestNoise("t", within=0.0, between=sd * sd, seconds=30.0, starts=4)
        for rule in RULES:
            p = planning.plan([planning.Cell("t", 1, "read", noise)], detect, sequential=rule == "sequential").tests[0]
            rng = random.Random(int(sd * 1e4))
            rows = {name: [one(rng, sd, p, detect, shift, rule) for _ in range(trials)]
                    for name, shift in (("null", 0.0), ("planted", -math.log1p(detect)),
                                        ("twice", -math.log1p(2 * detect)))}

            def share(name: str, i: int) -> float:
                return sum(r[i] for r in rows[name]) / trials
            out(f"{sd:8.1%} {rule:<10} {p.starts:>2}/{p.most:<2} | {share('null', 0):7.1%} {share('null', 2):6.1%} "
                f"{share('null', 1):6.1f} | {share('planted', 0):6.1%} {share('planted', 2):6.1%} "
                f"{share('planted', 1):6.1f} | {share('twice', 1):5.1f}")


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
    simulate(out, args.trials, percent("--detect")(args.detect))
    if args.campaign:
        out()
        campaign(out, args, store)
        return finish(out, store)
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
