"""Named configuration files shipped with dbdrift (`config = "z12a"` in a campaign): which
engines and versions each is written for, and its text.

A name that is not one of these is a path to the user's own file. The files hold no sizes:
buffer pool, redo and shared_buffers stay dbdrift's defaults, computed from the host's RAM.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

from dbdrift.errors import InputError
from dbdrift.model import TargetSpec

Version = tuple[int, ...]


@dataclass(frozen=True)
class NamedConfig:
    name: str
    file: str  # under dbdrift/catalog/config_files/
    versions: dict[str, tuple[Version, Version]]  # engine -> (lowest, highest) major.minor it is for
    about: str

    def text(self) -> str:
        return resources.files("dbdrift.catalog").joinpath("config_files", self.file).read_text()

    def covers(self, engine: str, version: Version) -> bool:
        low, high = self.versions[engine]
        return low <= version[:2] <= high


NAMED = {c.name: c for c in (
    NamedConfig("z12a", "z12a.cnf", {"mysql": ((5, 6), (8, 3)), "mariadb": ((10, 0), (11, 99))},
                "cached-database InnoDB config: MySQL 5.6-8.3, MariaDB 10.x-11.x"),
    NamedConfig("z13a", "z13a.cnf", {"mysql": ((8, 4), (9, 99))},
                "z12a for MySQL 8.4 and 9.x (options removed or defaults changed in 8.4)"),
    NamedConfig("cx10a", "cx10a.conf", {"postgres": ((13, 0), (17, 99))},
                "cached-database PostgreSQL config: PostgreSQL 13-17"),
    NamedConfig("cx10b", "cx10b.conf", {"postgres": ((18, 0), (99, 99))},
                "cx10a for PostgreSQL 18+, with io_method = sync"),
)}


def _span(config: NamedConfig, engine: str) -> str:
    (lo, hi) = config.versions[engine]
    high = f"{hi[0]}.x" if hi[1] == 99 else ".".join(map(str, hi))
    return f"{'.'.join(map(str, lo))} to {high}" if hi[0] != 99 else f"{'.'.join(map(str, lo))} and later"


def check_named(name: str, engine: str, version: Version | None, label: str) -> NamedConfig:
    """The named config for this engine and (when known) version, or a UserError naming one that fits."""
    config = NAMED[name]
    fitting = [c.name for c in NAMED.values() if engine in c.versions and (version is None or c.covers(engine, version))]
    if engine not in config.versions:
        raise InputError(f"{label}: config {name!r} is written for {', '.join(config.versions)}, not {engine}",
                         f"for {engine} use {' or '.join(repr(n) for n in fitting) or 'your own file'}")
    if version is not None and not config.covers(engine, version):
        shown = ".".join(map(str, version[:2]))
        raise InputError(f"{label}: config {name!r} is for {engine} {_span(config, engine)}, not {shown}",
                         f"use config = {fitting[0]!r}" if fitting else "use your own file: config = \"my.cnf\"")
    return config


def describe() -> list[tuple[str, str, str]]:
    """(name, engines and versions, what it is) per named config, for `dbdrift config list`."""
    return [(c.name, "; ".join(f"{e} {_span(c, e)}" for e in c.versions), c.about) for c in NAMED.values()]


def version_of(text: str) -> Version | None:
    """"17.10" -> (17, 10), "8.0.31" -> (8, 0, 31), "debian:9.7.4" -> (9, 7, 4); None for a version
    that does not start with a number (after its source)."""
    match = re.match(r"(?:[a-z][a-z0-9-]*:)?(\d+)(?:\.(\d+))?(?:\.(\d+))?", text)
    return tuple(int(p) for p in match.groups() if p is not None) if match else None


def named_text(target: TargetSpec, version: str) -> str | None:
    """The text of the target's named config, checked against the version its server reports."""
    if target.named_config is None:
        return None
    return check_named(target.named_config, target.engine, version_of(version), f"target {target.name}").text()
