"""The table `dbdrift campaigns` prints: one line per stored campaign, its targets base first."""
from __future__ import annotations

from dbdrift.model import JsonObject


def campaign_lines(listed: list[JsonObject]) -> list[str]:
    """The header, a line per campaign row (app/campaigns.py) and how to report one."""
    lines = [f"{'id':>4}  {'created (UTC)':<19}  {'name':<32} {'workload':<16} "
             f"{'runs ok/failed/interrupted/skipped':<34}  targets (base first)"]
    for r in listed:
        kind = r["workload"] + (" A/A" if r["calibration"] else "")
        targets = [r["base"]] + [t for t in r["targets"] if t != r["base"]] if r["base"] else r["targets"]
        counts = f"{r['runs_ok']}/{r['runs_failed']}/{r['runs_interrupted']}/{r['runs_skipped']}"
        lines.append(f"{r['id']:>4}  {r['created_at'][:19].replace('T', ' '):<19}  {r['name']:<32} {kind:<16} "
                     f"{counts:<34}  {', '.join(targets)}")
    lines += ["", "report one with: dbdrift report --campaign NAME|ID"]
    return lines
