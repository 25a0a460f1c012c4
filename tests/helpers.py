"""Helpers shared by CLI and server tests: run the dbdrift CLI as a user would."""
from __future__ import annotations

import os
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


def cli_env(work_dir: Path | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    if work_dir is not None:
        env["DBDRIFT_WORK_DIR"] = str(work_dir)
    return env


def dbdrift(*args: str, work_dir: Path | None = None, timeout: float = 600, cwd: Path | None = None):
    """Run `python -m dbdrift ARGS`; returns the CompletedProcess (text)."""
    return subprocess.run([sys.executable, "-m", "dbdrift", *map(str, args)], capture_output=True, text=True,
                          env=cli_env(work_dir), timeout=timeout, cwd=cwd)


def start_dbdrift(*args: str, work_dir: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dbdrift", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=cli_env(work_dir))


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
