"""Shared pieces of the bench/ scripts: one server with sbtest loaded, external tools run
with their CPU taken from wait4, /proc/stat steal, and output printed and saved at once.

Benchmark plumbing only: nothing here decides what is measured or how it is summarized.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable, Iterator, TypeVar

from dbdrift import env
from dbdrift.driver import process
from dbdrift.errors import UserError
from dbdrift.model import TargetSpec
from dbdrift.server.base import Server, sigterm_as_ctrl_c
from dbdrift.server import rundir
from dbdrift.server.engines import make_server, resolve_install
from dbdrift.workloads.sysbench.dialect import for_engine

BENCH_DIR = Path(__file__).resolve().parent
OUT_DIR = BENCH_DIR / "out"
DBNAME = "sbtest"
SERVER_SETTINGS = {"postgres": {"shared_buffers": "1GB"}, "mariadb": {}, "mysql": {}}

INSTALL_HINTS = {
    "sysbench": "install the Debian package: apt-get install -y sysbench (1.0.20, with the pgsql and mysql drivers)",
    "valgrind": "install it with apt-get install -y valgrind, or pass --no-callgrind",
}


# --- noisy neighbours -------------------------------------------------------------------------

_NEIGHBOUR = """
import random, time
rng = random.Random({seed})
while True:
    end = time.perf_counter() + rng.uniform(0.001, 0.05)
    while time.perf_counter() < end:
        pass
    time.sleep(rng.uniform(0.001, 0.05))
"""


@contextmanager
def neighbours(count: int) -> Iterator[None]:
    """`count` processes that burn CPU in bursts of 1-50 ms with pauses of 1-50 ms (about half
    a CPU each, wherever the scheduler puts them): other tenants of a shared host."""
    procs = [subprocess.Popen([sys.executable, "-c", _NEIGHBOUR.format(seed=i)]) for i in range(count)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


# --- output ---------------------------------------------------------------------------------


class Output:
    """Every line goes to stdout and to bench/out/<script>-<timestamp>.txt."""

    def __init__(self, script: str) -> None:
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        self.path = OUT_DIR / f"{script}-{stamp}.txt"
        self._file = self.path.open("w")

    def __call__(self, text: str = "", stream=None) -> None:
        print(text, file=stream or sys.stdout, flush=True)
        self._file.write(text + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def campaign_output(script: str, store: Path | None = None) -> tuple[Output, str, Path]:
    """For a script that runs dbdrift campaigns: its Output, the time stamp (HHMMSS) its
    campaigns' names carry, and the store they go to (`store`, else bench/out/<script>-<stamp>.db)."""
    stamp = time.strftime("%H%M%S")
    return Output(script), stamp, store or OUT_DIR / f"{script}-{stamp}.db"


def finish(out: Output, store: Path) -> int:
    """End a campaign script's output with the store its figures can be read from again;
    the exit status 0."""
    out(f"  store: {store}")
    out.close()
    return 0


def campaign_parser(doc: str) -> argparse.ArgumentParser:
    """The argument parser of a script that runs dbdrift campaigns (its description: the
    docstring's first paragraph), once SIGTERM acts as Ctrl-C, so that a `kill` lets the
    running dbdrift stop its servers."""
    sigterm_as_ctrl_c()
    return argparse.ArgumentParser(description=doc.split("\n\n")[0])


def sysbench_options(parser: argparse.ArgumentParser, rows: int, seconds: float | None, seconds_help: str) -> None:
    """--version, --rows and --seconds: the PostgreSQL version, the rows of each sbtest table and the
    measured seconds that every sysbench campaign script takes, with the script's own defaults."""
    parser.add_argument("--version", default="17.10")
    parser.add_argument("--rows", type=int, default=rows)
    parser.add_argument("--seconds", type=float, default=seconds, help=seconds_help)


def run_main(script: str, body: Callable[[Output], None]) -> int:
    """Run `body` with an Output; UserError becomes `error:`/`hint:` and exit 1.
    SIGTERM becomes SystemExit so the `finally` that stops the server runs."""
    sigterm_as_ctrl_c()
    out = Output(script)
    try:
        body(out)
        out(f"\n(saved to {out.path.relative_to(BENCH_DIR.parent)})")
        return 0
    except UserError as exc:
        out(f"error: {exc.message}", sys.stderr)
        if exc.hint:
            out(f"hint: {exc.hint}", sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        out("interrupted (the server was stopped)", sys.stderr)
        return 130
    except SystemExit:
        out("terminated (the server was stopped)", sys.stderr)
        raise
    finally:
        out.close()


def require_tool(name: str) -> str:
    found = shutil.which(name)
    if not found:
        raise UserError(f"{name} is not installed (not found on PATH)", INSTALL_HINTS.get(name, ""))
    return found


# --- server and data ------------------------------------------------------------------------


@contextmanager
def started_server(version: str, run_name: str, say: Callable[[str], None],
                   engine: str = "postgres") -> Iterator[Server]:
    """A fresh server for `version` under the dbdrift work dir; always stopped on the way out."""
    settings = SERVER_SETTINGS[engine]
    target = TargetSpec(name="bench", engine=engine, version=version, settings=dict(settings))
    install = resolve_install(target, env.cache_dir(), say)
    run_dir = rundir.new_run_dir(rundir.work_dir(), "bench", run_name)
    server = make_server(target, install, run_dir, rundir.owner_facts("bench", run_name, engine, None))
    try:
        server.init()
        server.start()
        say(f"server: {engine} {install.version} ({install.source}), port {server.connection.port}, "
            f"settings {settings or 'dbdrift defaults'}")
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.data_dir, ignore_errors=True)  # the log stays in run_dir


def create_database(server: Server) -> dict:
    """Drop and create sbtest; returns the driver connection dict for it."""
    dialect = for_engine(server.install.engine, server.install.version)
    admin = server.connection.to_driver()
    process.exec_jobs(admin, dialect.create_database(DBNAME), backend=dialect.backend, what="create database")
    return server.connection.with_dbname(DBNAME).to_driver()


def load_workers() -> int:
    return max(1, os.cpu_count() or 1)


def dbdrift_load(conn: dict, rows: int, engine: str = "postgres") -> float:
    """dbdrift's own load of sbtest1 (the dialect's load_phases through exec_jobs); returns wall seconds."""
    workers = load_workers()
    dialect = for_engine(engine, "")
    started = time.monotonic()
    process.exec_jobs(conn, dialect.load_phases(1, rows, workers), threads=workers, backend=dialect.backend,
                      what="load")
    return time.monotonic() - started


def settle(conn: dict) -> None:
    """As dbdrift's settle step, without the sleep: vacuum analyze, then a checkpoint."""
    process.exec_jobs(conn, [[{"sql": "VACUUM (ANALYZE, INDEX_CLEANUP ON) sbtest1"}],
                             [{"sql": "CHECKPOINT"}]], what="settle")


def sql(conn: dict, *statements: str, backend: str = "postgres") -> None:
    """Run `statements` one after another through the driver's `backend` (postgres or mysql)."""
    process.exec_jobs(conn, [[{"sql": s}] for s in statements], backend=backend, what=statements[0][:60])


# --- external processes ---------------------------------------------------------------------


@dataclass
class ProcessResult:
    stdout: str
    stderr: str
    exit_code: int
    wall_s: float
    user_s: float
    sys_s: float


def run_measured(cmd: list[str], timeout_s: float) -> ProcessResult:
    """Run `cmd`; CPU comes from wait4 (the child and whatever it waited for), not from its output."""
    with tempfile.TemporaryFile(mode="w+") as err:
        started = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                                text=True, start_new_session=True)
        timer = threading.Timer(timeout_s, proc.kill)
        timer.start()
        try:
            assert proc.stdout is not None
            stdout = proc.stdout.read()
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        finally:
            timer.cancel()
        wall = time.monotonic() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read()
    return ProcessResult(stdout, stderr, proc.returncode, wall, usage.ru_utime, usage.ru_stime)


def run_campaign(out: Callable[[str], None], store: Path, name: str, toml: str) -> None:
    """Write campaign `name`'s file to bench/out and run it into `store` (no report); a failed
    run prints dbdrift's last error lines and ends the script."""
    path = OUT_DIR / f"{name}.toml"
    path.write_text(toml)
    result = dbdrift_cli("run", str(path), "--store", str(store), "--no-report")
    if result.returncode != 0:
        out(result.stderr[-3000:])
        raise SystemExit(f"error: campaign {name} failed (exit {result.returncode})")


def dbdrift_cli(*args: str, interrupt_wait_s: float = 300.0, prefix: tuple[str, ...] = (),
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run `python -m dbdrift ARGS`, its output captured; on Ctrl-C (or SIGTERM, which
    sigterm_as_ctrl_c turns into KeyboardInterrupt) the child gets one SIGINT and its time to stop its
    servers and store what it measured, then the interruption goes on.

    The child runs in its own session, so a terminal's Ctrl-C reaches this script only and the
    child is told exactly once; it gets the default SIGINT action back, as a script started in
    the background (`nohup ... &`) hands on SIGINT ignored. subprocess.run would kill it 0.25 s
    after the interruption: dbdrift's cleanup never ran and its servers were left running
    (seen with an interrupted bench/noise.py). `prefix` runs it under another command (e.g.
    `setarch x86_64 -R`, whose personality its servers and driver inherit), `env` replaces
    its environment."""
    cmd = [*prefix, sys.executable, "-m", "dbdrift", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            text=True, start_new_session=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        stdout, stderr = proc.communicate()
    except BaseException:
        proc.send_signal(signal.SIGINT)
        try:
            _, stderr = proc.communicate(timeout=interrupt_wait_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, stderr = proc.communicate()
        tail = [line for line in (stderr or "").splitlines() if line.strip()][-2:]
        sys.stderr.write("".join(f"dbdrift {args[0]}: {line}\n" for line in tail))
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def check_ok(result: ProcessResult, what: str) -> None:
    if result.exit_code != 0:
        tail = " | ".join((result.stderr.strip() or result.stdout.strip()).splitlines()[-4:])
        raise UserError(f"{what} exited with status {result.exit_code}: {tail}",
                        "run the command by hand to see the whole output")


def sysbench_cmd(script: str, conn: dict, rows: int, *extra: str, engine: str = "postgres") -> list[str]:
    """sysbench `script` on sbtest through the Unix socket of `conn`: the pgsql driver for
    postgres, the mysql driver (user root) for mariadb and mysql."""
    if engine == "postgres":
        db = ["--db-driver=pgsql", f"--pgsql-host={conn['socket_dir']}", f"--pgsql-port={conn['port']}",
              "--pgsql-user=postgres", f"--pgsql-db={DBNAME}"]
    else:
        db = ["--db-driver=mysql", f"--mysql-socket={conn['socket']}", "--mysql-user=root", f"--mysql-db={DBNAME}"]
    return [require_tool("sysbench"), script, *db, "--tables=1", f"--table-size={rows}", *extra]


_SB_QUERIES = re.compile(r"^\s*queries:\s+(\d+)\s+\(([\d.]+) per sec\.\)", re.M)


def sysbench_queries(stdout: str) -> tuple[int, float]:
    """(queries, QPS) from sysbench's `queries: N (X per sec.)` line."""
    match = _SB_QUERIES.search(stdout)
    if not match:
        raise UserError("sysbench printed no `queries:` line", "run the sysbench command by hand")
    return int(match.group(1)), float(match.group(2))


# --- host -----------------------------------------------------------------------------------


class StealShare:
    """The `steal_pct` of a timed run that carries `steal_ticks` and `all_ticks` (the differences
    of cpu_ticks() around it); a mixin for the scripts' run records."""

    steal_ticks: int
    all_ticks: int

    @property
    def steal_pct(self) -> float:
        return 100.0 * self.steal_ticks / self.all_ticks if self.all_ticks else 0.0


def cpu_ticks() -> tuple[int, int]:
    """(all ticks, steal ticks) of the aggregate `cpu` line of /proc/stat (steal is the 8th value)."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    return sum(values[:8]), values[7]


def median(values: list[float]) -> float | None:
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def fmt(value: float | None, spec: str = ",.0f") -> str:
    return "n/a" if value is None else format(value, spec)


def ratio_table(out: Callable[[str], None], fmt_row: str, header: tuple[str, str, str],
                rows: list[tuple[str, str, str]], a: dict, b: dict, target: Callable[[str, float | None], str]) -> None:
    """Print `rows` (key, label, format) of two tools' values side by side with a/b and the
    issue's target for that ratio; `header` names a, b and the ratio; `fmt_row` has five fields."""
    out(fmt_row.format("", *header, "target (issue)"))
    for key, label, spec in rows:
        ratio = a[key] / b[key] if a[key] is not None and b[key] else None
        out(fmt_row.format(label, fmt(a[key], spec), fmt(b[key], spec), fmt(ratio, ".3f"), target(key, ratio)))


Measured = TypeVar("Measured")


def abba_rounds(rounds: int, a: str, b: str, what: str, measure: Callable[[str, int], Measured],
                show: Callable[[Measured], None]) -> list[Measured]:
    """Rounds 1..`rounds` of two tools in ABBA order (`a` first in odd rounds, `b` first in even
    ones), so a drift of the host over time weighs on both alike; each run is measured by
    `measure(tool, round)`, shown at once by `show` and returned in the order run. `what` says
    what a run does, for the progress line."""
    samples = []
    for round_no in range(1, rounds + 1):
        for tool in ((a, b) if round_no % 2 else (b, a)):
            progress(f"round {round_no}: {tool} {what}")
            samples.append(measure(tool, round_no))
            show(samples[-1])
    return samples


def progress(text: str) -> None:
    sys.stderr.write(f"  .. {text}\n")
    sys.stderr.flush()
