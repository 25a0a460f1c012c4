"""Query plans compared as plans: one normalised shape per EXPLAIN JSON document, the same
structure whichever engine and format printed it, so that two servers' plans of a statement
compare equal exactly when they would run it the same way.

A shape is a tree of steps (analysis/plan_step.py): each table read with its access method in a
common vocabulary, table, index and the class of its row estimate (a power of ten), joined in
join order by their join method, under the sorts, temporary tables and groups that process the
rows. Read from PostgreSQL's `EXPLAIN (FORMAT JSON)` (plans_postgres.py), MySQL's
`EXPLAIN FORMAT=JSON` version 1 (`query_block`) and 2 (the iterator tree `query_plan`, also the
hypergraph optimizer's) and MariaDB's (plans_mysql.py). Costs, conditions, literals, column
lists and each format's own bookkeeping are not part of it.
"""
from __future__ import annotations

import json
from typing import Any

from dbdrift.analysis.plan_step import Step
from dbdrift.analysis.plans_mysql import from_iterator_tree, from_query_block
from dbdrift.analysis.plans_postgres import from_postgres

JOINED = ("table", "block-nl-join")  # the keys of a join's tables in a MariaDB 10.2 query block


def plan_shape(engine: str, plan_json: str) -> str | None:
    """The normalised shape of one EXPLAIN JSON document, as one line of text; None when the
    document holds no plan (MySQL's `<not executable by iterator executor>`). ValueError for a
    document that is not EXPLAIN JSON of `engine`."""
    step = plan_steps(engine, plan_json)
    return step.text() if step else None


def plan_steps(engine: str, plan_json: str) -> Step | None:
    """The normalised plan of one EXPLAIN JSON document (see plan_shape)."""
    try:
        doc = json.loads(plan_json, object_pairs_hook=_object)
        if engine == "postgres":
            return from_postgres(doc)
        if isinstance(doc, dict) and "query_plan" in doc:
            return from_iterator_tree(doc)
        if isinstance(doc, dict) and "query_block" in doc:
            return from_query_block(doc)
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ValueError(f"not an EXPLAIN JSON document of {engine}: {exc!r}") from exc
    raise ValueError(f"not an EXPLAIN JSON document of {engine}: it has neither query_block nor query_plan")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object; MariaDB 10.2 writes the tables of a join as sibling keys of one object
    ("table", "block-nl-join", repeated), read here as the `nested_loop` list later versions write."""
    joined = [{key: value} for key, value in pairs if key in JOINED]
    out = dict(pairs)
    if len(joined) > 1:
        for key in JOINED:
            out.pop(key, None)
        out["nested_loop"] = joined
    return out
