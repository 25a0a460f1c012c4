"""MySQL's and MariaDB's EXPLAIN FORMAT=JSON as normalised steps (analysis/plan_step.py), in its
two formats: the `query_block` document (MySQL 5.6 to 9.x with explain_json_format_version = 1,
and MariaDB, which adds its own objects) and the iterator tree (`query_plan`, json_schema_version
2.0: MySQL 8.3+ with explain_json_format_version = 2, the default of 9.x, and whatever the
hypergraph optimizer plans). One plan reads as one shape in either.

What each format says in its own way and the shape keeps once: the access method, table
(v1 names a table by its alias, so v2's alias is taken too), index, covering index, reverse
scan, the estimated rows of each table read, joins in join order with their method, sorts,
temporary tables (deduplicating or grouping), grouping and subqueries. What one format shows
and the other does not is dropped from both: filters, limits, streaming, an aggregate without
GROUP BY, the statement's own UPDATE, DELETE or INSERT step (the same statement is compared,
so its verb and table never differ), and v2's table scan of a temporary table it materialised.
"""
from __future__ import annotations

from typing import Any

from dbdrift.analysis.plan_step import Step, joined, rows_class, table_name, unwrap

# v1 access_type -> step (MariaDB's hash_* are its hash join's side of a table read)
V1_ACCESS = {"ALL": "table scan", "hash_ALL": "table scan", "index": "index scan", "hash_index": "index scan",
             "range": "range scan", "hash_range": "range scan", "ref": "lookup", "hash_ref": "lookup",
             "ref_or_null": "lookup", "index_subquery": "lookup", "eq_ref": "unique lookup",
             "unique_subquery": "unique lookup", "const": "const row", "system": "const row",
             "fulltext": "fulltext search", "index_merge": "index merge", "hash_index_merge": "index merge"}
# v1 join buffers: MySQL's using_join_buffer, MariaDB's block-nl-join join_type
V1_JOIN = {"Block Nested Loop": "block nested loop", "hash join": "hash join",
           "Batched Key Access": "batched key access",
           "Batched Key Access (unique)": "batched key access", "BNL": "block nested loop", "BNLH": "hash join",
           "BKA": "batched key access", "BKAH": "batched key access"}
V1_MESSAGES = {"no tables used": "no table", "select tables optimized away": "no table",
               "impossible where": "no rows", "impossible where noticed after reading const tables": "no rows",
               "no matching row in const table": "no rows", "impossible having": "no rows", "zero limit": "no rows"}
# v2 index_access_type -> step ("index_lookup" of one row is a unique lookup: its operation says Single-row)
V2_INDEX = {"index_scan": "index scan", "index_range_scan": "range scan", "dynamic_index_range_scan": "range scan",
            "index_lookup": "lookup", "multi_range_read": "lookup", "pushed_join_ref": "lookup",
            "index_skip_scan": "skip scan", "group_index_skip_scan": "group skip scan",
            "full_text_search": "fulltext search", "index_distance_scan": "distance scan"}
V2_JOIN = {"nested_loop": "nested loop", "hash": "hash join", "batch_key_access": "batched key access"}
V2_PASS = ("filter", "limit", "stream", "delete_rows", "update_rows", "invalidate_materialized_tables", None)
NOT_EXECUTABLE = "<not executable by iterator executor>"  # v2's whole plan of a statement it cannot show


# -- v1: the query_block document -----------------------------------------------------------------------
def from_query_block(doc: dict[str, Any]) -> Step:
    return _block(doc["query_block"]) or Step("no table")


def _block(obj: dict[str, Any]) -> Step | None:
    """A query block, or one of the objects that wrap the rest of it (ordering, grouping, ...)."""
    step = _body(obj)
    subqueries = [Step("subquery", inputs=(s,)) for key in ("subqueries", "attached_subqueries")
                  for s in (_block(q.get("query_block", q)) for q in obj.get(key) or []) if s]
    if subqueries:
        return Step(step.op, step.table, step.index, step.flags, step.rows, step.inputs + tuple(subqueries)) \
            if step else unwrap(list(subqueries))
    return step


def _body(obj: dict[str, Any]) -> Step | None:
    for key in ("ordering_operation", "grouping_operation", "duplicates_removal", "duplicate_removal", "windowing",
                "filesort", "temporary_table", "read_sorted_file", "buffer_result"):
        if key in obj:
            return _wrapped(key, obj[key])
    if "union_result" in obj:
        union = obj["union_result"]
        parts = [_block(q["query_block"]) for q in union.get("query_specifications") or []]
        flags = ("deduplicating",) if union.get("using_temporary_table") else ()
        return Step("union", flags=flags, inputs=tuple(p for p in parts if p))
    if "nested_loop" in obj:
        return _join(obj["nested_loop"])
    if "table" in obj:
        return _table(obj["table"])
    if "message" in obj:
        return _message(obj["message"])
    return None


def _wrapped(key: str, inner: dict[str, Any]) -> Step | None:
    """v1 says `using_temporary_table` and `using_filesort` on the operation that needs them; a
    temporary table comes first, the sort of its rows after (or, grouping without a temporary
    table, the sort before the group)."""
    step = _block(inner)
    if step is None:
        return None
    temporary, sort = bool(inner.get("using_temporary_table")), bool(inner.get("using_filesort"))
    if key == "filesort":  # MariaDB
        return Step("sort", inputs=(step,))
    if key in ("read_sorted_file", "buffer_result"):
        return step
    if key == "temporary_table":
        return Step("temporary table", inputs=(step,))
    if key == "windowing":
        step = Step("window", inputs=(step,))
    elif key == "grouping_operation":
        if temporary:
            step = Step("temporary table", flags=("grouping",), inputs=(step,))
        else:
            step, sort = Step("group", inputs=(Step("sort", inputs=(step,)) if sort else step,)), False
    elif key in ("duplicates_removal", "duplicate_removal"):
        step = Step("temporary table", flags=("deduplicating",), inputs=(step,)) if temporary else \
            Step("deduplicate", inputs=(step,))
    elif temporary:
        step = Step("temporary table", inputs=(step,))
    return Step("sort", inputs=(step,)) if sort else step


def _join(items: list[dict[str, Any]]) -> Step | None:
    """A nested_loop list: its tables in join order, each joined to the rows before it by the
    method its join buffer names (none: a nested loop)."""
    done: Step | None = None
    for item in items:
        method = "nested loop"
        if "block-nl-join" in item:  # MariaDB
            method = V1_JOIN.get(item["block-nl-join"].get("join_type", ""), "block nested loop")
            item = item["block-nl-join"]
        elif "using_join_buffer" in item.get("table", {}):
            method = V1_JOIN.get(item["table"]["using_join_buffer"], "block nested loop")
        step = _block(item)
        if step is not None:
            done = step if done is None else joined(method, done, step)
    return done


def _table(t: dict[str, Any]) -> Step | None:
    if "access_type" not in t:  # MariaDB's INSERT target, or a message instead of a table read
        return _message(t["message"]) if "message" in t else None
    if t.get("insert"):
        return None  # INSERT ... VALUES reads nothing; v1's access_type ALL on it is a placeholder
    op = V1_ACCESS.get(t.get("access_type", ""), str(t.get("access_type", "table")).lower())
    if op == "const row":
        return Step(op)  # v2 has neither table nor index for it: "Rows fetched before execution"
    if t.get("using_index_for_group_by"):
        op = "group skip scan"
    elif t.get("using_index_for_skip_scan"):
        op = "skip scan"
    index = t.get("key", "") if op != "table scan" else ""
    rows = t.get("rows_examined_per_scan", t.get("rows"))
    inner = t.get("materialized_from_subquery") or t.get("materialized")
    inputs = (Step("materialize", inputs=(sub,)),) if inner and (sub := _block(inner.get("query_block", inner))) else ()
    return Step(op, table_name(t.get("table_name")), table_name(index),
                _flags(t.get("backward_index_scan"), t.get("using_index"), index), rows_class(rows), inputs)


def _flags(reverse: object, covering: object, index: str) -> tuple[str, ...]:
    """InnoDB's PRIMARY is the table itself (the clustered index): a read of it has every column,
    so covering is said of other indexes only (MariaDB 11 stopped saying it of PRIMARY)."""
    return tuple(f for f, on in (("reverse", reverse), ("covering", covering and index != "PRIMARY")) if on)


def _message(text: object) -> Step:
    message = str(text).strip().lower()
    return Step(V1_MESSAGES.get(message, "no rows" if message.startswith("impossible") else message))


# -- v2: the iterator tree ------------------------------------------------------------------------------
def from_iterator_tree(doc: dict[str, Any]) -> Step | None:
    """None when the server printed no plan: MySQL 8.3-9.x's traditional optimizer gives single-table
    UPDATE and DELETE `<not executable by iterator executor>` in this format."""
    root = doc.get("query_plan") or {}
    if not root or root.get("operation") == NOT_EXECUTABLE:
        return None
    return _node(root) or Step("no table")


def _node(n: dict[str, Any]) -> Step | None:
    kind = n.get("access_type")
    children = [_child(c) for c in (n.get("inputs") or []) + (n.get("inputs_from_select_list") or [])]
    inputs = [c for c in children if c is not None]
    if kind in ("insert_values", "replace_values"):
        return Step("no table")
    if kind in V2_PASS or (kind == "aggregate" and not n.get("group_by")):
        return unwrap(list(inputs)) if inputs else None
    if kind == "table" and str(n.get("table_name", "")).startswith("<") and inputs:
        return unwrap(list(inputs))  # the scan of the temporary table its input materialised
    if kind in ("table", "index", "count_rows"):
        return _access(n, tuple(inputs))
    if kind in ("rows_fetched_before_execution", "constant_row"):
        return Step("const row")
    if kind in ("zero_rows", "zero_rows_aggregated"):
        return Step("no rows")
    if kind == "join":
        method = V2_JOIN.get(n.get("join_algorithm", ""), str(n.get("join_algorithm")))
        if method == "hash join":
            inputs.reverse()  # v1 and PostgreSQL name the build side (v2's second input, "Hash") first
        return Step(method, inputs=tuple(inputs))
    return Step(*_operation(n), inputs=tuple(inputs))


def _child(c: dict[str, Any]) -> Step | None:
    step = _node(c)
    return Step("subquery", inputs=(step,)) if step is not None and c.get("subquery") else step


def _operation(n: dict[str, Any]) -> tuple[str, str, str, tuple[str, ...]]:
    """(op, table, index, flags) of a node that is neither a table read nor a join."""
    kind = n.get("access_type")
    dedup = ("deduplicating",) if n.get("duplicate_removal") or n.get("deduplication") else ()
    if kind == "sort":
        return "sort", "", "", dedup
    if kind == "materialize":
        if n.get("union"):
            return "union", "", "", dedup
        return ("temporary table" if n.get("temp_table") or dedup else "materialize"), "", "", dedup
    if kind == "temp_table_aggregate":
        return "temporary table", "", "", ("grouping",)
    if kind == "aggregate":
        return "group", "", "", ()
    if kind in ("remove_duplicates_from_groups", "remove_duplicates_on_index"):
        return "deduplicate", "", "", ()
    if kind == "append":
        return "union", "", "", ()
    if kind in ("index_merge", "rowid_intersection", "rowid_union"):
        return "index merge", "", "", ()
    return str(kind or n.get("operation", "?")).lower().replace("_", " "), "", "", ()


def _access(n: dict[str, Any], inputs: tuple[Step, ...]) -> Step:
    kind = n.get("access_type")
    if kind == "table":
        op = "table scan"
    elif kind == "count_rows":
        op = "count rows"
    else:
        op = V2_INDEX.get(n.get("index_access_type", ""), str(n.get("index_access_type")).replace("_", " "))
        if op == "lookup" and str(n.get("operation", "")).startswith("Single-row"):
            op = "unique lookup"
    index = n.get("index_name", "")
    return Step(op, table_name(n.get("alias") or n.get("table_name")), table_name(index),
                _flags(n.get("reverse"), n.get("covering"), index), rows_class(n.get("estimated_rows")), inputs)
