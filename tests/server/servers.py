"""Builds for the real-server tests, fetched into the cache (env.cache_dir()): a registry that
cannot be reached skips the test visibly, and CI fails on that skip (tests/conftest.py); and
the checks every engine's server must pass."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import pytest

from dbdrift import env
from dbdrift.errors import UserError
from dbdrift.model import InstallInfo, TargetSpec
from dbdrift.server.engines import resolve_install
from tests.helpers import connect_as_nobody, tcp_listeners


def fetch(engine: str, version: str, progress=None) -> InstallInfo:
    """The build of `engine` `version`, fetched once and then taken from the cache."""
    try:
        return resolve_install(TargetSpec(f"{engine}-{version}", engine=engine, version=version), env.cache_dir(),
                               progress)
    except UserError as exc:
        pytest.skip(f"cannot fetch {engine} {version}: {exc}")


def fetched(engine: str, version: str):
    """A session fixture: the build of `engine` `version` (see fetch)."""
    @pytest.fixture(scope="session")
    def install() -> InstallInfo:
        return fetch(engine, version)
    return install


def started_where_no_other_user_reaches(make_server, install: InstallInfo, socket_of: Callable[[Any], Path]):
    """Start a server of `install` (as root: the test skips, visibly, otherwise) and check that
    it is private: the OS user `nobody` is refused on its Unix socket (`socket_of(server)`) and
    finds no TCP port, the server listening on none. Returns the running server."""
    if os.geteuid() != 0:
        pytest.skip("needs root to connect as another user")
    server = make_server(install)
    server.start()
    assert tcp_listeners(server.server_pid) == []
    assert connect_as_nobody(socket_of(server), server.port) == {
        "unix": "PermissionError", "tcp": "ConnectionRefusedError"}
    return server
