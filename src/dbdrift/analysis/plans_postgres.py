"""PostgreSQL's EXPLAIN (FORMAT JSON) as normalised steps (analysis/plan_step.py): its node types in
the common vocabulary. An Index Scan or Index Only Scan is a range scan when its index condition
compares with < > or = ANY, a lookup when it only tests equality, an index scan without one; an
Index Only Scan is covering. Dropped, as for MySQL: Limit, a Result over an input, a plain
Aggregate, ModifyTable (the statement's verb), LockRows, and the Hash node under a Hash Join (the
join's build side, put first).
"""
from __future__ import annotations

import re
from typing import Any

from dbdrift.analysis.plan_step import Step, joined, rows_class, table_name, unwrap

JOINS = {"Nested Loop": "nested loop", "Hash Join": "hash join", "Merge Join": "merge join"}
PASS = ("Limit", "Result", "ModifyTable", "LockRows", "Hash", "Subquery Scan", "Custom Scan")
NODES = {"Sort": "sort", "Incremental Sort": "sort", "Unique": "deduplicate", "Gather": "gather",
         "Gather Merge": "gather", "Materialize": "materialize", "Memoize": "memoize", "WindowAgg": "window",
         "Append": "union", "Merge Append": "union", "SetOp": "union", "HashSetOp": "union",
         "BitmapAnd": "bitmap and", "BitmapOr": "bitmap or"}
_RANGE = re.compile(r"[<>]|= ANY|IS NOT NULL|~")


def from_postgres(doc: Any) -> Step:
    root = doc[0]["Plan"] if isinstance(doc, list) else doc["Plan"]
    return _node(root) or Step("no table")


def _node(n: dict[str, Any]) -> Step | None:
    kind = n.get("Node Type", "")
    inputs = [_child(c) for c in n.get("Plans") or []]
    kept = [i for i in inputs if i is not None]
    if kind in ("Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan", "Bitmap Index Scan"):
        return _scan(n, kind, kept)
    if kind in JOINS:
        if kind == "Hash Join":
            kept.reverse()
        return joined(JOINS[kind], kept[0], kept[1]) if len(kept) == 2 else Step(JOINS[kind], inputs=tuple(kept))
    if kind in PASS or (kind == "Aggregate" and n.get("Strategy") == "Plain"):
        return unwrap(list(kept)) if kept else (Step("no table") if kind == "Result" else None)
    if kind == "Aggregate":
        flags = {"Hashed": ("hashing",), "Mixed": ("hashing",)}.get(n.get("Strategy", ""), ())
        return Step("group", flags=flags, inputs=tuple(kept))
    if kind == "Group":
        return Step("group", inputs=tuple(kept))
    op = NODES.get(kind, kind.lower())
    return Step(op, table_name(n.get("Relation Name", "")), inputs=tuple(kept))


def _child(c: dict[str, Any]) -> Step | None:
    step = _node(c)
    return Step("subquery", inputs=(step,)) if step is not None and c.get("Parent Relationship") in (
        "InitPlan", "SubPlan") else step


def _scan(n: dict[str, Any], kind: str, inputs: list[Step]) -> Step:
    flags = tuple(f for f, on in (("parallel", n.get("Parallel Aware")),
                                  ("reverse", n.get("Scan Direction") == "Backward"),
                                  ("covering", kind == "Index Only Scan")) if on)
    table, rows = table_name(n.get("Relation Name", "")), rows_class(n.get("Plan Rows"))
    if kind == "Seq Scan":
        return Step("table scan", table, "", flags, rows)
    if kind == "Bitmap Heap Scan":
        index = next((i.index for i in inputs if i.op == "bitmap index scan"), "")
        return Step("bitmap scan", table, index, flags, rows, tuple(i for i in inputs if i.op != "bitmap index scan"))
    index = table_name(n.get("Index Name", ""))
    if kind == "Bitmap Index Scan":
        return Step("bitmap index scan", "", index, flags, rows)
    cond = n.get("Index Cond")
    op = "index scan" if not cond else "range scan" if _RANGE.search(cond) else "lookup"
    return Step(op, table, index, flags, rows)
