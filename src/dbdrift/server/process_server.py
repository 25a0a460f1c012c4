"""`ProcessServer`: the lifecycle steps the PostgreSQL and MariaDB/MySQL servers share (a
server program dbdrift launches as the server user from a fresh run directory), on the
engine-neutral `Server` of base.py. Engine details stay in postgres.py and mariadb.py."""
from __future__ import annotations

import abc
from pathlib import Path
from typing import Any

from dbdrift.errors import ServerError
from dbdrift.model import InstallInfo, TargetSpec
from dbdrift.server import osuser
from dbdrift.server.base import (Server, free_port, full_disk_hint, indent_log, kill_processes_in, process_running,
                                 read_pid_file, register, unregister, with_tail)


class ProcessServer(Server):
    """What the PostgreSQL and MariaDB/MySQL servers share: a server program dbdrift launches
    as the server user from a fresh run directory, and the steps around it that do not depend
    on the engine. Each engine gives its own steps:

    - `_prepare_run_dir()`: the fresh run directory (fresh_run_dir) and what the server writes
      into; by default the run directory alone, its socket path checked with SOCKET_FILE;
    - `_check_server_user_can_run()`: a UserError when the server user cannot run the program;
    - `_init_data()`: the data directory and dbdrift's configuration (the port is chosen);
    - `_launch()`: launch and wait until it accepts connections: None when it does, else why
      not (the launcher's own words, or the timeout);
    - `_error_line(log)`: the server's own first error in its log ("" when there is none);
    - `_stop_launched()`: `_stop_processes()`, then forget the process as the engine must also
      when stopping is interrupted;
    - `_stop_running(pid)`: stop the running server, escalating to SIGKILL.
    """

    COMMS: tuple[str, ...] = ()  # /proc/<pid>/stat names of the server when it runs without a wrapper
    PID_NAME = "pid"  # what `died (<PID_NAME> <pid> is gone)` calls the main process

    def __init__(
        self, target: TargetSpec, install: InstallInfo, run_dir: Path, start_timeout_s: float = 60,
        owner: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(target, install, Path(run_dir).absolute(), owner)
        self.start_timeout_s = start_timeout_s
        self.port: int | None = None
        self.config_text = ""  # the configuration dbdrift wrote (stored with runs)
        self.comms: tuple[str, ...] = self.COMMS  # the names its processes carry now
        self.wrapper: list[str] = []  # e.g. valgrind and its options, put before the server program
        self._ids: osuser.ServerUser | None = None
        self._initialized = False
        self._version_string: str | None = None

    # --- the engine's steps (see the class docstring) -------------------------------------

    def _prepare_run_dir(self) -> None:
        self.fresh_run_dir(self._ids, self.socket_dir / self.SOCKET_FILE)

    @abc.abstractmethod
    def _check_server_user_can_run(self) -> None: ...

    @abc.abstractmethod
    def _init_data(self) -> None: ...

    @abc.abstractmethod
    def _launch(self) -> str | None: ...

    @abc.abstractmethod
    def _error_line(self, log: str) -> str: ...

    @abc.abstractmethod
    def _stop_launched(self) -> None: ...

    @abc.abstractmethod
    def _stop_running(self, pid: int) -> None: ...

    def _start_failure_hint(self, tail: str) -> str:
        """The hint of a failed start whose log ends with `tail`."""
        return full_disk_hint(tail, self.run_dir) or f"see {self.log_path}"

    # --- lifecycle ----------------------------------------------------------------------

    def init(self) -> None:
        """Fresh run_dir, checked for the server user, a port, then the engine's data
        directory and configuration."""
        self._ids = osuser.server_user()
        self._prepare_run_dir()
        self._check_server_user_can_run()
        self.port = self._choose_port()
        self._init_data()
        self._initialized = True

    def start(self) -> None:
        """Launch as the server user and wait until it accepts connections; a server that does
        not is stopped and raises a ServerError with its own error line and the log tail."""
        if not self._initialized:
            self.init()
        if self.is_alive():
            return
        register(self)  # before launching, so Ctrl-C during start still stops it
        self.launched = True
        failure = self._launch()
        if failure is not None:
            tail = self.log_tail(20)
            self.stop()
            raise with_tail(ServerError(
                f"{self.label} did not start: {self._error_line(tail) or failure}\n"
                f"last lines of {self.log_path}:\n{indent_log(tail)}",
                self._start_failure_hint(tail),
            ), tail)

    def start_wrapped(self, wrapper: list[str], comms: tuple[str, ...], start_timeout_s: float) -> None:
        """Restart the (initialized) server as `wrapper... <server program>`, e.g. under
        valgrind; `comms` are the process names the wrapped server then carries."""
        self.stop()
        self.wrapper, self.comms = list(wrapper), (*self.COMMS, *comms)
        self.start_timeout_s = start_timeout_s
        self.start()

    def stop(self) -> None:
        """Idempotent, also after a crash; unregisters. Touches only a server this object
        launched."""
        if not self.launched:
            unregister(self)
            return
        self._stop_launched()

    def _stop_processes(self) -> None:
        """The engine's stop (`_stop_running`) for the running server, then SIGKILL for its
        processes still working in the data directory."""
        pid = self.server_pid or read_pid_file(self.run_dir / self.PID_FILE)
        if pid is not None and process_running(pid, self.comms):
            self._stop_running(pid)
        # Backends orphaned by a crashed or killed parent would otherwise linger.
        kill_processes_in(self.data_dir, self.comms)

    def is_alive(self) -> bool:
        pid = self.server_pid
        return pid is not None and process_running(pid, self.comms)

    def check_alive(self) -> None:
        pid = self.server_pid
        if pid is None:
            raise ServerError(f"{self.label} is not running (stopped, or never started)",
                              "start the server before checking on it")
        if not process_running(pid, self.comms):
            tail = self.log_tail()
            raise with_tail(ServerError(
                f"{self.label} died ({self.PID_NAME} {pid} is gone); "
                f"last lines of {self.log_path}:\n{indent_log(tail)}",
                f"see {self.log_path}",
            ), tail)

    def _choose_port(self) -> int:
        """The target's `port`, else a free one. The server listens on its socket alone (the
        socket directory is its own, so the number cannot clash): the port is a name, in
        PostgreSQL's socket file and in my.cnf."""
        return self.target.port if self.target.port is not None else free_port()
