"""How long the instruction verdict takes and how repeatable it is: 17.10 vs 18.4 on the 32
default tests (or, with --engine mysql, MySQL 5.7.22 -> 8.0.15 -> 8.0.31).

Counts instructions per event under callgrind (`dbdrift run --instructions-only`, the targets
counted at once, one per CPU) for each version and test, twice in a row on fresh servers, and
prints the wall time of each count, per cell both counts, their difference, and the spread of
the two N1/N2 pairs inside each count; then each version relative to the one before (--chain)
or the first, and the functions that moved most.

    .venv/bin/python bench/instructions.py [--engine postgres|mysql|mariadb] [--versions 17.10 18.4]
        [--rows 1000000] [--tests point-query ...] [--chain] [--once]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import OUT_DIR, Output, campaign_output, campaign_parser, dbdrift_cli, finish  # noqa: E402


PREFIX = {"postgres": "pg", "mysql": "my", "mariadb": "ma"}
DEFAULT_VERSIONS = {"postgres": ["17.10", "18.4"], "mysql": ["5.7.22", "8.0.15", "8.0.31"],
                    "mariadb": ["10.11.5", "11.4.5"]}


def campaign_toml(name: str, args: argparse.Namespace) -> str:
    lines = [f'name = "{name}"', "tables = 1", f"rows = {args.rows}", "threads = [1]"]
    if args.tests:
        lines.append(f"tests = {json.dumps(args.tests)}")
    for i, version in enumerate(args.versions):
        lines += ["[[targets]]", f'name = "{PREFIX[args.engine]}{version}"', f'engine = "{args.engine}"',
                  f'version = "{version}"', f"base = {str(i == 0).lower()}"]
    return "\n".join(lines) + "\n"


def count(name: str, args: argparse.Namespace, store: Path, out: Output) -> tuple[dict, float]:
    path = OUT_DIR / f"{name}.toml"
    path.write_text(campaign_toml(name, args))
    started = time.monotonic()
    result = dbdrift_cli("run", str(path), "--store", str(store), "--instructions-only", "--no-report")
    elapsed = time.monotonic() - started
    if result.returncode != 0:
        out(result.stderr[-3000:])
        raise SystemExit(f"error: instruction count {name} failed (exit {result.returncode})")
    chain = ["--chain"] if args.chain else []
    report = dbdrift_cli("report", "--store", str(store), "--campaign", name, "--format", "json", *chain)
    report.check_returncode()
    return json.loads(report.stdout), elapsed


def _pct(value) -> str:
    """A spread in percent; one N1/N2 pair (a scan) has none."""
    return "one pair" if value is None else f"{value:.3f}"


def main() -> int:
    parser = campaign_parser(__doc__)
    parser.add_argument("--engine", choices=tuple(PREFIX), default="postgres")
    parser.add_argument("--versions", nargs="+", help="default: 17.10 18.4; mysql 5.7.22 8.0.15 8.0.31")
    parser.add_argument("--chain", action="store_true", help="each version relative to the one before")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--tests", nargs="+", help="default: the 32 default tests")
    parser.add_argument("--once", action="store_true", help="count once (time only; no repeatability between counts)")
    args = parser.parse_args()
    args.versions = args.versions or DEFAULT_VERSIONS[args.engine]
    out, stamp, store = campaign_output("instructions")
    out(f"instructions per event: {args.engine} {', '.join(args.versions)}, {args.rows:,} rows, "
        f"tests {args.tests or 'the 32 default tests'}")
    docs = []
    for attempt in (1,) if args.once else (1, 2):
        doc, elapsed = count(f"instr-{stamp}-{attempt}", args, store, out)
        docs.append(doc)
        cells = len(doc["instructions"]) * len(args.versions)
        out(f"count {attempt}: {elapsed / 60:.1f} min wall for {cells} cells ({len(doc['instructions'])} tests x "
            f"{len(args.versions)} versions; goal for 32 x 2: 20 min)")
    if len(docs) == 1:
        docs.append(docs[0])
    out(f"\n{'test':<22} {'target':<8} {'count 1':>12} {'count 2':>12} {'diff %':>8} {'spread 1 %':>10} "
        f"{'spread 2 %':>10}")
    worst = 0.0
    for row1, row2 in zip(docs[0]["instructions"], docs[1]["instructions"]):
        for target, first in row1["targets"].items():
            second = row2["targets"][target]
            diff = abs(second["per_event"] - first["per_event"]) / first["per_event"] * 100
            worst = max(worst, diff)
            out(f"{row1['test']:<22} {target:<8} {first['per_event']:>12,.1f} {second['per_event']:>12,.1f} "
                f"{diff:8.3f} {_pct(first['spread_pct']):>10} {_pct(second['spread_pct']):>10}")
    out(f"\nlargest difference between the two counts: {worst:.3f}% (goal: within 0.1%)")
    names = [f"{PREFIX[args.engine]}{v}" for v in args.versions]
    for row in docs[0]["instructions"]:
        for target, ratio in row["relative"].items():
            base = names[names.index(target) - 1] if args.chain else names[0]
            fn = row["functions"][target]
            grew = ", ".join(f"{r['function']} {r['delta']:+,.0f}" for r in fn["self"]["grew"][:5])
            shrank = ", ".join(f"{r['function']} {r['delta']:+,.0f}" for r in fn["self"]["shrank"][:3])
            out(f"{row['test']:<22} {target} / {base} = {ratio:.4f} ({fn['total_delta']:+,.0f} per event); "
                f"grew: {grew}; shrank: {shrank}")
    return finish(out, store)


if __name__ == "__main__":
    sys.exit(main())
