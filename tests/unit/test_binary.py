"""Binary sizes (metrics/binary.py, `dbdrift bloat`) on small ELF programs built here with gcc:
an install prefix whose bin/postgres needs a library from its own lib/."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from dbdrift.metrics.binary import binary_facts, elf_sections, object_sizes, own_libraries, server_binary
from tests.helpers import dbdrift

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
MAIN = r"""
#include <stdio.h>
#include <string.h>
int helper(void);
static char big[%(bss)d];
const char table[%(rodata)d] = {1};
int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--version") == 0) { puts("postgres (PostgreSQL) 17.10"); return 0; }
    big[0] = table[0];
    return helper() + big[0];
}
"""


def build_install(root: Path, bss: int = 100_000, rodata: int = 50_000) -> Path:
    """root/bin/{postgres,initdb,pg_ctl} (with symbols, RUNPATH $ORIGIN/../lib) and root/lib/libhelper.so."""
    (root / "bin").mkdir(parents=True)
    (root / "lib").mkdir()
    src = root / "src"
    src.mkdir()
    (src / "helper.c").write_text("int helper(void) { return 0; }\n")
    (src / "main.c").write_text(MAIN % {"bss": bss, "rodata": rodata})
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", root / "lib" / "libhelper.so", src / "helper.c"], check=True)
    subprocess.run(["gcc", "-g", "-c", "-o", src / "main.o", src / "main.c"], check=True)
    subprocess.run(["gcc", "-g", "-o", root / "bin" / "postgres", src / "main.o", f"-L{root / 'lib'}", "-lhelper",
                    "-Wl,-rpath,$ORIGIN/../lib"], check=True)
    for tool in ("initdb", "pg_ctl"):
        (root / "bin" / tool).write_text("#!/bin/sh\n")
        (root / "bin" / tool).chmod(0o755)
    return root


def size_berkeley(path: Path) -> tuple[int, int, int]:
    line = subprocess.run(["size", str(path)], capture_output=True, text=True, check=True).stdout.splitlines()[1]
    text, data, bss = (int(x) for x in line.split()[:3])
    return text, data, bss


def test_sections_are_what_size_reports_and_stripping_drops_the_symbols(tmp_path):
    binary = build_install(tmp_path / "inst") / "bin" / "postgres"
    facts = binary_facts(binary)
    if shutil.which("size"):
        assert (facts["text"], facts["data"], facts["bss"]) == size_berkeley(binary)
    assert facts["bss"] >= 100_000 and facts["text"] >= 50_000  # the static array, the const table
    assert facts["bytes"] == binary.stat().st_size
    assert facts["stripped_bytes"] is not None and facts["stripped_bytes"] < facts["bytes"]  # built with -g


def test_the_libraries_of_its_own_install_are_found_and_system_ones_are_not(tmp_path):
    binary = build_install(tmp_path / "inst") / "bin" / "postgres"
    libs = own_libraries(binary)
    assert [lib["name"] for lib in libs] == ["libhelper.so"]  # libc is the system's
    assert libs[0]["bytes"] == (tmp_path / "inst" / "lib" / "libhelper.so").stat().st_size
    assert server_binary(tmp_path / "inst" / "bin", "postgres") == binary.resolve()


def test_object_files_are_sized_by_text_and_data(tmp_path):
    build_install(tmp_path / "inst")
    sizes = object_sizes(tmp_path / "inst" / "src")
    sections = elf_sections(tmp_path / "inst" / "src" / "main.o")
    assert sizes == {"main.o": sections["text"] + sections["data"]}


def test_bloat_compares_two_builds_and_lists_the_objects_that_grew(tmp_path):
    small = build_install(tmp_path / "small", bss=10_000, rodata=10_000)
    large = build_install(tmp_path / "large", bss=10_000, rodata=400_000)
    result = dbdrift("bloat", f"small={small}", f"large={large}", "--build-dir", f"small={small / 'src'}",
                     "--build-dir", f"large={large / 'src'}", "--format", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    rows = {r["target"]: r for r in doc["binaries"]}
    assert rows["large"]["text"] - rows["small"]["text"] >= 390_000
    assert [lib["name"] for lib in rows["small"]["libs"]] == ["libhelper.so"]
    grown = doc["objects"][0]
    assert (grown["target"], grown["reference"], grown["objects"][0]["object"]) == ("large", "small", "main.o")
    assert grown["objects"][0]["ratio"] > 5
    text = dbdrift("bloat", f"small={small}", f"large={large}").stdout
    assert "relative to small" in text and "libhelper.so" in text


def test_bloat_refuses_a_build_dir_for_no_target(tmp_path):
    inst = build_install(tmp_path / "inst")
    result = dbdrift("bloat", f"a={inst}", "--build-dir", f"b={inst / 'src'}")
    assert result.returncode == 2 and "name one of the targets" in result.stderr and "hint:" in result.stderr
