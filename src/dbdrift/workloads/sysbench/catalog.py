"""The sysbench-style microbenchmarks of the Small Datum scripts (docs/methodology.md): names,
groups, SQL, parameters, order.

Pure data and rendering: no I/O, no knowledge of servers or drivers beyond the SQL dialect.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from dbdrift.errors import InputError
from dbdrift.catalog.sql import render_sql
from dbdrift.model import JsonObject

@dataclass(frozen=True)
class SysbenchParams:
    """The top-level keys of a sysbench campaign that only its own steps read, held in
    CampaignSpec.params (its plan.py's `params`): the unmeasured warm-up of each run, the
    unreported warm runs, what happens between repeats, how statements are sent, whether
    instructions are counted, the sizes, the thread counts, the measured lengths and the
    turns' (the core asks for the last five through its plan's hooks). Its tests stay
    CampaignSpec's, which core modules read."""

    warmup_s: float = 5.0  # unmeasured seconds at the start of each run (sysbench --warmup-time)
    scan_warm_s: float = 60.0  # the unreported scan.warm run before scan
    warm_runs: bool = True  # run point-query.warm, scan.warm and points-covered-si.warm
    # repeat: every server restarts before each repeat after a test's first | never | reload: the
    # whole test sequence runs once per repeat, each time on a new server loaded afresh
    restart: str = "repeat"
    prepared: bool = True  # server-side prepared statements; False: SQL text with literals
    count_instructions: bool = False  # also count instructions per event under callgrind (simulate_cache sets it)
    simulate_cache: bool = False  # with count_instructions: callgrind's cache and branch simulation too
    tables: int = 1  # sbtest1..sbtestN
    threads: tuple[int, ...] = (1,)  # client thread counts: every test runs once per count, in order
    rows: int = 1_000_000  # rows per table
    read_s: float = 300.0  # measured seconds of each read test (and of write-only)
    write_s: float = 600.0  # measured seconds of each write test
    insert_s: float = 600.0  # measured seconds of insert; the parse makes it write_s when not set
    turn_s: float = 0.01  # order = "turns": seconds each target has before the next one takes over


# Report groups in the order of the Small Datum posts (their 4-group variant).
GROUPS = ("point", "range-noagg", "range-agg", "writes")
GROUP_TITLES = {
    "point": "point queries",
    "range-noagg": "range queries without aggregation",
    "range-agg": "range queries with aggregation",
    "writes": "writes",
}


@dataclass(frozen=True)
class ParamSpec:
    """One statement parameter; `gen` is a driver generator (docs/protocol.md) or `hot`."""

    gen: str  # id | uniform_k | ref | digits | hot
    var: str = ""  # remember as (for gen != ref) / read from (gen == ref)
    plus: int = 0  # ref: offset added to the remembered value
    groups: int = 0  # digits: number of 11-digit groups
    index: int = 0  # hot: position in the fixed hot key list


@dataclass(frozen=True)
class StatementSpec:
    """A statement with `?` placeholders and `{table}`; rendered per engine by `render_sql`."""

    sql: str
    params: tuple[ParamSpec, ...] = ()
    repeat: int = 1
    table: str = "random"  # random | previous | thread


@dataclass(frozen=True)
class MicrobenchmarkSpec:
    """One report row: a run.sh test type plus range, with what one event executes."""

    name: str
    test_type: str
    range_size: int
    group: str
    rw: str  # R | W | R+W
    lua: str
    statements: tuple[StatementSpec, ...]
    transaction: bool = False
    rand_type: str = "uniform"
    duration_kind: str = "read"  # read | write | insert (which campaign duration applies)
    id_max_one: bool = False  # update-one: run.sh forces --table-size=1
    metric: str = "qps"  # qps | krps (scan: thousand rows scanned per second per thread)
    pre: bool = False
    postgres_sql: dict[int, str] = field(default_factory=dict)  # statement index -> PG override

    @property
    def statements_per_event(self) -> int:
        return sum(s.repeat for s in self.statements) + (2 if self.transaction else 0)

    @property
    def reads(self) -> bool:
        return self.rw != "W"

    @property
    def rows_per_event(self) -> int:
        """Rows the event's statements ask for: a key list's length, a range's size, or one."""
        total = 0
        for s in self.statements:
            if " IN (" in s.sql:
                total += s.repeat * s.sql.split(" IN (", 1)[1].count("?")
            elif "BETWEEN" in s.sql:
                total += s.repeat * self.range_size
            else:
                total += s.repeat
        return total


def _ids(n: int, gen: str = "id") -> tuple[ParamSpec, ...]:
    return tuple(ParamSpec(gen) for _ in range(n))


def _inlist(n: int) -> str:
    return ", ".join("?" for _ in range(n))


ID = ParamSpec("id")
LO = ParamSpec("id", var="lo")
C_VALUE = ParamSpec("digits", groups=10)
PAD_VALUE = ParamSpec("digits", groups=5)


def _hi(offset: int) -> ParamSpec:
    return ParamSpec("ref", var="lo", plus=offset)


def _point_selects() -> StatementSpec:
    return StatementSpec("SELECT c FROM sbtest{table} WHERE id=?", (ID,), repeat=10)


def _ranges(range_size: int, simple: int = 1, sum_: int = 1, order: int = 1,
            distinct: int = 1) -> tuple[StatementSpec, ...]:
    """oltp_common.lua: each range type picks its own table; hi = lo + range_size - 1."""
    bounds = (LO, _hi(range_size - 1))
    shapes = (
        (simple, "SELECT c FROM sbtest{table} WHERE id BETWEEN ? AND ?"),
        (sum_, "SELECT SUM(k) FROM sbtest{table} WHERE id BETWEEN ? AND ?"),
        (order, "SELECT c FROM sbtest{table} WHERE id BETWEEN ? AND ? ORDER BY c"),
        (distinct, "SELECT DISTINCT c FROM sbtest{table} WHERE id BETWEEN ? AND ? ORDER BY c"),
    )
    return tuple(StatementSpec(sql, bounds) for count, sql in shapes for _ in range(count))


def _writes() -> tuple[StatementSpec, ...]:
    """oltp_common.lua write part: index update, non-index update, delete + insert of one id."""
    x = ParamSpec("id", var="x")
    return (
        StatementSpec("UPDATE sbtest{table} SET k=k+1 WHERE id=?", (ID,)),
        StatementSpec("UPDATE sbtest{table} SET c=? WHERE id=?", (C_VALUE, ID)),
        StatementSpec("DELETE FROM sbtest{table} WHERE id=?", (x,)),
        StatementSpec(
            "INSERT INTO sbtest{table} (id, k, c, pad) VALUES (?, ?, ?, ?)",
            (ParamSpec("ref", var="x"), ParamSpec("uniform_k"), C_VALUE, PAD_VALUE),
            table="previous",
        ),
    )


def _mb(name: str, test_type: str, range_size: int, group: str, rw: str, lua: str,
        statements: Iterable[StatementSpec], **kw: Any) -> MicrobenchmarkSpec:
    # kw: any of MicrobenchmarkSpec's optional fields, which its constructor checks by name
    return MicrobenchmarkSpec(name, test_type, range_size, group, rw, lua, tuple(statements), **kw)


# (name suffix, selected columns, on id rather than k, covered by the index): the four variants of
# oltp_points_covered.lua and oltp_range_covered.lua, in the Small Datum order
_COVERED_VARIANTS = (("covered-pk", "id", True, True), ("notcovered-pk", "id, c", True, False),
                     ("covered-si", "k", False, True), ("notcovered-si", "k, c", False, False))


def _covered(kind: str, pre: bool) -> list[MicrobenchmarkSpec]:
    """The `points-*` (kind "points": 100 keys IN a list) or `range-*` (kind "range": 100 keys
    BETWEEN two bounds) tests of oltp_{kind}_covered.lua, one per index variant."""
    tests = []
    for variant, column_sql, on_id, covered in _COVERED_VARIANTS:
        name, key = f"{kind}-{variant}", "id" if on_id else "k"
        opts = "".join([" --on-id=false" if not on_id else "", " --covered=false" if not covered else ""])
        if kind == "points":
            where, params, group = f"{key} IN ({_inlist(100)})", _ids(100, "id" if on_id else "uniform_k"), "point"
        else:
            where, params, group = f"{key} BETWEEN ? AND ?", (LO, _hi(100)), "range-noagg"
        tests.append(_mb(
            f"{name}.pre_range=100" if pre else name, name, 100, group, "R",
            f"oltp_{kind}_covered.lua --random-points=100 --skip-trx{opts}",
            [StatementSpec(f"SELECT {column_sql} FROM sbtest{{table}} WHERE {where}", params)], pre=pre))
    return tests


def _point_tests(pre: bool) -> list[MicrobenchmarkSpec]:
    suffix = ".pre" if pre else ""
    tests = [
        _mb(f"point-query{suffix}" + ("_range=100" if pre else ""), "point-query", 100, "point", "R",
            "oltp_point_select.lua --skip-trx",
            [StatementSpec("SELECT c FROM sbtest{table} WHERE id=?", (ID,))], pre=pre),
    ]
    for r in (10, 100, 1000):
        tests.append(_mb(
            f"random-points{suffix}_range={r}", "random-points", r, "point", "R",
            f"oltp_inlist_select.lua --random-points={r} --skip-trx",
            [StatementSpec(f"SELECT c FROM sbtest{{table}} WHERE id IN ({_inlist(r)})", _ids(r))], pre=pre))
    return tests + _covered("points", pre)


def _range_tests(pre: bool) -> list[MicrobenchmarkSpec]:
    return _covered("range", pre)


def _read_only_tests(pre: bool) -> list[MicrobenchmarkSpec]:
    suffix = ".pre" if pre else ""
    return [
        _mb(f"read-only{suffix}_range={r}", "read-only", r, "range-agg", "R", "oltp_read_only.lua",
            [_point_selects(), *_ranges(r)], transaction=True, pre=pre)
        for r in (10, 100, 10000)
    ]


def _read_only_variants() -> list[MicrobenchmarkSpec]:
    variants = []
    for kind in ("simple", "sum", "order", "distinct"):
        flags = {k: int(k == kind) for k in ("simple", "sum", "order", "distinct")}
        opts = " ".join(f"--{k}-ranges={v}" for k, v in flags.items())
        variants.append(_mb(
            f"read-only-{kind}", f"read-only-{kind}", 1000, "range-agg", "R", f"oltp_read_only.lua {opts}",
            [_point_selects(), *_ranges(1000, flags["simple"], flags["sum"], flags["order"], flags["distinct"])],
            transaction=True))
    variants.append(_mb(
        "read-only-count", "read-only-count", 1000, "range-agg", "R", "oltp_read_only_count.lua --skip-trx",
        [StatementSpec("SELECT count(c) FROM sbtest{table} WHERE id BETWEEN ? AND ?", (LO, _hi(999)))]))
    return variants


def _write_tests() -> list[MicrobenchmarkSpec]:
    update_nonindex = StatementSpec("UPDATE sbtest{table} SET c=? WHERE id=?", (C_VALUE, ID))
    return [
        _mb("update-inlist", "update-inlist", 100, "writes", "W", "oltp_inlist_update.lua",
            [StatementSpec(f"UPDATE sbtest{{table}} SET c=? WHERE id IN ({_inlist(10)})", (C_VALUE, *_ids(10)))],
            duration_kind="write"),
        _mb("update-index", "update-index", 100, "writes", "W", "oltp_update_index.lua",
            [StatementSpec("UPDATE sbtest{table} SET k=k+1 WHERE id=?", (ID,))], duration_kind="write"),
        _mb("update-nonindex", "update-nonindex", 100, "writes", "W", "oltp_update_non_index.lua",
            [update_nonindex], duration_kind="write"),
        _mb("update-one", "update-one", 100, "writes", "W", "oltp_update_non_index.lua (--table-size=1)",
            [update_nonindex], duration_kind="write", id_max_one=True),
        _mb("update-zipf", "update-zipf", 100, "writes", "W", "oltp_update_non_index.lua --rand-type=zipfian",
            [update_nonindex], duration_kind="write", rand_type="zipfian"),
        # run.sh gives write-only readsecs, not writesecs.
        _mb("write-only", "write-only", 10000, "writes", "W", "oltp_write_only.lua",
            list(_writes()), transaction=True, duration_kind="read"),
        *[
            _mb(f"read-write_range={r}", "read-write", r, "writes", "R+W", "oltp_read_write.lua",
                [_point_selects(), *_ranges(r), *_writes()], transaction=True, duration_kind="write")
            for r in (10, 100)
        ],
        _mb("delete", "delete", 100, "writes", "W", "oltp_delete.lua",
            [StatementSpec("DELETE FROM sbtest{table} WHERE id=?", (ID,))], duration_kind="write"),
        # MySQL passes id 0 (auto-increment); PostgreSQL omits the id column (SERIAL numbers it).
        _mb("insert", "insert", 100, "writes", "W", "oltp_insert.lua",
            [StatementSpec("INSERT INTO sbtest{table} (id, k, c, pad) VALUES (0, ?, ?, ?)",
                           (ParamSpec("uniform_k"), C_VALUE, PAD_VALUE))],
            duration_kind="insert",
            postgres_sql={0: "INSERT INTO sbtest{table} (k, c, pad) VALUES (?, ?, ?)"}),
    ]


def _scan() -> MicrobenchmarkSpec:
    return _mb("scan", "scan", 100, "range-noagg", "R", "oltp_scan.lua",
               [StatementSpec("SELECT * FROM sbtest{table} WHERE LENGTH(c) < 0", table="thread")],
               metric="krps")


def _hot_points() -> MicrobenchmarkSpec:
    return _mb("hot-points", "hot-points", 100, "point", "R",
               "oltp_inlist_select.lua --random-points=100 --hot-points --skip-trx",
               [StatementSpec(f"SELECT c FROM sbtest{{table}} WHERE id IN ({_inlist(100)})",
                              tuple(ParamSpec("hot", index=i) for i in range(100)))])


def _build() -> dict[str, MicrobenchmarkSpec]:
    tests = [*_point_tests(False), _hot_points(), *_range_tests(False), _scan(),
             *_read_only_tests(False), *_read_only_variants(), *_write_tests(),
             *_point_tests(True), *_range_tests(True), *_read_only_tests(True)]
    return {t.name: t for t in tests}


CATALOG: dict[str, MicrobenchmarkSpec] = _build()

# Families whose tests differ only in the rows each statement reads (analysis/layers.py splits
# their cost into per statement and per row): the IN list of 10/100/1000 keys, and read-only's
# 16 statements with ranges of 10/100/10,000 rows.
LAYER_FAMILIES: dict[str, tuple[str, ...]] = {
    "random-points": ("random-points_range=10", "random-points_range=100", "random-points_range=1000"),
    "read-only": ("read-only_range=10", "read-only_range=100", "read-only_range=10000"),
}


def layer_members(family: str) -> list[tuple[str, int, int]]:
    """(test, statements per event, rows per event) of each test of a family."""
    return [(t, CATALOG[t].statements_per_event, CATALOG[t].rows_per_event) for t in LAYER_FAMILIES[family]]


# The current 32 of the posts, in report order within each group.
DEFAULT_32 = (
    "hot-points", "point-query", "points-covered-pk", "points-covered-si", "points-notcovered-pk",
    "points-notcovered-si", "random-points_range=10", "random-points_range=100", "random-points_range=1000",
    "range-covered-pk", "range-covered-si", "range-notcovered-pk", "range-notcovered-si", "scan",
    "read-only-count", "read-only-distinct", "read-only-order", "read-only_range=10",
    "read-only_range=100", "read-only_range=10000", "read-only-simple", "read-only-sum",
    "delete", "insert", "read-write_range=10", "read-write_range=100", "update-index", "update-inlist",
    "update-nonindex", "update-one", "update-zipf", "write-only",
)
PRE_15 = tuple(sorted(name for name, t in CATALOG.items() if t.pre))
ALL_42 = PRE_15 + tuple(n for n in DEFAULT_32 if not n.startswith("read-only-"))

# The 2024 posts' five groups over the 42 (docs/methodology.md, "The 2024 posts' five groups"):
# point queries in two parts (the IN-lists of random keys in the second), range queries split
# where aggregation starts (read-only's SUM, ORDER BY and DISTINCT), writes; `report --groups five`.
FIVE_GROUPS = ("point-1", "point-2", "range-1", "range-2", "writes")
FIVE_GROUP_TITLES = {
    "point-1": "point query, part 1",
    "point-2": "point query, part 2",
    "range-1": "range query, part 1",
    "range-2": "range query, part 2",
    "writes": "writes",
}
_FIVE_OF_FOUR = {"range-noagg": "range-1", "range-agg": "range-2", "writes": "writes"}


def five_group(name: str) -> str | None:
    """A test's group among the 2024 posts' five, None for a test outside the 42."""
    if name not in ALL_42:
        return None
    test = CATALOG[name]
    if test.group == "point":
        return "point-2" if test.test_type == "random-points" else "point-1"
    return _FIVE_OF_FOUR[test.group]


# Execution order (the current all_small.sh; docs/methodology.md). The .pre block runs where
# today's point-query.pre runs, in the 42-era order; warm runs are in WARM_BEFORE (and
# point-query.warm after the load: expand.py).
RUN_ORDER = (
    "point-query.pre_range=100", "random-points.pre_range=10", "random-points.pre_range=100",
    "random-points.pre_range=1000", "read-only.pre_range=10", "read-only.pre_range=100",
    "read-only.pre_range=10000", "points-covered-pk.pre_range=100", "points-notcovered-pk.pre_range=100",
    "points-covered-si.pre_range=100", "points-notcovered-si.pre_range=100",
    "range-covered-pk.pre_range=100", "range-notcovered-pk.pre_range=100",
    "range-covered-si.pre_range=100", "range-notcovered-si.pre_range=100",
    "update-inlist", "update-index", "update-nonindex", "update-one", "update-zipf", "write-only",
    "read-write_range=10", "read-write_range=100",
    "scan", "read-only_range=10", "read-only_range=100", "read-only_range=10000",
    "read-only-simple", "read-only-sum", "read-only-order", "read-only-distinct", "read-only-count",
    "point-query", "random-points_range=10", "random-points_range=100", "random-points_range=1000",
    "hot-points", "points-covered-pk", "points-notcovered-pk", "range-covered-pk", "range-notcovered-pk",
    "points-covered-si", "points-notcovered-si", "range-covered-si", "range-notcovered-si",
    "delete", "insert",
)
# The database is settled after the load and after this test (expand.py also settles
# before the post-write reads when this test is not selected).
SETTLE_AFTER = "read-write_range=100"
# Warm-up runs that precede a test (not reported: their names contain "warm").
WARM_BEFORE = {"scan": "scan.warm", "points-covered-si": "points-covered-si.warm"}

GROUP_ALIASES = {
    "point": "point", "p": "point", "point-queries": "point",
    "range-noagg": "range-noagg", "rna": "range-noagg", "range-without-aggregation": "range-noagg",
    "range-agg": "range-agg", "ra": "range-agg", "range-with-aggregation": "range-agg",
    "writes": "writes", "w": "writes", "write": "writes",
}


def select_tests(names: list[str] | tuple[str, ...] | None) -> list[MicrobenchmarkSpec]:
    """Resolve test names, group names, `default32` and `all42` into tests in run order."""
    chosen: set[str] = set()
    for raw in names or ["default32"]:
        item = raw.strip()
        key = item.lower()
        if key in ("default", "default32", "all32"):
            chosen.update(DEFAULT_32)
        elif key in ("all42", "42"):
            chosen.update(ALL_42)
        elif key == "all":
            chosen.update(CATALOG)
        elif key in GROUP_ALIASES:
            chosen.update(n for n in DEFAULT_32 if CATALOG[n].group == GROUP_ALIASES[key])
        elif item in CATALOG:
            chosen.add(item)
        elif f"{item}_range=100" in CATALOG:
            chosen.add(f"{item}_range=100")
        else:
            raise InputError(f"unknown microbenchmark or group {item!r}", _suggest(item))
    return [CATALOG[n] for n in RUN_ORDER if n in chosen]


def _suggest(item: str) -> str:
    import difflib

    close = difflib.get_close_matches(item, list(CATALOG) + list(GROUP_ALIASES), n=3)
    known = ("`dbdrift catalog` lists all tests; groups are point, range-noagg, range-agg, writes; sets are "
             "default32 and all42")
    return f"did you mean {', '.join(close)}? {known}" if close else f"no test is named like it; {known}"


def report_order(names: Iterable[str]) -> list[str]:
    """Group order of the posts, then DEFAULT_32's order within each group; other tests (.pre)
    after those, sorted by name."""
    listed = {n: i for i, n in enumerate(DEFAULT_32)}

    def key(name: str) -> tuple[int, int, int, str]:
        test = CATALOG.get(name)
        group = GROUPS.index(test.group) if test else len(GROUPS)
        return (group, 0 if name in listed else 1, listed.get(name, 0), name)

    return sorted(names, key=key)


def scan_krps(table_rows: int, events: int, seconds: float, threads: int) -> float | None:
    """Scan throughput as the Small Datum scripts define it: (nrows/1000) / average scan
    latency (s), per scanning thread.

    In a closed loop the average latency is seconds * threads / events, so this is thousands of
    rows scanned per second per thread; an interval in which no scan finished counts as 0.
    """
    if seconds <= 0 or threads <= 0:
        return None
    return (table_rows / 1000.0) * events / (seconds * threads)


def statement_sql(test: MicrobenchmarkSpec, index: int, engine: str) -> str:
    sql = test.statements[index].sql
    if engine == "postgres":
        sql = test.postgres_sql.get(index, sql)
    return render_sql(sql, engine)


def render_param(param: ParamSpec, table_size: int) -> JsonObject:
    """A catalog parameter as a driver generator (docs/protocol.md)."""
    if param.gen == "id":
        out: JsonObject = {"gen": "id"}
    elif param.gen == "uniform_k":
        out = {"gen": "uniform", "lo": 1, "hi": table_size}
    elif param.gen == "ref":
        return {"gen": "ref", "var": param.var, "plus": param.plus}
    elif param.gen == "digits":
        out = {"gen": "digits", "groups": param.groups}
    elif param.gen == "hot":
        out = {"gen": "int", "value": table_size // 2 + 1 + param.index}
    else:  # pragma: no cover - closed set above
        raise ValueError(param.gen)
    if param.var:
        out["as"] = param.var
    return out


@dataclass(frozen=True)
class ExplainStatement:
    """One distinct statement of a test on sbtest1, for EXPLAIN: `sql` with literal parameters,
    and the same as the driver prepares it (`template`, `?` placeholders) with those
    `literals` as its parameters."""

    index: int
    sql: str
    template: str
    literals: tuple[str, ...]


def explain_statements(test: MicrobenchmarkSpec, engine: str, table_size: int) -> list[ExplainStatement]:
    """Each distinct statement of a test, with parameters from the middle of what the run draws
    (an id of the middle of the table, a range starting there), so the plan is the one such a
    parameter gets. The ids (or k values) of one statement's IN list are as many distinct
    values, the next ids after the middle, as the run draws distinct ones: one value repeated
    would be planned as a single point (MySQL and MariaDB read it as one const row)."""
    id_value = 1 if test.id_max_one else max(1, table_size // 2)
    out, seen = [], set()
    for index, stmt in enumerate(test.statements):
        sql = test.postgres_sql.get(index, stmt.sql) if engine == "postgres" else stmt.sql
        remembered: dict[str, int] = {}
        literals = []
        drawn = {"id": 0, "uniform_k": 0}
        for param in stmt.params:
            if param.gen == "id":
                value: int | str = id_value if test.id_max_one else id_value + drawn["id"]
                drawn["id"] += 1
            elif param.gen == "uniform_k":
                value = max(1, table_size // 2) + drawn["uniform_k"]
                drawn["uniform_k"] += 1
            elif param.gen == "ref":
                value = remembered.get(param.var, id_value) + param.plus
            elif param.gen == "hot":
                value = table_size // 2 + 1 + param.index
            else:  # digits: a c/pad value as sysbench writes them
                value = "'" + "-".join(["12345678901"] * param.groups) + "'"
            if param.var and param.gen != "ref":
                remembered[param.var] = int(value)
            literals.append(str(value))
        template = sql.replace("{table}", "1")
        parts = template.split("?")
        text = parts[0] + "".join(lit + part for lit, part in zip(literals, parts[1:]))
        if text not in seen:
            seen.add(text)
            out.append(ExplainStatement(index, text, template, tuple(literals)))
    return out


def explain_sql(test: MicrobenchmarkSpec, engine: str, table_size: int) -> list[tuple[int, str]]:
    """(statement index, SQL with literal parameters on sbtest1) of each distinct statement."""
    return [(e.index, e.sql) for e in explain_statements(test, engine, table_size)]


def render_workload(test: MicrobenchmarkSpec, engine: str, table_size: int) -> JsonObject:
    """The `workload` object of a driver run spec."""
    return {
        "transaction": test.transaction,
        "id_max": 1 if test.id_max_one else table_size,
        "statements": [
            {
                "sql": statement_sql(test, i, engine),
                "repeat": stmt.repeat,
                "table": stmt.table,
                "rows": "count",
                "params": [
render_param(p, table_size) for p in stmt.params],
            }
            for i, stmt in enumerate(test.statements)
        ],
    }


def describe(test: MicrobenchmarkSpec, engine: str = "postgres") -> JsonObject:
    """Catalog listing entry (`dbdrift catalog`)."""
    sql = []
    if test.transaction:
        sql.append("BEGIN")
    for i, stmt in enumerate(test.statements):
        text = statement_sql(test, i, engine)
        sql.append(f"{text}  -- x{stmt.repeat}" if stmt.repeat > 1 else text)
    if test.transaction:
        sql.append("COMMIT")
    return {
        "name": test.name,
        "group": test.group,
        "group_title": GROUP_TITLES[test.group],
        "rw": test.rw,
        "statements_per_event": test.statements_per_event,
        "range": test.range_size,
        "lua": test.lua,
        "rand_type": test.rand_type,
        "metric": test.metric,
        "in_default32": test.name in DEFAULT_32,
        "in_all42": test.name in ALL_42,
        "sql": sql,
    }
