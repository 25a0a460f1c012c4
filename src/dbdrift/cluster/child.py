"""One unit of a cluster campaign, run on a worker host: `python -m dbdrift.cluster.child DIR`.

The unit runs as a process of its own, through the same code path as `dbdrift run` (fetch,
start, load, settle, run, samplers) with a store in DIR. That store also writes each fact it
keeps, and the runner's progress, as one JSON line on stdout; the worker forwards the lines
to the client, which writes the facts into its one store as they arrive. SIGINT is Ctrl-C
(the cluster's stop): the unit stores what it measured and stops its servers. The process gets
SIGINT too when the worker that started it dies, so a lost worker leaves no server running.
"""
from __future__ import annotations

import ctypes
import json
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from dbdrift.errors import UserError
from dbdrift.model import JsonObject
from dbdrift.server.base import sigterm_as_ctrl_c, stop_all
from dbdrift.store.store import Store

PR_SET_PDEATHSIG = 1


class Emitter:
    """JSON lines on a stream; once the reader is gone (its worker died) lines are dropped and
    the unit goes on storing in its own store."""

    def __init__(self, stream: TextIO) -> None:
        self.stream, self.lock, self.gone = stream, threading.Lock(), False

    def __call__(self, message: JsonObject) -> None:
        with self.lock:
            if self.gone:
                return
            try:
                self.stream.write(json.dumps(message) + "\n")
                self.stream.flush()
            except (BrokenPipeError, OSError, ValueError):
                self.gone = True


class StreamingStore(Store):
    """A local store that also emits each fact it keeps, naming its target by name (the
    client's store has its own target ids), and the host facts of the campaign."""

    def __init__(self, path: Path, emit: Emitter) -> None:
        super().__init__(path)
        self.emit = emit

    def another(self) -> "StreamingStore":
        return StreamingStore(self.path, self.emit)

    def add_campaign(self, name: str, spec: JsonObject, host: JsonObject, version: str) -> int:
        self.emit({"type": "host", "facts": host})
        return super().add_campaign(name, spec, host, version)

    def _keep(self, kind: str, fact: JsonObject, write: Callable[[], int | None]) -> int | None:
        row_id = super()._keep(kind, fact, write)
        target = self.db.execute("SELECT name FROM targets WHERE id = ?", (fact["target_id"],)).fetchone()
        self.emit({"type": "fact", "target": target[0], "fact": {"kind": kind, **fact}})
        return row_id


class StreamingProgress:
    def __init__(self, emit: Emitter) -> None:
        self.emit = emit

    def __getattr__(self, call: str) -> Callable[..., None]:  # every ProgressSink call becomes one line
        if call not in ("campaign_start", "step_start", "step_progress", "step_end", "message", "advance"):
            raise AttributeError(call)
        return lambda *args: self.emit({"type": "progress", "call": call, "args": list(args)})


def die_with_parent() -> None:
    """Linux: SIGINT when the parent (the worker) exits, however it ends."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGINT)
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:  # the worker died before prctl took effect
        os.kill(os.getpid(), signal.SIGINT)


def run(unit_dir: Path, emit: Emitter) -> int:
    import psutil

    from dbdrift.runner import Runner
    from dbdrift.runner.memory import fit_order
    from dbdrift.server.rundir import stop_orphans

    def say(text: str) -> None:
        emit({"type": "progress", "call": "message", "args": [text]})

    with (unit_dir / "spec.pickle").open("rb") as handle:
        spec, workload = pickle.load(handle)
    memory = psutil.virtual_memory()
    spec, note = fit_order(spec, memory.total, memory.available)  # this host's memory decides
    if note:
        say(note)
    stop_orphans(say)
    store = StreamingStore(unit_dir / "results.db", emit)
    try:
        outcome = Runner(spec, store, progress=StreamingProgress(emit), workload=workload).run()
    finally:
        store.close()
    emit({"type": "outcome", "failed_targets": outcome.failures})
    return 1 if outcome.failed_targets or outcome.runs_failed or outcome.instructions_failed else 0


def main(argv: list[str]) -> int:
    die_with_parent()
    emit = Emitter(os.fdopen(os.dup(1), "w"))
    os.dup2(2, 1)  # anything else printed goes to the unit's log, not into the stream
    sigterm_as_ctrl_c()
    try:
        return run(Path(argv[0]), emit)
    except UserError as exc:
        emit({"type": "error", "message": exc.message, "hint": exc.hint})
        return exc.exit_code if exc.exit_code not in (0, 130) else 1
    except KeyboardInterrupt:
        return 130
    finally:
        stop_all()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
