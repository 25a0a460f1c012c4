"""The worker end: the task that runs one unit on a benchmark host, and `dbdrift worker`.

A unit asks the client which of its tests are still missing (the client answers in the order it
received everything else, so a re-queued unit never repeats what a lost worker already sent),
runs them in a child process (cluster/child.py) and forwards the child's lines to the client's
queue. The cluster's stop event turns into SIGINT for the child: it stores what it measured and
stops its servers, as Ctrl-C does locally.
"""
from __future__ import annotations

import json
import os
import pickle
import platform
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path

from distributed import Event, Queue, Worker, WorkerPlugin, get_worker

from dbdrift import env
from dbdrift.version import __version__

RESOURCE = "dbdrift"  # every worker host has 1: one unit at a time, so measurements never share a host
REPLY_WAIT_S = 120.0  # how long a unit waits for the client's answer before giving up


def kind_resource(kind: str) -> str:
    """The worker resource that marks a host of kind `kind` (`dbdrift worker --kind`)."""
    return f"dbdrift-{kind}"


def resources(kind: str | None) -> dict[str, float]:
    return {RESOURCE: 1, **({kind_resource(kind): 1} if kind else {})}


def events_name(token: str) -> str:
    return f"{token}-events"


def stop_name(token: str) -> str:
    return f"{token}-stop"


def reply_name(token: str, attempt: str) -> str:
    return f"{token}-reply-{attempt}"


class WorkDirs(WorkerPlugin):
    """Gives each worker process a work directory of its own, ROOT/<worker name>: several
    workers on one machine then behave as separate hosts (tests, trying a cluster out)."""

    def __init__(self, root: str) -> None:
        self.root = root

    def setup(self, worker: Worker) -> None:
        path = Path(self.root) / str(worker.name)
        env.ensure_dir(path)
        os.environ["DBDRIFT_WORK_DIR"] = str(path)


def run_unit(token: str, number: int, kind: str | None, spec_bytes: bytes, version: str) -> dict[str, object]:
    """Run unit `number` of the campaign `token` on this worker; returns its exit code (0 ok,
    1 something failed and is stored, 130 stopped) or why it did not run. `spec_bytes` is the
    pickled (campaign, workload): the workload's hooks narrow the campaign to the unit."""
    worker = get_worker()
    attempt = uuid.uuid4().hex[:12]
    events = Queue(events_name(token))
    base = {"unit": number, "kind": kind, "attempt": attempt}
    if version != __version__:
        events.put({**base, "type": "refused", "worker": worker.address,
                    "reason": f"worker {worker.address} has dbdrift {__version__}, the client {version}"})
        return {"refused": "version"}
    answers = Queue(reply_name(token, attempt))  # created before the question: the answer cannot be lost
    events.put({**base, "type": "start", "worker": worker.address, "name": str(worker.name),
                "hostname": platform.node()})
    try:
        reply = answers.get(timeout=REPLY_WAIT_S)
    finally:
        answers.close()
    if "refuse" in reply:
        events.close()
        return {"refused": reply["refuse"]}
    spec, workload = pickle.loads(spec_bytes)
    spec = workload.narrow(spec, tuple(reply["tests"]), tuple(reply["repeats"]))
    unit_dir = env.ensure_dir(env.work_dir() / "cluster" / f"{token}-{kind or 'all'}-u{number}-{attempt}")
    with (unit_dir / "spec.pickle").open("wb") as handle:
        pickle.dump((spec, workload), handle)
    with (unit_dir / "unit.log").open("w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "dbdrift.cluster.child", str(unit_dir)],
                                stdout=subprocess.PIPE, stderr=log, text=True, env=os.environ.copy())
        finished = threading.Event()
        threading.Thread(target=_stop_on_event, args=(Event(stop_name(token)), proc, finished),
                         daemon=True).start()
        assert proc.stdout is not None  # stdout=PIPE
        try:
            for line in proc.stdout:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                events.put({**base, **message})
            code = proc.wait()
        finally:
            finished.set()
            if proc.poll() is None:  # the task itself is being torn down: stop the unit's servers
                proc.send_signal(signal.SIGINT)
                proc.wait()
    log_tail = (unit_dir / "unit.log").read_text(errors="replace")[-2000:]
    events.put({**base, "type": "end", "code": code, "log_tail": log_tail, "unit_dir": str(unit_dir)})
    events.close()  # the scheduler drops a queue when its last holder lets go: the client's comes last
    return {"code": code}


def _stop_on_event(stop: Event, proc: subprocess.Popen[str], finished: threading.Event) -> None:
    """SIGINT for the unit once the cluster's stop event is set. Polled once a second: a wait
    left pending on the scheduler when the unit ends would be logged there as an error."""
    while not finished.wait(1.0) and proc.poll() is None:
        try:
            if stop.is_set():
                proc.send_signal(signal.SIGINT)
                return
        except Exception:  # noqa: BLE001 - the scheduler is gone: the unit goes on and stores locally
            continue


def serve(address: str, kind: str | None, name: str | None, work_dir: Path | None, nanny: bool = True) -> int:
    """`dbdrift worker`: one Dask worker with one thread and this host's resources, until Ctrl-C."""
    import asyncio

    from distributed import Nanny, Worker

    if work_dir is not None:
        os.environ["DBDRIFT_WORK_DIR"] = str(env.ensure_dir(work_dir.absolute()))

    async def main() -> None:
        cls = Nanny if nanny else Worker
        async with cls(address, nthreads=1, resources=resources(kind), name=name or platform.node()) as worker:
            print(f"dbdrift worker {worker.name} ({kind or 'any kind'}) serving {address}; Ctrl-C stops it",
                  file=sys.stderr, flush=True)
            await worker.finished()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    return 0
