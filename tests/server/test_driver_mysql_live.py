"""The Rust driver's live MySQL-protocol tests (crates/dbdrift-driver/tests/mysql.rs) against
real MariaDB servers: they skip without DBDRIFT_TEST_MYSQL, so this test starts the servers
and runs them, and fails if any of them skipped."""
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
from dbdrift.server.mariadb import MariaDBServer
from tests.helpers import ROOT, shared_work_dir

pytestmark = pytest.mark.server


@pytest.mark.parametrize("version", ["10.11.5", "11.4.5"])
def test_the_drivers_live_mysql_tests_pass_against_mariadb(version):
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("cargo is not installed")
    try:
        install = resolve_install(TargetSpec("live", engine="mariadb", version=version), env.cache_dir())
    except UserError as exc:
        pytest.skip(f"cannot fetch mariadb {version}: {exc}")
    work = shared_work_dir("driver-mysql")
    server = MariaDBServer(TargetSpec("live", engine="mariadb"), install, work / "s")
    try:
        server.start()
        result = subprocess.run(
            [cargo, "test", "--release", "-q", "--manifest-path", str(ROOT / "crates/dbdrift-driver/Cargo.toml"),
             "--test", "mysql", "--", "--test-threads=1"],
            capture_output=True, text=True, timeout=900,
            env={**os.environ, "DBDRIFT_TEST_MYSQL": str(server.socket_path)})
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "skipped:" not in output
    passed = re.search(r"test result: ok\. (\d+) passed", output)
    assert passed and int(passed.group(1)) >= 6, output[-2000:]
