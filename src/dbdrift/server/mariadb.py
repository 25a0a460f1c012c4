"""A MariaDB or MySQL server for one target: fresh system tables (mariadbd --bootstrap, or mysqld
--initialize for MySQL 5.7+), dbdrift's my.cnf, start, stop, liveness.

Layout: run_dir/{my.cnf, data, sock/mysqld.sock, mysqld.pid, server.log, install-db.log, and
data.saved when instruction counts keep a copy of the loaded data}; everything is owned by
(and run as) the server user when dbdrift is root. The runner's SQL goes through the driver's
`mysql` backend; the few statements this module sends itself (SHUTDOWN, the version) go
through PyMySQL over the socket, so neither the build's client nor the host's is needed.
"""
from __future__ import annotations

import os
import re
import shutil

import pymysql
import signal
import socket
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from dbdrift.errors import ServerError, UserError
from dbdrift.model import ConnectionInfo, ServerRoles, ServerInfo
from dbdrift.server import base, osuser
from dbdrift.server.fetch_mysql import mariadb_env, mariadb_server_binary, mariadb_version_string
from dbdrift.catalog.configs import named_text
from dbdrift.server.mycnf import ram_bytes, read_config_file, render_config, version_tuple
from dbdrift.server.process_server import ProcessServer

MARIADB_COMMS = ("mariadbd", "mysqld")  # /proc/<pid>/stat names, against pid reuse
STOP_SHUTDOWN_TIMEOUT_S = 60
STOP_TERM_TIMEOUT_S = 30


class MariaDBServer(ProcessServer):
    """mariadbd --bootstrap + mariadbd (or mysqld) around one install. Its config_text is the
    whole my.cnf."""

    PID_FILE = "mysqld.pid"
    SOCKET_FILE = "mysqld.sock.lock"  # MySQL 8 locks its socket with this file beside mysqld.sock
    PROCESS_NAMES = MARIADB_COMMS
    SHUTDOWN_SIGNAL = signal.SIGTERM  # mariadbd and mysqld shut down cleanly on SIGTERM
    COMMS: tuple[str, ...] = MARIADB_COMMS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.socket_path = self.socket_dir / "mysqld.sock"
        self.config_path = self.run_dir / "my.cnf"
        self.tmp_dir = self.run_dir / "tmp"  # its own tmpdir: two servers never share a temporary table's name
        self.install_db_args: list[str] = []
        self._proc: subprocess.Popen[bytes] | None = None
        self._startup_threads: frozenset[int] = frozenset()

    # --- paths and facts ----------------------------------------------------------------

    @property
    def basedir(self) -> Path:
        return self.install.bindir.parent

    @property
    def server_pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def roles(self) -> ServerRoles:
        """Per thread; the threads alive before the first connection are the background where
        the server does not name its threads (MySQL without the performance schema)."""
        return ServerRoles(threads=True, startup=self._startup_threads)

    @property
    def connection(self) -> ConnectionInfo:
        """socket_dir holds mysqld.sock (see socket_path); root has no password."""
        if self.port is None:
            raise RuntimeError(f"{self.label}: connection asked before init()")
        return ConnectionInfo(self.socket_dir, self.port, user="root", dbname="mysql",
                              socket_file=self.socket_path)

    def info(self, settings: dict[str, str]) -> ServerInfo:
        if self._version_string is None:
            self._version_string = (self.value("SELECT @@version") if self.is_alive()
                                    else mariadb_version_string(self.install.bindir))
        return ServerInfo(self.install.engine, self.install.version, self._version_string,
                          self.data_dir, self.log_path, dict(settings))

    # --- lifecycle ----------------------------------------------------------------------

    def _init_data(self) -> None:
        """my.cnf, then install-db on the empty data directory."""
        self._write_config()
        self._install_db()

    def _error_line(self, log: str) -> str:
        return _error_line(log)

    def _start_failure_hint(self, tail: str) -> str:
        return _start_hint(tail, self)

    def reconfigure(self, settings: dict[str, str]) -> None:
        """Put `settings` last into my.cnf; they apply from the next start."""
        self.target = replace(self.target, settings={**self.target.settings, **settings})
        self._write_config()

    def save_data(self) -> None:
        """Copy the (stopped) server's data directory aside, owners and modes kept."""
        if self.is_alive():
            raise RuntimeError(f"{self.label}: save_data() while the server runs")
        saved = self.run_dir / "data.saved"
        shutil.rmtree(saved, ignore_errors=True)
        _copy_tree(self.data_dir, saved)

    def restore_data(self) -> None:
        """Stop the server and put the saved data directory back; start() runs it again."""
        self.stop()
        shutil.rmtree(self.data_dir)
        _copy_tree(self.run_dir / "data.saved", self.data_dir)

    def _stop_launched(self) -> None:
        """SQL SHUTDOWN, then SIGTERM, then SIGKILL."""
        try:
            self._stop_processes()
        except KeyboardInterrupt:  # a second Ctrl-C: it stays registered, so stop_all stops it on the way out
            raise
        except BaseException:
            self._forget()
            raise
        self._forget()

    def _forget(self) -> None:
        if self._proc is not None:
            try:
                self._proc.wait(timeout=5)  # reap our child
            except subprocess.TimeoutExpired:
                pass
        self._proc = None
        base.unregister(self)

    # --- SQL through dbdrift's own connection ---------------------------------------------

    def sql(self, query: str, timeout_s: float = 60) -> list[tuple[Any, ...]]:
        """Run `query` over the server's socket as root (PyMySQL: no client program of the
        build or the host is needed); the rows, [] for a statement without a result."""
        try:
            connection = pymysql.connect(unix_socket=str(self.socket_path), user="root", password="",
                                         connect_timeout=min(timeout_s, 30), read_timeout=timeout_s,
                                         write_timeout=timeout_s, autocommit=True)
        except pymysql.MySQLError as exc:
            raise ServerError(f"{self.label}: cannot connect to {self.socket_path}: {_mysql_error(exc)}",
                              f"see {self.log_path}")
        try:
            with connection.cursor() as cursor:
                cursor.execute(query)
                return list(cursor.fetchall() or [])
        except pymysql.MySQLError as exc:
            raise ServerError(f"{self.label}: {query!r} failed: {_mysql_error(exc)}", f"see {self.log_path}") from exc
        finally:
            try:
                connection.close()
            except pymysql.MySQLError:
                pass  # SHUTDOWN closes it from the server's side

    def value(self, query: str) -> str:
        """The first column of the first row of `query`, as text ("" for no row)."""
        rows = self.sql(query)
        return "" if not rows or rows[0][0] is None else str(rows[0][0])

    def global_variables(self) -> dict[str, str]:
        """SHOW GLOBAL VARIABLES. (The settings stored with a target are read through the
        driver instead: runner/dialect.py InnoDBDialect.settings.)"""
        return {str(name): "" if value is None else str(value) for name, value in self.sql("SHOW GLOBAL VARIABLES")}

    def check_settings(self) -> tuple[list[str], str | None]:
        """The server reads the my.cnf dbdrift would write and reports what it rejects, without
        a data directory: MySQL 8.0.16+ with --validate-config; MariaDB, which has none, with
        --help --verbose (exit 7 on an unknown option, an [ERROR] line on a bad value)."""
        binary = mariadb_server_binary(self.install.bindir)
        mysql = self.install.engine == "mysql"
        if binary is None:
            return [], f"no mariadbd or mysqld for {self.install.bindir}"
        if mysql and version_tuple(self.install.version) < (8, 0, 16):
            return [], f"mysql {self.install.version} has no --validate-config (MySQL 8.0.16 and later have)"
        self._ids = osuser.server_user()
        self.run_dir.chmod(0o700)
        self.tmp_dir.mkdir(mode=0o700, exist_ok=True)
        self.port = self._choose_port()
        self._write_config()
        osuser.chown_tree(self.run_dir, self._ids)
        flags = ["--validate-config"] if mysql else ["--help", "--verbose"]
        result = self._run([binary, f"--defaults-file={self.config_path}", *flags])
        # stdout is the help text (its descriptions say "ERROR: ..."); complaints go to stderr or the log
        problems = base.config_problems(result.stderr + "\n" + self.log_tail(200))
        if problems:
            return problems, None
        if result.returncode != 0:
            return [], f"{binary.name} {' '.join(flags)} exited {result.returncode}: {base.last_line(result.stderr)}"
        return [], None

    # --- steps ----------------------------------------------------------------------------

    def _prepare_run_dir(self) -> None:
        self.fresh_run_dir(self._ids, self.socket_path)
        self.log_path.touch()  # mariadbd (as the server user) appends to it
        self.tmp_dir.mkdir(mode=0o700)  # the my.cnf's tmpdir
        osuser.chown_tree(self.log_path, self._ids)
        osuser.chown_tree(self.tmp_dir, self._ids)

    def _check_server_user_can_run(self) -> None:
        binary = mariadb_server_binary(self.install.bindir)
        if binary is None:
            raise UserError(f"target {self.name}: no mariadbd or mysqld for {self.install.bindir}",
                            "set basedir to the install prefix")
        if self._ids is None:
            return
        base.check_server_user_can_run(self.name, self.run_dir, self._ids[2],
                                       [binary, "--no-defaults", "--version"], self._run)

    def _write_config(self) -> None:
        assert self.port is not None
        self.config_text = render_config(
            self.target, self.install.version, ram=ram_bytes(), basedir=self.basedir,
            data_dir=self.data_dir, socket_path=self.socket_path, port=self.port,
            log_path=self.log_path, pid_path=self.run_dir / "mysqld.pid",
            config_file_text=read_config_file(self.target),
            named_text=named_text(self.target, self.install.version, ram_bytes()),
        )
        self.config_path.write_text(self.config_text)
        self.config_path.chmod(0o644)  # mariadbd ignores a world-writable my.cnf
        osuser.chown_tree(self.config_path, self._ids)

    def _install_db(self) -> None:
        """What mariadb-install-db (and MySQL 5.6's mysql_install_db) do, without the script,
        which needs my_print_defaults, a shell or Perl: `mariadbd --bootstrap` fed the
        build's system-table SQL. Help tables and the test database are left out."""
        binary = mariadb_server_binary(self.install.bindir)
        assert binary is not None
        mysql56 = self.install.engine == "mysql"
        files = bootstrap_files(self.basedir, mysql56)
        if not files:
            raise UserError(f"target {self.name}: no mysql_system_tables.sql or mariadb_system_tables.sql "
                            f"under {self.basedir}/share", "basedir must be a full install (with share/)")
        self.data_dir.mkdir()
        for schema in ("mysql", "test") if mysql56 else ("mysql",):
            (self.data_dir / schema).mkdir()
        osuser.chown_tree(self.data_dir, self._ids)
        args = bootstrap_args(self.config_path, self.basedir, self.data_dir, mysql56)
        self.install_db_args = args
        result = subprocess.run([str(binary), *args], input=bootstrap_sql(files, mysql56), cwd=self.run_dir,
                                capture_output=True, text=True, timeout=600, **self._as_user())
        if result.returncode != 0:
            shutil.rmtree(self.data_dir, ignore_errors=True)  # half a system schema: of no use, and it may fill the disk
        self._check_install(result, f"{binary.name} --bootstrap")

    def _check_install(self, result: subprocess.CompletedProcess[str], what: str) -> None:
        """Keep the initialization's output in install-db.log; a failure is a ServerError with
        the server's own [ERROR] line."""
        log = self.run_dir / "install-db.log"
        log.write_text(result.stdout + result.stderr)
        if result.returncode != 0:
            text = result.stdout + result.stderr + "\n" + self.log_tail(40)
            raise ServerError(
                f"{what} failed for target {self.name} ({self.install.engine} {self.install.version}): "
                f"{_error_line(text) or base.last_line(result.stderr) or f'exit {result.returncode}'}",
                _install_hint(text, self, log),
            )

    def _launch(self) -> str | None:
        """mariadbd --defaults-file as the server user, until its socket answers the MySQL
        handshake: None when it does; else why not (it exited, or the timeout)."""
        binary = mariadb_server_binary(self.install.bindir)
        with self.log_path.open("ab") as out:
            # A new session keeps the terminal's Ctrl-C away from the server: stop_all() owns it.
            self._proc = subprocess.Popen(
                [*self.wrapper, str(binary), f"--defaults-file={self.config_path}"], cwd=self.run_dir,
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, **self._as_user(),
            )
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                return f"{binary.name if binary else 'the server'} exited with status {self._proc.returncode}"
            before = _threads(self._proc.pid)  # before the first connection: the server's own threads
            if handshake(self.socket_path) is not None:
                self._version_string = None  # asked again of the running server
                self._startup_threads = before
                return None
            time.sleep(0.1)
        return f"no connection on {self.socket_path} within {self.start_timeout_s:g} s"

    def _stop_running(self, pid: int) -> None:
        if self._proc is not None and self.socket_path.exists():
            try:
                self.sql("SHUTDOWN", timeout_s=STOP_SHUTDOWN_TIMEOUT_S)
                asked = True
            except ServerError as exc:
                # The answer lost (the server closed the connection as it began to shut down):
                # wait for it. Refused (MySQL 5.6 has no SHUTDOWN statement) or no connection
                # (a hung server): signals now.
                asked = _answer_lost(exc)
            if asked and base.wait_gone(pid, self.comms, STOP_SHUTDOWN_TIMEOUT_S):
                return
        try:
            os.kill(pid, signal.SIGTERM)  # mariadbd shuts down cleanly on SIGTERM
        except ProcessLookupError:
            return
        if not base.wait_gone(pid, self.comms, STOP_TERM_TIMEOUT_S):
            base.kill(pid)
            base.wait_gone(pid, self.comms, 10.0)

    def _as_user(self) -> dict[str, Any]:
        kwargs = osuser.as_user_kwargs(self._ids)  # user/group/env when root
        env = mariadb_env(self.install.bindir)
        env.update({k: v for k, v in kwargs.pop("env", {}).items() if k in ("HOME", "USER", "LOGNAME")})
        return {**kwargs, "env": env}

    def _run(self, cmd: list[str | os.PathLike[str]], timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(c) for c in cmd], cwd=self.run_dir, capture_output=True,
                              text=True, timeout=timeout, **self._as_user())


LOST_ANSWER_ERRNOS = (2006, 2013)  # CR_SERVER_GONE_ERROR, CR_SERVER_LOST


def _answer_lost(exc: ServerError) -> bool:
    """A statement sent whose answer never came back (the connection dropped mid-statement)."""
    cause = exc.__cause__
    return isinstance(cause, pymysql.MySQLError) and bool(cause.args) and cause.args[0] in LOST_ANSWER_ERRNOS


class MySQLServer(MariaDBServer):
    """MySQL: the same lifecycle; 5.7+ initializes with `mysqld --initialize-insecure` (root
    without a password), 5.6 with `mysqld --bootstrap` as MariaDB does."""

    COMMS = ("mysqld",)

    def _install_db(self) -> None:
        if version_tuple(self.install.version) < (5, 7):
            super()._install_db()
            return
        binary = mariadb_server_binary(self.install.bindir)
        assert binary is not None  # the install was checked for its server program when fetched
        args = initialize_args(self.config_path, self.basedir, self.data_dir)
        self.install_db_args = args
        self._check_install(self._run([binary, *args], timeout=600), "mysqld --initialize-insecure")


BOOTSTRAP_FILES = ("system_tables", "performance_tables", "system_tables_data", "add_gis_sp_bootstrap", "sys_schema")


def bootstrap_files(basedir: Path, mysql56: bool) -> list[Path]:
    """The system-table scripts of a build, in the order the install scripts feed them:
    MariaDB 11's mariadb_*.sql or the mysql_*.sql of older MariaDB and MySQL 5.6, from
    share/ (Maven builds) or share/mariadb, share/mysql (Debian's)."""
    for share in (basedir / "share", basedir / "share" / "mariadb", basedir / "share" / "mysql"):
        for prefix in ("mariadb_", "mysql_"):
            if (share / f"{prefix}system_tables.sql").is_file():
                wanted = ("system_tables", "system_tables_data") if mysql56 else BOOTSTRAP_FILES
                names = [f"maria_{w}.sql" if w == "add_gis_sp_bootstrap" else f"{prefix}{w}.sql" for w in wanted]
                return [share / n for n in names if (share / n).is_file()]
    return []


def bootstrap_sql(files: list[Path], mysql56: bool) -> str:
    """The statements for `--bootstrap`: root on localhost with no password and plain
    password authentication (MariaDB 10.4+ would otherwise make it unix_socket only); lines
    naming @current_hostname dropped, as the install scripts do with --skip-name-resolve."""
    head = "use mysql;\n" if mysql56 else "create database if not exists mysql;\nuse mysql;\nSET @auth_root_socket=NULL;\n"
    body = "".join(line for f in files for line in f.read_text(errors="replace").splitlines(keepends=True)
                   if "@current_hostname" not in line)
    return head + body


def bootstrap_args(config_path: Path, basedir: Path, data_dir: Path, mysql56: bool) -> list[str]:
    common = [f"--defaults-file={config_path}", "--bootstrap", f"--basedir={basedir}", f"--datadir={data_dir}",
              "--log-warnings=0", "--max_allowed_packet=8M", "--net_buffer_length=16K"]
    if mysql56:
        return [*common, "--loose-skip-ndbcluster", "--default-storage-engine=MyISAM"]
    return [*common, "--enforce-storage-engine="]


def initialize_args(config_path: Path, basedir: Path, data_dir: Path) -> list[str]:
    """MySQL 5.7+: --defaults-file must come first; the data directory must not exist yet."""
    return [f"--defaults-file={config_path}", "--initialize-insecure", f"--basedir={basedir}",
            f"--datadir={data_dir}"]


# --- pure helpers (unit-tested without a server) -------------------------------------------


def _threads(pid: int) -> frozenset[int]:
    try:
        return frozenset(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return frozenset()


def handshake(socket_path: Path, timeout_s: float = 2.0) -> str | None:
    """The server version from the MySQL protocol greeting on `socket_path`, "" when the
    server answered with an error packet (it is up, e.g. too many connections), or None."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout_s)
            sock.connect(str(socket_path))
            data = sock.recv(4096)
    except OSError:
        return None
    return parse_greeting(data)


def parse_greeting(data: bytes) -> str | None:
    if len(data) < 5:
        return None
    payload = data[4:]
    if payload[0] == 0xFF:
        return ""
    if payload[0] != 10:  # protocol version 10 since MySQL 3.21
        return None
    return payload[1:].split(b"\0", 1)[0].decode("ascii", "replace")


def _mysql_error(exc: Exception) -> str:
    return str(exc.args[1]) if len(exc.args) > 1 else str(exc)


def _copy_tree(source: Path, dest: Path) -> None:
    """cp -a: InnoDB's files with their owner (the server user) and modes."""
    result = subprocess.run(["cp", "-a", str(source), str(dest)], capture_output=True, text=True)
    if result.returncode != 0:
        raise ServerError(f"copying {source} to {dest} failed: {base.last_line(result.stderr)}",
                          base.full_disk_hint(result.stderr, dest.parent) or f"check the space under {dest.parent}")


_BOOTSTRAP_ERROR = re.compile(r"^ERROR: \d+ ")


def _error_line(text: str) -> str:
    """The server's first own [ERROR] line, without its timestamp (the cause; later lines
    are consequences such as "Aborting"), or the statement error `--bootstrap` prints
    ("ERROR: 1051  Unknown table ...") when that came first."""
    for line in text.splitlines():
        if "[ERROR]" in line:
            return line[line.index("[ERROR]"):].strip()
        if _BOOTSTRAP_ERROR.match(line):
            return " ".join(line.split())
    return ""


def _option_rejected(text: str) -> bool:
    return any(s in text for s in ("unknown variable", "unknown option", "Error while setting value"))


def _install_hint(text: str, server: MariaDBServer, log: Path) -> str:
    if _option_rejected(text) or base.full_disk_hint(text, server.run_dir):
        return _start_hint(text, server)
    return f"see {log} and {server.log_path}"


def _start_hint(tail: str, server: MariaDBServer) -> str:
    full = base.full_disk_hint(tail, server.run_dir)
    if full:
        return full
    if _option_rejected(tail):
        return (f"fix the option in target {server.name}'s settings or its config file "
                f"(my.cnf: {server.config_path})")
    return f"see {server.log_path}"


