"""`dbdrift report`: read a stored campaign, compute rQPS and summaries, render a format."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dbdrift.analysis.relative import Measurement, compare
from dbdrift.analysis.summary import summarize_groups
from dbdrift.catalog.sysbench import GROUP_TITLES, GROUPS, report_order
from dbdrift.errors import UserError
from dbdrift.report.csv import render_csv
from dbdrift.report.json import render_json
from dbdrift.report.markdown import render_markdown
from dbdrift.report.table import ReportData
from dbdrift.report.text import render_text
from dbdrift.store.store import Store

FORMATS = ("text", "markdown", "csv", "json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", type=Path, default=Path("dbdrift.db"), help="results store (default ./dbdrift.db)")
    parser.add_argument("--campaign", help="campaign name or id (default: the latest)")
    parser.add_argument("--base", help="target every other target is divided by (default: the campaign's base)")
    parser.add_argument("--chain", action="store_true", help="each target relative to the previous one")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="color rQPS <= 0.95 red and >= 1.05 green in text output")


def build_report(store: Store, campaign: str | None, base: str | None, chain: bool) -> ReportData:
    campaign_id = store.latest_campaign_id(campaign)
    if campaign_id is None:
        what = f"campaign {campaign!r}" if campaign else "any campaign"
        raise UserError(f"store {store.path} has no {what}", "run `dbdrift run CAMPAIGN.toml` or `dbdrift demo` first")
    row = store.campaign(campaign_id)
    targets = store.targets(campaign_id)
    names = [t["name"] for t in targets]
    base_name = base or next((t["name"] for t in targets if t["is_base"]), names[0])
    if base_name not in names:
        raise UserError(f"--base {base_name}: no such target in campaign {row['name']}", f"targets: {', '.join(names)}")
    measurements = [
        Measurement(r["test"], r["test_group"], r["target"], r["threads"], r["value"], r["metric"], r["status"])
        for r in store.runs(campaign_id) if "warm" not in r["test"]
    ]
    comparison = compare(measurements, names, base_name, report_order({m.test for m in measurements}), chain)
    labels = {}
    for t in targets:
        server = json.loads(t["server_json"]) if t["server_json"] else {}
        labels[t["name"]] = f"{t['engine']} {server['version']}" if server.get("version") else t["engine"]
    return ReportData(row["name"], comparison, tuple(summarize_groups(comparison, list(GROUPS))), labels,
                      GROUPS, GROUP_TITLES)


def render(data: ReportData, fmt: str, color: bool = False) -> str:
    if fmt == "markdown":
        return render_markdown(data)
    if fmt == "csv":
        return render_csv(data)
    if fmt == "json":
        return render_json(data)
    return render_text(data, color=color)


def use_color(choice: str) -> bool:
    return choice == "always" or (choice == "auto" and sys.stdout.isatty())


def main(args: argparse.Namespace) -> int:
    if not args.store.exists():
        raise UserError(f"store {args.store} does not exist", "pass --store PATH, or run a campaign first")
    store = Store(args.store)
    try:
        data = build_report(store, args.campaign, args.base, args.chain)
    finally:
        store.close()
    sys.stdout.write(render(data, args.format, use_color(args.color)))
    return 0
