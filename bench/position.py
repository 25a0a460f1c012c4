"""Does a target's place in the turn order move its result? Per target and per turn position,
each with its 95% interval, on four identical servers and on the sync x fpi matrix.

Runs, through the dbdrift CLI, in turns of `--turn-s`:
  aaaa    four identical PostgreSQL servers (a, a2, a3, a4). Any target's offset from the
          round mean is order bias; so is every position's offset once those are taken out.
  matrix  the sync x fpi matrix of docs/guide.md (synchronous_commit x full_page_writes),
          once with the levels as written and once with the sync levels reversed, which moves
          every variant between the ends and the middle of the listed order (reversing both
          axes would reverse the list and keep the same two variants at its ends). How far a
          variant's offset from the round mean moves between the two listings is the order's
          bias on it (the variants differ for real, so only the move is bias).
Each runs with round_order = "alternating" (listed order and reversed, the order before) and
"balanced" (plan/rounds.py), one after the other. Offsets are exp(mean of ln(rate) − the
round's mean) − 1 (analysis.position); intervals are t over 20 batches of rounds.

    .venv/bin/python bench/position.py [--only aaaa matrix] [--seconds 15] [--turn-s 0.01]
                                       [--round-orders alternating balanced] [--reverse-axis sync]
    .venv/bin/python bench/position.py --analyse STORE.db    (the figures of a store it wrote)
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import campaign_output, campaign_parser, finish, run_campaign, sysbench_options  # noqa: E402

from dbdrift.analysis.position import Effect, PositionEffects, Turn, position_effects  # noqa: E402
from dbdrift.store.store import Store  # noqa: E402

AXES = {"sync": ("synchronous_commit", ["off", "on"]), "fpi": ("full_page_writes", ["off", "on"])}


def common(name: str, args, tests: list[str], round_order: str) -> list[str]:
    return [f'name = "{name}"', f'round_order = "{round_order}"', "tables = 1", f"rows = {args.rows}",
            "threads = [1]", "warmup_s = 2", f"read_s = {args.seconds}", f"write_s = {args.seconds}",
            'order = "turns"', f"turn_s = {args.turn_s}", "settle_s = 0", "warm_runs = false",
            f"tests = {tests!r}".replace("'", '"')]


def aaaa_toml(name: str, args, round_order: str) -> str:
    lines = common(name, args, args.aaaa_tests, round_order)
    for i, target in enumerate(("a", "a2", "a3", "a4")):
        lines += ["[[targets]]", f'name = "{target}"', f'version = "{args.version}"'] + (["base = true"] if i == 0 else [])
    return "\n".join(lines) + "\n"


def matrix_toml(name: str, args, reverse: bool, round_order: str) -> str:
    lines = common(name, args, args.matrix_tests, round_order)
    for axis, (setting, values) in AXES.items():
        lines.append(f"[axes.{axis}]")
        levels = list(enumerate(values))
        for level, value in (reversed(levels) if reverse and axis == args.reverse_axis else levels):
            lines.append(f'{level} = {{ postgres = {{ {setting} = "{value}" }} }}')
    lines += ["[[targets]]", 'name = "pg17"', f'version = "{args.version}"']
    return "\n".join(lines) + "\n"


def effects(store: Path, campaign: str) -> dict[str, PositionEffects]:
    """test -> its target and position effects, from the stored turns of every repeat."""
    s = Store(store)
    cid = s.latest_campaign_id(campaign)
    runs = [r for r in s.runs(cid) if r["status"] == "ok"]
    n = {test: len({r["target"] for r in runs if r["test"] == test}) for test in {r["test"] for r in runs}}
    turns: dict[str, list[Turn]] = {}
    for run in runs:
        for iv in s.intervals(run["id"]):
            seconds = iv["end_s"] - iv["start_s"]
            if iv["round"] is None or seconds <= 0:
                continue
            position = iv["position"] if iv["position"] is not None else iv["idx"] - iv["round"] * n[run["test"]]
            turns.setdefault(run["test"], []).append(
                Turn(run["repeat"], iv["round"], position, run["target"], iv["statements"] / seconds))
    s.close()
    return {test: pe for test, ts in sorted(turns.items()) if (pe := position_effects(ts)) is not None}


def moved(a: Effect, b: Effect) -> Effect:
    """How far an offset moved from `a` (one order) to `b` (the other), with an interval from
    both halves (independent campaigns)."""
    la, lb = math.log1p(a.value), math.log1p(b.value)
    halves = [math.log1p(e.upper) - math.log1p(e.value) for e in (a, b) if e.upper is not None]
    if len(halves) < 2:
        return Effect(math.expm1(lb - la), None, None, 0)
    half = math.hypot(*halves)
    return Effect(math.expm1(lb - la), math.expm1(lb - la - half), math.expm1(lb - la + half), min(a.n, b.n))


def show_aaaa(out, found: dict[str, PositionEffects]) -> float:
    worst = 0.0
    for test, pe in found.items():
        out(f"  {test} ({pe.rounds} rounds)")
        out("    target offsets:   " + "   ".join(f"{t} {e.text()}" for t, e in pe.targets.items()))
        out("    position effects: " + ("   ".join(f"{p + 1} {e.text()}" for p, e in pe.positions.items())
                                     if pe.separable else "not separable from the targets' offsets in this order"))
        worst = max(worst, *(abs(e.value) for e in pe.targets.values()))
    return worst


def show_matrix(out, found: dict[bool, dict[str, PositionEffects]]) -> float:
    worst = 0.0
    for test, pe in found[False].items():
        other = found[True].get(test)
        out(f"  {test}")
        for variant, e in pe.targets.items():
            if other is None or variant not in other.targets:
                continue
            m = moved(e, other.targets[variant])
            worst = max(worst, abs(m.value))
            out(f"    {variant:<18} {e.text():<28} {other.targets[variant].text():<28} moved {m.text()}")
        for label, p in (("as written", pe), ("reversed", other)):
            if p is not None and p.separable:
                out(f"    position effects ({label}): " + "   ".join(f"{k + 1} {e.text()}" for k, e in p.positions.items()))
    return worst


def analyse(path: Path) -> int:
    """The figures of every campaign of this script in a store, as a run prints them."""
    out, _, _ = campaign_output("position", path)
    s = Store(path)
    names = [r["name"] for r in s.db.execute("SELECT name FROM campaigns ORDER BY id")]
    s.close()
    stamps = sorted({n.split("-")[1] for n in names if n.startswith("position-")})
    out(f"turn order bias, from {path}")
    for stamp in stamps:
        for how in ("alternating", "balanced", None):
            prefix = f"position-{stamp}-{how}-" if how else f"position-{stamp}-"
            label = how or "alternating (stored before round_order)"
            if prefix + "aaaa" in names:
                out(f"\nA/A/A/A, round_order = {label}")
                out(f"  largest target offset {show_aaaa(out, effects(path, prefix + 'aaaa')):.2%}")
            if prefix + "matrix" in names and prefix + "matrix-reversed" in names:
                out(f"\nsync x fpi, round_order = {label}: levels as written / reversed, and the move")
                found = {False: effects(path, prefix + "matrix"), True: effects(path, prefix + "matrix-reversed")}
                out(f"  largest move {show_matrix(out, found):.2%}")
    out.close()
    return 0


def main() -> int:
    parser = campaign_parser(__doc__)
    parser.add_argument("--only", nargs="+", choices=["aaaa", "matrix"], default=["aaaa", "matrix"])
    sysbench_options(parser, 50_000, 15.0, "measured seconds per target per test")
    parser.add_argument("--turn-s", type=float, default=0.01)
    parser.add_argument("--aaaa-tests", nargs="+", default=["point-query", "insert", "update-index"])
    parser.add_argument("--matrix-tests", nargs="+", default=["insert", "update-index", "update-nonindex"])
    parser.add_argument("--round-orders", nargs="+", choices=["balanced", "alternating"],
                        default=["alternating", "balanced"], help="campaign key round_order: each runs every campaign")
    parser.add_argument("--reverse-axis", choices=list(AXES), default="sync",
                        help="the axis whose levels the second matrix campaign lists reversed")
    parser.add_argument("--analyse", type=Path, metavar="STORE",
                        help="run nothing: print the figures of the campaigns this script stored in STORE")
    args = parser.parse_args()
    if args.analyse:
        return analyse(args.analyse)
    out, stamp, store = campaign_output("position")
    out(f"turn order bias: postgres {args.version}, {args.rows:,} rows, {args.seconds:g} s per target per test, "
        f"{args.turn_s:g} s turns, round_order {' and '.join(args.round_orders)} one after the other; store {store}")
    summary = []
    for how in args.round_orders:
        if "aaaa" in args.only:
            name = f"position-{stamp}-{how}-aaaa"
            run_campaign(out, store, name, aaaa_toml(name, args, how))
            out(f"\nA/A/A/A, round_order = {how}: each target's offset from the round mean (order bias), "
                "and each position's")
            worst = show_aaaa(out, effects(store, name))
            summary.append(f"{how:<12} A/A/A/A: largest target offset {worst:.2%}")
        if "matrix" in args.only:
            found = {}
            for reverse in (False, True):
                name = f"position-{stamp}-{how}-matrix{'-reversed' if reverse else ''}"
                run_campaign(out, store, name, matrix_toml(name, args, reverse, how))
                found[reverse] = effects(store, name)
            out(f"\nsync x fpi, round_order = {how}: each variant's offset from the round mean, levels as written / "
                "reversed, and the move")
            worst = show_matrix(out, found)
            summary.append(f"{how:<12} sync x fpi: largest move of a variant between the two orders {worst:.2%}")
    out("\n" + "\n".join(summary))
    return finish(out, store)


if __name__ == "__main__":
    sys.exit(main())
