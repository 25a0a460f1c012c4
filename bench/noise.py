"""How well dbdrift's intervals and verdicts separate noise from a real regression.

Runs two campaigns in turns through the dbdrift CLI, each of a target against a second
server of the same PostgreSQL version:
  A/A      the second server is configured identically: every rQPS should be 1;
  planted  the second server does more work per query (a real setting, --planted), so every
           cell should be called a regression.
and prints the share of A/A cells whose interval holds 1.0, the share of planted cells called
a regression, and the minutes used per target per microbenchmark (goals: >= 95%, >= 95%, <= 2).
Each test runs --repeats times, every server restarted before each repeat after the first
(--restart never keeps one start per server), so the interval is over server starts.
The planted campaign also counts instructions per event under callgrind (unless
--no-instructions), which sizes the planted regression cell by cell: a cell counts as planted
3-5% only where the server's instructions per event grew by at least 3%.

    .venv/bin/python bench/noise.py [--seconds 15] [--repeats 5] [--restart repeat|never|reload]
                                     [--slice 0.01] [--tests ...] [--rows 200000]
                                     [--version 17.10] [--only aa|planted] [--campaigns N]
                                     [--cpus auto|shared] [--busy N] [--swap] [--aa-name a2]
                                     [--settings JSON] [--calibration STORE.db ...]
                                     [--calibrations K] [--store STORE.db]

With --calibrations K the store first gets K `dbdrift calibrate` campaigns of the A/A file
(target a against a copy of itself), and every cell is also shown as `dbdrift report` gives
it with those calibrations (--noise-floor auto: intervals widened by the between-campaign sd
they measured, verdicts held to the newest one's floors): the figures a user of a fresh host
gets who calibrates K times before comparing. --store adds the campaigns to an existing store
(a copy of an earlier run's, say): the calibrations it holds count the same way.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import aa_coverage  # noqa: E402
from _common import (  # noqa: E402
    OUT_DIR, Output, campaign_output, campaign_parser, dbdrift_cli, finish, neighbours, sysbench_options,
)

from dbdrift.analysis.noise import verdict  # noqa: E402
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS  # noqa: E402

# Three groups, cheap and expensive statements alike.
DEFAULT_TESTS = ["point-query", "random-points_range=10", "points-covered-pk", "range-covered-pk",
                 "range-notcovered-si", "read-only_range=10", "update-index", "update-nonindex", "insert"]
# A real extra cost on the server, per statement: every statement of half the transactions
# (drawn at random; each autocommit statement is a transaction) is formatted with its duration
# and parameters and written to the server log. On the 2-core AMD EPYC VM of 2026-11-24 it
# cost 4-8% in 8 of the 9 default tests and 15% on points-covered-pk (100 parameters a
# statement). Plants tried before it (docs/noise.md, E15): pg_stat_statements + auto_explain cost
# 0-2% on point queries and writes there, below the 2% minimum effect; serializable isolation
# 1.3% on insert and 2-3% on point-query and the updates, 8-16% on range scans.
DEFAULT_PLANTED = {"log_transaction_sample_rate": "0.5"}


def campaign_toml(name: str, args: argparse.Namespace, planted: dict[str, str] | None) -> str:
    both = json.loads(args.settings)

    def table(settings: dict[str, str]) -> str:
        return "settings = { " + ", ".join(f'"{k}" = "{v}"' for k, v in settings.items()) + " }"

    base = ["[[targets]]", 'name = "a"', f'version = "{args.version}"', "base = true", table(both)]
    other = ["[[targets]]", f'name = "{"planted" if planted else args.aa_name}"', f'version = "{args.version}"',
             table({**both, **(planted or {})})]
    return "\n".join([
        f'name = "{name}"', "tables = 1", f"rows = {args.rows}", "threads = [1]",
        "warmup_s = 2", f"read_s = {args.seconds}", f"write_s = {args.seconds}",
        'order = "turns"', f"turn_s = {args.slice}", f'cpus = "{args.cpus}"',
        f"repeats = {args.repeats}", f'restart = "{args.restart}"',
        "interval_s = 1", "scan_warm_s = 5", "settle_s = 0", f"tests = {json.dumps(args.tests)}",
        *(other + base if args.swap else base + other),
    ]) + "\n"


def run_campaign(name: str, args: argparse.Namespace, planted, store: Path, out: Output,
                 count: bool) -> tuple[dict, float]:
    """Run the campaign (and, with `count`, its instruction counts after it); returns its JSON
    report without calibrations and the seconds of its timed part only."""
    path = OUT_DIR / f"{name}.toml"
    path.write_text(campaign_toml(name, args, planted))
    began, started = time.time(), time.monotonic()
    cmd = ["run", str(path), "--store", str(store), "--no-report"]
    result = dbdrift_cli(*cmd)
    elapsed = time.monotonic() - started
    if result.returncode == 0 and count:
        counted = dbdrift_cli(*cmd, "--resume", "--count-instructions")
        if counted.returncode != 0:
            out(counted.stderr[-3000:])
            raise SystemExit(f"error: instruction counts for {name} failed (exit {counted.returncode})")
    if result.returncode != 0:
        out(result.stderr[-3000:])
        raise SystemExit(f"error: campaign {name} failed (exit {result.returncode})")
    if planted:
        drop_statement_logs(store, began, out)
    return json_report(store, name, "none"), elapsed


def drop_statement_logs(store: Path, since: float, out: Output) -> None:
    """Remove the server logs over 64 MB written since `since` beside `store`: the default
    plant logs half the statements, about 1 GB a campaign, of no use once measured."""
    for path in sorted((store.parent / "dbdrift-logs").glob("*.log")):
        info = path.stat()
        if info.st_mtime >= since and info.st_size > 64 * 2**20:
            path.unlink()
            out(f"removed {path} ({info.st_size / 2**20:.0f} MB of statement log)")


def json_report(store: Path, name: str, noise_floor: str) -> dict:
    report = dbdrift_cli("report", "--store", str(store), "--campaign", name, "--format", "json",
                         "--noise-floor", noise_floor)
    report.check_returncode()
    return json.loads(report.stdout)


def calibrate(args: argparse.Namespace, stamp: str, store: Path, out: Output) -> float:
    """Store args.calibrations A/A calibrations (`dbdrift calibrate`) of the A/A campaign file;
    returns their minutes per calibration per target per test."""
    path = OUT_DIR / f"noise-calibrate-{stamp}.toml"
    path.write_text(campaign_toml(f"noise-calibrate-{stamp}", args, None))
    started = time.monotonic()
    for n in range(args.calibrations):
        with neighbours(args.busy):
            result = dbdrift_cli("calibrate", str(path), "--store", str(store), "--no-report")
        if result.returncode != 0:
            out(result.stderr[-3000:])
            raise SystemExit(f"error: calibration {n + 1} failed (exit {result.returncode})")
        out(f"calibration {n + 1}/{args.calibrations} stored ({(time.monotonic() - started) / 60:.1f} min so far)")
    return (time.monotonic() - started) / 60 / args.calibrations / 2 / len(args.tests)


def calibrations_in(store: Path):
    """A function giving how many `dbdrift calibrate` campaigns `store` holds now."""
    from dbdrift.store.store import Store

    def count() -> int:
        if not store.exists():
            return 0
        db = Store(store)
        try:
            return len(db.calibration_ids())
        finally:
            db.close()
    return count


def per_start(store: Path, name: str, target: str) -> dict[str, list[float]]:
    """Each repeat's own rQPS of `target` against a, per test (one start of both servers each):
    the spread of these is what one start cannot show."""
    from dbdrift.analysis.noise import paired_turns
    from dbdrift.results.measurements import measurements
    from dbdrift.store.store import Store

    db = Store(store)
    try:
        campaign_id = db.latest_campaign_id(name)
        rows = db.campaign(campaign_id).spec["rows"]
        runs: dict[tuple[str, str, int], object] = {}
        for run in db.runs(campaign_id):
            if run["status"] == "ok" and "warm" not in run["test"]:
                runs[(run["test"], run["target"], run["repeat"])] = measurements(db, MICROBENCHMARKS, [run], rows)[0].sample()
    finally:
        db.close()
    out: dict[str, list[float]] = {}
    for (test, who, repeat), sample in sorted(runs.items(), key=lambda kv: kv[0][2]):
        base = runs.get((test, "a", repeat))
        if who == target and base is not None:
            est = paired_turns([sample], [base])
            if est is not None and est.value is not None:
                out.setdefault(test, []).append(est.value)
    return out


def cells(doc: dict, target: str) -> list[dict]:
    return [r for r in doc["rows"] if r["target"] == target]


def instruction_ratios(doc: dict, target: str) -> dict[str, float]:
    return {row["test"]: row["relative"][target] for row in doc.get("instructions", []) if target in row["relative"]}


def print_cells(out: Output, title: str, rows: list[dict], instr: dict[str, float],
                starts: dict[str, list[float]]) -> None:
    out(f"\n{title}")
    out(f"{'test':<24} {'rQPS':>6} {'lower':>6} {'upper':>6} {'±%':>5}  {'instr':>6}  {'verdict':<22} each start")
    for r in rows:
        half = (r["rqps_upper"] - r["rqps_lower"]) / 2 / r["rqps"] * 100 if r["rqps_lower"] is not None else float("nan")
        ratio = f"{instr[r['test']]:6.3f}" if r["test"] in instr else "     -"
        each = " ".join(f"{v:.3f}" for v in starts.get(r["test"], []))
        out(f"{r['test']:<24} {r['rqps']:6.3f} {_f(r['lower'])} {_f(r['upper'])} {half:5.1f}  {ratio}  "
            f"{r['verdict']:<22} {each}")


def calibrated(out: Output, store: Path, calibration: list[Path] | None) -> None:
    """The summary's A/A and planted shares again, each interval widened by the between-campaign
    sd that the earlier A/A campaigns measured (as `dbdrift report` does with calibrations)."""
    paths = calibration if calibration is not None else [p for p in sorted(OUT_DIR.glob("noise-*.db")) if p != store]
    earlier = [c for c in aa_coverage.load(paths) if not c.planted]
    if not earlier:
        out("  widened by a between-campaign sd: no earlier A/A campaigns to measure it on (--calibration)")
        return
    for c in aa_coverage.load([store]):
        wide, sd = aa_coverage.widened(c.cells, earlier)
        shown = ", ".join(f"{v:.2%} ({method}, {n} campaigns)" for method, (v, n) in sd.items()
                          if any(e.method == method for _, e in c.cells))
        if c.planted:
            called = sum(verdict(e) == "regression" for _, e in wide)
            out(f"  {c.label} widened by sd {shown}: {called}/{len(wide)} called a regression")
        else:
            held = sum(aa_coverage.holds(e) for _, e in wide)
            out(f"  {c.label} widened by sd {shown}: {held}/{len(wide)} intervals hold 1.0")


def as_reported(out: Output, reported: dict[str, list[dict]], calibrations: int, minutes: float | None) -> None:
    """The goal figures again, from the report `dbdrift report` gives with the calibrations."""
    each = f" ({minutes:.2f} min per target per microbenchmark each)" if minutes is not None else ""
    out(f"  as `dbdrift report` gives them after {calibrations} calibration(s) in the store{each}:")
    for kind, rows in reported.items():
        sd = sorted({r["campaign_sd"] for r in rows if r.get("campaign_sd") is not None})
        widened = f"between-campaign sd {', '.join(f'{v:.2%}' for v in sd)}" if sd else "no between-campaign sd added"
        if kind == "aa":
            held = [r for r in rows if r["rqps_lower"] is not None and r["rqps_lower"] <= 1.0 <= r["rqps_upper"]]
            out(f"    A/A cells whose interval holds 1.0: {len(held)}/{len(rows)} = {len(held) / len(rows):.0%} "
                f"({widened})")
        else:
            called = [r for r in rows if r["verdict"] == "regression"]
            out(f"    planted cells called a regression: {len(called)}/{len(rows)} = {len(called) / len(rows):.0%} "
                f"({widened})")


def _f(value) -> str:
    return f"{value:6.3f}" if value is not None else "     -"


def main() -> int:
    parser = campaign_parser(__doc__)
    sysbench_options(parser, 200_000, 15.0, "measured seconds per target per test and repeat")
    parser.add_argument("--repeats", type=int, default=5, help="runs per test, each on a fresh start of the servers")
    parser.add_argument("--restart", choices=("repeat", "never", "reload"), default="repeat",
                        help="campaign restart: never keeps every server's first start for all repeats; "
                             "reload runs the test sequence once per repeat, each on a new server")
    parser.add_argument("--slice", type=float, default=0.01, help="seconds of each turn (campaign turn_s)")
    parser.add_argument("--tests", nargs="+", default=DEFAULT_TESTS)
    parser.add_argument("--cpus", choices=("auto", "shared"), default="auto",
                        help="campaign cpus: auto pins the driver and the servers to separate CPUs")
    parser.add_argument("--busy", type=int, default=0,
                        help="run this many bursty CPU burners beside the campaigns (a shared host)")
    parser.add_argument("--only", choices=("aa", "planted"))
    parser.add_argument("--campaigns", type=int, default=1, help="run the A/A and planted campaigns this many times")
    parser.add_argument("--aa-name", default="a2", help="name of the A/A campaign's second server")
    parser.add_argument("--swap", action="store_true",
                        help="list the second server first: it starts, loads, settles and takes its turns "
                             "first (the base stays a)")
    parser.add_argument("--settings", default="{}",
                        help="JSON object of settings for both servers (e.g. huge pages), under the planted ones")
    parser.add_argument("--calibration", nargs="*", type=Path,
                        help="stores of earlier A/A campaigns whose between-campaign sd widens this run's intervals "
                             "in the summary (default: every other bench/out/noise-*.db)")
    parser.add_argument("--calibrations", type=int, default=0,
                        help="first store this many `dbdrift calibrate` campaigns of the A/A file, then also count "
                             "every cell as `dbdrift report` gives it with them")
    parser.add_argument("--store", type=Path,
                        help="add the campaigns to this store (default: a new bench/out/noise-HHMMSS.db); "
                             "its `dbdrift calibrate` campaigns count as --calibrations ones do")
    parser.add_argument("--no-instructions", action="store_true", help="do not size the planted cells with callgrind")
    parser.add_argument("--planted", default=json.dumps(DEFAULT_PLANTED),
                        help="JSON object of settings for the second server of the planted campaign")
    args = parser.parse_args()
    planted = json.loads(args.planted)
    out, stamp, store = campaign_output("noise", args.store)
    out(f"noise benchmark: postgres {args.version}, {args.rows:,} rows, {len(args.tests)} tests, "
        f"{args.repeats} x {args.seconds:g} s per target per test (restart {args.restart}) in turns of "
        f"{args.slice:g} s, cpus {args.cpus}, "
        f"{args.busy} busy neighbours{', second server listed first' if args.swap else ''}; "
        f"both servers: {json.loads(args.settings)}; planted: {planted}")
    results: dict[str, tuple[list, float, dict]] = {}
    reported: dict[str, list[dict]] = {}  # as `dbdrift report` gives them with the calibrations
    per_calibration = calibrate(args, stamp, store, out) if args.calibrations else None
    stored = calibrations_in(store)
    spreads: list[float] = []  # per cell: standard deviation of its per-start rQPS
    for n in range(args.campaigns):
        for kind in ("aa", "planted"):
            if args.only and args.only != kind:
                continue
            count = kind == "planted" and n == 0 and not args.no_instructions  # deterministic: once is enough
            name = f"noise-{kind}-{stamp}-{n + 1}"
            with neighbours(args.busy):
                doc, elapsed = run_campaign(name, args, planted if kind == "planted" else None, store, out, count)
            target = "planted" if kind == "planted" else args.aa_name
            starts = per_start(store, name, target)
            spreads += [statistics.stdev(v) for v in starts.values() if len(v) > 1]
            rows, instr = cells(doc, target), instruction_ratios(doc, target)
            if stored():
                reported.setdefault(kind, []).extend(cells(json_report(store, name, "auto"), target))
            before = results.get(kind, ([], 0.0, {}))
            results[kind] = (before[0] + rows, before[1] + elapsed, before[2] or instr)
            print_cells(out, f"{kind} #{n + 1}: {target} relative to a", rows, results[kind][2], starts)
            per = elapsed / 60 / 2 / len(args.tests)
            out(f"{kind} #{n + 1}: {elapsed / 60:.1f} min for 2 targets x {len(args.tests)} tests = "
                f"{per:.2f} min per target per test")
    out("\nsummary")
    if "aa" in results:
        rows = results["aa"][0]
        holds = [r for r in rows if r["rqps_lower"] is not None and r["rqps_lower"] <= 1.0 <= r["rqps_upper"]]
        calm = [r for r in rows if r["verdict"] == "no significant change"]
        widths = sorted((r["rqps_upper"] - r["rqps_lower"]) / 2 / r["rqps"] * 100 for r in rows if r["rqps_lower"] is not None)
        out(f"  A/A cells whose interval holds 1.0: {aa_coverage.coverage_text(len(holds), len(rows))} "
            "(goal >= 95%)")
        out(f"  A/A cells with verdict 'no significant change': {len(calm)}/{len(rows)}")
        if widths:
            out(f"  A/A interval half widths: median ±{widths[len(widths) // 2]:.2f}%, max ±{widths[-1]:.2f}%")
    if "planted" in results:
        rows, _, instr = results["planted"]
        called = [r for r in rows if r["verdict"] == "regression"]
        mean = sum(r["rqps"] for r in rows) / len(rows)
        low, high = min(r["rqps"] for r in rows), max(r["rqps"] for r in rows)
        out(f"  planted cells called a regression: {len(called)}/{len(rows)} = {len(called) / len(rows):.0%} "
            f"(goal >= 95%); planted rQPS mean {mean:.3f}, {low:.3f} to {high:.3f}")
        sized = [r for r in rows if instr.get(r["test"], 0) >= 1.03]
        if instr:
            hit = [r for r in sized if r["verdict"] == "regression"]
            share = f"{len(hit) / len(sized):.0%}" if sized else "-"
            out(f"  cells whose instructions/event grew >= 3% (callgrind): {len(sized)}/{len(rows)}; "
                f"of those called a regression: {len(hit)}/{len(sized)} = {share}")
    if stored():
        as_reported(out, reported, stored(), per_calibration)
    else:
        calibrated(out, store, args.calibration)
    if spreads:
        spreads.sort()
        out(f"  rQPS from one start to the next (sd per cell): median {spreads[len(spreads) // 2]:.2%}, "
            f"max {spreads[-1]:.2%}")
    campaigns = args.campaigns
    for kind, (_, elapsed, _) in results.items():
        out(f"  {kind}: {elapsed / 60 / 2 / len(args.tests) / campaigns:.2f} min per target per microbenchmark "
            f"(goal <= 2)")
    return finish(out, store)


if __name__ == "__main__":
    sys.exit(main())
