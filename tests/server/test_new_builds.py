"""The builds the version catalogue added, fetched as a user would: Debian's PostgreSQL 17.12,
18.6 and 19rc1, MySQL 9.7.4 and MariaDB 10.5.29 and 11.8.9 (each with its own C library), and
jcabi's MySQL 5.6.14 and 8.0.33. Each starts, loads, runs the 32 default tests and has its
instructions per event counted (point-query on every build; insert, whose counted runs each
start from a copy of the loaded data, on each engine's newest); pgvector comes with Debian's
PostgreSQL."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import dbdrift, query, shared_work_dir

pytestmark = pytest.mark.server

ENGINES = {
    "postgres": (("pg17.12", "debian:17.12"), ("pg18.6", "debian:18.6"), ("pg19rc1", "19rc1")),
    "mysql": (("my5.6.14", "5.6.14"), ("my8.0.33", "8.0.33"), ("my9.7.4", "9.7.4")),
    "mariadb": (("ma10.5.29", "10.5.29"), ("ma11.8.9", "11.8.9")),
}
COUNTED = {"point-query": "all", "insert": "newest"}


def campaign(tmp: Path, engine: str, name: str, tests: str, targets=None) -> Path:
    lines = [f'name = "{name}"', "rows = 2000", "warmup_s = 0.1", "read_s = 0.3", "write_s = 0.3",
             "scan_warm_s = 0.1", "settle_s = 0", "warm_runs = false", f"tests = {tests}"]
    for i, (target, version) in enumerate(targets or ENGINES[engine]):
        lines += ["[[targets]]", f'name = "{target}"', f'engine = "{engine}"', f'version = "{version}"',
                  f"base = {str(i == 0).lower()}"]
        if engine == "postgres":
            lines.append('settings = { shared_buffers = "256MB" }')
        else:  # a small redo: the data directory is copied for each counted write test
            lines.append('settings = { innodb_buffer_pool_size = "256M", loose_innodb_log_file_size = "48M", '
                         'loose_innodb_redo_log_capacity = "96M" }')
    path = tmp / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module", params=list(ENGINES))
def measured(request, tmp_path_factory):
    engine = request.param
    tmp = tmp_path_factory.mktemp(f"new-{engine}")
    store = tmp / "store.db"
    work = shared_work_dir(f"new-{engine}")
    timed = dbdrift("run", campaign(tmp, engine, f"new-{engine}", '["default32"]'), "--store", store,
                    "--format", "json", work_dir=work, timeout=1800)
    counted = [dbdrift("run", campaign(tmp, engine, f"new-{engine}-{test}", json.dumps([test]),
                                       ENGINES[engine] if which == "all" else ENGINES[engine][-1:]),
                       "--store", store, "--instructions-only", "--no-report", work_dir=work, timeout=1800)
               for test, which in COUNTED.items()]
    return engine, store, timed, counted


def test_every_new_build_runs_the_32_default_tests(measured):
    engine, store, timed, _ = measured
    assert timed.returncode == 0, timed.stderr[-4000:]
    rows = query(store, "SELECT t.name AS target, r.test, r.status FROM runs r JOIN targets t ON t.id = r.target_id "
                        "JOIN campaigns c ON c.id = t.campaign_id WHERE c.name = ? AND r.test NOT LIKE '%warm%'",
                 f"new-{engine}")
    by_target: dict[str, set] = {}
    for row in rows:
        assert row["status"] == "ok", dict(row)
        by_target.setdefault(row["target"], set()).add(row["test"])
    assert {t: len(tests) for t, tests in by_target.items()} == {t: 32 for t, _ in ENGINES[engine]}


def test_each_new_build_reports_the_version_it_was_fetched_as_and_its_source(measured):
    engine, store, timed, _ = measured
    doc = json.loads(timed.stdout)
    found = {t["name"]: (t["version"], t["source"].split(":", 1)[0]) for t in doc["meta"]["targets"]}
    for target, version in ENGINES[engine]:
        number = version.rpartition(":")[2]
        assert found[target][0].startswith(number), found
        assert found[target][1] in ("debian", "maven"), found  # jcabi's zips come from Maven Central
    if engine == "postgres":  # Debian's PostgreSQL brings pgvector from its suite (the vector workload's)
        [row] = query(store, "SELECT install_json FROM targets WHERE name = 'pg18.6' LIMIT 1")
        install = json.loads(row["install_json"])
        assert "postgresql-18-pgvector=" in install["source"]
        root = Path(install["bindir"]).parents[3]  # <entry>/usr/lib/postgresql/18/bin
        assert (root / "lib/postgresql/18/lib/vector.so").is_file()
        assert (root / "share/postgresql/18/extension/vector.control").is_file()


def test_each_new_build_has_its_instructions_per_event_counted(measured):
    engine, store, _, counted = measured
    for done in counted:
        assert done.returncode == 0, done.stderr[-4000:]
    rows = query(store, "SELECT t.name AS target, i.test, i.status, i.ir_per_event FROM instructions i "
                        "JOIN targets t ON t.id = i.target_id")
    newest = ENGINES[engine][-1][0]
    assert {(r["target"], r["test"]) for r in rows} == {(t, "point-query") for t, _ in ENGINES[engine]} | {
        (newest, "insert")}
    for row in rows:
        assert row["status"] == "ok" and 5_000 < row["ir_per_event"] < 2_000_000, dict(row)
