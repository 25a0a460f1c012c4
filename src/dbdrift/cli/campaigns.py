"""`dbdrift campaigns`: what a store holds, one line per campaign, for `report --campaign`."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dbdrift.cli import options
from dbdrift.store.store import Store


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", type=Path, default=Path("dbdrift.db"), help="results store (default ./dbdrift.db)")
    options.add_format(parser, ("text", "json"), "text: one line per campaign; json: a list with ids, targets "
                                                 "and run counts")


def rows(store: Store) -> list[dict]:
    out = []
    for c in store.campaigns():
        full = store.campaign(c["id"])
        spec = json.loads(full["spec_json"])
        targets = store.targets(c["id"])
        out.append({
            "id": c["id"], "name": c["name"], "created_at": c["created_at"],
            "workload": spec.get("workload", "sysbench"), "calibration": bool(spec.get("calibration")),
            "targets": [t["name"] for t in targets],
            "base": next((t["name"] for t in targets if t["is_base"]), None),
            "runs_ok": c["ok"] or 0, "runs_failed": c["failed"] or 0, "runs_skipped": c["skipped"] or 0,
            "dbdrift_version": full["dbdrift_version"],
        })
    return out


def main(args: argparse.Namespace) -> int:
    store = options.open_store(args.store)
    try:
        listed = rows(store)
    finally:
        store.close()
    if args.format == "json":
        sys.stdout.write(json.dumps(listed, indent=2) + "\n")
        return 0
    if not listed:
        sys.stdout.write(f"{args.store} holds no campaign\n")
        return 0
    sys.stdout.write(f"{'id':>4}  {'created (UTC)':<19}  {'name':<32} {'workload':<16} {'runs ok/failed/skipped':<22}  "
                     "targets (base first)\n")
    for r in listed:
        kind = r["workload"] + (" A/A" if r["calibration"] else "")
        targets = [r["base"]] + [t for t in r["targets"] if t != r["base"]] if r["base"] else r["targets"]
        counts = f"{r['runs_ok']}/{r['runs_failed']}/{r['runs_skipped']}"
        sys.stdout.write(f"{r['id']:>4}  {r['created_at'][:19].replace('T', ' '):<19}  {r['name']:<32} {kind:<16} {counts:<22}  "
                         f"{', '.join(targets)}\n")
    sys.stdout.write("\nreport one with: dbdrift report --campaign NAME|ID\n")
    return 0
