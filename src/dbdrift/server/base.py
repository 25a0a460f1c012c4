"""The engine-neutral server lifecycle (`Server`; process_server.py holds the steps every
engine's server program shares) and the registry of live servers.

Every started server registers here and `stop_all()` stops whatever is still running, so no
exit path (success, exception, Ctrl-C, SIGTERM, atexit) leaves a server behind. Engine details
live in the engine modules (postgres.py, mariadb.py); nothing here knows about SQL or binaries.
"""
from __future__ import annotations

import abc
import atexit
import json
import os
import re
import shutil
import signal
import socket
import sys
import threading
import time
import subprocess
from pathlib import Path
from types import FrameType
from typing import Any, Callable

from dbdrift import disk
from dbdrift.errors import ServerError, UserError, stopped_by
from dbdrift.model import ConnectionInfo, ServerRoles, InstallInfo, ServerInfo, TargetSpec
from dbdrift.server import osuser

OWNER_FILE = "dbdrift-run.json"  # in every run directory: which dbdrift process it belongs to


class Server(abc.ABC):
    """One server process for one target, in a fresh data directory under `run_dir`.

    Servers listen on no TCP port: a Unix socket in the run directory, which only dbdrift and
    the server user may enter, is the only way in (another local user cannot connect)."""

    PID_FILE = ""  # the server's pid file, relative to run_dir
    SOCKET_FILE = ""  # the longest name the server creates in its socket directory (a Unix socket path)
    PROCESS_NAMES: tuple[str, ...] = ()  # /proc/<pid>/stat names of its processes
    SHUTDOWN_SIGNAL = signal.SIGTERM  # a clean, prompt shutdown

    def __init__(self, target: TargetSpec, install: InstallInfo, run_dir: Path, owner: dict[str, Any] | None = None) -> None:
        self.target = target
        self.install = install
        self.run_dir = run_dir
        self.owner = owner  # written to the run directory's owner file (server/rundir.py)
        self.launched = False  # set when this object launches a server: stop() touches no other

    config_text: str  # what dbdrift wrote into the server's configuration, stored with its runs (set by init)

    def start_wrapped(self, wrapper: list[str], comms: tuple[str, ...], start_timeout_s: float) -> None:
        """Restart the initialised server under `wrapper` (valgrind callgrind), whose processes have the /proc names
        `comms`, waiting up to `start_timeout_s` for connections; engines that count
        instructions (workloads/sysbench/instructions.py) override it."""
        raise NotImplementedError(f"{self.label} cannot start under a wrapper")

    @property
    def name(self) -> str:
        return self.target.name

    @property
    def log_path(self) -> Path:
        return self.run_dir / "server.log"

    @property
    def data_dir(self) -> Path:
        return self.run_dir / "data"

    @property
    def socket_dir(self) -> Path:
        return self.run_dir / "sock"

    @property
    def label(self) -> str:
        return f"server {self.name} ({self.install.engine} {self.install.version})"

    @property
    @abc.abstractmethod
    def server_pid(self) -> int | None:
        """The server's main process (PostgreSQL's postmaster, mariadbd/mysqld), None when not
        running: what the samplers and perf watch."""

    def roles(self) -> ServerRoles | None:
        """How the samplers split the server's CPU into foreground and background work
        (metrics/roles.py); None where they cannot."""
        return None

    @abc.abstractmethod
    def init(self) -> None:
        """Create the fresh data directory and configuration."""

    @abc.abstractmethod
    def start(self) -> None:
        """Start and wait until it accepts connections; registers with the live registry."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop (idempotent, also after a crash); unregisters."""

    @abc.abstractmethod
    def is_alive(self) -> bool:
        """True while the server process exists."""

    @abc.abstractmethod
    def check_alive(self) -> None:
        """Raise ServerError (with the log tail) when the server has died."""

    @property
    @abc.abstractmethod
    def connection(self) -> ConnectionInfo:
        """How clients reach this server."""

    @abc.abstractmethod
    def info(self, settings: dict[str, str]) -> ServerInfo:
        """Facts to store with each run; `settings` are read by the runner over SQL."""

    def check_settings(self) -> tuple[list[str], str | None]:
        """The server's own verdict on the configuration dbdrift would write, without starting
        it or making a data directory (`run --check`; run_dir is a scratch directory): (the
        server's messages for what it rejects, None) or ([], why it could not be asked)."""
        return [], f"{self.install.engine} offers no check of its settings without starting"

    def fresh_run_dir(self, ids: osuser.ServerUser | None, socket_path: Path) -> None:
        """Make the run directory empty and private (0700, the server user's), with its socket
        directory (0700) and the owner file. Refuses, touching nothing, a run directory that
        is a symbolic link or holds a running server."""
        run_dir = self.run_dir
        if run_dir.is_symlink():
            raise UserError(f"run directory {run_dir} is a symbolic link; not using it for target {self.name}",
                            "remove the link, or set DBDRIFT_WORK_DIR to a directory of your own")
        pid = self.orphan_pid(run_dir)
        if pid is not None:
            raise UserError(f"{run_dir} holds a running server (pid {pid}); target {self.name} will not use it",
                            "stop it with `dbdrift cleanup`, or use another run directory")
        if len(os.fsencode(socket_path)) > SUN_PATH_MAX:
            raise UserError(f"socket path {socket_path} is too long for a Unix socket",
                            "set DBDRIFT_WORK_DIR to a shorter directory, e.g. /var/tmp/dbdrift")
        if run_dir.exists():
            for child in run_dir.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        else:
            run_dir.parent.mkdir(parents=True, exist_ok=True)
            run_dir.mkdir(mode=0o700)
        run_dir.chmod(0o700)
        self.socket_dir.mkdir(mode=0o700)
        if self.owner is not None:
            write_owner(run_dir, self.owner)
        osuser.chown_tree(run_dir, ids)

    @classmethod
    def orphan_pid(cls, run_dir: Path) -> int | None:
        """The pid of a server still running in `run_dir` (from its pid file), else None."""
        pid = read_pid_file(run_dir / cls.PID_FILE)
        return pid if pid is not None and process_running(pid, cls.PROCESS_NAMES) else None

    @classmethod
    def stop_orphan(cls, run_dir: Path, timeout_s: float = 60) -> None:
        """Stop a server no Server object owns any more (its dbdrift process is gone): the
        shutdown signal, then SIGKILL, then any of its processes still working in its data."""
        pid = cls.orphan_pid(run_dir)
        if pid is not None:
            try:
                os.kill(pid, cls.SHUTDOWN_SIGNAL)
            except ProcessLookupError:
                pass
            if not wait_gone(pid, cls.PROCESS_NAMES, timeout_s):
                kill(pid)
                wait_gone(pid, cls.PROCESS_NAMES, 10.0)
        kill_processes_in(run_dir / "data", cls.PROCESS_NAMES)

    def log_tail(self, lines: int = 40) -> str:
        """The last `lines` lines of the server log ("" when there is none yet)."""
        return read_tail(self.log_path, lines)

    def __enter__(self) -> "Server":
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def read_tail(path: Path, lines: int) -> str:
    try:
        with path.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 64 * 1024))
            data = f.read()
    except OSError:
        return ""
    return "\n".join(data.decode("utf-8", "replace").splitlines()[-lines:])


# --- processes and ports (engine-neutral, Linux /proc) ----------------------------------------


SUN_PATH_MAX = 107  # bytes of a Unix socket path


def last_line(text: str) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def indent_log(text: str) -> str:
    return "\n".join("  " + ln for ln in text.splitlines()) if text else "  (log is empty)"


# ENOSPC as the servers say it: errno text, InnoDB's "error 28", PostgreSQL's SQLSTATE 53100, and
# PostgreSQL's short write ("could not extend file ...: wrote only 4096 of 8192 bytes", hint "Check
# free disk space"), which carries no errno: initdb's bootstrap on a full disk says only that.
_FULL_DISK = re.compile(r"No space left on device|\berror 28\b|errno: 28|SQLSTATE 53100|\bis full\b|"
                        r"Check free disk space|wrote only \d+ of \d+ bytes", re.I)
LOW_SPACE_BYTES = 16 * 2**20  # less than this free on the device counts as full, whatever the output says


def full_disk_hint(text: str, directory: Path) -> str | None:
    """A hint naming the full device (its mount point and the space left) when a server's or
    tool's output says it ran out of space, or the device has less than 16 MB free; else None."""
    free = disk.free_bytes(directory)
    if not _FULL_DISK.search(text or "") and (free is None or free >= LOW_SPACE_BYTES):
        return None
    left = f", {free / 2**20:,.1f} MB free now" if free is not None else ""
    return (f"the disk holding {directory} (mounted at {disk.mount_point(directory)}{left}) is full: free space "
            "there, or set DBDRIFT_WORK_DIR to a directory on a larger disk")


def cause_line(text: str) -> str:
    """The first line of a server's or tool's output that says why it failed (FATAL/PANIC/ERROR,
    InnoDB's [ERROR]), without timestamp and pid; "" when there is none."""
    for line in (text or "").splitlines():
        match = re.search(r"\b(FATAL|PANIC|ERROR):\s|\[ERROR\]\s", line)
        if match:
            return line[match.start():].strip()
    return ""


_CONFIG_NOISE = re.compile(r"skipping missing configuration file|configuration file .* contains errors|\] Aborting|"
                           r"Parsing options for plugin")


def config_problems(output: str) -> list[str]:
    """The server's own complaints about its configuration in a check's output: PostgreSQL's
    LOG/FATAL lines and MariaDB/MySQL's [ERROR] lines, without timestamps, pids and the
    summary lines that only say there were errors."""
    found = []
    for line in output.splitlines():
        match = re.search(r"\b(LOG|FATAL|ERROR):\s+|\[ERROR\]\s+(\[[^]]*\]\s+)*", line)
        if match and not _CONFIG_NOISE.search(line):
            # the scratch file's place means nothing to the user; the setting's name says it
            found.append(re.sub(r' in file "[^"]*" line \d+', "", line[match.end():]).strip())
    return found


def with_tail(error: ServerError, tail: str) -> ServerError:
    error.log_tail = tail  # the runner stores it with the failed run
    return error


def check_server_user_can_run(target: str, run_dir: Path, user: str, version_cmd: list[str | os.PathLike[str]],
                              run: Callable[[list[str | os.PathLike[str]]], subprocess.CompletedProcess[str]]) -> None:
    """As the server user (`run` runs a command as that user): can it enter the run dir and
    run the server binary (`version_cmd`, e.g. `postgres --version`)? Each failure is a
    UserError naming the fix."""
    if run(["test", "-w", str(run_dir)]).returncode != 0:
        raise UserError(
            f"target {target}: the server user {user!r} cannot enter {run_dir} "
            "(a parent directory is private, e.g. /root or /tmp/pytest-of-root)",
            "set DBDRIFT_WORK_DIR to a directory outside private folders, e.g. /var/tmp/dbdrift-mine "
            "(dbdrift creates it, open only to you and the server user)",
        )
    result = run(version_cmd)
    if result.returncode != 0:
        raise UserError(
            f"target {target}: the server user {user!r} cannot run {version_cmd[0]}: "
            f"{last_line(result.stderr)}",
            f"put the build where {user!r} can read it (not under /root), or run dbdrift as a normal user",
        )


def write_owner(run_dir: Path, facts: dict[str, Any]) -> None:
    """The run directory's owner file (server/rundir.owner_facts says what is in it)."""
    path = run_dir / OWNER_FILE
    path.write_text(json.dumps(facts) + "\n")
    path.chmod(0o644)


def read_pid_file(path: Path) -> int | None:
    """The pid on the first line of a server's pid file (postmaster.pid, mysqld.pid)."""
    try:
        first = path.read_text().split("\n", 1)[0].strip()
    except OSError:
        return None
    return int(first) if first.isdigit() else None


def process_start_ticks(pid: int) -> int | None:
    """When a process started (clock ticks since boot, /proc/<pid>/stat field 22), None when
    there is no such process: with the pid it names one process, even after pid reuse."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
        return int(raw[raw.rindex(")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def process_running(pid: int, comms: tuple[str, ...]) -> bool:
    """Alive, not a zombie, and still named one of `comms` (guards against pid reuse).
    Zombies count as gone: the server is not our child and PID 1 may reap late."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    comm = raw[raw.index("(") + 1: raw.rindex(")")]
    state = raw[raw.rindex(")") + 2:].split()[0]
    return state != "Z" and comm in comms


def wait_gone(pid: int, comms: tuple[str, ...], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while process_running(pid, comms):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def kill_processes_in(directory: Path, comms: tuple[str, ...]) -> None:
    """SIGKILL every live `comms` process whose working directory is `directory`: servers
    chdir to their data directory, which is fresh per run, so this matches one server only
    (and catches backends orphaned by a crashed parent)."""
    victims = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "cwd") == str(directory):
                    victims.append(int(entry.name))
            except OSError:
                continue
    victims = [v for v in victims if process_running(v, comms)]
    for victim in victims:
        kill(victim)
    for victim in victims:
        wait_gone(victim, comms, 5.0)


def free_port() -> int:
    """A port number for a server's socket name (PostgreSQL's .s.PGSQL.<port>); servers do
    not listen on TCP, so it need only look like the port a user would expect."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# --- registry of live servers ------------------------------------------------------------------


_live: list[Server] = []
_lock = threading.Lock()


def register(server: Server) -> None:
    with _lock:
        if server not in _live:
            _live.append(server)


def unregister(server: Server) -> None:
    with _lock:
        if server in _live:
            _live.remove(server)


def live_servers() -> list[Server]:
    with _lock:
        return list(_live)


_run_dirs: list[Path] = []  # run directories this process made and has not removed or kept on purpose


def own_run_dir(path: Path) -> None:
    """`path` is removed on the way out (stop_all) unless release_run_dir is called first."""
    with _lock:
        _run_dirs.append(path)


def release_run_dir(path: Path) -> None:
    """Its owner removed `path`, or keeps it on purpose (a failed target's logs)."""
    with _lock:
        if path in _run_dirs:
            _run_dirs.remove(path)


def stop_all() -> None:
    """Stop every registered server, newest first, then remove the run directories a second
    Ctrl-C kept their owners from removing, naming those it cannot; never raises an Exception
    (it runs on the way out)."""
    for server in reversed(live_servers()):
        try:
            server.stop()
        except Exception as exc:  # noqa: BLE001 - keep stopping the others
            print(f"warning: could not stop server {server.name}: {exc}", file=sys.stderr)
            unregister(server)
    with _lock:
        left, _run_dirs[:] = list(_run_dirs), []
    if os.environ.get("DBDRIFT_KEEP_DATA"):
        return
    for path in left:
        shutil.rmtree(path, ignore_errors=True)
    left = [p for p in left if p.exists()]
    if left:
        print(f"warning: interrupted before its run directories were removed: {', '.join(map(str, left))} "
              "(hint: `dbdrift cleanup` removes them)", file=sys.stderr)


def sigterm_as_ctrl_c() -> None:
    """SIGTERM takes Ctrl-C's path: whatever handles SIGINT now handles it (by default a
    KeyboardInterrupt in the main thread), so a `kill` stores what finished, stops the servers
    and ends with the same message and exit status (130). By default SIGTERM kills Python
    without running `finally` blocks or atexit (stop_all). For the CLI's main thread."""
    def handle(_signum: int, frame: FrameType | None) -> None:
        stopped_by("SIGTERM")  # stored and said as what stopped the campaign, not "Ctrl-C"
        on_ctrl_c = signal.getsignal(signal.SIGINT)
        if callable(on_ctrl_c):
            on_ctrl_c(signal.SIGINT, frame)
        else:  # SIGINT ignored (a background job of a script): stopping still means stopping
            raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handle)


atexit.register(stop_all)
