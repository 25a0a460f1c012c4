"""Where dbdrift keeps fetched binaries (cache) and per-run scratch (work dir).

Owns only path resolution and directory creation; knows nothing about engines or runs.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from dbdrift.errors import UserError

# When dbdrift runs as root, servers run as an unprivileged user, so everything it executes or
# writes must live outside /root (mode 0700): hence /var/cache and /var/tmp defaults.
_ROOT_CACHE_DIR = Path("/var/cache/dbdrift")
CACHE_HINT = "set DBDRIFT_CACHE_DIR to a directory you can write (builds take 60-350 MB each)"


class CacheError(UserError):
    """The build cache has no place: no home to put it in, or its directory cannot be made.
    Refused before anything is fetched (exit 2), whichever part of the cache asked."""

    def __init__(self, message: str, hint: str = CACHE_HINT) -> None:
        super().__init__(message, hint, exit_code=2)


def cache_dir() -> Path:
    """Fetched server builds: `$DBDRIFT_CACHE_DIR`, else a root or per-user default (not created).
    The per-user default needs a home: a HOME that is unset (for a user without a passwd
    entry), relative or missing is refused rather than a cache made elsewhere."""
    explicit = os.environ.get("DBDRIFT_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    if os.geteuid() == 0:
        return _ROOT_CACHE_DIR
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and Path(xdg).expanduser().is_absolute():  # the XDG spec ignores a relative one
        return Path(xdg).expanduser() / "dbdrift"
    return _home() / ".cache" / "dbdrift"


def _home() -> Path:
    if os.environ.get("HOME") == "":  # Python would take "/" for it
        raise CacheError("the build cache has no place: HOME is empty", CACHE_HINT + " (or XDG_CACHE_HOME, or HOME)")
    try:
        home = Path.home()
    except (RuntimeError, KeyError):  # HOME unset and no passwd entry for this user
        raise CacheError(f"the build cache has no place: HOME is not set and user {os.geteuid()} has no home "
                         "directory", CACHE_HINT + " (or XDG_CACHE_HOME, or HOME)") from None
    if not home.is_absolute():
        raise CacheError(f"the build cache has no place: HOME={str(home)!r} is not an absolute path",
                         CACHE_HINT + " (or XDG_CACHE_HOME, or HOME)")
    if not home.is_dir():
        raise CacheError(f"the build cache has no place: the home directory HOME={home} does not exist",
                         CACHE_HINT + " (or XDG_CACHE_HOME, or HOME)")
    return home


def check_cache_dir(path: Path) -> None:
    """A CacheError when the build cache directory `path` could not be made or written (for
    `run --check`, which fetches nothing): an existing one must be a writable directory; for a
    missing one, an empty directory is made and removed in its nearest existing parent."""
    nearest = path
    while not nearest.exists() and nearest != nearest.parent:
        nearest = nearest.parent
    where = f" (DBDRIFT_CACHE_DIR={os.environ['DBDRIFT_CACHE_DIR']})" if os.environ.get("DBDRIFT_CACHE_DIR") else ""
    if not nearest.is_dir():
        raise CacheError(f"cannot make the build cache directory {path}{where}: {nearest} is not a directory")
    if nearest == path:
        if not os.access(path, os.W_OK | os.X_OK):
            raise CacheError(f"cannot write into the build cache directory {path}{where}: permission denied")
        return
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".dbdrift-check-", dir=nearest))
    except OSError as exc:
        raise CacheError(f"cannot make the build cache directory {path}{where}: {exc.strerror or exc}") from None


def ensure_cache_dir(path: Path) -> Path:
    """ensure_dir for a directory of the build cache, a CacheError naming it when it cannot be
    made (DBDRIFT_CACHE_DIR a file, a read-only or pseudo file system, no permission)."""
    try:
        return ensure_dir(path)
    except OSError as exc:
        where = f" (DBDRIFT_CACHE_DIR={os.environ['DBDRIFT_CACHE_DIR']})" if os.environ.get("DBDRIFT_CACHE_DIR") else ""
        raise CacheError(f"cannot make the build cache directory {path}{where}: {exc.strerror or exc}") from None


def work_dir() -> Path:
    """Where run directories go: `$DBDRIFT_WORK_DIR`, else /var/tmp/dbdrift-<uid> (not created
    here: server/rundir.work_dir creates and checks it)."""
    explicit = os.environ.get("DBDRIFT_WORK_DIR")
    return Path(explicit).expanduser().absolute() if explicit else default_work_dir()


def default_work_dir() -> Path:
    return Path(f"/var/tmp/dbdrift-{os.geteuid()}")


def ensure_dir(path: Path, mode: int = 0o755) -> Path:
    """mkdir -p; directories it creates get `mode` whatever the umask (the server user must
    traverse them). Existing directories are left alone (never chmod a user's /tmp)."""
    missing = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        probe = probe.parent
    path.mkdir(parents=True, exist_ok=True)
    for created in missing:
        created.chmod(mode)
    return path
