"""A PostgreSQL server for one target: fresh initdb, dbdrift's config, start, stop, liveness.

Layout: run_dir/{data, sock, server.log, initdb.log, and postgres-wrapped when started under
a wrapper such as valgrind}; everything is owned by (and run as) the server
user when dbdrift is root. Loading data and reading settings over SQL is the runner's job.
"""
from __future__ import annotations

import math
import os
import re
import shlex
import signal
import subprocess
from pathlib import Path
from typing import Any

from dbdrift.errors import ServerError
from dbdrift.model import ConnectionInfo, ServerRoles, ServerInfo
from dbdrift.server import base, osuser
from dbdrift.server.fetch import postgres_version_string
from dbdrift.catalog.configs import named_text
from dbdrift.server.pgconf import initdb_args, major_version, ram_bytes, read_config_file, render_config
from dbdrift.server.process_server import ProcessServer

STOP_FAST_TIMEOUT_S = 60
STOP_IMMEDIATE_TIMEOUT_S = 10
POSTGRES_COMMS = ("postgres", "postmaster")  # /proc/<pid>/stat names, against pid reuse
VALGRIND_COMMS = ("callgrind-amd64", "callgrind-arm64")  # a server under `valgrind --tool=callgrind`


class PostgresServer(ProcessServer):
    """initdb + pg_ctl around one PostgreSQL install (fetched, basedir or system). Its
    config_text is what dbdrift appended to postgresql.conf."""

    PID_FILE = "data/postmaster.pid"
    SOCKET_FILE = ".s.PGSQL.65535.lock"  # the socket's lock file, beside .s.PGSQL.<port>
    PROCESS_NAMES = POSTGRES_COMMS + VALGRIND_COMMS
    SHUTDOWN_SIGNAL = signal.SIGINT  # the postmaster's "fast" shutdown
    COMMS = POSTGRES_COMMS
    PID_NAME = "postmaster pid"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.initdb_args: list[str] = []
        self._base_conf = ""
        self._pid: int | None = None

    # --- paths and facts ----------------------------------------------------------------

    @property
    def major(self) -> int:
        return major_version(self.install.version)

    @property
    def server_pid(self) -> int | None:
        """The postmaster's pid."""
        return self._pid

    def roles(self) -> ServerRoles:
        """Per process, by its title."""
        return ServerRoles(threads=False)

    @property
    def connection(self) -> ConnectionInfo:
        if self.port is None:
            raise RuntimeError(f"{self.label}: connection asked before init()")
        return ConnectionInfo(self.socket_dir, self.port, user="postgres", dbname="postgres")

    def info(self, settings: dict[str, str]) -> ServerInfo:
        if self._version_string is None:
            self._version_string = postgres_version_string(self.install.bindir)
        return ServerInfo("postgres", self.install.version, self._version_string,
                          self.data_dir, self.log_path, dict(settings))

    # --- lifecycle ----------------------------------------------------------------------

    def _init_data(self) -> None:
        """initdb, then dbdrift's config appended to postgresql.conf."""
        self._initdb()
        self._base_conf = (self.data_dir / "postgresql.conf").read_text()
        self._write_config()

    def _launch(self) -> str | None:
        """pg_ctl start -w as the server user: None when it started, else pg_ctl's last line."""
        result = self._pg_ctl_start()
        if result.returncode != 0:
            return base.last_line(result.stderr or result.stdout) or f"pg_ctl exited {result.returncode}"
        self._pid = self._pid_from_file()
        return None

    def _error_line(self, log: str) -> str:
        return error_line(log)

    def _stop_launched(self) -> None:
        """pg_ctl stop -m fast, then -m immediate, then SIGKILL."""
        try:
            self._stop_processes()
        except KeyboardInterrupt:  # a second Ctrl-C: it stays registered, so stop_all stops it on the way out
            self._pid = None
            raise
        self._pid = None
        base.unregister(self)

    def check_settings(self) -> tuple[list[str], str | None]:
        """`postgres -C` on a data directory holding only dbdrift's postgresql.conf: it reads
        the file as a start would and reports every value it rejects, starting nothing."""
        self._ids = osuser.server_user()
        self.data_dir.mkdir(mode=0o700, parents=True)
        self.port = self._choose_port()
        self._write_config()
        osuser.chown_tree(self.run_dir, self._ids)
        result = osuser.run_as([self.install.bindir / "postgres", "-C", "shared_buffers", "-D", self.data_dir],
                               self._ids, cwd=self.run_dir, capture_output=True, text=True, timeout=60)
        if result.returncode == 0:
            return [], None
        problems = base.config_problems(result.stderr)
        return (problems, None) if problems else ([], f"postgres -C failed: {base.last_line(result.stderr)}")

    def show_setting_stopped(self, name: str) -> str:
        """`postgres -C name` on the stopped data directory (e.g. data_checksums, which
        comes from pg_control; the npm builds have no pg_controldata)."""
        result = osuser.run_as([self.install.bindir / "postgres", "-C", name, "-D", self.data_dir],
                               self._ids, cwd=self.run_dir, capture_output=True, text=True)
        if result.returncode != 0:
            raise ServerError(f"{self.label}: postgres -C {name} failed: {base.last_line(result.stderr)}",
                              "stop the server first; -C needs a stopped data directory")
        return str(result.stdout).strip()

    # --- steps ----------------------------------------------------------------------------

    def _check_server_user_can_run(self) -> None:
        if self._ids is None:
            return
        base.check_server_user_can_run(
            self.name, self.run_dir, self._ids[2], [self.install.bindir / "postgres", "--version"],
            lambda cmd: osuser.run_as(cmd, self._ids, cwd=self.run_dir, capture_output=True, text=True))

    def _initdb(self) -> None:
        self.initdb_args = initdb_args(self.major, self.target.data_checksums)
        cmd: list[str | os.PathLike[str]] = [self.install.bindir / "initdb", "-D", self.data_dir, *self.initdb_args]
        result = osuser.run_as(cmd, self._ids, cwd=self.run_dir, capture_output=True, text=True)
        (self.run_dir / "initdb.log").write_text(result.stdout + result.stderr)
        if result.returncode != 0:
            # initdb's last line is "removing data directory": the cause is the bootstrap's FATAL line
            raise ServerError(
                f"initdb failed for target {self.name} (postgres {self.install.version}): "
                f"{base.cause_line(result.stdout + result.stderr) or base.last_line(result.stderr) or f'exit {result.returncode}'}",
                base.full_disk_hint(result.stdout + result.stderr, self.run_dir)
                or f"see {self.run_dir / 'initdb.log'}",
            )

    def _write_config(self) -> None:
        assert self.port is not None
        file_text = read_config_file(self.target)
        self.config_text = render_config(self.target, self.major, ram_bytes=ram_bytes(),
                                         socket_dir=self.socket_dir, port=self.port,
                                         config_file_text=file_text,
                                         named_text=named_text(self.target, self.install.version, ram_bytes()))
        conf = self.data_dir / "postgresql.conf"
        conf.write_text(self._base_conf.rstrip("\n") + "\n\n" + self.config_text)

    def _pg_ctl_start(self) -> subprocess.CompletedProcess[str]:
        timeout = max(1, math.ceil(self.start_timeout_s))
        cmd: list[str | os.PathLike[str]] = [self.install.bindir / "pg_ctl", "start", "-w", "-t", str(timeout),
               "-D", self.data_dir, "-l", self.log_path]
        if self.wrapper:
            cmd += ["-p", self._wrapper_script()]
        # A new session keeps the terminal's Ctrl-C away from the postmaster: stop_all() owns it.
        try:
            return osuser.run_as(cmd, self._ids, cwd=self.run_dir, capture_output=True,
                                 text=True, timeout=timeout + 30, start_new_session=True)
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(cmd, -1, "", f"pg_ctl hung for {timeout + 30} s")

    def _wrapper_script(self) -> Path:
        """pg_ctl -p takes one executable: a script that execs the wrapper with postgres."""
        script = self.run_dir / "postgres-wrapped"
        words = " ".join(shlex.quote(str(w)) for w in [*self.wrapper, self.install.bindir / "postgres"])
        script.write_text(f'#!/bin/sh\nexec {words} "$@"\n')
        script.chmod(0o755)
        osuser.chown_tree(script, self._ids)
        return script

    def _stop_running(self, pid: int) -> None:
        for mode, timeout in (("fast", STOP_FAST_TIMEOUT_S), ("immediate", STOP_IMMEDIATE_TIMEOUT_S)):
            cmd: list[str | os.PathLike[str]] = [self.install.bindir / "pg_ctl", "stop", "-D", self.data_dir,
                   "-m", mode, "-w", "-t", str(timeout)]
            try:
                osuser.run_as(cmd, self._ids, cwd=self.run_dir, capture_output=True,
                              timeout=timeout + 15, start_new_session=True)
            except subprocess.TimeoutExpired:
                pass
            if base.wait_gone(pid, self.comms, 2.0):
                return
        base.kill(pid)
        base.wait_gone(pid, self.comms, 10.0)

    def _pid_from_file(self) -> int | None:
        return base.read_pid_file(self.data_dir / "postmaster.pid")


# --- pure helpers (unit-tested without a server) -------------------------------------------


_CAUSE = re.compile(r"\b(FATAL|PANIC|ERROR):|\bLOG:\s+(invalid value|unrecognized configuration parameter|"
                    r"parameter \S+ (cannot|requires)|could not|.* must be)")


def error_line(log: str) -> str:
    """The server's own first error in its log, without timestamp and pid: the cause of a
    failed start (`invalid value for parameter "shared_buffers": "lots"`), not pg_ctl's
    "Examine the log output"."""
    for line in log.splitlines():
        match = _CAUSE.search(line)
        if match:
            return line[match.start():].strip()
    return ""


