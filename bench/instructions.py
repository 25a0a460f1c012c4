"""How repeatable dbdrift's instructions per event are, and what they say about 17.10 vs 18.4
(or, with --engine mysql, about MySQL 5.7.22 -> 8.0.15 -> 8.0.31).

Counts instructions per event under callgrind (`dbdrift run --instructions-only`) for each
version and test, twice in a row on two fresh servers, and prints per cell both counts, their
difference, and the spread of the two N1/N2 pairs inside each count; then each version
relative to the one before (--chain) or the first, and the functions that moved most.

    .venv/bin/python bench/instructions.py [--engine postgres|mysql|mariadb] [--versions 17.10 18.4]
        [--rows 1000000] [--tests point-query range-covered-pk read-only_range=100 update-index] [--chain]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import OUT_DIR, Output, dbdrift_cli  # noqa: E402

from dbdrift.server.base import exit_on_sigterm  # noqa: E402

DEFAULT_TESTS = ["point-query", "range-covered-pk", "read-only_range=100", "update-index"]
PREFIX = {"postgres": "pg", "mysql": "my", "mariadb": "ma"}
DEFAULT_VERSIONS = {"postgres": ["17.10", "18.4"], "mysql": ["5.7.22", "8.0.15", "8.0.31"],
                    "mariadb": ["10.11.5", "11.4.5"]}


def campaign_toml(name: str, args: argparse.Namespace) -> str:
    lines = [f'name = "{name}"', "tables = 1", f"rows = {args.rows}", "threads = [1]",
             f"tests = {json.dumps(args.tests)}"]
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


def main() -> int:
    exit_on_sigterm()  # a `kill` lets the running dbdrift stop its servers, as Ctrl-C does
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=tuple(PREFIX), default="postgres")
    parser.add_argument("--versions", nargs="+", help="default: 17.10 18.4; mysql 5.7.22 8.0.15 8.0.31")
    parser.add_argument("--chain", action="store_true", help="each version relative to the one before")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--tests", nargs="+", default=DEFAULT_TESTS)
    args = parser.parse_args()
    args.versions = args.versions or DEFAULT_VERSIONS[args.engine]
    out = Output("instructions")
    stamp = time.strftime("%H%M%S")
    store = OUT_DIR / f"instructions-{stamp}.db"
    out(f"instructions per event: {args.engine} {', '.join(args.versions)}, {args.rows:,} rows, tests {args.tests}")
    docs = []
    for attempt in (1, 2):
        doc, elapsed = count(f"instr-{stamp}-{attempt}", args, store, out)
        docs.append(doc)
        cells = len(args.versions) * len(args.tests)
        out(f"count {attempt}: {elapsed / 60:.1f} min for {cells} cells = {elapsed / cells:.0f} s per test per version")
    out(f"\n{'test':<22} {'target':<8} {'count 1':>12} {'count 2':>12} {'diff %':>8} {'spread 1 %':>10} "
        f"{'spread 2 %':>10}")
    worst = 0.0
    for row1, row2 in zip(docs[0]["instructions"], docs[1]["instructions"]):
        for target, first in row1["targets"].items():
            second = row2["targets"][target]
            diff = abs(second["per_event"] - first["per_event"]) / first["per_event"] * 100
            worst = max(worst, diff)
            out(f"{row1['test']:<22} {target:<8} {first['per_event']:>12,.1f} {second['per_event']:>12,.1f} "
                f"{diff:8.3f} {first['spread_pct']:10.3f} {second['spread_pct']:10.3f}")
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
    out(f"  store: {store}")
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
