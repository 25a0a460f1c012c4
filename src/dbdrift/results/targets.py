"""A stored campaign's targets as every report names them: which is the base, and their labels."""
from __future__ import annotations

import json

from dbdrift.errors import UserError


def base_target(targets, base: str | None, campaign: str) -> str:
    """--base if given (it must name a target), else the campaign's base, else the first target."""
    names = [t["name"] for t in targets]
    base_name = base or next((t["name"] for t in targets if t["is_base"]), names[0])
    if base_name not in names:
        raise UserError(f"--base {base_name}: no such target in campaign {campaign}", f"targets: {', '.join(names)}")
    return base_name


def target_labels(targets) -> dict[str, str]:
    """Target name -> "engine version" as its server reported it (the engine alone if it never started)."""
    labels = {}
    for t in targets:
        server = json.loads(t["server_json"]) if t["server_json"] else {}
        labels[t["name"]] = f"{t['engine']} {server['version']}" if server.get("version") else t["engine"]
    return labels
