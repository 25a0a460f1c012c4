"""One running campaign per store and campaign name: a lock file beside the store.

`run`, `--resume`, `calibrate` and `demo` hold it for as long as they run, so a second
invocation of the same campaign on the same store refuses at once, before it touches the
store, a server or a run directory. The lock is an flock: the kernel drops it when its
process exits, kill -9 included, so a lock is never left stale.

The lock belongs to the store file, not to the path typed: it is named by the file's device
and inode and lives in the directory of its real path, so a symlink or a hard link beside it
finds the same lock. A store that does not exist yet is created empty (0600) first, so it has
an identity before the lock is taken (locking by name would race the run that creates it).
"""
from __future__ import annotations

import fcntl
import json
import os
import sys
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from dbdrift.errors import UserError
from dbdrift.store.guard import create_private, require_writable


def lock_path(store: Path, campaign: str) -> Path:
    """`.dbdrift-<dev>-<inode>.<campaign>.lock` beside the store's real file. Only stat: opening
    and closing the store file would drop SQLite's POSIX locks held by this process."""
    safe = "".join(c if c.isalnum() or c in "-_.+" else "_" for c in campaign)
    create_private(store)
    real = Path(os.path.realpath(store))
    st = os.stat(real)
    return real.parent / f".dbdrift-{st.st_dev}-{st.st_ino}.{safe}.lock"


@contextmanager
def campaign_lock(store: Path, campaign: str) -> Iterator[Path]:
    """Hold the lock of `campaign` on `store`; a UserError naming the process that holds it, or
    the reason the store cannot be written there (exit 2, as `--check` refuses it)."""
    require_writable(store)
    try:
        path = lock_path(store, campaign)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise UserError(f"cannot create the lock file of store {store}: {exc.strerror} ({exc.filename})",
                        "pass --store PATH in a directory you can write to") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _busy(store, campaign, _holder(fd)) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "since": _now(), "argv": sys.argv}).encode(), 0)
        yield path
    finally:
        os.close(fd)  # releases the lock; the file stays (removing it would race a waiting locker)


def _holder(fd: int) -> dict[str, Any]:
    try:
        holder: dict[str, Any] = json.loads(os.pread(fd, 65536, 0) or b"{}")
        return holder
    except ValueError:
        return {}


def _busy(store: Path, campaign: str, holder: dict[str, Any]) -> UserError:
    pid = holder.get("pid")
    who = f"dbdrift pid {pid}, since {holder.get('since', '?')}" if pid else "another dbdrift process"
    return UserError(
        f"campaign {campaign} is already running on store {store} ({who}); nothing was started or changed",
        f"wait for it to end, or stop it (kill {pid or 'PID'}: it stops its servers and keeps every finished "
        "run), then `--resume` runs what is missing; a different --store or campaign name runs alongside")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
