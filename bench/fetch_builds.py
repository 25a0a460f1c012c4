"""Download size and time per build: each build the version catalogue added (and one per older
source for comparison) fetched into an empty cache, as `dbdrift run` fetches it.

For each version string: the megabytes downloaded (the sizes the fetch announces: archives,
Debian indexes and packages), the wall time of the whole
fetch (metadata, download, checks, unpacking, library closure, relocation), the size of the
cache entry on disk, and how many Debian packages it took. The Debian indexes are fetched once
per cache and counted in the first Debian build's time.

    .venv/bin/python bench/fetch_builds.py [--cache DIR] [VERSION ...]
        (default: every build below; VERSION as ENGINE:VERSION, e.g. mysql:9.7.4)
"""
from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c  # noqa: E402
from dbdrift.model import TargetSpec  # noqa: E402
from dbdrift.server import engines  # noqa: E402

BUILDS = ("postgres:17.10", "postgres:17.11", "postgres:debian:17.12", "postgres:debian:18.6", "postgres:19rc1",
          "mysql:5.6.14", "mysql:5.7.22", "mysql:8.0.33", "mysql:9.7.4",
          "mariadb:10.2.11", "mariadb:10.5.29", "mariadb:11.8.9")


def fetch_one(text: str, cache: Path) -> dict:
    engine, _, version = text.partition(":")
    downloaded: list[float] = []
    packages = [0]

    def say(message: str) -> None:
        size = re.search(r": downloading ([\d.]+) MB from", message)
        if size:
            downloaded.append(float(size.group(1)))
        carried = re.search(r"^carrying .* \(([\d.]+) MB\)$", message)
        if carried:
            downloaded.append(float(carried.group(1)))
        many = re.search(r": (\d+) packages from debian \S+ \(([\d.]+) MB\)", message)
        if many:  # the .debs' own download lines are not said (one line per package)
            packages[0] = int(many.group(1))
            downloaded.append(float(many.group(2)))
    started = time.monotonic()
    info = engines.resolve_install(TargetSpec("bench", engine=engine, version=version), cache, say)
    seconds = time.monotonic() - started
    entry = next(p for p in [info.bindir, *info.bindir.parents] if p.parent.parent == cache)
    on_disk = sum(f.stat().st_size for f in entry.rglob("*") if f.is_file() and not f.is_symlink())
    return {"build": text, "version": info.version, "source": info.source.split(" (")[0][:60],
            "download_mb": sum(downloaded), "seconds": seconds, "disk_mb": on_disk / 1e6, "packages": packages[0]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("builds", nargs="*", default=list(BUILDS))
    parser.add_argument("--cache", type=Path, help="an empty cache directory (default: a temporary one)")
    args = parser.parse_args()

    def body(out: c.Output) -> None:
        cache = args.cache or Path(tempfile.mkdtemp(prefix="dbdrift-fetch-", dir="/var/tmp"))
        out(f"fetching {len(args.builds)} builds into {cache}")
        rows = []
        try:
            for text in args.builds:
                c.progress(f"fetching {text}")
                rows.append(fetch_one(text, cache))
        finally:
            if args.cache is None:
                shutil.rmtree(cache, ignore_errors=True)
        out()
        out(f"{'build':<24} {'version':<8} {'download MB':>11} {'fetch s':>8} {'on disk MB':>10} {'debs':>5}  source")
        for r in rows:
            out(f"{r['build']:<24} {r['version']:<8} {r['download_mb']:>11.1f} {r['seconds']:>8.1f} "
                f"{r['disk_mb']:>10.1f} {r['packages'] or '':>5}  {r['source']}")
    return c.run_main("fetch_builds", body)


if __name__ == "__main__":
    sys.exit(main())
