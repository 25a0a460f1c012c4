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
from dbdrift.model import ConnectionInfo, InstallInfo, ServerInfo, TargetSpec
from dbdrift.server import base, osuser
from dbdrift.server.fetch import postgres_version_string
from dbdrift.catalog.configs import named_text
from dbdrift.server.pgconf import initdb_args, major_version, ram_bytes, read_config_file, render_config

STOP_FAST_TIMEOUT_S = 60
STOP_IMMEDIATE_TIMEOUT_S = 10
POSTGRES_COMMS = ("postgres", "postmaster")  # /proc/<pid>/stat names, against pid reuse
VALGRIND_COMMS = ("callgrind-amd64", "callgrind-arm64")  # a server under `valgrind --tool=callgrind`


class PostgresServer(base.Server):
    """initdb + pg_ctl around one PostgreSQL install (fetched, basedir or system)."""

    PID_FILE = "data/postmaster.pid"
    SOCKET_FILE = ".s.PGSQL.65535.lock"  # the socket's lock file, beside .s.PGSQL.<port>
    PROCESS_NAMES = POSTGRES_COMMS + VALGRIND_COMMS
    SHUTDOWN_SIGNAL = signal.SIGINT  # the postmaster's "fast" shutdown

    def __init__(
        self, target: TargetSpec, install: InstallInfo, run_dir: Path, start_timeout_s: float = 60,
        owner: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(target, install, Path(run_dir).absolute(), owner)
        self.start_timeout_s = start_timeout_s
        self.port: int | None = None
        self.config_text = ""  # what dbdrift appended to postgresql.conf (stored with runs)
        self.initdb_args: list[str] = []
        self._ids: osuser.ServerUser | None = None
        self._initialized = False
        self._base_conf = ""
        self._pid: int | None = None
        self._version_string: str | None = None
        self.comms: tuple[str, ...] = POSTGRES_COMMS
        self.wrapper: list[str] = []  # e.g. valgrind and its options, put before `postgres`

    # --- paths and facts ----------------------------------------------------------------

    @property
    def major(self) -> int:
        return major_version(self.install.version)

    @property
    def server_pid(self) -> int | None:
        """The postmaster's pid."""
        return self._pid

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

    def init(self) -> None:
        """Fresh run_dir, initdb, then dbdrift's config appended to postgresql.conf."""
        self._ids = osuser.server_user()
        self._prepare_run_dir()
        self._check_server_user_can_run()
        self.port = self._choose_port()
        self._initdb()
        self._base_conf = (self.data_dir / "postgresql.conf").read_text()
        self._write_config()
        self._initialized = True

    def start(self) -> None:
        """pg_ctl start -w as the server user; ServerError with the log tail if it fails."""
        if not self._initialized:
            self.init()
        if self.is_alive():
            return
        base.register(self)  # before launching, so Ctrl-C during start still stops it
        self.launched = True
        result = self._pg_ctl_start()
        if result.returncode != 0:
            tail = self.log_tail(20)
            self.stop()
            why = (error_line(tail) or base.last_line(result.stderr or result.stdout)
                   or f"pg_ctl exited {result.returncode}")
            raise base.with_tail(ServerError(
                f"{self.label} did not start: {why}\nlast lines of {self.log_path}:\n{base.indent_log(tail)}",
                base.full_disk_hint(tail, self.run_dir) or f"see {self.log_path}",
            ), tail)
        self._pid = self._pid_from_file()

    def stop(self) -> None:
        """Idempotent: pg_ctl stop -m fast, then -m immediate, then SIGKILL; unregisters.
        Touches only a server this object launched."""
        if not self.launched:
            base.unregister(self)
            return
        try:
            pid = self._pid or self._pid_from_file()
            if pid is not None and self._is_postgres(pid):
                self._stop_running(pid)
            # Backends orphaned by a crashed or killed postmaster would otherwise linger.
            base.kill_processes_in(self.data_dir, self.comms)
        except KeyboardInterrupt:  # a second Ctrl-C: it stays registered, so stop_all stops it on the way out
            self._pid = None
            raise
        self._pid = None
        base.unregister(self)

    def is_alive(self) -> bool:
        return self._pid is not None and self._is_postgres(self._pid)

    def check_alive(self) -> None:
        if self._pid is None:
            raise ServerError(f"{self.label} is not running (stopped, or never started)",
                              "start the server before checking on it")
        if not self._is_postgres(self._pid):
            tail = self.log_tail()
            raise base.with_tail(ServerError(
                f"{self.label} died (postmaster pid {self._pid} is gone); "
                f"last lines of {self.log_path}:\n{base.indent_log(tail)}",
                f"see {self.log_path}",
            ), tail)

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

    def _prepare_run_dir(self) -> None:
        self.fresh_run_dir(self._ids, self.socket_dir / self.SOCKET_FILE)

    def _check_server_user_can_run(self) -> None:
        if self._ids is None:
            return
        base.check_server_user_can_run(
            self.name, self.run_dir, self._ids[2], [self.install.bindir / "postgres", "--version"],
            lambda cmd: osuser.run_as(cmd, self._ids, cwd=self.run_dir, capture_output=True, text=True))

    def _choose_port(self) -> int:
        """The number in the socket's name: the target's `port`, else one a TCP server could
        use (the socket directory is the server's own, so it cannot clash)."""
        return self.target.port if self.target.port is not None else base.free_port()

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
                                         named_text=named_text(self.target, self.install.version))
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

    def start_wrapped(self, wrapper: list[str], comms: tuple[str, ...], start_timeout_s: float) -> None:
        """Restart the (initialized) server as `wrapper... postgres`, e.g. under valgrind.
        `comms` are the process names the wrapped postmaster and backends then carry."""
        self.stop()
        self.wrapper, self.comms = list(wrapper), POSTGRES_COMMS + comms
        self.start_timeout_s = start_timeout_s
        self.start()

    def _wrapper_script(self) -> Path:
        """pg_ctl -p takes one executable: a script that execs the wrapper with postgres."""
        script = self.run_dir / "postgres-wrapped"
        words = " ".join(shlex.quote(str(w)) for w in [*self.wrapper, self.install.bindir / "postgres"])
        script.write_text(f'#!/bin/sh\nexec {words} "$@"\n')
        script.chmod(0o755)
        osuser.chown_tree(script, self._ids)
        return script

    def _is_postgres(self, pid: int) -> bool:
        return base.process_running(pid, self.comms)

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


