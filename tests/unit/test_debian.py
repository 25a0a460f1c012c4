"""Debian's archive read offline (server/debian.py): Release and Packages parsing on literal
texts, the library closure over a hand-made index, .deb files built here byte by byte and
unpacked, checksums, gpgv over an InRelease signed with a throwaway key; and relocate.py's
view of the host's own /bin/true. No network, no server."""
from __future__ import annotations

import gzip
import hashlib
import io
import lzma
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest

from dbdrift.errors import UserError
from dbdrift.server import debian, relocate
from dbdrift.server.debformat import Package, closure, parse_packages, parse_release, unpack_deb, upstream_version
from dbdrift.server.debian import check_sha256, verify_signature

# --- upstream_version ---------------------------------------------------------------------


def test_upstream_version_drops_epoch_revision_and_repack_suffix():
    assert upstream_version("1:11.8.9+ds-4") == "11.8.9"


def test_upstream_version_removes_the_tilde_of_a_prerelease():
    assert upstream_version("19~rc1-1") == "19rc1"


def test_upstream_version_drops_a_security_update_revision():
    assert upstream_version("17.12-0+deb13u1") == "17.12"


def test_upstream_version_drops_a_plain_revision():
    assert upstream_version("9.7.4-2") == "9.7.4"


def test_upstream_version_drops_an_epoch_and_a_security_update_revision_together():
    assert upstream_version("1:10.5.29-0+deb11u1") == "10.5.29"


# --- parse_release --------------------------------------------------------------------------

SHA_PACKAGES = "a" * 64
SHA_GZ = "b" * 64
SHA_CONTENTS = "c" * 64
RELEASE_BODY = (
    "Origin: Debian\n"
    "Label: Debian\n"
    "Suite: stable\n"
    "Codename: trixie\n"
    "Date: Sat, 10 Jan 2026 10:00:00 UTC\n"
    "Valid-Until: Sat, 17 Jan 2026 10:00:00 UTC\n"
    "Architectures: all amd64\n"
    "MD5Sum:\n"
    " 0123456789abcdef0123456789abcdef   999 main/binary-amd64/Release\n"
    "SHA256:\n"
    f" {SHA_PACKAGES}  9876543 main/binary-amd64/Packages.xz\n"
    f" {SHA_GZ} 12345678 main/binary-amd64/Packages.gz\n"
    f" {SHA_CONTENTS}      42 main/Contents-amd64\n"
)
INRELEASE = (
    "-----BEGIN PGP SIGNED MESSAGE-----\n"
    "Hash: SHA512\n"
    "\n"
    + RELEASE_BODY
    + "-----BEGIN PGP SIGNATURE-----\n"
    "\n"
    "iQIzBAEBCgAdFiEEAAAAAAAAAAAAAAAAAAAAAAAAAAAFAmWeaAAACgkQAAAAAAAA\n"
    "=AAAA\n"
    "-----END PGP SIGNATURE-----\n"
)
EXPECTED_FILES = {
    "main/binary-amd64/Packages.xz": (SHA_PACKAGES, 9876543),
    "main/binary-amd64/Packages.gz": (SHA_GZ, 12345678),
    "main/Contents-amd64": (SHA_CONTENTS, 42),
}


def test_parse_release_reads_date_validity_and_sha256_files_of_a_clearsigned_inrelease():
    release = parse_release("trixie", INRELEASE.encode(), "signature verified by gpgv (key 0123456789ABCDEF)")
    assert release.suite == "trixie"
    assert release.date == "Sat, 10 Jan 2026 10:00:00 UTC"
    assert release.valid_until == "Sat, 17 Jan 2026 10:00:00 UTC"
    assert release.files == EXPECTED_FILES
    assert release.signature == "signature verified by gpgv (key 0123456789ABCDEF)"


def test_parse_release_reads_an_unsigned_release_the_same_way():
    release = parse_release("sid", RELEASE_BODY.encode(), "signature not verified: no gpgv on this host")
    assert (release.date, release.valid_until) == ("Sat, 10 Jan 2026 10:00:00 UTC", "Sat, 17 Jan 2026 10:00:00 UTC")
    assert release.files == EXPECTED_FILES


def test_parse_release_takes_files_from_sha256_not_from_md5sum():
    release = parse_release("trixie", INRELEASE.encode(), "")
    assert "main/binary-amd64/Release" not in release.files


def test_a_release_without_sha256_files_is_a_user_error():
    text = "Date: Sat, 10 Jan 2026 10:00:00 UTC\nMD5Sum:\n 0123456789abcdef0123456789abcdef 1 main/x\n"
    with pytest.raises(UserError, match="no SHA256 files"):
        parse_release("trixie", text.encode(), "")


def test_a_clearsigned_inrelease_with_an_empty_sha256_field_is_a_user_error():
    text = "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\nDate: x\nSHA256:\n-----BEGIN PGP SIGNATURE-----\n"
    with pytest.raises(UserError, match="no SHA256 files"):
        parse_release("trixie", text.encode(), "")


@pytest.mark.fault("caches")
def test_a_clearsigned_inrelease_cut_short_after_its_header_is_a_user_error():
    with pytest.raises(UserError, match="no SHA256 files"):
        parse_release("trixie", INRELEASE.encode()[:48], "")


def test_parse_release_reads_what_the_file_calls_its_suite():
    assert parse_release("trixie", INRELEASE.encode(), "").names == ("stable", "trixie")


def test_an_inrelease_that_names_another_suite_is_refused_for_this_one(tmp_path, monkeypatch):
    monkeypatch.setenv("DBDRIFT_DEBIAN_KEYRING", str(tmp_path / "no-keyring.gpg"))
    path = tmp_path / "InRelease"
    path.write_text(INRELEASE.replace("Codename: trixie", "Codename: bookworm").replace("Suite: stable",
                                                                                        "Suite: oldstable"))
    with pytest.raises(UserError, match="it names the suite oldstable / bookworm, not trixie"):
        debian.read_release(debian.suite_named("trixie"), path)


def test_an_inrelease_that_names_the_suite_by_its_codename_or_its_suite_field_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("DBDRIFT_DEBIAN_KEYRING", str(tmp_path / "no-keyring.gpg"))
    path = tmp_path / "InRelease"
    path.write_text(INRELEASE.replace("Codename: trixie", "Codename: rc-buggy").replace("Suite: stable",
                                                                                        "Suite: experimental"))
    assert debian.read_release(debian.suite_named("experimental"), path).files == EXPECTED_FILES


# --- parse_packages -----------------------------------------------------------------------


def stanza(name: str, version: str, **fields: str) -> str:
    lines = [f"Package: {name}", f"Version: {version}", "Architecture: amd64"]
    lines += [f"{key.replace('_', '-')}: {value}" for key, value in fields.items()]
    lines += [f"Filename: pool/main/{name[0]}/{name}/{name}_{version.split(':')[-1]}_amd64.deb",
              f"Size: {len(name) * 100 + 1}", f"SHA256: {hashlib.sha256(f'{name} {version}'.encode()).hexdigest()}"]
    return "\n".join(lines) + "\n"


def test_parse_packages_reads_filename_size_sha256_and_version():
    index = parse_packages(stanza("libpq5", "17.12-0+deb13u1"))
    package = index["libpq5"]
    assert package.version == "17.12-0+deb13u1"
    assert package.filename == "pool/main/l/libpq5/libpq5_17.12-0+deb13u1_amd64.deb"
    assert package.size == 601
    assert package.sha256 == hashlib.sha256(b"libpq5 17.12-0+deb13u1").hexdigest()


def test_parse_packages_keeps_the_newest_version_when_a_name_appears_twice():
    text = "\n".join([stanza("libpq5", "17.13-1"), stanza("libpq5", "17.12-0+deb13u1"), stanza("libpq5", "17.2-1")])
    assert parse_packages(text)["libpq5"].version == "17.13-1"


def test_parse_packages_keeps_the_newest_version_whichever_stanza_comes_first():
    text = "\n".join([stanza("libpq5", "17.2-1"), stanza("libpq5", "17.13-1")])
    assert parse_packages(text)["libpq5"].version == "17.13-1"


def test_parse_packages_keeps_revision_10_over_revision_2_of_one_upstream_version():
    text = "\n".join([stanza("libpq5", "9.7.4-2"), stanza("libpq5", "9.7.4-10")])
    assert parse_packages(text)["libpq5"].version == "9.7.4-10"


def test_parse_packages_keeps_the_version_with_the_higher_epoch():
    text = "\n".join([stanza("libfoo1", "1:1.0-1"), stanza("libfoo1", "2.0-1")])
    assert parse_packages(text)["libfoo1"].version == "1:1.0-1"


def test_parse_packages_joins_pre_depends_before_depends():
    text = stanza("postgresql-17", "17.12-0+deb13u1", Pre_Depends="libc6 (>= 2.38)",
                  Depends="libpq5 (>= 17), libssl3t64 (>= 3.0.0)")
    assert parse_packages(text)["postgresql-17"].depends == "libc6 (>= 2.38), libpq5 (>= 17), libssl3t64 (>= 3.0.0)"


def test_parse_packages_reads_provides_without_versions():
    text = stanza("libelogind0", "255.5-1", Provides="libsystemd0 (= 255), logind")
    assert parse_packages(text)["libelogind0"].provides == ["libsystemd0", "logind"]


def test_parse_packages_skips_a_stanza_without_filename_or_sha256():
    text = "Package: broken\nVersion: 1\n\n" + stanza("libpq5", "17.2-1")
    assert list(parse_packages(text)) == ["libpq5"]


def test_parse_packages_joins_continuation_lines_of_a_long_depends():
    text = ("Package: postgresql-17\nVersion: 17.2-1\nDepends: libc6 (>= 2.38),\n libpq5 (>= 17)\n"
            "Filename: pool/p.deb\nSize: 1\nSHA256: " + "d" * 64 + "\n")
    assert parse_packages(text)["postgresql-17"].depends == "libc6 (>= 2.38),\nlibpq5 (>= 17)"


# --- closure ----------------------------------------------------------------------------------


def pkg(name: str, depends: str = "", provides: tuple[str, ...] = ()) -> Package:
    return Package(name, "1.0-1", f"pool/main/{name}.deb", "0" * 64, 1, depends, list(provides))


def index_of(*packages: Package) -> dict[str, Package]:
    return {p.name: p for p in packages}


def names(packages: list[Package]) -> list[str]:
    return [p.name for p in packages]


def test_closure_follows_pre_depends_and_depends_of_a_parsed_index():
    text = "\n".join([
        stanza("postgresql-17", "17.2-1", Pre_Depends="libc6 (>= 2.38)", Depends="libpq5 (>= 17)"),
        stanza("libc6", "2.41-1"),
        stanza("libpq5", "17.2-1"),
    ])
    assert set(names(closure(parse_packages(text), ["postgresql-17"]))) == {"postgresql-17", "libc6", "libpq5"}


def test_closure_follows_library_packages_and_zlib_but_not_debconf_perl_tzdata_or_common():
    index = index_of(
        pkg("postgresql-17", "debconf (>= 0.5) | debconf-2.0, perl:any, tzdata, postgresql-common (>= 252), "
                             "postgresql-client-17, libssl3 (>= 3), zlib1g (>= 1:1.1.4), libc6 (>= 2.38)"),
        pkg("debconf", "perl-base"), pkg("perl", "libperl5.40"), pkg("tzdata"), pkg("postgresql-common", "libfoo1"),
        pkg("postgresql-client-17", "libreadline8"), pkg("perl-base"), pkg("libperl5.40"), pkg("libfoo1"),
        pkg("libreadline8"), pkg("libssl3", "libc6"), pkg("zlib1g", "libc6"), pkg("libc6"),
    )
    assert set(names(closure(index, ["postgresql-17"]))) == {"postgresql-17", "libssl3", "zlib1g", "libc6"}


def test_closure_lists_the_seed_first():
    index = index_of(pkg("libc6"), pkg("mariadb-server-core", "libc6"))
    assert names(closure(index, ["mariadb-server-core"]))[0] == "mariadb-server-core"


def test_closure_follows_dependencies_of_dependencies():
    index = index_of(pkg("postgresql-17", "libpq5"), pkg("libpq5", "libssl3, libgssapi-krb5-2"),
                     pkg("libssl3", "libc6"), pkg("libgssapi-krb5-2", "libkrb5-3"), pkg("libkrb5-3"), pkg("libc6"))
    assert set(names(closure(index, ["postgresql-17"]))) == {
        "postgresql-17", "libpq5", "libssl3", "libgssapi-krb5-2", "libkrb5-3", "libc6"}


def test_closure_picks_the_first_alternative_the_index_has():
    index = index_of(pkg("mysql-server-core-8.0", "libmissing1 | libssl3t64 | libssl3"),
                     pkg("libssl3t64"), pkg("libssl3"))
    assert names(closure(index, ["mysql-server-core-8.0"])) == ["mysql-server-core-8.0", "libssl3t64"]


def test_closure_uses_a_real_package_before_a_provides_of_another_package():
    index = index_of(pkg("libelogind0", provides=("libsystemd0",)), pkg("mariadb-server-core", "libsystemd0"),
                     pkg("libsystemd0"))
    assert names(closure(index, ["mariadb-server-core"])) == ["mariadb-server-core", "libsystemd0"]


def test_closure_follows_provides_when_the_named_package_does_not_exist():
    index = index_of(pkg("mariadb-server-core", "libsystemd0"), pkg("libelogind0", provides=("libsystemd0",)))
    assert names(closure(index, ["mariadb-server-core"])) == ["mariadb-server-core", "libelogind0"]


def test_closure_skips_a_dependency_no_package_has_or_provides():
    index = index_of(pkg("postgresql-17", "libnowhere1, libc6"), pkg("libc6"))
    assert names(closure(index, ["postgresql-17"])) == ["postgresql-17", "libc6"]


def test_closure_ignores_versions_and_architecture_qualifiers_of_dependencies():
    index = index_of(pkg("postgresql-17", "libc6:amd64 (>= 2.38), libpq5 (>= 17~~)"), pkg("libc6"), pkg("libpq5"))
    assert names(closure(index, ["postgresql-17"])) == ["postgresql-17", "libc6", "libpq5"]


def test_closure_terminates_on_a_dependency_cycle_and_lists_each_package_once():
    index = index_of(pkg("postgresql-17", "liba1"), pkg("liba1", "libb1"), pkg("libb1", "liba1, libgcc-s1"),
                     pkg("libgcc-s1", "libc6"), pkg("libc6", "libgcc-s1"))
    assert names(closure(index, ["postgresql-17"])) == ["postgresql-17", "liba1", "libb1", "libgcc-s1", "libc6"]


def test_closure_lists_a_package_two_seeds_share_once():
    index = index_of(pkg("postgresql-17", "libc6"), pkg("postgresql-17-pgvector", "libc6"), pkg("libc6"))
    assert names(closure(index, ["postgresql-17", "postgresql-17-pgvector"])) == [
        "postgresql-17", "postgresql-17-pgvector", "libc6"]


def test_closure_raises_user_error_for_a_seed_missing_from_the_index():
    with pytest.raises(UserError, match="postgresql-99 is not in the suite's index"):
        closure(index_of(pkg("libc6")), ["postgresql-99"])


# --- .deb files built by hand -----------------------------------------------------------------


def ar_archive(members: list[tuple[str, bytes]]) -> bytes:
    """An ar archive as dpkg-deb writes it: the magic, then per member a 60-byte header and
    the body, padded with a newline to an even size."""
    out = [b"!<arch>\n"]
    for name, body in members:
        header = f"{name:<16}{0:<12}{0:<6}{0:<6}{'100644':<8}{len(body):<10}`\n".encode()
        assert len(header) == 60
        out.append(header + body + (b"\n" if len(body) % 2 else b""))
    return b"".join(out)


def tar_bytes(entries: list[tarfile.TarInfo | tuple[tarfile.TarInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for entry in entries:
            info, body = entry if isinstance(entry, tuple) else (entry, None)
            archive.addfile(info, io.BytesIO(body) if body is not None else None)
    return buffer.getvalue()


def directory(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, 0o755
    return info


def regular(name: str, body: bytes, mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(body), mode
    return info, body


def link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, target, 0o777 if kind == tarfile.SYMTYPE else 0o755
    return info


SERVER_BODY = b"\x7fELF pretend server binary\n"
LOADER_BODY = b"\x7fELF pretend loader\n"
# the members of a data.tar, in the form dpkg-deb writes them ("./" prefixed, directories first)
DATA_ENTRIES = [
    directory("./"), directory("./etc/"), directory("./usr/"), directory("./usr/sbin/"), directory("./usr/bin/"),
    directory("./lib/"), directory("./lib/x86_64-linux-gnu/"), directory("./lib64/"),
    directory("./usr/lib/"), directory("./usr/lib/x86_64-linux-gnu/"),
    directory("./usr/share/"), directory("./usr/share/doc/"), directory("./usr/share/doc/server/"),
    directory("./usr/share/man/"), directory("./usr/share/man/man1/"), directory("./usr/share/server/"),
    regular("./etc/server.conf", b"port = 5432\n"),
    regular("./usr/sbin/server", SERVER_BODY, 0o755),
    regular("./lib/x86_64-linux-gnu/ld-2.31.so", LOADER_BODY, 0o755),
    regular("./usr/lib/x86_64-linux-gnu/libfoo.so.1.2.3", b"library\n"),
    link("./usr/lib/x86_64-linux-gnu/libfoo.so.1", "libfoo.so.1.2.3"),
    link("./lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/ld-2.31.so"),
    link("./usr/bin/server-hardlink", "./usr/sbin/server", tarfile.LNKTYPE),
    regular("./usr/share/server/data.sql", b"select 1;\n"),
    regular("./usr/share/doc/server/copyright", b"(c) someone\n"),
    regular("./usr/share/man/man1/server.1.gz", gzip.compress(b".TH SERVER 1\n")),
]


def make_deb(path: Path, entries=DATA_ENTRIES, compression: str = "xz",
             before_data: list[tuple[str, bytes]] | None = None) -> Path:
    data = tar_bytes(entries)
    compress = {"xz": lzma.compress, "gz": gzip.compress, "": lambda b: b}[compression]
    control = lzma.compress(tar_bytes([directory("./"), regular("./control", b"Package: server\nVersion: 1.0-1\n")]))
    members = [("debian-binary", b"2.0\n"), ("control.tar.xz", control), *(before_data or [])]
    members.append(("data.tar" + (f".{compression}" if compression else ""), compress(data)))
    path.write_bytes(ar_archive(members))
    return path


@pytest.fixture
def unpacked(tmp_path):
    dest = tmp_path / "build"
    unpack_deb(make_deb(tmp_path / "server_1.0-1_amd64.deb"), dest)
    return dest


def test_unpack_deb_extracts_a_regular_file_with_its_content(unpacked):
    assert (unpacked / "etc" / "server.conf").read_bytes() == b"port = 5432\n"
    assert (unpacked / "usr" / "share" / "server" / "data.sql").read_bytes() == b"select 1;\n"


def test_unpack_deb_keeps_an_executable_executable(unpacked):
    server = unpacked / "usr" / "sbin" / "server"
    assert server.read_bytes() == SERVER_BODY
    assert os.access(server, os.X_OK) and server.stat().st_mode & 0o100
    assert not (unpacked / "etc" / "server.conf").stat().st_mode & 0o111


def test_unpack_deb_keeps_a_relative_symlink_as_it_is(unpacked):
    libfoo = unpacked / "usr" / "lib" / "x86_64-linux-gnu" / "libfoo.so.1"
    assert libfoo.is_symlink() and os.readlink(libfoo) == "libfoo.so.1.2.3"
    assert libfoo.read_bytes() == b"library\n"


def test_unpack_deb_makes_an_absolute_symlink_relative_and_resolving_inside_the_destination(unpacked):
    loader = unpacked / "lib64" / "ld-linux-x86-64.so.2"
    assert loader.is_symlink()
    assert os.readlink(loader) == "../lib/x86_64-linux-gnu/ld-2.31.so"
    assert loader.resolve() == (unpacked / "lib" / "x86_64-linux-gnu" / "ld-2.31.so").resolve()
    assert loader.read_bytes() == LOADER_BODY


def test_unpack_deb_extracts_a_hard_link_as_the_same_file(unpacked):
    hard = unpacked / "usr" / "bin" / "server-hardlink"
    assert not hard.is_symlink()
    assert os.path.samefile(hard, unpacked / "usr" / "sbin" / "server")


def test_unpack_deb_leaves_out_documentation_and_manuals(unpacked):
    assert not (unpacked / "usr" / "share" / "doc").exists()
    assert not (unpacked / "usr" / "share" / "man").exists()
    assert (unpacked / "usr" / "share" / "server").is_dir()


def test_unpack_deb_strips_the_leading_dot_slash_of_member_names(unpacked):
    assert sorted(p.name for p in unpacked.iterdir()) == ["etc", "lib", "lib64", "usr"]


def test_unpack_deb_reads_a_gzip_compressed_data_member(tmp_path):
    dest = tmp_path / "build"
    unpack_deb(make_deb(tmp_path / "server.deb", compression="gz"), dest)
    assert (dest / "usr" / "sbin" / "server").read_bytes() == SERVER_BODY


def test_unpack_deb_reads_an_uncompressed_data_member(tmp_path):
    dest = tmp_path / "build"
    unpack_deb(make_deb(tmp_path / "server.deb", compression=""), dest)
    assert (dest / "etc" / "server.conf").read_bytes() == b"port = 5432\n"


def test_unpack_deb_skips_the_padding_byte_after_an_odd_sized_member(tmp_path):
    odd = b"x" * 101  # without its padding byte, the next header would be read one byte early
    deb = make_deb(tmp_path / "server.deb", before_data=[("_odd-member", odd)])
    assert b"x" * 101 + b"\ndata.tar.xz" in deb.read_bytes()
    dest = tmp_path / "build"
    unpack_deb(deb, dest)
    assert (dest / "usr" / "sbin" / "server").read_bytes() == SERVER_BODY


def test_unpack_deb_of_a_file_that_is_not_an_ar_archive_is_a_user_error(tmp_path):
    not_deb = tmp_path / "server.deb"
    not_deb.write_bytes(b"<html>503 Service Unavailable</html>\n")
    with pytest.raises(UserError, match="not a .deb"):
        unpack_deb(not_deb, tmp_path / "build")


def test_unpack_deb_of_an_ar_archive_without_data_member_is_a_user_error(tmp_path):
    deb = tmp_path / "server.deb"
    deb.write_bytes(ar_archive([("debian-binary", b"2.0\n")]))
    with pytest.raises(UserError, match="no data.tar"):
        unpack_deb(deb, tmp_path / "build")


def test_unpack_deb_of_an_unknown_data_compression_is_a_user_error(tmp_path):
    deb = tmp_path / "server.deb"
    deb.write_bytes(ar_archive([("debian-binary", b"2.0\n"), ("data.tar.bz2", b"BZh9")]))
    with pytest.raises(UserError, match="unknown data member data.tar.bz2"):
        unpack_deb(deb, tmp_path / "build")


def test_unpack_deb_keeps_the_leading_dot_of_a_top_level_dot_file(tmp_path):
    deb = make_deb(tmp_path / "server.deb", entries=[directory("./"), regular("./.hidden", b"secret\n")])
    dest = tmp_path / "build"
    unpack_deb(deb, dest)
    assert (dest / ".hidden").read_bytes() == b"secret\n"


# --- check_sha256 -----------------------------------------------------------------------------


@pytest.fixture
def payload(tmp_path):
    path = tmp_path / "libpq5.deb"
    path.write_bytes(b"payload of a package\n")
    return path


def test_check_sha256_passes_a_file_whose_content_and_size_match(payload):
    body = payload.read_bytes()
    assert check_sha256(payload, hashlib.sha256(body).hexdigest(), len(body), "libpq5.deb", debian.DEBIAN) is None


def test_check_sha256_refuses_a_file_whose_content_differs(payload):
    with pytest.raises(UserError, match="refused") as raised:
        check_sha256(payload, hashlib.sha256(b"something else").hexdigest(), payload.stat().st_size,
                     "pool/main/p/libpq5.deb", debian.DEBIAN)
    assert "pool/main/p/libpq5.deb: checksum mismatch" in raised.value.message
    assert debian.DEBIAN.env_var in raised.value.hint


def test_check_sha256_refuses_a_file_whose_size_differs(payload):
    body = payload.read_bytes()
    with pytest.raises(UserError, match="refused"):
        check_sha256(payload, hashlib.sha256(body).hexdigest(), len(body) + 1, "libpq5.deb", debian.DEBIAN)


def test_check_sha256_with_size_zero_checks_only_the_hash(payload):
    body = payload.read_bytes()
    assert check_sha256(payload, hashlib.sha256(body).hexdigest(), 0, "libpq5.deb", debian.DEBIAN) is None


# --- verify_signature -------------------------------------------------------------------------


def test_verify_signature_with_a_missing_keyring_says_the_signature_is_not_verified(tmp_path, monkeypatch):
    inrelease = tmp_path / "InRelease"
    inrelease.write_text(INRELEASE)
    monkeypatch.setenv(debian.KEYRING_ENV, str(tmp_path / "no-such-keyring.gpg"))
    assert verify_signature(inrelease).startswith("signature not verified")


def _gpg(home: str, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(["gpg", "--homedir", home, "--batch", "--pinentry-mode", "loopback", "--passphrase", "",
                           *args], input=stdin, capture_output=True, check=True, timeout=120).stdout


@pytest.fixture(scope="module")
def signing_key():
    """(homedir, keyring file) of a throwaway key made for these tests (gpg, no passphrase)."""
    if shutil.which("gpg") is None:
        pytest.skip("gpg is not installed: cannot make a key to sign a test InRelease")
    if shutil.which("gpgv") is None:
        pytest.skip("gpgv is not installed: verify_signature cannot check signatures on this host")
    home = tempfile.mkdtemp(prefix="dbdrift-gpg-", dir="/tmp")  # short: gpg-agent's socket lives here
    os.chmod(home, 0o700)
    try:
        _gpg(home, "--quick-gen-key", "test@example", "default", "default", "never")
        keyring = Path(home) / "archive-keyring.gpg"
        keyring.write_bytes(_gpg(home, "--export", "test@example"))
        yield home, keyring
    finally:
        if shutil.which("gpgconf"):
            subprocess.run(["gpgconf", "--homedir", home, "--kill", "gpg-agent"], capture_output=True, timeout=60)
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def signed_inrelease(signing_key, tmp_path, monkeypatch):
    home, keyring = signing_key
    inrelease = tmp_path / "InRelease"
    inrelease.write_bytes(_gpg(home, "--local-user", "test@example", "--clearsign", stdin=RELEASE_BODY.encode()))
    monkeypatch.setenv(debian.KEYRING_ENV, str(keyring))
    return inrelease


def test_verify_signature_verifies_an_inrelease_signed_by_a_key_of_the_keyring(signed_inrelease, signing_key):
    home, _keyring = signing_key
    listing = _gpg(home, "--with-colons", "--list-keys", "test@example").decode()
    fingerprints = [line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:")]
    result = verify_signature(signed_inrelease)
    assert result.startswith("signature verified by gpgv (key ") and result.endswith(")")
    key = result.removeprefix("signature verified by gpgv (key ").removesuffix(")")
    assert len(key) == 16 and any(f.endswith(key) for f in fingerprints)  # the signing key's, of this keyring


def test_a_signed_inrelease_parses_to_the_same_files_as_the_unsigned_release(signed_inrelease):
    release = parse_release("trixie", signed_inrelease.read_bytes(), verify_signature(signed_inrelease))
    assert release.files == EXPECTED_FILES and release.signature.startswith("signature verified")


def test_verify_signature_refuses_an_inrelease_with_one_line_changed(signed_inrelease):
    text = signed_inrelease.read_text()
    assert f" {SHA_PACKAGES}  9876543 main/binary-amd64/Packages.xz" in text
    signed_inrelease.write_text(text.replace(" 9876543 main/binary-amd64/Packages.xz",
                                             " 9876544 main/binary-amd64/Packages.xz"))
    with pytest.raises(UserError, match="signature check failed"):
        verify_signature(signed_inrelease)


def test_verify_signature_refuses_an_inrelease_signed_by_a_key_not_in_the_keyring(signed_inrelease, tmp_path,
                                                                                monkeypatch):
    other = tmp_path / "other-keyring.gpg"
    other.write_bytes(b"")
    monkeypatch.setenv(debian.KEYRING_ENV, str(other))
    with pytest.raises(UserError, match="signature check failed"):
        verify_signature(signed_inrelease)


# --- relocate.py on the host's own binaries ---------------------------------------------------

HOST_BINARY = next((Path(p) for p in ("/bin/true", "/usr/bin/true", "/usr/bin/env") if Path(p).is_file()), None)
needs_host_binary = pytest.mark.skipif(HOST_BINARY is None or not Path("/lib64/ld-linux-x86-64.so.2").exists()
                                       and not Path("/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2").exists(),
                                       reason="needs an x86_64 glibc host with /bin/true or /usr/bin/env")


@needs_host_binary
def test_resolved_libraries_of_true_lists_the_host_libc():
    libraries = relocate.resolved_libraries(HOST_BINARY)
    assert libraries.get("libc.so.6") is not None
    assert Path(libraries["libc.so.6"]).is_file()


@needs_host_binary
def test_foreign_libraries_with_nothing_allowed_reports_libc_as_foreign():
    foreign = relocate.foreign_libraries(HOST_BINARY, Path("/nonexistent"), allowed=frozenset())
    assert "libc.so.6" in foreign


@needs_host_binary
def test_foreign_libraries_with_the_host_baseline_reports_nothing_for_true():
    assert relocate.foreign_libraries(HOST_BINARY, Path("/nonexistent")) == {}


@needs_host_binary
def test_foreign_libraries_does_not_report_a_library_found_inside_the_root():
    libc = Path(relocate.resolved_libraries(HOST_BINARY)["libc.so.6"])
    assert relocate.foreign_libraries(HOST_BINARY, libc.parent, allowed=frozenset()) == {}


def test_own_loader_returns_the_file_the_loader_link_points_at(tmp_path):
    lib = tmp_path / "lib" / "x86_64-linux-gnu"
    lib.mkdir(parents=True)
    (lib / "ld-2.31.so").write_bytes(LOADER_BODY)
    (lib / "ld-linux-x86-64.so.2").symlink_to("ld-2.31.so")
    assert relocate.own_loader(tmp_path) == (lib / "ld-2.31.so").resolve()


def test_own_loader_of_an_empty_tree_is_none(tmp_path):
    assert relocate.own_loader(tmp_path) is None


def test_own_loader_ignores_a_link_that_leaves_the_tree(tmp_path):
    lib64 = tmp_path / "lib64"
    lib64.mkdir()
    outside = tmp_path.parent / f"{tmp_path.name}-outside-ld.so"
    outside.write_bytes(LOADER_BODY)
    (lib64 / "ld-linux-x86-64.so.2").symlink_to(outside)
    try:
        assert relocate.own_loader(tmp_path) is None
    finally:
        outside.unlink()


def test_own_loader_finds_the_loader_of_an_unpacked_deb(unpacked):
    assert relocate.own_loader(unpacked) == (unpacked / "lib" / "x86_64-linux-gnu" / "ld-2.31.so").resolve()


def test_a_library_missing_everywhere_is_reported_as_not_found_with_the_others_listed(tmp_path):
    true = shutil.which("true")
    if true is None or not Path(relocate.host_loader()).exists():
        pytest.skip("needs the host's true and x86_64 loader")
    binary = tmp_path / "true"
    shutil.copy(true, binary)
    subprocess.run([relocate.patchelf(), "--add-needed", "libdbdrift-absent.so.1", str(binary)], check=True)
    found = relocate.foreign_libraries(binary, tmp_path)
    assert found == {"libdbdrift-absent.so.1": None}  # libc.so.6 resolved and allowed, the absent one named
