"""Commits of a source tree between two revisions, and their builds cached by commit
(runner/sourcebuild.py), on a real git repository with a build command that makes no server."""
import json
import subprocess

import pytest

from dbdrift.errors import UserError
from dbdrift.runner import sourcebuild

# installs a stand-in bin/postgres that prints the tree's VALUE file: enough for the build logic
BUILD = 'mkdir -p "$PREFIX/bin" && cp VALUE "$PREFIX/value" && printf "#!/bin/sh\\necho x\\n" > "$PREFIX/bin/postgres" ' \
        '&& chmod +x "$PREFIX/bin/postgres" && echo built "$DBDRIFT_COMMIT"'


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    repo = tmp_path / "src"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.org")
    git(repo, "config", "user.name", "t")
    for i in range(6):
        (repo / "VALUE").write_text(str(i))
        git(repo, "add", "VALUE")
        git(repo, "commit", "-q", "-m", f"change {i}", "--date", f"2026-01-0{i + 1}T00:00:00")
    git(repo, "tag", "good", "HEAD~4")
    return repo


def test_commits_are_good_then_each_commit_up_to_bad_oldest_first(repo):
    found = sourcebuild.commits(repo, "good", "main")
    assert [c.subject for c in found] == ["change 1", "change 2", "change 3", "change 4", "change 5"]
    assert found[-1].sha == git(repo, "rev-parse", "main") and len(found[0].short) == 9


def test_unknown_revisions_and_a_bad_that_is_not_after_good_are_refused(repo, tmp_path):
    with pytest.raises(UserError, match="--bad nope: no such commit"):
        sourcebuild.commits(repo, "good", "nope")
    with pytest.raises(UserError, match="not an ancestor"):
        sourcebuild.commits(repo, "main", "good")
    with pytest.raises(UserError, match="not a directory"):
        sourcebuild.commits(tmp_path / "missing", "good", "main")


def test_a_commit_is_built_once_in_a_worktree_and_then_taken_from_the_cache(repo, tmp_path):
    cache = tmp_path / "cache"
    commit = sourcebuild.commits(repo, "good", "main")[2]
    said = []
    first = sourcebuild.build(repo, commit, BUILD, "postgres", cache, said.append)
    assert first.prefix is not None and not first.cached
    assert (first.prefix / "value").read_text() == "3"  # the commit's tree, not the checkout's
    assert (repo / "VALUE").read_text() == "5" and git(repo, "status", "--porcelain") == ""
    marker = json.loads((first.prefix / sourcebuild.BUILD_MARKER).read_text())
    assert marker["commit"] == commit.sha and marker["subject"] == "change 3"
    assert commit.sha in first.log.read_text()
    assert git(repo, "worktree", "list").count("\n") == 0  # the scratch worktree is gone
    again = sourcebuild.build(repo, commit, BUILD, "postgres", cache, said.append)
    assert again.cached and again.prefix == first.prefix and len(said) == 1
    assert sourcebuild.build_facts(first.prefix / "bin")["commit"] == commit.sha


def test_a_failed_build_is_remembered_for_its_command_and_says_why(repo, tmp_path):
    cache = tmp_path / "cache"
    commit = sourcebuild.commits(repo, "good", "main")[1]
    failed = sourcebuild.build(repo, commit, "echo compiling; echo 'error: boom' >&2; exit 2", "postgres", cache,
                               lambda _: None)
    assert failed.prefix is None and "exit status 2" in failed.error and "error: boom" in failed.error
    remembered = sourcebuild.build(repo, commit, "echo compiling; echo 'error: boom' >&2; exit 2", "postgres", cache,
                                   lambda _: None)
    assert remembered.cached and remembered.prefix is None and "delete " in remembered.error
    nothing = sourcebuild.build(repo, commit, "true", "postgres", cache, lambda _: None)  # another command: rebuilt
    assert not nothing.cached and "installed no bin/postgres" in nothing.error
    fixed = sourcebuild.build(repo, commit, BUILD, "postgres", cache, lambda _: None)
    assert fixed.prefix is not None and not fixed.cached


def test_a_long_build_says_how_long_it_has_taken_and_its_logs_last_line(repo, tmp_path, monkeypatch):
    monkeypatch.setattr(sourcebuild, "REPORT_EVERY_S", 0.1)
    commit = sourcebuild.commits(repo, "good", "main")[1]
    said = []
    built = sourcebuild.build(repo, commit, "echo compiling parser; sleep 0.5; " + BUILD, "postgres",
                              tmp_path / "cache", said.append)
    assert built.prefix is not None
    progress = [s for s in said if s.startswith(f"building {commit.short}: ")]
    assert len(progress) >= 2 and "compiling parser" in progress[0]
