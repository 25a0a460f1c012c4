"""Noise learned from the store and the false verdicts of an A/A twin: does `detect` plan from a
host's history without a calibration, and how often does the twin of the base get a verdict.

With --run it runs the campaign file `--campaigns` times with `--aa-twin` into the store (each a
campaign in turns whose starts join the host's history, with a twin of the base). Then, on the
store, it prints `run --check --detect PCT` of the same file (the plan, the evidence it names,
each test's source), the twin's note of each campaign's report, and `history --metric
false-verdicts` (the rate per host over time).

    .venv/bin/python bench/history_noise.py --campaign FILE --detect 5% [--run --campaigns 2] [--store S]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import campaign_output, campaign_parser, dbdrift_cli, finish, progress  # noqa: E402


def parse_args(argv: list[str] | None = None):
    parser = campaign_parser(__doc__ or "")
    parser.add_argument("--campaign", type=Path, required=True, help="the campaign file (sysbench, in turns)")
    parser.add_argument("--detect", default="5%", help="the threshold `run --check --detect` plans for")
    parser.add_argument("--run", action="store_true", help="run the campaign with --aa-twin first")
    parser.add_argument("--campaigns", type=int, default=2, help="with --run: how many times (default 2)")
    parser.add_argument("--store", type=Path, help="the store (default bench/out/history_noise-HHMMSS.db)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out, _, store = campaign_output("history_noise", args.store)
    if args.run:
        for n in range(args.campaigns):
            progress(f"campaign {n + 1} of {args.campaigns} with an A/A twin")
            ran = dbdrift_cli("run", str(args.campaign), "--store", str(store), "--aa-twin", "--format", "json")
            if ran.returncode != 0:
                raise SystemExit(f"run failed: {ran.stderr[-2000:]}")
            report = json.loads(ran.stdout)
            out(f"campaign {n + 1}: " + next((x for x in report["notes"] if x.startswith("A/A twin")), "no twin note"))
    check = dbdrift_cli("run", str(args.campaign), "--store", str(store), "--check", "--detect", args.detect)
    out(f"run --check --detect {args.detect} (exit {check.returncode}):")
    shown = False  # the plan: from its `detect` line to the store's
    for line in check.stdout.splitlines():
        shown = (shown or line.strip().startswith("detect ")) and not line.strip().startswith("store:")
        if shown:
            out(line)
    if check.returncode != 0:
        out(check.stderr.strip())
    history = dbdrift_cli("history", "--store", str(store), "--metric", "false-verdicts")
    out("history --metric false-verdicts:")
    for line in (history.stdout or history.stderr).splitlines():
        out(line)
    return finish(out, store)


if __name__ == "__main__":
    sys.exit(main())
