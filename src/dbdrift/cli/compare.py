"""`dbdrift compare A B [C ...]`: the default suite on two or more servers, without a campaign file.

Each argument is a target: a PostgreSQL version (`17.10`), `ENGINE:VERSION` (`mysql:8.0.31`,
`mariadb:11.4.5`), `ENGINE:system` (the host's install), or a build's install directory
(`/opt/pg-patched`, `mariadb:/opt/ma`); `NAME=` in front names the target (`new=/opt/pg-patched`).
The first is the base. The campaign it builds is the one a file would hold
(`--print-campaign` shows it), so a comparison can grow into a file when it needs more.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from dbdrift.cli import options
from dbdrift.cli import run as run_cli
from dbdrift.errors import UserError
from dbdrift.model import ENGINES
from dbdrift.plan.campaign import parse_campaign
from dbdrift.plan.fields import NAME
from dbdrift.plan.overrides import apply_sets
from dbdrift.server.versions import SOURCES

PREFIX = {"postgres": "pg", "mysql": "my", "mariadb": "ma"}
DEFAULT_DURATION_S = 60.0
EXAMPLES = """\
examples:
  dbdrift compare 17.10 18.4                      PostgreSQL 17.10 (base) vs 18.4, default suite
  dbdrift compare 17.10 18.4 --tests point        only the point-query group
  dbdrift compare 17.10 18.4 -t writes --duration 2m -q   the writes, 2 minutes each, no progress lines
  dbdrift compare mysql:5.7.22 mysql:8.0.31       MySQL by version (`dbdrift versions` lists them)
  dbdrift compare 18.6 debian:18.6 19rc1          Maven's 18.6 vs Debian's, and Debian's 19rc1
  dbdrift compare 17.10 new=/opt/pg-patched       your build against a release
  dbdrift compare 17.10 18.4 --print-campaign > c.toml   the same comparison as a campaign file

exit status: 0 all measured, 1 some run or target failed (the rest is stored), 2 input refused
before anything ran (a bad target, version or test), 130 interrupted by Ctrl-C or SIGTERM (rerun
with --resume)
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("targets", nargs="+", metavar="TARGET",
                        help="VERSION, ENGINE:VERSION, [ENGINE:]SOURCE:VERSION (debian:18.6), ENGINE:system or an install "
                             "directory, optionally NAME=...; "
                             "the first is the base")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows per table (default 1000000)")
    parser.add_argument("--tables", type=int, default=1, help="tables (default 1)")
    parser.add_argument("--threads", default="1", metavar="N[,N...]", help="client threads per run (default 1)")
    parser.add_argument("--duration", type=options.duration("--duration"), default=DEFAULT_DURATION_S,
                        metavar="DURATION", help=f"how long each test runs, e.g. 60, 90s, 2m (default "
                                                 f"{DEFAULT_DURATION_S:g}s; a campaign file's defaults are 300 s for "
                                                 "reads and 600 s for writes)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per test and target (default 1)")
    parser.add_argument("--name", help="campaign name in the store (default compare-A-vs-B)")
    parser.add_argument("--print-campaign", action="store_true", help="print the campaign file this builds and exit")
    run_cli.add_common(parser)


def parse_target(text: str, used: set[str]) -> dict:
    """One command-line target as a [[targets]] table."""
    name, sep, what = text.partition("=")
    if not sep:
        name, what = "", text
    engine, colon, rest = what.partition(":")
    if colon and engine in ENGINES:
        what = rest
    elif colon and _is_source(engine):
        engine = ""  # debian:18.6: a PostgreSQL version of that source
    elif colon and not what.startswith(("/", ".")):
        raise UserError(f"target {text!r}: unknown engine {engine!r}",
                        f"write ENGINE:VERSION with ENGINE one of {', '.join(ENGINES)}, e.g. mysql:8.0.31", exit_code=2)
    else:
        engine = ""
    if not what:
        raise UserError(f"target {text!r} names no version or directory",
                        "e.g. 17.10, mysql:8.0.31, postgres:system or /opt/pg-build", exit_code=2)
    table: dict = {}
    if what == "system":
        engine = engine or "postgres"
        table["system"] = True
        default = f"{PREFIX[engine]}-system"
    elif "/" in what or what.startswith(".") or Path(what).is_dir():
        basedir = Path(what).expanduser()
        engine = engine or detect_engine(basedir, text)
        table["basedir"] = str(basedir.resolve())
        default = re.sub(r"[^A-Za-z0-9._+-]", "_", basedir.resolve().name or "build")
    else:
        engine = engine or "postgres"
        table["version"] = what
        source, _, version = what.rpartition(":")
        default = f"{PREFIX[engine]}{version}" + (f"-{source}" if source else "")
    name = name or default
    if not NAME.match(name):
        raise UserError(f"target {text!r}: {name!r} is not a usable name",
                        "name it with NAME=..., letters, digits and ._+- (at most 64)", exit_code=2)
    base, n = name, 2
    while name in used:
        name, n = f"{base}-{n}", n + 1
    used.add(name)
    return {"name": name, "engine": engine, **table}


def _is_source(word: str) -> bool:
    return any(word in sources for sources in SOURCES.values()) or word.startswith("debian-")


def detect_engine(basedir: Path, text: str) -> str:
    """postgres, mariadb or mysql, from the programs the install directory holds."""
    bin_dir = basedir / "bin"
    if not bin_dir.is_dir():
        raise UserError(f"target {text!r}: {bin_dir} does not exist",
                        "give the install prefix that holds bin/ (e.g. the --prefix of your build)", exit_code=2)
    if (bin_dir / "postgres").exists():
        return "postgres"
    if (bin_dir / "mariadbd").exists() or any(p.name.startswith("mariadb") for p in bin_dir.iterdir()):
        return "mariadb"
    if (bin_dir / "mysqld").exists():
        return "mysql"
    raise UserError(f"target {text!r}: no postgres, mariadbd or mysqld in {bin_dir}",
                    "point at an install prefix, or say the engine: postgres:/path, mysql:/path", exit_code=2)


def campaign_data(args: argparse.Namespace) -> dict:
    if len(args.targets) < 2:
        raise UserError("compare needs two targets or more (the first is the base)",
                        "e.g. dbdrift compare 17.10 18.4", exit_code=2)
    used: set[str] = set()
    targets = [parse_target(t, used) for t in args.targets]
    try:
        threads = [int(t) for t in args.threads.split(",")]
    except ValueError:
        raise UserError(f"--threads {args.threads!r} is not a list of numbers", "e.g. --threads 1,4", exit_code=2) \
            from None
    name = args.name or "compare-" + "-vs-".join(t["name"] for t in targets)
    if not args.name and not NAME.match(name):
        name = name[:64].rstrip("._+-")
    return {"name": name, "tables": args.tables, "rows": args.rows, "threads": threads,
            "read_s": args.duration, "write_s": args.duration, "repeats": args.repeats,
            "tests": options.split_list(args.tests) if args.tests else ["default32"], "targets": targets}


def to_toml(data: dict) -> str:
    """The campaign as a file (the keys compare sets; everything else at its default)."""
    lines = ["# built by `dbdrift compare`; `dbdrift docs campaign` lists every key"]
    for key, value in data.items():
        if key != "targets":
            lines.append(f"{key} = {_value(value)}")
    for target in data["targets"]:
        lines += ["", "[[targets]]"] + [f"{k} = {_value(v)}" for k, v in target.items()]
    return "\n".join(lines) + "\n"


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k if re.fullmatch(r'[A-Za-z0-9_-]+', k) else _value(k)} = {_value(v)}"
                                for k, v in value.items()) + " }"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def main(args: argparse.Namespace) -> int:
    data = apply_sets(campaign_data(args), args.set)
    if args.print_campaign:
        sys.stdout.write(to_toml(data))
        return 0
    spec = parse_campaign(data, "dbdrift compare", Path.cwd(), data["name"])
    return run_cli.execute(run_cli.apply_overrides(spec, args), args)
