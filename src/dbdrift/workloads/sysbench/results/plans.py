"""The `P` marks of a report: each compared cell whose test got another normalised plan shape
(analysis/plans.py) than on its reference, for some statement both EXPLAINed.

Shapes are computed here, from the stored EXPLAIN JSON (`plan_json`), every time a report is
built: a store measured by an older dbdrift gets today's rule without rerunning anything, and the
`shape` column the runner stores beside it is not read. Reads the store's rows, writes nothing.
"""
from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass, replace

from dbdrift.analysis.plans import plan_shape
from dbdrift.analysis.relative import Comparison
from dbdrift.model import JsonObject
from dbdrift.workloads.sysbench.results.data import PlanChange


@dataclass(frozen=True)
class PlanMarks:
    """The comparison with its P cells marked, what differs in them, the (test, target) cells
    whose plans were compared with their reference's (some statement's shape on both), and a
    note per target with stored plans that could not be read as one."""

    comparison: Comparison
    changes: tuple[PlanChange, ...]
    compared: set[tuple[str, str]]
    notes: tuple[str, ...]


def plan_marks(comparison: Comparison, stored: list[sqlite3.Row], engines: dict[str, str]) -> PlanMarks:
    """Mark each compared cell whose test got another plan shape than on its reference of the
    same engine (for any statement whose plan both have), and say which statements and plans
    differ; `engines`: target -> engine."""
    plans: dict[tuple[str, str], dict[int, JsonObject]] = {}
    unread: Counter[tuple[str, str]] = Counter()
    for p in stored:
        shape, why = _shape(engines.get(p["target"], ""), p["plan_json"])
        if why:
            unread[(p["target"], why)] += 1
        plans.setdefault((p["test"], p["target"]), {})[p["statement"]] = {**dict(p), "shape": shape}
    changes: list[PlanChange] = []
    compared: set[tuple[str, str]] = set()
    rows = []
    for row in comparison.rows:
        cells = dict(row.cells)
        for target in comparison.compared:
            cell = cells[target]
            if not cell.reference or engines.get(target) != engines.get(cell.reference):
                continue  # two engines run a statement their own ways: their plans are not compared
            mine, theirs = plans.get((row.test, target), {}), plans.get((row.test, cell.reference), {})
            if any(mine[i]["shape"] and theirs[i]["shape"] for i in mine.keys() & theirs.keys()):
                compared.add((row.test, target))
            differ = tuple(
                {"statement": i, "sql": mine[i]["sql"], "shape": mine[i]["shape"],
                 "reference_shape": theirs[i]["shape"], "plan": mine[i]["plan_json"],
                 "reference_plan": theirs[i]["plan_json"]}
                for i in sorted(mine.keys() & theirs.keys())
                if mine[i]["shape"] and theirs[i]["shape"] and mine[i]["shape"] != theirs[i]["shape"])
            if differ:
                cells[target] = replace(cell, plan_changed=True)
                if not any(c.test == row.test and c.target == target for c in changes):
                    changes.append(PlanChange(row.test, target, cell.reference or "", differ))
        rows.append(replace(row, cells=cells))
    notes = tuple(f"query plans: {count} statement(s) of {target} not compared: {why}"
                  for (target, why), count in sorted(unread.items()))
    return PlanMarks(replace(comparison, rows=tuple(rows)), tuple(changes), compared, notes)


def _shape(engine: str, plan_json: str | None) -> tuple[str | None, str]:
    """The normalised shape of a stored plan, or None and why there is none to compare (""
    when nothing was stored: the EXPLAIN failed, and its error is stored instead)."""
    if not plan_json:
        return None, ""
    try:
        shape = plan_shape(engine, plan_json)
    except ValueError:
        return None, "its EXPLAIN output is not EXPLAIN JSON dbdrift reads"
    if shape is None:
        return None, ("its EXPLAIN JSON holds no plan (MySQL 9.x's format 2 of a single-table UPDATE or DELETE, "
                      "stored by an older dbdrift; a campaign run now asks for format 1)")
    return shape, ""
