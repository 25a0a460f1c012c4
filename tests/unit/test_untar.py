"""Unpacking build archives: the same rules with tarfile's data filter (Python 3.11.4+) and
without it (Debian 12's 3.11.2), on archives made in the test."""
from __future__ import annotations

import io
import stat
import tarfile

import pytest

from dbdrift.server import untar


@pytest.fixture(params=[True, False], ids=["data-filter", "by-hand"])
def filters(request, monkeypatch):
    if request.param and not untar.HAS_FILTERS:
        pytest.skip("this Python has no tarfile data filter")
    monkeypatch.setattr(untar, "HAS_FILTERS", request.param)
    if not request.param:  # as on Python 3.11.0-3.11.3, which has neither
        monkeypatch.delattr(tarfile.TarInfo, "replace", raising=False)
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    return request.param


def archive(*members: tuple[str, str, object]) -> tarfile.TarFile:
    """members: (name, kind, content-or-link-or-mode) with kind file, setuid, link, hardlink, dir, device."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, kind, value in members:
            info = tarfile.TarInfo(name)
            if kind in ("file", "setuid"):
                body = b"x"
                info.size, info.mode = len(body), 0o4755 if kind == "setuid" else 0o644
                tar.addfile(info, io.BytesIO(body))
                continue
            info.type = {"link": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE, "dir": tarfile.DIRTYPE,
                         "device": tarfile.CHRTYPE}[kind]
            info.linkname = value if kind in ("link", "hardlink") else ""
            info.mode = 0o755
            tar.addfile(info)
    out.seek(0)
    return tarfile.open(fileobj=out, mode="r|")


def test_files_directories_and_links_inside_are_unpacked(filters, tmp_path):
    untar.extract_all(archive(("bin", "dir", None), ("bin/mysqld", "file", None), ("bin/mysql", "link", "mysqld"),
                              ("bin/hard", "hardlink", "bin/mysqld")), tmp_path)
    assert (tmp_path / "bin/mysqld").read_bytes() == b"x" and (tmp_path / "bin/mysql").resolve() == \
        (tmp_path / "bin/mysqld").resolve() and (tmp_path / "bin/hard").read_bytes() == b"x"


@pytest.mark.parametrize("member", [("../escape", "file", None), ("lib/../../up", "file", None),
                                    ("lib/x", "link", "/etc/passwd"), ("lib/y", "link", "../../etc"),
                                    ("dev/null", "device", None)])
def test_members_outside_the_destination_and_devices_are_refused(filters, tmp_path, member):
    with pytest.raises(untar.UnsafeMember):
        untar.extract_all(archive(member), tmp_path / "dest")


def test_setuid_and_group_write_bits_are_dropped(filters, tmp_path):
    untar.extract_all(archive(("bin/tool", "setuid", None)), tmp_path)
    mode = (tmp_path / "bin/tool").stat().st_mode
    assert not mode & (stat.S_ISUID | stat.S_IWGRP | stat.S_IWOTH) and mode & stat.S_IXUSR


def test_an_unsafe_member_can_be_left_out_instead(filters, tmp_path):
    dropped = []
    untar.extract_all(archive(("lib/x", "link", "/tmp/elsewhere"), ("lib/y", "file", None)), tmp_path,
                      unsafe=lambda member, why: dropped.append(member.name))
    assert dropped == ["lib/x"] and (tmp_path / "lib/y").is_file()


def test_a_leading_slash_is_dropped_so_the_member_lands_inside(filters, tmp_path):
    untar.extract_all(archive(("/etc/evil", "file", None)), tmp_path)
    assert (tmp_path / "etc/evil").is_file()


def test_a_deb_unpacks_without_tarfile_filters_too(filters, tmp_path):
    from tests.unit.test_debian import make_deb
    from dbdrift.server.debformat import unpack_deb
    unpack_deb(make_deb(tmp_path / "p.deb"), tmp_path / "build")
    assert (tmp_path / "build/usr/bin/server-hardlink").read_bytes() == (tmp_path / "build/usr/sbin/server").read_bytes()
    assert (tmp_path / "build/lib64/ld-linux-x86-64.so.2").readlink().as_posix() == \
        "../lib/x86_64-linux-gnu/ld-2.31.so"
    assert not (tmp_path / "build/usr/share/doc").exists()
