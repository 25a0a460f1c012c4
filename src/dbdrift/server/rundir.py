"""The work directory and the run directories in it: who may use them, and what is left behind.

Every server gets a run directory of its own (`new_run_dir`, never shared by two dbdrift
processes), private to dbdrift and the server user, holding an owner file that names the
dbdrift process it belongs to. A server whose dbdrift process is gone (kill -9, a crash of
the machine's session) is an orphan: `find_orphans` finds it from those files and
`stop_orphan` stops it. Knows nothing of campaigns beyond the names it is given.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from dbdrift import env
from dbdrift.errors import UserError
from dbdrift.server import base, engines, osuser

OWNER_FILE = base.OWNER_FILE
PRIVATE_MODE = 0o700  # the work dir when dbdrift runs as the server user itself
SHARED_MODE = 0o710  # as root: root rwx, the server user's group may only pass through


def work_dir() -> Path:
    """The work directory (`$DBDRIFT_WORK_DIR`, else /var/tmp/dbdrift-<uid>), created private:
    0700, or as root 0710 with the server user's group (servers run as that user and must
    reach their run directories). An existing one must be a real directory that this user
    (or, as root, the server user) owns and that nobody else may write to."""
    path = env.work_dir()
    ids = osuser.server_user()
    mode, group = (SHARED_MODE, ids[1]) if ids else (PRIVATE_MODE, None)
    try:
        info = path.lstat()
    except FileNotFoundError:
        return _create(path, mode, group)
    check_work_dir(path, info, ids)
    if path == env.default_work_dir() and info.st_uid == os.geteuid() and (
            stat.S_IMODE(info.st_mode) != mode or (group is not None and info.st_gid != group)):
        # dbdrift's own default directory (older versions made it 0755): make it private.
        _set_mode(path, mode, group)
    return path


def check_work_dir(path: Path, info: os.stat_result, ids: osuser.ServerUser | None) -> None:
    """Refuse a work directory another user could tamper with (UserError naming the fix)."""
    hint = "set DBDRIFT_WORK_DIR to a directory of your own, e.g. /var/tmp/dbdrift-mine (dbdrift creates it)"
    if stat.S_ISLNK(info.st_mode):
        raise UserError(f"work directory {path} is a symbolic link", hint)
    if not stat.S_ISDIR(info.st_mode):
        raise UserError(f"work directory {path} is not a directory", hint)
    owners = {os.geteuid()} | ({ids[0]} if ids else set())
    if info.st_uid not in owners:
        raise UserError(f"work directory {path} belongs to {_user_name(info.st_uid)}, not to you", hint)
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UserError(f"work directory {path} is writable by other users (mode {stat.S_IMODE(info.st_mode):04o})",
                        f"chmod go-w {path}, or {hint}")


def new_run_dir(work: Path, campaign: str, target: str) -> Path:
    """A run directory of its own for one server (created 0700, empty); its name starts with
    the campaign and target names, shortened so the socket path fits."""
    prefix = f"{_safe(campaign)[:16]}-{_safe(target)[:16]}-"
    return Path(tempfile.mkdtemp(prefix=prefix, dir=work))


def check_socket_paths(work: Path, campaign: str, targets: list[tuple[str, str]]) -> None:
    """Refuse a work directory whose run directories' socket paths would not fit a Unix socket
    (107 bytes): `targets` are (name, engine) pairs. A run directory is named as new_run_dir
    names it (mkdtemp adds 8 characters), so this is the longest path each server creates."""
    for name, engine in targets:
        server = engines.server_class(engine)
        prefix = f"{_safe(campaign)[:16]}-{_safe(name)[:16]}-"
        path = work / f"{prefix}XXXXXXXX" / "sock" / (server.SOCKET_FILE if server else "")
        length = len(os.fsencode(path))
        if length > base.SUN_PATH_MAX:
            raise UserError(f"work directory {work} is too long for target {name}'s socket: {path} is {length} "
                            f"bytes, a Unix socket path at most {base.SUN_PATH_MAX}",
                            f"set DBDRIFT_WORK_DIR to a directory at most {len(os.fsencode(work)) - length + base.SUN_PATH_MAX} "
                            "bytes long, e.g. /var/tmp/dbdrift", exit_code=2)


def owner_facts(campaign: str, target: str, engine: str, store: Path | None) -> dict[str, Any]:
    """What the owner file says: this dbdrift process (pid and start time, against pid reuse),
    the campaign and target, and the store whose log folder gets the server log."""
    pid = os.getpid()
    return {"dbdrift_pid": pid, "dbdrift_start": base.process_start_ticks(pid), "campaign": campaign,
            "target": target, "engine": engine, "store": str(store.resolve()) if store else None,
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


@dataclass(frozen=True)
class Orphan:
    """A run directory whose dbdrift process is gone; `server_pid` if its server still runs."""

    run_dir: Path
    facts: dict[str, Any]
    server_pid: int | None

    def describe(self) -> str:
        f = self.facts
        return f"server {f.get('target')} ({f.get('engine')}) of campaign {f.get('campaign')}"


def find_orphans(work: Path) -> list[Orphan]:
    """Run directories in `work` whose owning dbdrift process has exited."""
    orphans = []
    try:
        entries = sorted(work.iterdir())
    except OSError:
        return []
    for run_dir in entries:
        facts = _read_owner(run_dir)
        if facts is None or owner_alive(facts):
            continue
        server = engines.server_class(facts.get("engine", ""))
        pid = server.orphan_pid(run_dir) if server else None
        orphans.append(Orphan(run_dir, facts, pid))
    return orphans


def owner_alive(facts: dict[str, Any]) -> bool:
    pid = facts.get("dbdrift_pid")
    if not isinstance(pid, int):
        return False
    return base.process_start_ticks(pid) == facts.get("dbdrift_start")


def stop_orphan(orphan: Orphan, remove: bool) -> str:
    """Stop the orphan's server if it runs, keep its log beside its store (when that folder
    can be written) and remove its data directory, or the whole run directory when `remove`.
    Returns one line saying what was done."""
    f = orphan.facts
    what = orphan.describe()
    done = []
    if orphan.server_pid is not None:
        server = engines.server_class(f.get("engine", ""))
        if server is not None:
            server.stop_orphan(orphan.run_dir)
        done.append(f"stopped {what} (pid {orphan.server_pid}), left running by dbdrift pid "
                    f"{f.get('dbdrift_pid')}, which is gone")
    log = keep_orphan_log(orphan)
    if remove and (log is not None or not (orphan.run_dir / "server.log").exists()):
        shutil.rmtree(orphan.run_dir, ignore_errors=True)
        done.append(f"removed {orphan.run_dir}" + (f"; its server log is kept at {log}" if log else ""))
    else:
        shutil.rmtree(orphan.run_dir / "data", ignore_errors=True)
        done.append(f"removed its data directory; its log stays at {orphan.run_dir / 'server.log'}"
                    if orphan.server_pid is not None else f"left {orphan.run_dir} (logs only)")
    return "; ".join(done)


def keep_orphan_log(orphan: Orphan) -> Path | None:
    """Copy the orphan's server log into the log folder beside its store, if there is one."""
    store = orphan.facts.get("store")
    source = orphan.run_dir / "server.log"
    if not store or not source.exists() or not Path(store).parent.is_dir():
        return None
    try:
        return copy_log(source, Path(store), orphan.facts.get("campaign") or "campaign", None,
                        orphan.facts.get("target") or "target", suffix="orphan")
    except OSError:
        return None


def log_dir(store: Path) -> Path:
    """Where server logs are kept: dbdrift-logs/ beside the store."""
    return store.parent / "dbdrift-logs"


def copy_log(source: Path, store: Path, campaign: str, campaign_id: int | None, target: str,
             suffix: str = "server") -> Path:
    """Copy a server log beside the store as <store>-<campaign>[#id]-<target>-<suffix>[-N].log,
    private (0600) like the original, never over an earlier copy."""
    folder = log_dir(store)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    ident = f"c{campaign_id}-" if campaign_id is not None else ""
    stem = f"{_safe(store.stem)}-{ident}{_safe(campaign)}-{_safe(target)}-{suffix}"
    dest, n = folder / f"{stem}.log", 1
    while dest.exists():
        n += 1
        dest = folder / f"{stem}-{n}.log"
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out, source.open("rb") as src:
        shutil.copyfileobj(src, out)
    return dest


# --- helpers -------------------------------------------------------------------------------


def _create(path: Path, mode: int, group: int | None) -> Path:
    env.ensure_dir(path.parent)
    try:
        path.mkdir(mode=mode)
    except FileExistsError:  # another dbdrift made it a moment ago: check theirs
        check_work_dir(path, path.lstat(), osuser.server_user())
        return path
    _set_mode(path, mode, group)
    return path


def _set_mode(path: Path, mode: int, group: int | None) -> None:
    if group is not None:
        os.chown(path, -1, group, follow_symlinks=False)
    path.chmod(mode)


def _read_owner(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / OWNER_FILE
    try:
        if run_dir.is_symlink() or not run_dir.is_dir():
            return None
        facts = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return facts if isinstance(facts, dict) else None


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.+" else "_" for c in name)


def _user_name(uid: int) -> str:
    import pwd

    try:
        return f"user {pwd.getpwuid(uid).pw_name}"
    except KeyError:
        return f"uid {uid}"


def stop_orphans(say: Callable[[str], None]) -> None:
    """Stop servers whose dbdrift process is gone (kill -9): found from their run directories."""
    for orphan in find_orphans(work_dir()):
        if orphan.server_pid is not None:
            say(stop_orphan(orphan, remove=True))
