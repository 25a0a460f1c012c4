"""The processes that read a publish's campaigns (a campaign's report is CPU-bound analysis), and
how they end: with the publish, however it ends. Ctrl-C reaches the publish alone, which stops
them at once (a campaign not read yet is read by the next publish) and holds further Ctrl-Cs
until they are gone and the site's state is saved; a publish that is killed takes them along,
as each watches its parent and exits when it is gone.

Each reader has a pipe for its chunks and one for its results, which the publish's own thread
waits on. Not concurrent.futures' pool: its manager thread blocks for good in a result a reader
was killed in the middle of sending, and the publish then hangs in shutdown and at exit.
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

PARALLEL_FROM = 8  # campaigns to read: from this many on, one process per CPU reads them
CHUNK = 4  # campaigns a reader is given at a time
WATCH_S = 0.2  # how often a reader looks whether its publish is still there
T = TypeVar("T")


def read_all(read: Callable[..., T], jobs: list[tuple[Any, ...]]) -> Iterator[T]:
    """`read(*job)` of each job, in order: in this process for a few, else in a process per CPU."""
    workers = min(os.cpu_count() or 1, len(jobs) // PARALLEL_FROM)
    if workers < 2:
        yield from (read(*job) for job in jobs)
        return
    chunks = [jobs[i:i + CHUNK] for i in range(0, len(jobs), CHUNK)]
    readers = [_Reader(read) for _ in range(workers)]
    try:
        yield from _in_order(readers, chunks)
    except BaseException as exc:  # Ctrl-C, an error, or the caller stopped asking (its own error)
        with held_interrupts(for_good=isinstance(exc, KeyboardInterrupt)):
            for reader in readers:
                reader.kill()
        raise
    for reader in readers:
        reader.finish()


class _Reader:
    """One reader process (forked, so `read` needs no pickling) and the publish's ends of its pipes."""

    def __init__(self, read: Callable[..., Any]) -> None:
        context = multiprocessing.get_context("fork")
        chunks_in, self.chunks = context.Pipe(duplex=False)
        self.results, results_out = context.Pipe(duplex=False)
        self.process = context.Process(target=_serve, args=(read, chunks_in, results_out, os.getpid()),
                                       name="dbdrift-site-reader", daemon=True)
        self.process.start()
        chunks_in.close()
        results_out.close()
        self.chunk: int | None = None  # the index of the chunk it reads now

    def give(self, index: int | None, jobs: list[tuple[Any, ...]]) -> None:
        self.chunk = index
        if index is not None:
            self.chunks.send((index, jobs))

    def kill(self) -> None:
        """End it now, mid-campaign: it only reads (each store is open read-only)."""
        self.process.kill()
        self.process.join(timeout=5)
        self._close()

    def finish(self) -> None:
        self.chunks.send(None)
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)
        self._close()

    def _close(self) -> None:
        self.chunks.close()
        self.results.close()


def _in_order(readers: list[_Reader], chunks: list[list[tuple[Any, ...]]]) -> Iterator[Any]:
    """Each chunk's results in the order of the chunks, readers given the next chunk as they finish one."""
    waiting = iter(range(len(chunks)))
    for reader in readers:
        index = next(waiting, None)
        reader.give(index, chunks[index] if index is not None else [])
    done: dict[int, list[Any]] = {}
    for wanted in range(len(chunks)):
        while wanted not in done:
            busy = [r for r in readers if r.chunk is not None]
            ready = wait([r.results for r in busy] + [r.process.sentinel for r in busy])
            for reader in busy:
                if reader.results in ready:
                    index, ok, value = reader.results.recv()
                    if not ok:
                        raise value
                    done[index] = value
                    following = next(waiting, None)
                    reader.give(following, chunks[following] if following is not None else [])
                elif reader.process.sentinel in ready:
                    raise RuntimeError(f"a campaign reader (pid {reader.process.pid}) ended with exit code "
                                       f"{reader.process.exitcode} before it gave its campaigns")
        yield from done.pop(wanted)


def _serve(read: Callable[..., Any], chunks: Connection, results: Connection, parent: int) -> None:
    """A reader: each chunk it is given, read and sent back, until it is told to stop."""
    _reader_starts(parent)
    while True:
        try:
            task = chunks.recv()
        except EOFError:
            return
        if task is None:
            return
        index, jobs = task
        try:
            out: tuple[int, bool, Any] = (index, True, [read(*job) for job in jobs])
        except Exception as exc:  # given to the publish, which raises it as its own
            out = (index, False, _sendable(exc))
        results.send(out)


def _sendable(exc: Exception) -> Exception:
    try:
        pickle.dumps(exc)
        return exc
    except Exception:  # an exception that cannot cross the pipe is told by its text
        return RuntimeError(f"{type(exc).__name__}: {exc}")


def _reader_starts(parent: int) -> None:
    """A reader leaves Ctrl-C to its publish and dies on SIGTERM (it inherits the publish's
    handlers), and exits when the publish is gone (a SIGKILL runs no cleanup in it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    threading.Thread(target=_exit_without, args=(parent,), name="watch-publish", daemon=True).start()


def _exit_without(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_S)
    os._exit(1)  # orphaned: nobody reads what it would give


@contextmanager
def held_interrupts(for_good: bool = False) -> Iterator[None]:
    """Ctrl-C and SIGTERM wait while the block runs (stopping readers, saving the site's state:
    well under a second), so a second or third Ctrl-C cannot cut it short and leave readers
    behind; one that came meanwhile is raised after it, unless the block is on its way out with
    an exception already. `for_good`: the publish is stopping for a Ctrl-C already, so those
    after it are ignored to its end (its exit says it was interrupted). Outside the main thread
    (no signals there) the block just runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    before = {s: signal.signal(s, lambda signum, _frame: came.append(signum)) for s in held}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, signal.SIG_IGN if for_good else handler)
    if came and sys.exc_info()[0] is None:
        raise KeyboardInterrupt
