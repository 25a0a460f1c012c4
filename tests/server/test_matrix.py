"""Configuration matrices end to end: variants of real PostgreSQL and MySQL servers get their
levels' settings and the named config file, and the matrix reports read what was stored."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.helpers import dbdrift, shared_work_dir

pytestmark = pytest.mark.server

# one short write test per variant: what is checked is each variant's settings, not its speed
SHORT = """
tests = ["update-nonindex"]
rows = 2000
write_s = 1
warmup_s = 0.2
settle_s = 0
warm_runs = false
"""

PG = 'name = "pg-matrix"' + SHORT + """
[axes.sync]
0 = { postgres = { synchronous_commit = "off" } }
1 = { postgres = { synchronous_commit = "on" } }

[axes.fpi]
0 = { postgres = { full_page_writes = "off" } }
1 = { postgres = { full_page_writes = "on" } }

[[targets]]
name = "pg17"
version = "17.10"
config = "cx10a"
settings = { shared_buffers = "128MB" }
"""

MYSQL = 'name = "mysql-matrix"' + SHORT + """order = "sequential"

[axes.bl]
0 = { mysql = { skip_log_bin = "" } }
1 = { mysql = {} }

[axes.dw]
0 = { mysql = { innodb_doublewrite = "OFF" } }
DO = { mysql = { innodb_doublewrite = "DETECT_ONLY" } }

[[targets]]
name = "my8"
engine = "mysql"
version = "8.0.31"
config = "z12a"
settings = { innodb_buffer_pool_size = "128M" }
"""


def stored_settings(store: Path) -> dict[str, dict]:
    db = sqlite3.connect(store)
    rows = db.execute("SELECT name, server_json FROM targets ORDER BY position").fetchall()
    db.close()
    return {name: json.loads(server or "{}").get("settings", {}) for name, server in rows}


@pytest.fixture(scope="module")
def pg_matrix(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pgmatrix")
    (tmp / "pg.toml").write_text(PG)
    result = dbdrift("run", tmp / "pg.toml", "--store", tmp / "s.db", "--no-report",
                     work_dir=shared_work_dir("matrix"))
    assert result.returncode == 0, result.stderr[-3000:]
    return tmp


def test_each_variant_of_a_postgres_matrix_runs_with_its_levels_and_the_named_file(pg_matrix):
    settings = stored_settings(pg_matrix / "s.db")
    assert list(settings) == ["pg17-sync0_fpi0", "pg17-sync0_fpi1", "pg17-sync1_fpi0", "pg17-sync1_fpi1"]
    for name, values in settings.items():
        assert values["synchronous_commit"] == ("on" if "sync1" in name else "off"), name
        assert values["full_page_writes"] == ("on" if "fpi1" in name else "off"), name
        assert values["autovacuum_vacuum_cost_limit"] == "4000"  # from cx10a, dbdrift's default leaves it at -1
        assert values["shared_buffers"] == "16384"  # settings win over everything: 128MB in 8 kB pages


def test_the_matrix_reports_read_the_stored_variants(pg_matrix):
    store = pg_matrix / "s.db"
    table = dbdrift("report", "--store", store, "--matrix", "--group-by", "sync", "--format", "json")
    assert table.returncode == 0, table.stderr
    blocks = json.loads(table.stdout)["blocks"]
    assert [b["group"] for b in blocks] == ["sync0", "sync1"]
    assert all(r["values"]["update-nonindex"] > 0 for b in blocks for r in b["rows"])
    view = dbdrift("report", "--store", store, "--against", "variant", "--format", "json")
    assert view.returncode == 0, view.stderr
    columns = json.loads(view.stdout)["columns"]
    assert {c["reference"] for c in columns} == {"pg17-sync0_fpi0"} and len(columns) == 3
    shown = dbdrift("config", "show", pg_matrix / "pg.toml", "pg17-sync1_fpi0")
    assert shown.returncode == 0, shown.stderr
    line = next(ln for ln in shown.stdout.splitlines() if ln.split()[:1] == ["synchronous_commit"])
    assert line.split()[1:5] == ["on", "matrix", "level", "sync1"]


def test_a_mysql_matrix_turns_the_binlog_and_doublewrite_off_and_on(tmp_path):
    (tmp_path / "my.toml").write_text(MYSQL)
    result = dbdrift("run", tmp_path / "my.toml", "--store", tmp_path / "s.db", "--no-report",
                     work_dir=shared_work_dir("matrix"))
    assert result.returncode == 0, result.stderr[-3000:]
    settings = stored_settings(tmp_path / "s.db")
    assert list(settings) == ["my8-bl0_dw0", "my8-bl0_dwDO", "my8-bl1_dw0", "my8-bl1_dwDO"]
    for name, values in settings.items():
        assert values["log_bin"] == ("ON" if "bl1" in name else "OFF"), name
        assert values["innodb_doublewrite"] == ("DETECT_ONLY" if "dwDO" in name else "OFF"), name
        assert values["innodb_flush_method"] == "O_DIRECT_NO_FSYNC"  # from z12a
        assert values["innodb_buffer_pool_size"] == str(128 * 2**20)
