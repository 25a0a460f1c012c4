"""Query plan shapes: what a plan does, without what it estimates, so two servers' plans for one
statement compare equal exactly when they would run it the same way.

A shape keeps node types, access methods, index names, table names (sbtest1..N as `sbtest`) and
the flags that change the work (a filesort, a temporary table, an index-only read); it drops
costs, row estimates, widths, conditions and literal values. PostgreSQL plans come from
`EXPLAIN (FORMAT JSON)`, MySQL and MariaDB plans from `EXPLAIN FORMAT=JSON`.
"""
from __future__ import annotations

import json
from typing import Any
import re

_SBTEST = re.compile(r"\bsbtest\d+")
# PostgreSQL: the plan node fields that say how, not how much
PG_FIELDS = ("Node Type", "Operation", "Strategy", "Partial Mode", "Join Type", "Scan Direction", "Index Name",
             "Relation Name", "Parent Relationship")
# MySQL/MariaDB: scalar fields kept; dicts and lists are walked whatever their name
MY_FIELDS = ("access_type", "key", "table_name", "using_index", "using_index_for_group_by", "using_filesort",
             "using_temporary_table", "using_join_buffer", "using_MRR", "message", "update", "delete", "insert",
             "index_condition_pushdown", "loose_scan", "first_match", "join_type")
MY_SKIP = ("cost_info", "used_columns", "attached_condition", "possible_keys", "key_length", "used_key_parts",
           "ref", "rows_examined_per_scan", "rows_produced_per_join", "filtered", "select_id", "rows",
           "r_loops", "r_rows", "r_total_time_ms", "r_filtered", "index_condition", "pushed_index_condition",
           "attached_subqueries", "r_other_time_ms", "r_buffer_size", "r_table_time_ms", "r_engine_stats")


def plan_shape(engine: str, plan_json: str) -> str:
    """The shape of one EXPLAIN JSON document, as one line of text."""
    doc = json.loads(plan_json)
    if engine == "postgres":
        root = doc[0]["Plan"] if isinstance(doc, list) else doc["Plan"]
        return _pg(root)
    return _my(doc)


def _pg(node: dict[str, Any]) -> str:
    parts = [str(node[f]) for f in PG_FIELDS if f in node and f not in ("Index Name", "Relation Name",
                                                                          "Parent Relationship")]
    text = " ".join(parts)
    if "Index Name" in node:
        text += f" using {_table(node['Index Name'])}"
    if "Relation Name" in node:
        text += f" on {_table(node['Relation Name'])}"
    children = node.get("Plans") or []
    return text + (" (" + ", ".join(_pg(c) for c in children) + ")" if children else "")


def _my(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_my(v) for v in value) + "]"
    if not isinstance(value, dict):
        return _table(str(value).lower() if isinstance(value, bool) else str(value))
    parts = []
    for key in sorted(value):
        item = value[key]
        if key in MY_SKIP:
            continue
        if isinstance(item, (dict, list)):
            parts.append(f"{key} {_my(item)}")
        elif key in MY_FIELDS:
            parts.append(f"{key}={_my(item)}")
    return "{" + " ".join(parts) + "}"


def _table(name: str) -> str:
    return _SBTEST.sub("sbtest", name)
