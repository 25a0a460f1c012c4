"""Unpacking tar archives of builds safely on every Python 3.11: tarfile's "data" filter where
it exists (3.11.4 and later), else the same rules checked here (Debian 12's Python is 3.11.2).

Leading slashes are dropped from names; a member may not then land or link outside the
destination, devices are not made, and modes lose their setuid, setgid and sticky bits and
group/other write; ownership is not restored.
"""
from __future__ import annotations

import os
import stat
import tarfile
from pathlib import Path
from typing import Any, Callable

HAS_FILTERS = hasattr(tarfile, "data_filter")


class UnsafeMember(ValueError):
    """A member that would land or link outside the destination, or a device."""


def checked(member: tarfile.TarInfo, dest: Path) -> tarfile.TarInfo:
    """The member as the "data" filter passes it; UnsafeMember if the filter refuses it."""
    if HAS_FILTERS:
        try:
            return tarfile.data_filter(member, str(dest))
        except tarfile.FilterError as exc:
            raise UnsafeMember(str(exc)) from exc
    root = dest.resolve()
    member = changed(member, name=member.name.lstrip("/" + os.sep))  # as the filter does
    target = (root / member.name).resolve()
    if not _inside(target, root):
        raise UnsafeMember(f"{member.name!r} would be outside {dest}")
    if member.ischr() or member.isblk() or member.isfifo():
        raise UnsafeMember(f"{member.name!r} is a device or pipe")
    if member.issym():
        if os.path.isabs(member.linkname) or not _inside((target.parent / member.linkname).resolve(), root):
            raise UnsafeMember(f"{member.name!r} links outside {dest} ({member.linkname})")
    elif member.islnk() and not _inside((root / member.linkname).resolve(), root):
        raise UnsafeMember(f"{member.name!r} links outside {dest} ({member.linkname})")
    mode = member.mode & ~(stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX | stat.S_IWGRP | stat.S_IWOTH)
    return changed(member, mode=mode | stat.S_IRUSR | stat.S_IWUSR)


def extract(archive: tarfile.TarFile, member: tarfile.TarInfo, dest: Path) -> None:
    """Extract a member `checked` has passed."""
    if HAS_FILTERS:
        archive.extract(member, dest, filter="fully_trusted")
        return
    archive.extract(member, dest, set_attrs=False)
    if not member.issym():
        (dest / member.name).chmod(member.mode & 0o7777)


def extract_all(archive: tarfile.TarFile, dest: Path,
                unsafe: Callable[[tarfile.TarInfo, UnsafeMember], None] | None = None) -> None:
    """Every member into `dest`, streamed; an unsafe one raises, or goes to `unsafe` if given."""
    for member in archive:
        try:
            passed = checked(member, dest)
        except UnsafeMember as exc:
            if unsafe is None:
                raise
            unsafe(member, exc)
            continue
        extract(archive, passed, dest)


def changed(member: tarfile.TarInfo, **fields: Any) -> tarfile.TarInfo:
    """A copy of `member` with `fields` set (TarInfo.replace came with Python 3.11.4)."""
    copy = tarfile.TarInfo(member.name)
    for slot in tarfile.TarInfo.__slots__:
        if hasattr(member, slot):
            setattr(copy, slot, getattr(member, slot))
    for name, value in fields.items():
        setattr(copy, name, value)
    return copy


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
