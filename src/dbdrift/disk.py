"""Where a path's file system is mounted and how much of it is free: what an error about a
full disk names (the store's, a server's work directory)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path


def mount_point(path: Path) -> Path:
    """The mount point of the file system holding `path` (its nearest existing ancestor)."""
    path = Path(os.path.realpath(path))
    while not path.exists() and path != path.parent:
        path = path.parent
    while not os.path.ismount(path) and path != path.parent:
        path = path.parent
    return path


def free_bytes(path: Path) -> int | None:
    """Bytes free for this user on the file system holding `path`; None when it cannot be read."""
    try:
        return shutil.disk_usage(mount_point(path)).free
    except OSError:
        return None


def free_text(path: Path) -> str:
    """"20.0 MB free of 512 MB", or "free space unknown"."""
    try:
        usage = shutil.disk_usage(mount_point(path))
    except OSError:
        return "free space unknown"
    return f"{usage.free / 2**20:,.1f} MB free of {usage.total / 2**20:,.0f} MB"
