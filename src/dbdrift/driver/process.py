"""Start dbdrift-driver, feed it a spec, and collect its NDJSON output (docs/protocol.md).

Owns finding the binary, timeouts and Ctrl-C forwarding; the caller decides what to store.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dbdrift.cpus import pinned
from dbdrift.driver.protocol import PROTOCOL_VERSION, DriverOutput
from dbdrift.errors import DriverError, UserError
from dbdrift.model import JsonObject
from dbdrift.origin import reinstall_hint

DRIVER_NAME = "dbdrift-driver"

CANCELLED = threading.Event()
"""Set by cancel_all() when the user interrupted work that runs in other threads than the main
one (which alone receives Ctrl-C): every driver run then ends as interrupted."""
_live: set[subprocess.Popen[str]] = set()
_live_lock = threading.Lock()


def cancel_all() -> None:
    """Ctrl-C for driver runs in every thread: each live driver gets SIGINT (it prints its
    partial summary and exits), and each run, now or later, returns interrupted=True, so the
    thread that started it raises KeyboardInterrupt as the main thread would."""
    CANCELLED.set()
    with _live_lock:
        procs = list(_live)
    for proc in procs:
        try:
            os.kill(proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass


def check_cancelled() -> None:
    """Raise KeyboardInterrupt in a worker thread once cancel_all() was called."""
    if CANCELLED.is_set():
        raise KeyboardInterrupt


def find_driver() -> Path:
    """$DBDRIFT_DRIVER, then the binary installed beside this Python's scripts, then PATH, then
    a release build in this checkout (crates/dbdrift-driver/target/release)."""
    override = os.environ.get("DBDRIFT_DRIVER")
    if override:
        path = Path(override)
        if not path.is_file():
            raise UserError(f"DBDRIFT_DRIVER={override} does not exist", "unset it or point it at a built driver")
        return path
    candidates = [Path(sysconfig.get_path("scripts")) / DRIVER_NAME, Path(sys.executable).parent / DRIVER_NAME]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    found = shutil.which(DRIVER_NAME)
    if found:
        return Path(found)
    repo_build = Path(__file__).resolve().parents[3] / "crates" / "dbdrift-driver" / "target" / "release" / DRIVER_NAME
    if repo_build.is_file():
        return repo_build
    raise UserError("the load driver dbdrift-driver is not installed",
                    reinstall_hint("installing it builds the driver") + ", or set DBDRIFT_DRIVER=/path/to/dbdrift-driver")


@dataclass
class DriverResult:
    output: DriverOutput
    exit_code: int
    stderr: str
    interrupted: bool
    elapsed_wall_s: float
    rusage_user_s: float = 0.0
    rusage_sys_s: float = 0.0


def run_driver(mode: str, spec: JsonObject, timeout_s: float, on_line: Callable[[JsonObject], None] | None = None,
               driver: Path | None = None, on_start: Callable[[int], None] | None = None,
               cpus: frozenset[int] | None = None) -> DriverResult:
    """Run `dbdrift-driver <mode> --spec -`; never raises on a driver failure, returns it.

    `cpus`: the driver and all its threads run on these CPUs only (dbdrift/cpus.py).

    Ctrl-C during the run is forwarded (the driver prints a partial summary and exits 130);
    the result then has interrupted=True and the caller re-raises after storing.
    """
    import time

    check_cancelled()
    spec = {"protocol": PROTOCOL_VERSION, **spec}
    binary = driver or find_driver()
    out = DriverOutput()
    with tempfile.TemporaryFile(mode="w+") as err_file:
        start = time.monotonic()
        with pinned(cpus):
            proc = subprocess.Popen([str(binary), mode, "--spec", "-"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=err_file, text=True, start_new_session=True)
        with _live_lock:
            _live.add(proc)
        if on_start is not None:
            on_start(proc.pid)
        timed_out = threading.Event()
        def on_timeout() -> None:
            timed_out.set()
            _kill(proc)
        timer = threading.Timer(timeout_s, on_timeout)
        timer.start()
        interrupted = False
        try:
            assert proc.stdin and proc.stdout
            try:
                proc.stdin.write(json.dumps(spec))
                proc.stdin.close()
            except BrokenPipeError:
                pass  # the driver rejected the spec early; its fatal line explains why
            interrupted = _read_lines(proc, out, on_line)
        except BaseException:
            _kill(proc)
            proc.wait()
            raise
        finally:
            timer.cancel()
            with _live_lock:
                _live.discard(proc)
        interrupted = interrupted or CANCELLED.is_set()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = code = os.waitstatus_to_exitcode(status)
        except ChildProcessError:  # Popen reaped it already (a poll raced the exit): no rusage then
            code, usage = proc.returncode, None
        err_file.seek(0)
        stderr = err_file.read()[-4000:]
    result = DriverResult(out, code, stderr, interrupted, time.monotonic() - start,
                          usage.ru_utime if usage else 0.0, usage.ru_stime if usage else 0.0)
    if timed_out.is_set():
        result.stderr += f"\ndriver killed after the {timeout_s:.0f} s timeout"
    return result


def _read_lines(proc: subprocess.Popen[str], out: DriverOutput, on_line: Callable[[JsonObject], None] | None) -> bool:
    """Read NDJSON until EOF; on Ctrl-C forward SIGINT and keep reading the partial summary."""
    assert proc.stdout is not None  # opened with stdout=PIPE
    interrupted = False
    while True:
        try:
            for line in proc.stdout:
                obj = out.add_line(line)
                if obj is not None and on_line is not None:
                    on_line(obj)
            return interrupted
        except KeyboardInterrupt:
            if interrupted:
                _kill(proc)
                return True
            interrupted = True
            try:
                os.kill(proc.pid, signal.SIGINT)  # not proc.send_signal: its poll would reap the driver first
            except ProcessLookupError:
                return True


def _kill(proc: subprocess.Popen[str]) -> None:
    try:
        proc.kill()
    except ProcessLookupError:
        pass


def run_load(mode: str, spec: JsonObject, expected_s: float, cpus: frozenset[int] | None, what: str,
             hint: str) -> JsonObject:
    """A workload's data load through the driver (its phase "load"), given up to 20 times the
    expected seconds and never less than half an hour: the rows, loaders and seconds it took.
    Raises KeyboardInterrupt when interrupted, DriverError naming `what` with `hint` when it fails."""
    out = run_driver(mode, spec, timeout_s=max(1800.0, 20 * expected_s), cpus=cpus)
    if out.interrupted:
        raise KeyboardInterrupt
    summary = out.output.summary or {}
    if out.exit_code != 0 or not summary:
        raise DriverError(fatal_message(out, what), hint)
    return {"rows": summary.get("rows"), "loaders": spec["clients"], "elapsed_s": summary.get("elapsed_s")}


def fatal_message(result: DriverResult, what: str) -> str:
    """One line describing why a driver process failed, for errors and the store."""
    fatal = result.output.fatal
    if fatal:
        text = f"{what}: {fatal.get('class', 'error')} error: {fatal.get('message', '')}"
        if fatal.get("sqlstate"):
            text += f" (SQLSTATE {fatal['sqlstate']})"
        if fatal.get("sql"):
            text += f" in: {fatal['sql'][:200]}"
        return text
    tail = result.stderr.strip().splitlines()[-3:] if result.stderr.strip() else []
    return f"{what}: driver exited with status {result.exit_code}" + (f": {' | '.join(tail)}" if tail else "")


def exec_jobs(connection: JsonObject, phases: list[list[JsonObject]], threads: int = 1, timeout_s: float = 3600,
              backend: str = "postgres", seed: int = 1, what: str = "SQL") -> list[JsonObject]:
    """Run `exec` phases; returns job lines in (phase, job) order or raises DriverError."""
    spec = {"backend": backend, "connection": connection, "seed": seed, "threads": threads, "phases": phases}
    result = run_driver("exec", spec, timeout_s)
    if result.interrupted:
        raise KeyboardInterrupt
    if result.exit_code != 0 or result.output.summary is None:
        raise DriverError(fatal_message(result, what), "see the server log; the SQL is shown above")
    return sorted(result.output.jobs, key=lambda j: (j["phase"], j["job"]))


def query(connection: JsonObject, sql: str, timeout_s: float = 120, backend: str = "postgres") -> list[list[str | None]]:
    """Rows (text values) of one SQL statement."""
    jobs = exec_jobs(connection, [[{"sql": sql}]], timeout_s=timeout_s, backend=backend, what=sql[:60])
    return jobs[0].get("rows", []) if jobs else []
