"""The processes that read a publish's campaigns (a campaign's report is CPU-bound analysis), and
how they end: with the publish, however it ends. Ctrl-C reaches the publish alone, which stops
them at once (a campaign not read yet is read by the next publish) and holds further Ctrl-Cs
until they are gone and the site's state is saved; a publish that is killed takes them along,
as each watches its parent and exits when it is gone.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
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
    pool = ProcessPoolExecutor(workers, initializer=_reader_starts, initargs=(os.getpid(),))
    try:  # not pool.map: on its way out it cancels what is queued, which the pool then fails to fail (a thread's traceback)
        chunks = [pool.submit(_read_chunk, read, jobs[i:i + CHUNK]) for i in range(0, len(jobs), CHUNK)]
        for chunk in chunks:
            yield from chunk.result()
    except BaseException as exc:  # Ctrl-C, an error, or the caller stopped asking (its own error)
        with held_interrupts(for_good=isinstance(exc, KeyboardInterrupt)):
            _stop(pool)
        raise
    pool.shutdown(wait=True)


def _read_chunk(read: Callable[..., T], jobs: list[tuple[Any, ...]]) -> list[T]:
    return [read(*job) for job in jobs]


def _stop(pool: ProcessPoolExecutor) -> None:
    """End the readers now, mid-campaign: they only read (each store is open read-only)."""
    kill = getattr(pool, "kill_workers", None)  # Python 3.14 on
    if kill is not None:
        kill()
    else:
        for process in list((pool._processes or {}).values()):
            process.kill()
    pool.shutdown(wait=True)  # the pool finds them gone and fails what was queued (cancelling races it)


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
