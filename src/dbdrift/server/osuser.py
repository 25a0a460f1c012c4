"""The unprivileged OS user servers run as when dbdrift itself runs as root.

PostgreSQL refuses to run as root, and no server should; dbdrift creates (once) a system user
`dbdrift` and runs initdb/pg_ctl/postgres and install-db/mariadbd/mysqld as it. Owns user
creation, ownership and privilege-dropping only.
"""
from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path
from typing import Any, Sequence

from dbdrift.errors import UserError

SERVER_USER = "dbdrift"

# (uid, gid, name) of the server user, or None when dbdrift is not root and servers run as us.
ServerUser = tuple[int, int, str]


def server_user() -> ServerUser | None:
    """None when not root; else ensure the `dbdrift` system user exists and return its ids."""
    if os.geteuid() != 0:
        return None
    entry = _lookup(SERVER_USER)
    if entry is None:
        _create_user(SERVER_USER)
        entry = _lookup(SERVER_USER)
        if entry is None:
            raise UserError(
                f"could not create the system user {SERVER_USER!r} to run servers as",
                f"create it yourself: useradd --system --user-group {SERVER_USER}",
            )
    return entry.pw_uid, entry.pw_gid, entry.pw_name


def chown_tree(path: Path, ids: ServerUser | None) -> None:
    """Give `path` and everything under it to the server user (no-op when not root)."""
    if ids is None:
        return
    uid, gid, _ = ids
    os.chown(path, uid, gid, follow_symlinks=False)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, gid, follow_symlinks=False)


def run_as(
    cmd: Sequence[str | os.PathLike[str]], ids: ServerUser | None, **kwargs: Any
) -> subprocess.CompletedProcess[Any]:
    """subprocess.run, as the server user when `ids` is given (no supplementary groups)."""
    return subprocess.run([str(c) for c in cmd], **as_user_kwargs(ids), **kwargs)


def as_user_kwargs(ids: ServerUser | None) -> dict[str, Any]:
    if ids is None:
        return {}
    uid, gid, name = ids
    env = dict(os.environ)
    # root's HOME is unreadable for the server user; some tools (initdb via locale lookups,
    # valgrind) look there.
    env.update(HOME="/", USER=name, LOGNAME=name)
    return {"user": uid, "group": gid, "extra_groups": [], "env": env}


def _lookup(name: str) -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def _create_user(name: str) -> None:
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    result = subprocess.run(
        [useradd, "--system", "--user-group", "--no-create-home",
         "--shell", "/usr/sbin/nologin", name],
        capture_output=True, text=True,
    )
    # Exit 9 = "already exists": another dbdrift process won the race, which is fine.
    if result.returncode not in (0, 9) and _lookup(name) is None:
        raise UserError(
            f"could not create the system user {name!r} to run servers as: "
            f"{result.stderr.strip() or f'useradd exited {result.returncode}'}",
            f"create it yourself: useradd --system --user-group {name}",
        )
