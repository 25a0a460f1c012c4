"""One step of a normalised query plan (analysis/plans.py): what it does, in a vocabulary common
to PostgreSQL, MySQL and MariaDB, on which table and index, with which flags, and how many rows
the optimizer expected to a power of ten; and the one line of text reports show and compare.

Must not read any EXPLAIN format: analysis/plans_mysql.py and plans_postgres.py do.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

_SBTEST = re.compile(r"\bsbtest\d+")

# The vocabulary, step by kind. Reading a table:
ACCESS = ("table scan",       # every row of the table (MySQL ALL, PostgreSQL Seq Scan)
          "index scan",       # the whole index, in its order
          "range scan",       # one or more key ranges of an index (BETWEEN, IN lists)
          "lookup",           # the rows of one key value of an index that is not unique
          "unique lookup",    # at most one row by a unique key, at execution time (eq_ref, Single-row)
          "const row",        # one row by a unique key, read while planning (MySQL const, system)
          "skip scan", "group skip scan", "index merge", "fulltext search", "bitmap scan", "count rows",
          "no rows",          # the optimizer proved the result empty
          "no table")         # nothing is read (INSERT ... VALUES, SELECT without FROM)
# Combining and post-processing rows: nested loop, block nested loop, batched key access, hash join,
# merge join (inputs in join order; a hash join's build side first), sort, temporary table,
# deduplicate, group, window, union, materialize, subquery, gather. Flags: covering (the index
# alone answers), reverse, deduplicating, grouping, hashing, parallel.


@dataclass(frozen=True)
class Step:
    """A node of a normalised plan; `rows` is rows_class of the optimizer's estimate, kept on
    the steps that read a table."""

    op: str
    table: str = ""
    index: str = ""
    flags: tuple[str, ...] = ()
    rows: int | None = None
    inputs: tuple["Step", ...] = ()

    def text(self) -> str:
        """`covering range scan on sbtest using PRIMARY ~100 rows`, inputs in parentheses."""
        head = " ".join([*self.flags, self.op])
        if self.table:
            head += f" on {self.table}"
        if self.index:
            head += f" using {self.index}"
        if self.rows is not None:
            head += f" ~{10 ** self.rows:,} row{'s' if self.rows else ''}"
        return head + (" (" + ", ".join(i.text() for i in self.inputs) + ")" if self.inputs else "")


def rows_class(estimate: object) -> int | None:
    """The order of magnitude of a row estimate: log10 rounded to the nearest integer, so class
    k holds 10^(k-0.5) to 10^(k+0.5) (about 3.2x either way of 10^k), and anything under about 3
    rows is class 0. Two servers' statistics on the same data rarely disagree by 3x, so the estimates
    of a 101-row range (80 or 130) or of a 200,000-row table (180,000 or 230,000) fall in one
    class, while a one-row lookup that became a scan of thousands moves by several. None when
    there is no estimate."""
    try:
        value = float(estimate)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    if math.isnan(value) or value < 0:
        return None
    return max(0, round(math.log10(max(value, 1.0))))


def table_name(name: object) -> str:
    """sbtest1..N as `sbtest`, so that tests that pick one of several tables keep one shape."""
    return _SBTEST.sub("sbtest", str(name)) if name else ""


def unwrap(steps: list[Step | None], op: str = "no table") -> Step:
    """The one step of `steps` (Nones dropped), or a step `op` over several, or `op` for none."""
    kept = tuple(s for s in steps if s is not None)
    return kept[0] if len(kept) == 1 else Step(op, inputs=kept)


def joined(method: str, outer: Step, inner: Step) -> Step:
    """A join of `outer` (the rows so far, or a hash join's build side) and `inner`."""
    return Step(method, inputs=(outer, inner))
