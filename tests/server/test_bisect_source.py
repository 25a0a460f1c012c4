"""bisect over commits of a source tree on real servers: a small repository whose "build"
installs a fetched PostgreSQL (17.10 until one commit switches it to 18.4, whose point queries
cost about 3% more instructions), so the answer is known and every step is the real one: git
worktrees, builds cached per commit, servers started from each build's prefix, callgrind."""
from __future__ import annotations

import json
import subprocess

import pytest

from dbdrift import env
from dbdrift.model import TargetSpec
from dbdrift.server.engines import resolve_install
from tests.helpers import dbdrift, query, shared_work_dir

pytestmark = pytest.mark.server

BUILD = 'mkdir -p "$PREFIX" && cp -a "$(cat INSTALL)"/. "$PREFIX"/ && echo installed "$(cat INSTALL)"'


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def test_bisect_names_the_commit_that_switched_the_build(tmp_path):
    installs = {v: resolve_install(TargetSpec(f"pg{v}", version=v), env.cache_dir()).bindir.parent
                for v in ("17.10", "18.4")}
    repo = tmp_path / "src"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.org")
    git(repo, "config", "user.name", "t")
    for i, version in enumerate(["17.10", "17.10", "17.10", "18.4", "18.4"]):
        (repo / "INSTALL").write_text(str(installs[version]))
        (repo / "NOTES").write_text(f"commit {i}\n")
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "switch to 18" if i == 3 else f"harmless {i}")
    planted = git(repo, "rev-parse", "HEAD~1")
    store = tmp_path / "b.db"
    cache = shared_work_dir("bisect-cache")
    args = ["bisect", "--source", repo, "--good", "HEAD~4", "--bad", "HEAD", "--build", BUILD, "--test", "point-query",
            "--rows", "2000", "--store", store, "--format", "json"]
    run = dbdrift(*args, work_dir=shared_work_dir("bisect-src"), timeout=900,
                  extra_env={"DBDRIFT_CACHE_DIR": str(cache)})
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout)
    assert out["verdict"] == "found" and out["first_bad"] == planted[:9]
    assert [c["subject"] for c in out["commits"]][3] == "switch to 18"
    measured = [p["version"] for p in out["probes"]]
    assert len(measured) == 4  # good, bad, and two midpoints of five commits
    assert all(c["build_s"] >= 0 and not c["build_cached"] for c in out["commits"] if "build_s" in c)
    assert query(store, "SELECT COUNT(*) AS n FROM campaigns")[0]["n"] == len(measured)

    shown = dbdrift("history", "--store", store, "--metric", "instructions", "--format", "json")
    labels = [p["label"] for p in json.loads(shown.stdout)["series"][0]["points"]]
    commits = [c["short"] for c in out["commits"] if c["short"] in measured]
    assert labels == [f"{'18.4' if c in (planted[:9], out['candidates'][-1]) else '17.10'}@{c}" for c in commits]

    again = dbdrift(*args, work_dir=shared_work_dir("bisect-src"), timeout=300,
                    extra_env={"DBDRIFT_CACHE_DIR": str(cache)})
    assert again.returncode == 0 and "building" not in again.stderr and "measuring" not in again.stderr
