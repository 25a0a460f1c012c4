"""How long the instruction pass takes, where its time goes, and whether it still finds a
planted cost: PostgreSQL 17.10 against 17.10 with pg_stat_statements loaded (track = all), the
32 default tests at 1M rows, `dbdrift run --instructions-only`.

For each pass (with --before REF, the code at REF first, from a git worktree, then this
checkout; same plant, same tests, same driver) it prints `run --check`'s estimate and the wall
time, the time per phase (start and load, restart under callgrind, prime, and per test the
fresh copies, the primes of tests that share a database, the counted runs, reading the
profiles), the verdicts, and point-query's ratio with the functions that moved; then the
passes' ratios and verdicts side by side.

    .venv/bin/python bench/instruction_pass.py [--before REF] [--rows 1000000] [--tests ...] [--version 17.10]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import OUT_DIR, Output, campaign_output, campaign_parser, dbdrift_cli, finish  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PLANT = {"shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.track": "all"}
FOUND_IN = ("pgss", "pg_stat_statements")  # the planted cost's functions: pgss_* hooks, pg_stat_statements.so


@dataclass
class Pass:
    """One instruction pass: its estimate, wall time, time per phase and verdicts."""

    name: str
    estimate_s: float
    wall_s: float
    phases: dict[str, float] = field(default_factory=dict)  # summed over both targets
    rows: list[dict] = field(default_factory=list)  # the JSON report's instruction rows of the planted target


def campaign_toml(name: str, args: argparse.Namespace) -> str:
    settings = ", ".join(f'"{k}" = "{v}"' for k, v in PLANT.items())
    tests = f"tests = {json.dumps(args.tests)}\n" if args.tests else ""
    return (f'name = "{name}"\ntables = 1\nrows = {args.rows}\nthreads = [1]\n{tests}'
            f'[[targets]]\nname = "pg"\nengine = "postgres"\nversion = "{args.version}"\nbase = true\n'
            f'[[targets]]\nname = "pgss"\nengine = "postgres"\nversion = "{args.version}"\n'
            f"settings = {{ {settings} }}\n")


def seconds(text: str) -> float:
    """`6m12s`, `1h02m`, `45s` -> seconds."""
    total = 0.0
    for value, unit in re.findall(r"(\d+(?:\.\d+)?)([hms])", text):
        total += float(value) * {"h": 3600, "m": 60, "s": 1}[unit]
    return total


def run_pass(label: str, name: str, args: argparse.Namespace, store: Path, out: Output,
             env: dict[str, str] | None) -> Pass:
    path = OUT_DIR / f"{name}.toml"
    path.write_text(campaign_toml(name, args))
    check = dbdrift_cli("run", str(path), "--store", str(store), "--instructions-only", "--check", env=env)
    if check.returncode != 0:
        raise SystemExit(f"error: run --check of {label} failed: {check.stderr[-2000:]}")
    found = re.search(r"expected time: about (\S+)", check.stdout)
    estimate = seconds(found.group(1)) if found else 0.0
    out(f"{label}: run --check expects {estimate / 60:.1f} min")
    started = time.monotonic()
    result = dbdrift_cli("run", str(path), "--store", str(store), "--instructions-only", "--no-report", env=env)
    wall = time.monotonic() - started
    if result.returncode != 0:
        out(result.stderr[-3000:])
        raise SystemExit(f"error: the instruction pass of {label} failed (exit {result.returncode})")
    report = dbdrift_cli("report", "--store", str(store), "--campaign", name, "--format", "json", env=env)
    report.check_returncode()
    rows = [r for r in json.loads(report.stdout)["rows"] if r["measure"] == "instructions" and r["target"] == "pgss"]
    return Pass(label, estimate, wall, phases_of(store), rows)


def phases_of(store: Path) -> dict[str, float]:
    """Seconds per phase over both targets: the setup steps by label, and the counts' own
    phases (workloads/sysbench/instructions.py PHASES) where the store has them (else their whole time)."""
    db = sqlite3.connect(store)
    db.row_factory = sqlite3.Row
    phases: dict[str, float] = {}

    def add(name: str, value: float) -> None:
        phases[name] = phases.get(name, 0.0) + value

    for row in db.execute("SELECT label, elapsed_s FROM steps"):
        label = row["label"]
        add("setup: " + ("load" if label.startswith("load") else "settle" if "settle" in label.lower()
                         else label), row["elapsed_s"])
    columns = {r[1] for r in db.execute("PRAGMA table_info(instructions)")}
    has_phases = "phases_json" in columns
    for row in db.execute(f"SELECT elapsed_s{', phases_json' if has_phases else ''} FROM instructions"):
        split = json.loads(row["phases_json"] or "{}") if has_phases else {}
        for name, value in split.items():
            add(f"tests: {name}", value)
        add("tests: other" if split else "tests: (not split)", row["elapsed_s"] - sum(split.values()))
    return phases


def worktree_env(ref: str) -> tuple[dict[str, str], Path]:
    """The environment that runs `python -m dbdrift` from the code at `ref` (a detached worktree)."""
    where = Path(tempfile.mkdtemp(prefix="dbdrift-before-"))
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(where), ref], check=True,
                   capture_output=True)
    return {**os.environ, "PYTHONPATH": str(where / "src")}, where


def show(p: Pass, out: Output) -> None:
    out(f"\n{p.name}: {p.wall_s / 60:.1f} min wall, run --check said {p.estimate_s / 60:.1f} min "
        f"({(p.estimate_s / p.wall_s - 1) * 100:+.0f}%)")
    out("  seconds per phase, both targets summed (they run side by side, one per CPU):")
    for name, value in sorted(p.phases.items(), key=lambda kv: -kv[1]):
        out(f"    {name:<48} {value:8.1f}")
    verdicts: dict[str, int] = {}
    for r in p.rows:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    out(f"  verdicts of pgss / pg: {', '.join(f'{n} {v}' for v, n in sorted(verdicts.items()))}")
    point = next((r for r in p.rows if r["test"] == "point-query"), None)
    if point:
        named = any(f in (point["explanation"] or "") for f in FOUND_IN)
        out(f"  point-query: {point['instr_rel']} instructions ratio, {point['verdict']}; the plant's functions "
            f"{'named' if named else 'NOT named'}: {point['explanation']}")


def main() -> int:
    parser = campaign_parser(__doc__)
    parser.add_argument("--before", metavar="REF", help="also run the pass with the code at this git ref, first")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--version", default="17.10")
    parser.add_argument("--tests", nargs="+", help="default: the 32 default tests")
    args = parser.parse_args()
    out, stamp, store = campaign_output("instruction_pass")
    out(f"instruction pass: postgres {args.version} against {args.version} with pg_stat_statements (track = all), "
        f"{args.rows:,} rows, tests {args.tests or 'the 32 default tests'}")
    passes = []
    if args.before:
        env, where = worktree_env(args.before)
        try:
            before_store = store.with_name(store.stem + "-before.db")
            passes.append(run_pass(f"before ({args.before})", f"ipass-{stamp}-before", args, before_store, out, env))
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(where)], capture_output=True)
    passes.append(run_pass("now", f"ipass-{stamp}", args, store, out, None))
    for p in passes:
        show(p, out)
    if len(passes) == 2:
        before, now = passes
        out(f"\nwall: {before.wall_s / 60:.1f} -> {now.wall_s / 60:.1f} min ({now.wall_s / before.wall_s:.2f}x)")
        out(f"{'test':<26} {'before':>8} {'now':>8} {'diff %':>7}  verdicts")
        was = {r["test"]: r for r in before.rows}
        same = 0
        for r in now.rows:
            b = was.get(r["test"])
            if not b or b["instr_rel"] is None or r["instr_rel"] is None:
                continue
            same += b["verdict"] == r["verdict"]
            out(f"{r['test']:<26} {b['instr_rel']:8.4f} {r['instr_rel']:8.4f} "
                f"{(r['instr_rel'] / b['instr_rel'] - 1) * 100:7.3f}  {b['verdict']} / {r['verdict']}")
        out(f"same verdict in {same} of {len(now.rows)} tests")
    return finish(out, store)


if __name__ == "__main__":
    sys.exit(main())
