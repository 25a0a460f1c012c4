"""Capture the EXPLAIN JSON documents the unit tests of analysis/plans.py read: each sysbench
statement of the default suite, explained as a campaign explains it (workloads/sysbench/dialect.py), on
real servers of each engine and JSON format, written to tests/data/plans/<engine>-<version>[-<variant>].json.

Per server: a fresh server (dbdrift's defaults), sbtest1 loaded by dbdrift's own load with
--rows rows (the demos' 200,000 by default) and analysed, then one EXPLAIN per distinct
statement, as a campaign stores it (InnoDBDialect.explain asks MySQL for format 1 where format 2
has no plan). MySQL 9.7.4 is explained four ways on one server: its default, with
explain_json_format_version = 1 and = 2, and with the hypergraph optimizer in its default format
(SET GLOBAL before each variant: every EXPLAIN opens a connection of its own).

    .venv/bin/python bench/plan_fixtures.py [--rows 200000] [--only mysql:9.7.4 ...]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import create_database, dbdrift_load, run_main, sql, started_server  # noqa: E402

from dbdrift.workloads.sysbench.dialect import for_engine  # noqa: E402
from dbdrift.workloads.sysbench import catalog as sysbench  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "plans"
# (engine, version) -> variant -> the global settings it is explained with ("" the server's default)
SERVERS = {
    ("mysql", "5.6.14"): {"": ()},
    ("mysql", "5.7.22"): {"": ()},
    ("mysql", "8.0.33"): {"": ()},
    ("mysql", "9.7.4"): {"": (), "v1": ("explain_json_format_version = 1",),
                         "v2": ("explain_json_format_version = 2",),
                         "hypergraph": ("optimizer_switch = 'hypergraph_optimizer=on'",)},
    ("mariadb", "10.2.11"): {"": ()},
    ("mariadb", "10.11.5"): {"": ()},
    ("mariadb", "11.8.9"): {"": ()},
    ("postgres", "17.10"): {"": ()},
}
# beyond the suite: a join by index, a join without one and a GROUP BY, for the join and group steps
EXTRA = {"extra-join-lookup": "SELECT a.c, b.c FROM sbtest1 a JOIN sbtest1 b ON b.id = a.k "
                              "WHERE a.id BETWEEN 5000 AND 5009",
         "extra-join-scan": "SELECT count(*) FROM sbtest1 a JOIN sbtest1 b ON b.c = a.c "
                            "WHERE a.id BETWEEN 5000 AND 5009 AND b.id BETWEEN 6000 AND 6099",
         "extra-group": "SELECT k, count(*) FROM sbtest1 WHERE id BETWEEN 5000 AND 5999 GROUP BY k"}
MAX_SQL = 2000  # random-points_range=1000's IN list of 1000 ids would make its files 1 MB: left out
RESET = ("explain_json_format_version = DEFAULT", "optimizer_switch = DEFAULT")


def statements(engine: str, rows: int) -> list[tuple[list[str], sysbench.ExplainStatement]]:
    """Each distinct statement of the default suite (up to MAX_SQL characters) with the tests
    (test#statement) that run it, and the EXTRA statements."""
    found: dict[str, tuple[list[str], sysbench.ExplainStatement]] = {}
    for name in sysbench.DEFAULT_32:
        for stmt in sysbench.explain_statements(sysbench.CATALOG[name], engine, rows):
            if len(stmt.sql) <= MAX_SQL:
                found.setdefault(stmt.sql, ([], stmt))[0].append(f"{name}#{stmt.index}")
    for name, text in EXTRA.items():
        found[text] = ([name], sysbench.ExplainStatement(0, text, text, ()))
    return list(found.values())


def capture(engine: str, version: str, variants: dict[str, tuple[str, ...]], rows: int, say) -> None:
    with started_server(version, f"plans-{engine}-{version}", say, engine) as server:
        conn = create_database(server)
        dialect = for_engine(engine, server.install.version)
        dbdrift_load(conn, rows, engine)
        sql(conn, "VACUUM ANALYZE sbtest1" if engine == "postgres" else "ANALYZE TABLE sbtest1",
            backend=dialect.backend)
        for variant, settings in variants.items():
            if settings:
                sql(conn, *[f"SET GLOBAL {s}" for s in settings], backend=dialect.backend)
            plans = [{"tests": tests, "sql": stmt.sql, "plan_json": dialect.explain_prepared(conn, stmt)}
                     for tests, stmt in statements(engine, rows)]
            if settings:
                sql(conn, *[f"SET GLOBAL {s}" for s in RESET if s.split()[0] in " ".join(settings)],
                    backend=dialect.backend)
            name = f"{engine}-{version}" + (f"-{variant}" if variant else "")
            doc = {"engine": engine, "version": version, "variant": variant, "settings": list(settings),
                   "server": server.install.version, "rows": rows, "plans": plans}
            OUT.mkdir(parents=True, exist_ok=True)
            (OUT / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
            say(f"{name}: {len(plans)} statements -> {OUT / (name + '.json')}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--only", nargs="*", default=[], help="engine:version, e.g. mysql:9.7.4")
    args = parser.parse_args()

    def body(out) -> None:
        for (engine, version), variants in SERVERS.items():
            if not args.only or f"{engine}:{version}" in args.only:
                capture(engine, version, variants, args.rows, out)
    return run_main("plan_fixtures", body)


if __name__ == "__main__":
    sys.exit(main())
