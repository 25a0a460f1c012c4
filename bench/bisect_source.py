"""`dbdrift bisect --source` on PostgreSQL's own source: does it name a planted commit, and how
long do builds and the whole bisect take?

    .venv/bin/python bench/bisect_source.py [--commits 8] [--keep]

Takes Debian's `postgresql-15_15.18.orig.tar.bz2` (downloaded once into bench/out/), puts it
in a local git repository (bench/out/pg15-src), and adds commits on top of the import:
harmless ones (comments, a README line) and, at a random position, one that plants a small CPU
cost in a hot path of every query (a loop of 500 volatile increments in standard_ExecutorRun,
which each point query passes once). Then runs

    dbdrift bisect --source bench/out/pg15-src --good <import> --bad HEAD --test point-query \\
        --build './configure --prefix=$PREFIX ... && make -j2 install'

into bench/out/bisect-source.db with a fresh build cache, prints its output, whether it named
the planted commit, each build's seconds and the total. Needs bison and flex (a checkout's
file dates make make regenerate the parsers the tarball ships): apt-get install -y bison flex.
ccache is used when installed (apt-get install -y ccache): later builds then recompile only
what the commit changed.
--keep reuses the repository and the build cache of an earlier run (builds come from cache).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
TARBALL = "postgresql-15_15.18.orig.tar.bz2"
URL = f"https://deb.debian.org/debian/pool/main/p/postgresql-15/{TARBALL}"
REPO = OUT / "pg15-src"
CACHE = Path("/var/tmp/dbdrift-bench/bisect-source-cache")  # the server user must reach the builds
STORE = OUT / "bisect-source.db"
HOT_FILE = "src/backend/executor/execMain.c"
HOT_ANCHOR = ("\testate = queryDesc->estate;\n\n\tAssert(estate != NULL);\n"
              "\tAssert(!(estate->es_top_eflags & EXEC_FLAG_EXPLAIN_ONLY));\n")  # first: standard_ExecutorRun
PLANT = "\t{\n\t\tvolatile int\tspin;\n\n\t\tfor (spin = 0; spin < 500; spin++)\n\t\t\t;\n\t}\n"
CONFIGURE = ("./configure --prefix=$PREFIX --without-readline --without-zlib --without-icu --without-openssl "
             "--without-llvm CFLAGS=-O2 {cc}> configure.log && make -j2 -s install > make.log "
             "&& make -C contrib/pg_prewarm -s install >> make.log")  # dbdrift warms the cache with pg_prewarm


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True, text=True).stdout.strip()


def commit(message: str) -> None:
    git("add", "-A")
    git("commit", "-q", "-m", message)


def make_repository(count: int, rng: random.Random) -> tuple[str, str]:
    """(the import's sha, the planted commit's sha) after `count` commits on top of the import."""
    tarball = OUT / TARBALL
    if not tarball.exists():
        print(f"downloading {URL}", flush=True)
        urllib.request.urlretrieve(URL, tarball)
    shutil.rmtree(REPO, ignore_errors=True)
    staging = OUT / "pg15-unpack"
    shutil.rmtree(staging, ignore_errors=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(staging, filter="data")  # owned by whoever runs this
    (staging / "postgresql-15.18").rename(REPO)
    shutil.rmtree(staging)
    git("init", "-q", "-b", "main")
    git("config", "user.email", "bench@example.org")
    git("config", "user.name", "bench")
    commit("import PostgreSQL 15.18 (Debian orig tarball)")
    good = git("rev-parse", "HEAD")
    planted_at = rng.randint(1, count - 1)
    planted = ""
    for i in range(count):
        if i == planted_at:
            path = REPO / HOT_FILE
            text = path.read_text()
            assert HOT_ANCHOR in text, f"{HOT_FILE} changed: the plant's anchor is gone"
            path.write_text(text.replace(HOT_ANCHOR, PLANT + HOT_ANCHOR, 1))
            commit("executor: spin 500 times per ExecutorRun (planted regression)")
            planted = git("rev-parse", "HEAD")
        else:
            readme = REPO / "README"
            readme.write_text(readme.read_text() + f"\nharmless change {i}\n")
            commit(f"README: harmless change {i}")
    return good, planted


def main() -> int:
    missing = [tool for tool in ("bison", "flex", "make", "gcc") if shutil.which(tool) is None]
    if missing:
        print(f"missing {', '.join(missing)}: apt-get install -y {' '.join(missing)}")
        return 1
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=8, help="commits on top of the import (default 8)")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--keep", action="store_true", help="reuse the repository and build cache of a prior run")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    if args.keep and REPO.is_dir():
        good = git("rev-list", "--max-parents=0", "HEAD")
        planted = git("log", "--format=%H", "--grep", "planted regression", "-1")
    else:
        good, planted = make_repository(args.commits, random.Random(args.seed))
        shutil.rmtree(CACHE, ignore_errors=True)
        STORE.unlink(missing_ok=True)
    cc = "CC='ccache gcc' " if shutil.which("ccache") else ""
    build = CONFIGURE.format(cc=cc)
    dbdrift = Path(sys.executable).with_name("dbdrift")
    command = [str(dbdrift), "bisect", "--source", str(REPO), "--good", good, "--bad", "HEAD", "--test",
               "point-query", "--build", build, "--store", str(STORE), "--format", "json"]
    print(f"planted commit: {planted[:9]}; build: {build}", flush=True)
    started = time.monotonic()
    env = {**os.environ, "DBDRIFT_CACHE_DIR": str(CACHE), "CCACHE_BASEDIR": str(CACHE),
           "CCACHE_DIR": str(OUT / "ccache"), "CCACHE_NOHASHDIR": "1"}
    result = subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True)
    wall = time.monotonic() - started
    if result.returncode != 0:
        print(result.stdout)
        print(f"bisect failed with exit status {result.returncode}")
        return 1
    out = json.loads(result.stdout)
    print(f"answer: {out['answer']}")
    print(f"named the planted commit: {'yes' if out['first_bad'] == planted[:9] else 'NO'}")
    print(f"{'commit':<10} {'instr/event':>12} {'build s':>8}  subject")
    values = {p["version"]: p["value"] for p in out["probes"]}
    for c in out["commits"]:
        build_s = f"{c['build_s']:.0f}" + (" (c)" if c.get("build_cached") else "") if "build_s" in c else "-"
        value = f"{values[c['short']]:,.0f}" if values.get(c["short"]) else "-"
        print(f"{c['short']:<10} {value:>12} {build_s:>8}  {c['subject']}")
    built = [c["build_s"] for c in out["commits"] if "build_s" in c and not c.get("build_cached")]
    print(f"{len(out['commits'])} commits, {len(values)} measured, {len(built)} built in {sum(built):.0f}s "
          f"(ccache: {'yes' if cc else 'no'}); bisect total {wall:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
