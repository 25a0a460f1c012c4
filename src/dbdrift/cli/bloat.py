"""`dbdrift bloat A B [C ...]`: how big each target's server binary is, as-is and stripped, with
its text, data and bss and the libraries it loads from its own install, in MB and relative to
the first target (the posts' "version as-is stripped" table). Targets are named as for
`compare` (versions are fetched when not cached). With `--build-dir NAME=DIR` for two targets
or more, the object files of their source builds that grew most."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dbdrift import env
from dbdrift.cli import compare, options
from dbdrift.cli.progress import ConsoleProgress
from dbdrift.errors import UserError
from dbdrift.metrics.binary import binary_facts, object_sizes, server_binary
from dbdrift.plan.campaign import parse_campaign
from dbdrift.report.numbers import fmt_mb, fmt_rel
from dbdrift.server import engines

EXAMPLES = """\
examples:
  dbdrift bloat 16.9 17.10 18.4                      PostgreSQL's postgres binary per release
  dbdrift bloat mysql:5.7.22 mysql:8.0.15 mysql:8.0.31
  dbdrift bloat old=/opt/mysql-8.0 new=/opt/mysql-9.0 --build-dir old=~/src/8.0/build --build-dir new=~/src/9.0/build
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("targets", nargs="+", metavar="TARGET",
                        help="VERSION, ENGINE:VERSION, ENGINE:system or an install directory, optionally NAME=...")
    parser.add_argument("--build-dir", action="append", default=[], metavar="NAME=DIR",
                        help="a target's source build tree (object files); the largest growth of its *.o files "
                             "against the first target that has one is listed")
    options.add_verbosity(parser)
    parser.add_argument("--top", type=int, default=15, help="object files to list (default 15)")
    options.add_format(parser, ("text", "json"), "text: a table per target; json: every size of every target")


def measure(args: argparse.Namespace) -> list[dict]:
    used: set[str] = set()
    data = {"name": "bloat", "targets": [compare.parse_target(t, used) for t in args.targets]}
    spec = parse_campaign(data, "dbdrift bloat", Path.cwd(), "bloat")
    progress = ConsoleProgress(verbosity=args.verbosity)
    rows = []
    for target in spec.targets:
        install = engines.resolve_install(target, env.cache_dir(), progress.message)
        facts = binary_facts(server_binary(install.bindir, install.engine))
        rows.append({"target": target.name, "engine": install.engine, "version": install.version,
                     "source": install.source, **facts})
    return rows


def build_dirs(values: list[str], names: list[str]) -> dict[str, Path]:
    dirs = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or name not in names:
            raise UserError(f"--build-dir {value!r}: name one of the targets, as NAME=DIR",
                            f"targets: {', '.join(names)}", exit_code=2)
        directory = Path(path).expanduser()
        if not directory.is_dir():
            raise UserError(f"--build-dir {value!r}: {directory} is not a directory",
                            "give the build tree that holds the object files (*.o)", exit_code=2)
        dirs[name] = directory
    return dirs


def object_growth(dirs: dict[str, Path], top: int) -> list[dict]:
    """Per target after the first with a build dir: the object files whose text + data grew most."""
    if len(dirs) < 2:
        return []
    (base_name, base_dir), *others = dirs.items()
    base = object_sizes(base_dir)
    out = []
    for name, directory in others:
        sizes = object_sizes(directory)
        grown = sorted(((sizes[k] - base[k], k) for k in sizes.keys() & base.keys()), reverse=True)[:top]
        out.append({"target": name, "reference": base_name, "objects": [
            {"object": k, "reference_bytes": base[k], "bytes": sizes[k],
             "ratio": sizes[k] / base[k] if base[k] else None} for _, k in grown]})
    return out


def render_text(rows: list[dict], growth: list[dict]) -> str:
    first = rows[0]
    out = [f"server binary, MB (relative to {first['target']} on the right)",
           f"{'target':<16} {'version':<10} {'as-is':>8} {'stripped':>9} {'text':>8} {'data':>7} {'bss':>7} "
           f"{'own libs':>9}   {'as-is':>6} {'stripped':>8}"]
    for r in rows:
        sizes = [(r["bytes"], 8), (r["stripped_bytes"], 9), (r["text"], 8), (r["data"], 7), (r["bss"], 7),
                 (r["libs_bytes"], 9)]
        out.append(f"{r['target']:<16} {r['version']:<10} " + " ".join(f"{fmt_mb(v):>{w}}" for v, w in sizes)
                   + f"   {fmt_rel(r['bytes'], first['bytes']):>6} "
                   f"{fmt_rel(r['stripped_bytes'], first['stripped_bytes']):>8}")
    out.append("")
    for r in rows:
        out.append(f"{r['target']}: {r['path']}" + (
            "; own libraries: " + ", ".join(f"{lib['name']} {fmt_mb(lib['bytes'])}" for lib in r["libs"])
            if r["libs"] else ""))
    for g in growth:
        out += ["", f"object files that grew most, {g['target']} against {g['reference']} (text + data, KB)"]
        out += [f"  {o['object']:<60} {o['reference_bytes'] / 1000:>9.1f} -> {o['bytes'] / 1000:>9.1f}  "
                f"{fmt_rel(o['bytes'], o['reference_bytes'])}x" for o in g["objects"]]
    return "\n".join(out) + "\n"


def main(args: argparse.Namespace) -> int:
    rows = measure(args)
    growth = object_growth(build_dirs(args.build_dir, [r["target"] for r in rows]), args.top)
    if args.format == "json":
        sys.stdout.write(json.dumps({"binaries": rows, "objects": growth}, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(rows, growth))
    return 0
