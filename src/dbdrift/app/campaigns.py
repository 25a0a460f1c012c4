"""`dbdrift campaigns`: what a store holds, one row per campaign, for `report --campaign`."""
from __future__ import annotations

from dbdrift.model import JsonObject
from dbdrift.store.store import Store


def rows(store: Store) -> list[JsonObject]:
    out = []
    for c in store.campaigns():
        full = store.campaign(c["id"])
        targets = store.targets(c["id"])
        out.append({
            "id": c["id"], "name": c["name"], "created_at": c["created_at"],
            "workload": full.workload, "calibration": bool(full.spec.get("calibration")),
            "targets": [t.name for t in targets],
            "base": next((t.name for t in targets if t.is_base), None),
            "runs_ok": c["ok"] or 0, "runs_failed": c["failed"] or 0, "runs_interrupted": c["interrupted"] or 0,
            "runs_skipped": c["skipped"] or 0,
            "dbdrift_version": full.dbdrift_version,
        })
    return out
