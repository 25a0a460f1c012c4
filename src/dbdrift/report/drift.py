"""Default drift as every format shows it: per compared target, the settings whose defaults
differ from its reference's (analysis/defaults.py), ranked, and the rest by name. Pure."""
from __future__ import annotations

from typing import Any

from dbdrift.analysis.defaults import Drift, DriftTable

DRIFT_TITLE = "defaults that differ (set by neither configuration)"
DRIFT_LEGEND = ("settings whose effective value differs between a target and its reference although neither server's "
                "configuration set it: a default that changed, a setting that appeared or went away; ranked by how "
                "often such a setting moves a benchmark (durability, I/O method, memory, optimizer, background work, "
                "concurrency), the rest named after. Pin one in both targets' settings to rule it out")


CELL_CHARS = 60  # a value longer than this (a switch list, a path list) is cut in tables; JSON keeps it whole


def setting_value(v: str | None) -> str:
    """A setting's value as every format writes it: `(none)` where the server has no such setting,
    `''` for an empty one."""
    return "(none)" if v is None else (v if v != "" else "''")


def _cell(v: str | None) -> str:
    text = setting_value(v)
    return text if len(text) <= CELL_CHARS else text[:CELL_CHARS - 1] + "…"


def drift_blocks(tables: tuple[DriftTable, ...]) -> list[tuple[str, list[str], list[list[str]], str]]:
    """(title, header, rows, the other settings' line) per compared target with any drift."""
    out = []
    for t in tables:
        if not t.rows:
            continue
        rows = [[d.category, d.name, _cell(d.reference), _cell(d.target), d.kind] for d in t.ranked()]
        others = t.others()
        tail = (f"other settings that differ ({len(others)}): " + ", ".join(
            f"{d.name} {setting_value(d.reference)} -> {setting_value(d.target)}" for d in others)) if others else ""
        out.append((f"{t.target} vs {t.reference}", ["category", "setting", t.reference, t.target, "how"], rows, tail))
    return out


def drift_json(tables: tuple[DriftTable, ...]) -> list[dict[str, Any]]:
    def one(d: Drift) -> dict[str, Any]:
        return {"setting": d.name, "category": d.category, "kind": d.kind, "reference": d.reference,
                "target": d.target}
    return [{"target": t.target, "reference": t.reference, "settings": [one(d) for d in t.rows]} for t in tables]
