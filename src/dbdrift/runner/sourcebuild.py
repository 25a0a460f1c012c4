"""Builds of commits of the user's source tree, for `bisect --source`: the commits between a good
and a bad revision, and each one built by the user's command into an install prefix cached by
commit, so a commit is built once however often it is measured.

A build runs in a scratch git worktree of the commit (the user's checkout is never touched),
with PREFIX (and DBDRIFT_PREFIX) naming the directory the command must install into. A build
that succeeds leaves BUILD_MARKER in its prefix (the commit, its date and subject, the command,
seconds taken); the stored target then carries those facts, so history can tell commits of
one version apart. Prefixes are keyed by commit and command: another --build builds again. A
build that fails is remembered with its log, and skipped until the command changes.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dbdrift.errors import UserError
from dbdrift.model import JsonObject

BUILD_MARKER = ".dbdrift-build.json"
SERVER_BINARIES = {"postgres": ("bin/postgres",), "mysql": ("bin/mysqld", "sbin/mysqld"),
                   "mariadb": ("bin/mariadbd", "bin/mysqld", "sbin/mariadbd")}
LOG_TAIL_LINES = 15
REPORT_EVERY_S = 30.0  # a build says how long it has taken (and the log's last line) this often


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    committed_at: str  # ISO 8601, the committer date
    depth: int = 0  # commits reachable from it (`git rev-list --count`): orders a line of commits made in one second

    @property
    def short(self) -> str:
        return self.sha[:9]


@dataclass(frozen=True)
class Build:
    commit: Commit
    prefix: Path | None  # None: the build failed
    seconds: float
    cached: bool
    log: Path
    error: str = ""


def git(source: Path, *args: str) -> str:
    try:
        result = subprocess.run(["git", "-C", str(source), *args], capture_output=True, text=True, timeout=600)
    except FileNotFoundError:
        raise UserError("git is not installed", "install it: apt-get install -y git") from None
    if result.returncode != 0:
        raise UserError(f"git {' '.join(args)} in {source} failed: {result.stderr.strip()[-300:]}",
                        "is it a git repository, and do both revisions exist in it?")
    return result.stdout


def commits(source: Path, good: str, bad: str) -> list[Commit]:
    """good, then every commit after it on bad's first-parent line up to bad, oldest first."""
    if not source.is_dir():
        raise UserError(f"--source {source} is not a directory", "give the root of a git checkout", exit_code=2)
    shas = []
    for end, rev in (("--good", good), ("--bad", bad)):
        try:
            shas.append(git(source, "rev-parse", "--verify", f"{rev}^{{commit}}").strip())
        except UserError:
            raise UserError(f"{end} {rev}: no such commit in {source}",
                            "give a commit, tag or branch of that repository (`git log --oneline` lists them)",
                            exit_code=2) from None
    good_sha, bad_sha = shas
    if good_sha == bad_sha or subprocess.run(["git", "-C", str(source), "merge-base", "--is-ancestor", good_sha,
                                              bad_sha]).returncode != 0:
        raise UserError(f"--good {good} is not an ancestor of --bad {bad}",
                        "bisect looks for the first bad commit after a good one: the good one must come first",
                        exit_code=2)
    listed = git(source, "rev-list", "--reverse", "--first-parent", f"{good_sha}..{bad_sha}").split()
    return [_commit(source, sha) for sha in [good_sha, *listed]]


def _commit(source: Path, sha: str) -> Commit:
    date, _, subject = git(source, "show", "-s", "--format=%cI%x00%s", sha).strip().partition("\0")
    return Commit(sha, subject, date, int(git(source, "rev-list", "--count", sha)))


def builds_dir(cache_dir: Path, source: Path) -> Path:
    """One directory of builds per source tree (its resolved path, hashed)."""
    resolved = source.resolve()
    return cache_dir / "builds" / f"{resolved.name}-{hashlib.sha1(str(resolved).encode()).hexdigest()[:8]}"


def _key(commit: Commit, command: str) -> str:
    return f"{commit.sha}-{hashlib.sha1(command.encode()).hexdigest()[:8]}"  # another command, another build


def cached_prefix(source: Path, commit: Commit, command: str, cache_dir: Path) -> Path | None:
    """The install prefix of `commit` built with `command` when a build succeeded before, else None."""
    prefix = builds_dir(cache_dir, source) / _key(commit, command)
    return prefix if (prefix / BUILD_MARKER).is_file() else None


def build(source: Path, commit: Commit, command: str, engine: str, cache_dir: Path,
          say: Callable[[str], None]) -> Build:
    """The install prefix of `commit` built with `command` (from the cache when built before)."""
    root = builds_dir(cache_dir, source)
    key = _key(commit, command)
    prefix, log, failed = root / key, root / f"{key}.log", root / f"{key}.failed"
    marker = prefix / BUILD_MARKER
    if marker.is_file():
        facts = json.loads(marker.read_text())
        return Build(commit, prefix, facts.get("seconds", 0.0), True, log)
    if failed.is_file():
        record = json.loads(failed.read_text())
        if record.get("command") == command:  # always, but for a hash collision
            return Build(commit, None, record.get("seconds", 0.0), True, log,
                         f"{record.get('error', 'build failed')}\n  (a failure remembered from an earlier bisect: "
                         f"delete {failed} or change --build to build it again)")
    root.mkdir(parents=True, exist_ok=True)
    for d in (cache_dir / "builds", root):
        d.chmod(0o755)  # the unprivileged server user reaches its binaries through these
    if prefix.exists():
        shutil.rmtree(prefix)  # a build that was interrupted
    tree = root / "worktrees" / f"{commit.short}-{os.getpid()}"
    started = time.monotonic()
    say(f"building {commit.short} ({commit.subject[:60]}) into {prefix}; log {log}")
    try:
        tree.parent.mkdir(parents=True, exist_ok=True)
        git(source, "worktree", "add", "--detach", "--force", str(tree), commit.sha)
        env = {**os.environ, "PREFIX": str(prefix), "DBDRIFT_PREFIX": str(prefix), "DBDRIFT_COMMIT": commit.sha}
        expected = _typical_seconds(root)
        with log.open("w") as out:
            proc = subprocess.Popen(["bash", "-c", command], cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT)
            try:
                while proc.poll() is None:
                    try:
                        proc.wait(timeout=REPORT_EVERY_S)
                    except subprocess.TimeoutExpired:
                        took = time.monotonic() - started
                        eta = f", about {max(expected - took, 0):.0f}s left" if expected else ""
                        say(f"building {commit.short}: {took:.0f}s{eta}; {_tail(log, 1).strip()[:100]}")
            finally:
                if proc.poll() is None:  # interrupted: the build goes with us
                    proc.kill()
                    proc.wait()
        seconds = time.monotonic() - started
        binaries = [prefix / b for b in SERVER_BINARIES[engine]]
        if proc.returncode != 0 or not any(b.is_file() for b in binaries):
            error = (f"exit status {proc.returncode}" if proc.returncode != 0 else
                     f"it installed no {SERVER_BINARIES[engine][0]} under $PREFIX ({prefix})")
            error = f"build failed: {error}; last lines of {log}:\n" + _tail(log)
            failed.write_text(json.dumps({"command": command, "seconds": seconds, "error": error}))
            return Build(commit, None, seconds, False, log, error)
        _readable(prefix)
        marker.write_text(json.dumps({"repository": str(source.resolve()), "commit": commit.sha,
                                      "committed_at": commit.committed_at, "depth": commit.depth,
                                      "subject": commit.subject,
                                      "command": command, "seconds": round(seconds, 1)}))
        failed.unlink(missing_ok=True)
        return Build(commit, prefix, seconds, False, log)
    finally:
        subprocess.run(["git", "-C", str(source), "worktree", "remove", "--force", str(tree)], capture_output=True)
        shutil.rmtree(tree, ignore_errors=True)
        subprocess.run(["git", "-C", str(source), "worktree", "prune"], capture_output=True)


def build_facts(bindir: Path) -> JsonObject | None:
    """The marker of a prefix built here (bindir: its bin/), else None."""
    marker = Path(bindir).parent / BUILD_MARKER
    try:
        facts = json.loads(marker.read_text())
        return facts if isinstance(facts, dict) else None
    except (OSError, ValueError):
        return None


def _typical_seconds(root: Path) -> float | None:
    """The median time of the builds already in this tree's cache (an ETA for the next)."""
    taken = []
    for marker in root.glob(f"*/{BUILD_MARKER}"):
        try:
            taken.append(float(json.loads(marker.read_text())["seconds"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return sorted(taken)[len(taken) // 2] if taken else None


def _tail(log: Path, count: int = LOG_TAIL_LINES) -> str:
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join("  " + line for line in lines[-count:])


def _readable(prefix: Path) -> None:
    for path in [prefix, *prefix.rglob("*")]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        path.chmod(mode | 0o044 | (0o011 if path.is_dir() or mode & 0o100 else 0))
