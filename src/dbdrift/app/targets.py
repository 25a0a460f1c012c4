"""A target named on the command line (`17.10`, `mysql:8.0.31`, `debian:18.6`, `new=/opt/pg`) as
the [[targets]] table a campaign file would hold; `compare` and `bloat` read their targets so."""
from __future__ import annotations

import re
from pathlib import Path

from dbdrift.errors import UserError
from dbdrift.model import ENGINES, JsonObject
from dbdrift.plan.fields import NAME
from dbdrift.server.versions import SOURCES

PREFIX = {"postgres": "pg", "mysql": "my", "mariadb": "ma"}

def parse_target(text: str, used: set[str]) -> JsonObject:
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
    table: JsonObject = {}
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
