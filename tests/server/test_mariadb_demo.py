"""The MariaDB demo's chain is one packager's end to end (Debian's 10.5.29 -> 10.11.19 ->
11.8.9): `demo --check` resolves each target to a Debian build, and the oldest of them, from
bullseye-security, starts with its own suite's libraries beside it."""
from __future__ import annotations

import re

import pytest

from tests.helpers import dbdrift, shared_work_dir
from tests.server.servers import fetch

pytestmark = pytest.mark.server


def test_the_mariadb_demo_resolves_every_target_to_a_debian_build():
    result = dbdrift("demo", "--engine", "mariadb", "--check", work_dir=shared_work_dir("mariadb-demo"), timeout=900)
    assert result.returncode == 0, result.stderr[-4000:]
    found = dict(re.findall(r"target (ma[\d.]+)(?: \(base\))?: mariadb, (.*)", result.stdout))
    assert set(found) == {"ma10.5.29", "ma10.11.19", "ma11.8.9"}, result.stdout
    for target, where in found.items():  # "cached: DIR (mariadb 10.5.29, debian)" or "to fetch: debian SUITE ..."
        assert where.endswith(", debian)") or where.startswith("to fetch: debian "), (target, where)


def test_debians_10_5_29_starts_with_its_suites_libraries_beside_it(make_server):
    install = fetch("mariadb", "debian:10.5.29")
    assert "debian-bullseye-security-" in str(install.bindir)  # bullseye's own loader, libc and libssl1.1
    server = make_server(install)
    server.start()
    assert server.value("SELECT @@version").startswith("10.5.29")
