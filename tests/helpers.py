"""Helpers shared by CLI and server tests: run the dbdrift CLI as a user would, stop it or its
servers mid-run, and read what it stored."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]


def fake_tool(directory: Path, name: str, script: str) -> Path:
    """An executable shell script `directory/name` (a stand-in binary for path and version checks)."""
    import stat

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def without_modules(tmp_path: Path, *names: str) -> dict[str, str]:
    """The environment of a dbdrift process that cannot import the modules `names`, as on a host
    without them: a sitecustomize setting each to None in sys.modules, the import system's own way
    to say a module cannot be imported."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\n" + "".join(f"sys.modules[{n!r}] = None\n" for n in names))
    return {"PYTHONPATH": str(site)}


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


def write_campaign(tmp: Path, name: str, head: list[str], targets) -> Path:
    """The campaign file `tmp/name.toml`: the `head` lines, then each (name, TOML body) of
    `targets` as a [[targets]] table, the first the base; returns its path."""
    lines = [f'name = "{name}"', *head]
    for i, (tname, body) in enumerate(targets):
        lines += ["[[targets]]", f'name = "{tname}"', body, f"base = {str(i == 0).lower()}"]
    path = tmp / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def slower_with_a_failure(run: Callable[..., Any]) -> list:
    """Four ok repeats of target "old" and three of "new" at 0.8 of its rate, new's fourth failed:
    the repeats each workload report's formats are checked on (`run(target, repeat, rate, status=)`)."""
    return ([run("old", r, 1.0) for r in range(4)] + [run("new", r, 0.8) for r in range(3)]
            + [run("new", 3, 0.8, status="failed")])


def run_campaign(path: Path, *options: str, work_dir: Path | None = None, timeout: float = 600):
    """`dbdrift run` of the campaign file `path` into store.db beside it, in a fresh work dir
    named after the file unless one is given; returns the store and the CompletedProcess."""
    store = path.parent / "store.db"
    result = dbdrift("run", path, "--store", store, *options, work_dir=work_dir or shared_work_dir(path.stem),
                     timeout=timeout)
    return store, result


def start_dbdrift(*args: str, work_dir: Path | None = None, extra_env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dbdrift", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=cli_env(work_dir, extra_env))


def wait_for(condition: Callable[[], Any], timeout_s: float, what: str,
             proc: subprocess.Popen | None = None) -> Any:
    """Poll `condition` until it returns something true, and return that. A store whose schema
    is still being created reads as not yet; `what` names the wait in the failure, which comes
    early (with dbdrift's stderr) when `proc` exits first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            value = condition()
        except sqlite3.OperationalError:
            value = None
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"dbdrift exited {proc.returncode} before {what}: {proc.stderr.read()[-2000:]}")
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def act_mid_run(proc: subprocess.Popen, started: Callable[[], Any], act: Callable[[], object], *, after_s: float,
                wait_s: float = 240, exit_s: float = 120) -> str:
    """Once `started` holds (a first run is stored) and `after_s` later (inside the next run),
    `act` (a signal to dbdrift or to one of its servers); returns dbdrift's stderr once it has
    exited. dbdrift is killed whatever happens, so a failing test leaves nothing running."""
    try:
        wait_for(started, wait_s, "a first run", proc)
        time.sleep(after_s)
        act()
        _, err = proc.communicate(timeout=exit_s)
    finally:
        proc.kill()
    return err


def interrupt_mid_run(proc: subprocess.Popen, started: Callable[[], Any], *, after_s: float, wait_s: float = 240,
                      exit_s: float = 120, signum: int = signal.SIGINT) -> str:
    """Ctrl-C (or `signum`) to dbdrift inside a run: it must stop as an interrupted run does
    (exit 130, no traceback, a --resume hint); returns its stderr."""
    err = act_mid_run(proc, started, lambda: proc.send_signal(signum), after_s=after_s, wait_s=wait_s, exit_s=exit_s)
    assert proc.returncode == 130 and "Traceback" not in err and "--resume" in err, err[-3000:]
    return err


def kill_server_mid_run(proc: subprocess.Popen, started: Callable[[], Any], server_pid: Callable[[], int],
                        wait_s: float = 240) -> str:
    """kill -9 one of dbdrift's servers a second into its next run: dbdrift must fail that run
    with a hint (exit 1, no traceback) and go on; returns its stderr."""
    err = act_mid_run(proc, started, lambda: os.kill(server_pid(), signal.SIGKILL), after_s=1.0, wait_s=wait_s,
                      exit_s=300)
    assert proc.returncode == 1 and "Traceback" not in err, err[-3000:]
    assert "died" in err and "hint:" in err, err[-3000:]
    return err


def assert_every_run_ok(store: Path, result: subprocess.CompletedProcess, cells) -> list[sqlite3.Row]:
    """A campaign run exited 0 and stored a run of each (target, test) of `cells`, no other,
    every one ok and measured; returns the stored runs."""
    assert result.returncode == 0, result.stderr[-3000:]
    stored = query(store, "SELECT t.name AS target, r.* FROM runs r JOIN targets t ON t.id = r.target_id "
                          "WHERE r.superseded = 0")
    assert sorted((r["target"], r["test"]) for r in stored) == sorted(cells)
    assert all(r["status"] == "ok" and r["value"] > 0 for r in stored), [
        (r["target"], r["test"], r["error"]) for r in stored if r["status"] != "ok"]
    return stored


def assert_one_failed_run(stored: list, target: str) -> None:
    """Of the runs stored, exactly one failed: one of `target`, with its server's log tail."""
    failed = [r for r in stored if r["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["target"] == target and failed[0]["server_log_tail"], failed


def lock_store_elsewhere(store: Path, hold_s: float) -> subprocess.Popen:
    """Another program holding an exclusive transaction on `store` for `hold_s` seconds; returns
    once it holds the lock (wait() on it for the release)."""
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, time\n"
        f"c = sqlite3.connect({str(store)!r}, isolation_level=None)\n"
        f"c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep({hold_s}); c.rollback()\n")],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


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


def instructions_only_store(path: Path, spec: dict | None = None, versions: tuple[str, str] | None = None) -> Path:
    """The golden campaign's counts alone, as `--instructions-only` stores them (no timed run):
    `spec` the campaign's stored settings, `versions` the two servers' versions if they matter."""
    from dbdrift.store.store import InstructionRecord, Store
    from tests.unit.test_reports import INSTRUCTIONS
    store = Store(path)
    cid = store.add_campaign("counts", spec or {"name": "counts", "rows": 10_000}, {"cpus": 2}, "0.1.0")
    for pos, name in enumerate(("pg17", "pg18")):
        tid = store.ensure_target(cid, name, "postgres", pos, pos == 0, {"name": name})
        if versions is not None:
            store.set_target_facts(tid, server={"version": versions[pos]}, install=None)
        for (test, target), (ir, functions) in INSTRUCTIONS.items():
            if target == name:
                store.add_instructions(tid, InstructionRecord(test, "ok", 1000, 5000, 20.0, [[1, 2], [1, 2]], ir,
                                                              0.02, functions, functions))
    store.close()
    return path
