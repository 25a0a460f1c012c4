"""Fixtures of the real-server tests: the builds most tests start, and `make_server`."""
from __future__ import annotations

import shutil

import pytest

from dbdrift.model import InstallInfo, TargetSpec
from dbdrift.server.engines import server_class
from tests.helpers import shared_work_dir
from tests.server.servers import fetched

pg17, pg18 = fetched("postgres", "17.10"), fetched("postgres", "18.4")
ma1011, ma114 = fetched("mariadb", "10.11.5"), fetched("mariadb", "11.4.5")


@pytest.fixture
def make_server():
    """make_server(install, **target_fields): a server (not started) of the install's engine for
    a target named "t" (or `name=`), in a run directory of its own; every server made is
    stopped after the test and the directories removed."""
    work = shared_work_dir("server")
    made = []

    def make(install: InstallInfo, **target_fields):
        target = TargetSpec(target_fields.pop("name", "t"), engine=install.engine, **target_fields)
        server = server_class(install.engine)(target, install, work / f"s{len(made)}", start_timeout_s=120)
        made.append(server)
        return server

    yield make
    for server in made:
        server.stop()
    shutil.rmtree(work, ignore_errors=True)
