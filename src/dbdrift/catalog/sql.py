"""SQL written once for every engine: `?` placeholders, numbered for PostgreSQL. Every
workload's statements are written this way (sysbench's catalogue, the Insert Benchmark's queries)."""
from __future__ import annotations


def render_sql(sql: str, engine: str) -> str:
    """`?` placeholders → `$1..$n` for PostgreSQL; MySQL and MariaDB keep `?`."""
    if engine != "postgres":
        return sql
    parts = sql.split("?")
    out = [parts[0]]
    for i, part in enumerate(parts[1:], start=1):
        out.append(f"${i}{part}")
    return "".join(out)
