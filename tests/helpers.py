"""Helpers shared by CLI and server tests: run the dbdrift CLI as a user would."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def fake_tool(directory: Path, name: str, script: str) -> Path:
    """An executable shell script `directory/name` (a stand-in binary for path and version checks)."""
    import stat

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def shared_work_dir(name: str) -> Path:
    """A fresh work dir the unprivileged server user can enter (pytest's tmp is 0700 for root)."""
    import uuid

    path = Path("/var/tmp/dbdrift-tests") / f"{name}-{uuid.uuid4().hex[:8]}"
    path.mkdir(parents=True, mode=0o755)
    path.parent.chmod(0o755)
    return path


def cli_env(work_dir: Path | None = None, extra_env: dict | None = None) -> dict:
    env = {**os.environ, **(extra_env or {})}
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    if work_dir is not None:
        env["DBDRIFT_WORK_DIR"] = str(work_dir)
    return env


def dbdrift(*args: str, work_dir: Path | None = None, timeout: float = 600, cwd: Path | None = None,
            extra_env: dict | None = None):
    """Run `python -m dbdrift ARGS`; returns the CompletedProcess (text)."""
    return subprocess.run([sys.executable, "-m", "dbdrift", *map(str, args)], capture_output=True, text=True,
                          env=cli_env(work_dir, extra_env), timeout=timeout, cwd=cwd)


def start_dbdrift(*args: str, work_dir: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dbdrift", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=cli_env(work_dir))


def query(store: Path, sql: str, *args) -> list[sqlite3.Row]:
    """Rows of one SQL statement on a store."""
    db = sqlite3.connect(store)
    db.row_factory = sqlite3.Row
    rows = db.execute(sql, args).fetchall()
    db.close()
    return rows


def postgres_processes_under(path: Path) -> list[int]:
    """PIDs of postgres processes whose command line mentions `path` (leak check)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "postgres" in cmd and str(path) in cmd:
            pids.append(int(entry.name))
    return pids


def allowed_of(pid: int) -> frozenset[int] | None:
    """The CPUs a running process (or thread id) may use; None once it is gone."""
    try:
        return frozenset(os.sched_getaffinity(pid))
    except (ProcessLookupError, PermissionError):
        return None


def process_tree(pid: int, proc: Path = Path("/proc")) -> list[int]:
    """pid and every descendant process, from /proc/<pid>/task/<tid>/children."""
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        for task in (proc / str(current) / "task").glob("*/children"):
            try:
                todo.extend(int(child) for child in task.read_text().split())
            except (OSError, ValueError):
                continue
    return tree


def tasks_of(pid: int, proc: Path = Path("/proc")) -> list[int]:
    """Every thread id of a process."""
    try:
        return [int(t.name) for t in (proc / str(pid) / "task").iterdir()]
    except OSError:
        return []


_PROBE = """
import json, socket, sys
out = {}
for kind, family, address in (("unix", socket.AF_UNIX, sys.argv[1]), ("tcp", socket.AF_INET, ("127.0.0.1", int(sys.argv[2])))):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect(address)
        out[kind] = "connected"
    except OSError as exc:
        out[kind] = type(exc).__name__
    finally:
        s.close()
print(json.dumps(out))
"""


def connect_as_nobody(socket_path: Path, port: int) -> dict:
    """As the OS user `nobody`: try the server's Unix socket and 127.0.0.1:port; returns
    {"unix": ..., "tcp": ...} with "connected" or the exception's name (needs root)."""
    import json
    import pwd

    nobody = pwd.getpwnam("nobody")
    # a Python that `nobody` may run (the venv's may live under /root)
    python = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.access(p, os.X_OK)),
                  sys.executable)
    result = subprocess.run([python, "-c", _PROBE, str(socket_path), str(port)], capture_output=True,
                            text=True, user=nobody.pw_uid, group=nobody.pw_gid, extra_groups=[], cwd="/",
                            env={"PATH": "/usr/bin:/bin"}, timeout=30)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def tcp_listeners(pid: int) -> list:
    """The TCP addresses a process listens on (psutil)."""
    import psutil

    proc = psutil.Process(pid)
    conns = proc.net_connections(kind="inet") if hasattr(proc, "net_connections") else proc.connections(kind="inet")
    return [c.laddr for c in conns if c.status == psutil.CONN_LISTEN]


def version_6_store(path: Path):
    """An open connection to a store as dbdrift wrote it at schema version 6 (before the
    application id and migration 7); the caller adds rows, commits and closes."""
    from dbdrift.store.schema import MIGRATIONS

    db = sqlite3.connect(path)
    for script in MIGRATIONS[:6]:
        db.executescript(script)
    db.execute("PRAGMA user_version = 6")
    return db
