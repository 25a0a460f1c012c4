"""Where dbdrift keeps fetched binaries (cache) and per-run scratch (work dir).

Owns only path resolution and directory creation; knows nothing about engines or runs.
"""
from __future__ import annotations

import os
from pathlib import Path

# When dbdrift runs as root, servers run as an unprivileged user, so everything it executes or
# writes must live outside /root (mode 0700): hence /var/cache and /var/tmp defaults.
_ROOT_CACHE_DIR = Path("/var/cache/dbdrift")


def cache_dir() -> Path:
    """Fetched server builds: `$DBDRIFT_CACHE_DIR`, else a root or per-user default (not created)."""
    explicit = os.environ.get("DBDRIFT_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    if os.geteuid() == 0:
        return _ROOT_CACHE_DIR
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "dbdrift"


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
