"""How big a server binary is: the file as-is and stripped, its text, data and bss, and the
shared libraries it loads from its own install (code bloat, as the posts track it per release).

ELF is read with pyelftools; the stripped size is what `strip` would leave, from the section
headers. text, data and bss follow `size` (Berkeley format): text is every allocated section
that is not writable (code and read-only data), data the writable ones with contents, bss the
writable ones without.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, TypedDict

from elftools.common.exceptions import ELFError
from elftools.elf.constants import SH_FLAGS
from elftools.elf.dynamic import DynamicSection, DynamicTag
from elftools.elf.elffile import ELFFile

from dbdrift.errors import UserError

SERVER_PROGRAMS = {"postgres": ("postgres",), "mysql": ("mysqld",), "mariadb": ("mariadbd", "mysqld")}
LIB_DIRS = ("lib", "lib64", "lib/private", "lib/mysql", "lib/x86_64-linux-gnu")
SYSTEM_PREFIXES = (Path("/"), Path("/usr"))


def server_binary(bindir: Path, engine: str) -> Path:
    """The server program of an install: bin/postgres, bin/mysqld, bin/mariadbd (or sbin/)."""
    for name in SERVER_PROGRAMS[engine]:
        for where in (bindir, bindir.parent / "sbin", bindir.parent / "libexec"):
            if (where / name).is_file():
                return (where / name).resolve()
    raise UserError(f"no {' or '.join(SERVER_PROGRAMS[engine])} in {bindir}",
                    "point the target at an install prefix that holds the server program")


def binary_facts(path: Path) -> dict[str, Any]:
    """Sizes in bytes of `path` and of the libraries it needs from its own install."""
    stat = path.stat()
    return dict(_facts(str(path), stat.st_size, stat.st_mtime_ns))


@lru_cache(maxsize=64)
def _facts(path_text: str, size: int, mtime_ns: int) -> tuple[tuple[str, Any], ...]:
    path = Path(path_text)
    sections = elf_sections(path)
    libs = own_libraries(path)
    facts = {"path": path_text, "bytes": size, "stripped_bytes": stripped_size(path), **sections,
             "libs": libs, "libs_bytes": sum(lib["bytes"] for lib in libs)}
    return tuple(facts.items())


def elf_sections(path: Path) -> dict[str, int]:
    """text, data and bss in bytes, as `size` counts them."""
    text = data = bss = 0
    try:
        with path.open("rb") as f:
            for section in ELFFile(f).iter_sections():
                flags = section["sh_flags"]
                if not flags & SH_FLAGS.SHF_ALLOC:
                    continue
                if not flags & SH_FLAGS.SHF_WRITE:
                    text += section["sh_size"]
                elif section["sh_type"] == "SHT_NOBITS":
                    bss += section["sh_size"]
                else:
                    data += section["sh_size"]
    except (ELFError, OSError) as exc:
        raise UserError(f"{path} is not a readable ELF binary: {exc}", "point the target at a Linux build") from None
    return {"text": text, "data": data, "bss": bss}


# What `strip` drops from a file, by section name: symbols, debug information, build notes.
_STRIPPED = (".symtab", ".strtab", ".debug", ".zdebug", ".gnu.build.attributes")


def stripped_size(path: Path) -> int:
    """Bytes `strip` would leave: the file without its symbol table, debug sections and
    build-attribute notes, from the section headers (within a few KB of strip's output, which
    takes minutes on the 200 MB annotated mysqld of MySQL 8.0.33)."""
    removed = 0
    try:
        with path.open("rb") as f:
            for section in ELFFile(f).iter_sections():
                if (not section["sh_flags"] & SH_FLAGS.SHF_ALLOC and section["sh_type"] != "SHT_NOBITS"
                        and section.name.startswith(_STRIPPED)):
                    removed += section["sh_size"]
    except (ELFError, OSError) as exc:
        raise UserError(f"{path} is not a readable ELF binary: {exc}", "point the target at a Linux build") from None
    return path.stat().st_size - removed


def needed(path: Path) -> tuple[list[str], list[str]]:
    """(DT_NEEDED names, DT_RUNPATH/DT_RPATH entries) of an ELF file."""
    names, paths = [], []
    try:
        with path.open("rb") as f:
            for section in ELFFile(f).iter_sections():
                if isinstance(section, DynamicSection):
                    for tag in section.iter_tags():
                        if tag.entry.d_tag == "DT_NEEDED":
                            names.append(_tag_text(tag, "needed"))
                        elif tag.entry.d_tag in ("DT_RUNPATH", "DT_RPATH"):
                            paths += _tag_text(tag, tag.entry.d_tag[3:].lower()).split(":")
    except (ELFError, OSError):
        return [], []
    return names, paths


class LibraryInfo(TypedDict):
    """A library a server binary loads from its own install (`dbdrift bloat`)."""

    name: str
    bytes: int


def _tag_text(tag: DynamicTag, name: str) -> str:
    """A dynamic tag's string (needed, runpath, rpath): pyelftools sets it as an attribute named
    after the tag, which its type information does not declare."""
    return str(getattr(tag, name))


def own_libraries(path: Path) -> list[LibraryInfo]:
    """The libraries the binary loads (transitively) that live in its own install, with sizes."""
    root = path.parent.parent
    if root.resolve() in SYSTEM_PREFIXES:  # a system install: its libraries are the system's
        return []
    dirs = [root / d for d in LIB_DIRS]
    found: dict[str, LibraryInfo] = {}
    todo = [path]
    while todo:
        current = todo.pop()
        names, runpaths = needed(current)
        search = [Path(p.replace("$ORIGIN", str(current.parent))) for p in runpaths if p] + dirs
        for name in names:
            if name in found:
                continue
            lib = next((d / name for d in search if (d / name).is_file()), None)
            if lib is None or not _inside(lib.resolve(), root):
                continue
            real = lib.resolve()
            found[name] = LibraryInfo(name=name, bytes=real.stat().st_size)
            todo.append(real)
    return sorted(found.values(), key=lambda lib: lib["name"])


def _inside(path: Path, root: Path) -> bool:
    try:
        return os.path.commonpath([path, root.resolve()]) == str(root.resolve())
    except ValueError:
        return False


def object_sizes(build_dir: Path) -> dict[str, int]:
    """Relative path -> text + data bytes of every object file (*.o) under a build tree."""
    sizes = {}
    for obj in build_dir.rglob("*.o"):
        try:
            s = elf_sections(obj)
        except UserError:
            continue
        sizes[str(obj.relative_to(build_dir))] = s["text"] + s["data"]
    return sizes
