"""The Rust driver's live TPROC-C tests (crates/dbdrift-driver/tests/tpcc.rs), client-side and
with stored procedures, against a real PostgreSQL and real MariaDB/MySQL servers: they skip
without DBDRIFT_TEST_PG / DBDRIFT_TEST_MYSQL, so this test starts the server, runs them, and
fails if any of this engine's skipped."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from dbdrift import env
from dbdrift.errors import UserError
from dbdrift.model import TargetSpec
from dbdrift.server.engines import resolve_install
from dbdrift.server.mariadb import MariaDBServer, MySQLServer
from dbdrift.server.postgres import PostgresServer
from tests.helpers import ROOT, shared_work_dir

pytestmark = pytest.mark.server

# The live tests of the other engine (client-side and procedures) skip, and say so, in each
# run; only these may.
OTHER_SKIPS = {"postgres": "DBDRIFT_TEST_MYSQL", "mariadb": "DBDRIFT_TEST_PG", "mysql": "DBDRIFT_TEST_PG"}


def run_live_tests(cargo: str, engine: str, variable: str, value: str) -> str:
    result = subprocess.run(
        [cargo, "test", "--release", "-q", "--manifest-path", str(ROOT / "crates/dbdrift-driver/Cargo.toml"),
         "--test", "tpcc", "--", "--test-threads=1", "--nocapture"],
        capture_output=True, text=True, timeout=900,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("DBDRIFT_TEST_")}, variable: value})
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    skipped = [line for line in output.splitlines() if "skipped:" in line]
    assert all(OTHER_SKIPS[engine] in line for line in skipped), skipped
    assert len(skipped) == 2, output[-2000:]
    passed = re.search(r"test result: ok\. (\d+) passed", output)
    assert passed and int(passed.group(1)) >= 7, output[-2000:]
    assert re.search(r"observed: \w+ NOPM [0-9.]+", output), output[-2000:]
    assert re.search(r"observed: \w+ procedures NOPM [0-9.]+", output), output[-2000:]
    return output


def need_cargo() -> str:
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("cargo is not installed")
    return cargo


def test_the_drivers_live_tpcc_tests_pass_against_postgres():
    cargo = need_cargo()
    try:
        install = resolve_install(TargetSpec("live", version="17.10"), env.cache_dir())
    except UserError as exc:
        pytest.skip(f"cannot fetch postgres 17.10: {exc}")
    work = shared_work_dir("driver-tpcc-pg")
    server = PostgresServer(TargetSpec("live", version="17.10"), install, work / "s", start_timeout_s=60)
    try:
        server.start()
        run_live_tests(cargo, "postgres", "DBDRIFT_TEST_PG", f"{server.socket_dir}:{server.port}")
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.parametrize(("engine", "version"), [("mariadb", "10.11.5"), ("mysql", "8.0.31")])
def test_the_drivers_live_tpcc_tests_pass_against_mysql_protocol_servers(engine, version):
    cargo = need_cargo()
    try:
        install = resolve_install(TargetSpec("live", engine=engine, version=version), env.cache_dir())
    except UserError as exc:
        pytest.skip(f"cannot fetch {engine} {version}: {exc}")
    work = shared_work_dir(f"driver-tpcc-{engine}")
    if engine == "mysql":
        target = TargetSpec("live", engine="mysql", settings={"innodb_buffer_pool_size": "256M"})
        server = MySQLServer(target, install, work / "s", start_timeout_s=120)
    else:
        server = MariaDBServer(TargetSpec("live", engine="mariadb"), install, work / "s")
    try:
        server.start()
        run_live_tests(cargo, engine, "DBDRIFT_TEST_MYSQL", str(server.socket_path))
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
