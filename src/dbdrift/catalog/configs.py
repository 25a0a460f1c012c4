"""Named configuration files shipped with dbdrift (`config = "z12a"` in a campaign): which
engines and versions each is written for and why it stops there, the config it extends, its
text, and the host-size suffix (`z12a_c8r32`) that sizes the cache and log as the posts' hosts do.

A name that is not one of these is a path to the user's own file. Without a suffix the files hold
no sizes: buffer pool, redo and shared_buffers stay dbdrift's defaults, computed from the host's
RAM. The posts spell the MySQL-family files with the prefix their scripts add (`cz12a_c8r32`):
that spelling is the same config.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

from dbdrift.errors import InputError
from dbdrift.model import TargetSpec

Version = tuple[int, ...]
GiB = 1024**3
PART = "# [named file {}]\n"  # heads each part of a config built from several (server/layers.py splits on it)


@dataclass(frozen=True)
class NamedConfig:
    name: str
    file: str  # under dbdrift/catalog/config_files/: what this config adds to its base
    versions: dict[str, tuple[Version, Version]]  # engine -> (lowest, highest) major.minor it is for
    about: str
    limits: dict[str, str]  # engine -> why the versions stop where they do (said when one is refused)
    base: str | None = None  # the config this one extends: its text comes first

    def own_text(self) -> str:
        return resources.files("dbdrift.catalog").joinpath("config_files", self.file).read_text()

    def text(self) -> str:
        """Its base's text, then its own, each part headed by PART so `config show` can say which
        file an option came from."""
        if self.base is None:
            return self.own_text()
        base = NAMED[self.base]
        return (base.text() if base.base else PART.format(base.name) + base.own_text()) + "\n" + \
            PART.format(self.name) + self.own_text()

    def covers(self, engine: str, version: Version) -> bool:
        low, high = self.versions[engine]
        return low <= version[:2] <= high


@dataclass(frozen=True)
class HostSize:
    """A posts' host (`c8r32`: 8 cores, 32 GB of RAM) and the cache and log its configs size."""
    name: str
    ram_gb: int
    cache_gb: int  # innodb_buffer_pool_size, shared_buffers
    redo_gb: int  # the InnoDB redo log in all
    wal_gb: int  # PostgreSQL's max_wal_size

    def lines(self, engine: str, version: Version) -> str:
        """The sizing options under each version's names (two or more redo files before MySQL
        8.0.30 and MariaDB 10.5, one file or a capacity after)."""
        head = f"# host size {self.name}: the cache and log of a {self.ram_gb} GB host, as the posts size them\n"
        if engine == "postgres":
            return head + f"shared_buffers = {self.cache_gb}GB\nmax_wal_size = {self.wal_gb}GB\n"
        pool = f"innodb_buffer_pool_size = {self.cache_gb}G\n"
        if engine == "mysql" and version >= (8, 0, 30):
            return head + pool + f"innodb_redo_log_capacity = {self.redo_gb}G\n"
        if (engine == "mysql") or version < (10, 5):
            files = max(2, self.redo_gb // 2)
            return head + pool + f"innodb_log_files_in_group = {files}\ninnodb_log_file_size = 2G\n"
        return head + pool + f"innodb_log_file_size = {self.redo_gb}G\n"


HOST_SIZES = {s.name: s for s in (
    HostSize("c8r32", 32, 23, 30, 40),  # cz12a_c8r32: 23G pool, 15 x 2G redo; cx10a_c8r32: 23GB, 40GB
    HostSize("c24r64", 64, 45, 50, 50),  # cz12b_c24r64: 45G pool, 50G redo
    HostSize("c32r128", 128, 100, 100, 100),  # cz12a_c32r128: 100G pool, 100G redo capacity
)}

_MYSQL_84 = "8.4 changed defaults the tests notice (change buffering, buffer pool instances, log buffer): z13a"
_MARIADB_11 = ("MariaDB 11 replaced innodb_flush_method, and the options that replaced it have no "
               "O_DIRECT_NO_FSYNC (MDEV-33545): the posts use z12b there")
_BINLOG_IN_INNODB = "binlog_storage_engine (the binlog stored in InnoDB) arrived in MariaDB 12.3"
_ALL_MARIADB = "it is written for every MariaDB from 10.0"

_Z12B = NamedConfig("z12b", "z12b.cnf", {"mariadb": ((10, 0), (99, 99))},
                    "z12a with O_DIRECT (data files fsynced), as MariaDB 11+ can only do",
                    {"mariadb": _ALL_MARIADB}, base="z12a")
_Z12C = NamedConfig("z12c", "z12c.cnf", {"mariadb": ((12, 3), (99, 99))},
                    "z12b with the binlog stored in InnoDB (binlog_storage_engine)",
                    {"mariadb": _BINLOG_IN_INNODB}, base="z12b")


def _variant(base: NamedConfig, suffix: str, change: str) -> NamedConfig:
    """Its base with one change: written for the same engines and versions, for the same reasons,
    in a file named after it."""
    name = f"{base.name}_{suffix}"
    return NamedConfig(name, f"{name}.cnf", base.versions, f"{base.name} with {change}", base.limits, base=base.name)


def _sync_and_dw0(base: NamedConfig, synced: str) -> tuple[NamedConfig, NamedConfig]:
    """The posts' durable variants of a MariaDB config: `_sync` (sync-on-commit for what `synced`
    says), then `_sync_dw0`, that with the doublewrite buffer off."""
    sync = _variant(base, "sync", f"sync-on-commit for {synced}")
    return sync, _variant(sync, "dw0", "the doublewrite buffer off")


NAMED = {c.name: c for c in (
    NamedConfig("z12a", "z12a.cnf", {"mysql": ((5, 6), (8, 3)), "mariadb": ((10, 0), (10, 99))},
                "cached-database InnoDB config, O_DIRECT_NO_FSYNC: MySQL 5.6-8.3, MariaDB 10.x",
                {"mysql": _MYSQL_84, "mariadb": _MARIADB_11}),
    _Z12B,
    *_sync_and_dw0(_Z12B, "InnoDB and the binlog (two fsyncs a commit)"),
    _Z12C,
    *_sync_and_dw0(_Z12C, "InnoDB (one fsync a commit)"),
    NamedConfig("z13a", "z13a.cnf", {"mysql": ((8, 4), (9, 99))},
                "z12a for MySQL 8.4 and 9.x, gtid_mode and enforce_gtid_consistency off as before 9.6",
                {"mysql": "it drops options 8.4 removed and pins 8.4's new defaults back: z12a before 8.4"}),
    NamedConfig("z13b", "z13b.cnf", {"mysql": ((9, 0), (9, 99))},
                "z13a with the hypergraph optimizer (optimizer_switch hypergraph_optimizer=on)",
                {"mysql": "the hypergraph optimizer is a switch of MySQL 9.x builds only"}, base="z13a"),
    NamedConfig("z11a", "z11a.cnf", {"mariadb": ((10, 0), (10, 99))},
                "the posts' cz11a: 2024 cached InnoDB config for MariaDB 10.x (bounded purge lag, 4 instances)",
                {"mariadb": _MARIADB_11.replace("z12b", "z11b")}),
    NamedConfig("z11b", "z11b.cnf", {"mariadb": ((11, 0), (99, 99))},
                "the posts' cz11b: z11a for MariaDB 11+, with the file buffering options",
                {"mariadb": "innodb_data_file_buffering and its siblings arrived in MariaDB 11.0: z11a before"}),
    NamedConfig("cx10a", "cx10a.conf", {"postgres": ((13, 0), (17, 99))},
                "cached-database PostgreSQL config: PostgreSQL 13-17",
                {"postgres": "18 reads through io_method = worker unless told otherwise: cx10b"}),
    NamedConfig("cx10b", "cx10b.conf", {"postgres": ((18, 0), (99, 99))},
                "cx10a for PostgreSQL 18+, with io_method = sync",
                {"postgres": "io_method arrived in PostgreSQL 18: cx10a before"}),
)}


@dataclass(frozen=True)
class Named:
    """A config name as written: the named config and the host size its suffix names."""
    config: NamedConfig
    size: HostSize | None

    @property
    def name(self) -> str:
        return self.config.name + (f"_{self.size.name}" if self.size else "")


def resolve(name: str) -> Named | None:
    """`z12a`, `z12a_c8r32`, `cz12a_c8r32` -> the named config and host size; None for a name that
    is not one (a path to the user's file)."""
    stem, size = name, None
    match = re.fullmatch(r"(.+)_(c\d+r\d+)", name)
    if match and match.group(2) in HOST_SIZES:
        stem, size = match.group(1), HOST_SIZES[match.group(2)]
    if stem not in NAMED and stem.startswith("c") and stem[1:] in NAMED and NAMED[stem[1:]].name[0] == "z":
        stem = stem[1:]  # the posts' file prefix
    return Named(NAMED[stem], size) if stem in NAMED else None


def is_named(name: str) -> bool:
    return resolve(name) is not None


def _span(config: NamedConfig, engine: str) -> str:
    (lo, hi) = config.versions[engine]
    high = f"{hi[0]}.x" if hi[1] == 99 else ".".join(map(str, hi))
    return f"{'.'.join(map(str, lo))} to {high}" if hi[0] != 99 else f"{'.'.join(map(str, lo))} and later"


def check_named(name: str, engine: str, version: Version | None, label: str) -> Named:
    """The named config for this engine and (when known) version, or a UserError saying why it
    does not fit and naming one that does."""
    named = resolve(name)
    if named is None:
        raise InputError(f"{label}: no named config {name!r}", f"named configs: {', '.join(NAMED)}")
    config = named.config
    fitting = [c.name for c in NAMED.values() if engine in c.versions and (version is None or c.covers(engine, version))]
    if engine not in config.versions:
        raise InputError(f"{label}: config {name!r} is written for {', '.join(config.versions)}, not {engine}",
                         f"for {engine} use {' or '.join(repr(n) for n in fitting) or 'your own file'}")
    if version is not None and not config.covers(engine, version):
        shown = ".".join(map(str, version[:2]))
        raise InputError(f"{label}: config {name!r} is for {engine} {_span(config, engine)}, not {shown}: "
                         f"{config.limits[engine]}",
                         f"use config = {fitting[0]!r}" if fitting else "use your own file: config = \"my.cnf\"")
    return named


def describe() -> list[tuple[str, str, str]]:
    """(name, engines and versions, what it is) per named config, for `dbdrift config list`."""
    return [(c.name, "; ".join(f"{e} {_span(c, e)}" for e in c.versions), c.about) for c in NAMED.values()]


def version_of(text: str) -> Version | None:
    """"17.10" -> (17, 10), "8.0.31" -> (8, 0, 31), "debian:9.7.4" -> (9, 7, 4); None for a version
    that does not start with a number (after its source)."""
    match = re.match(r"(?:[a-z][a-z0-9-]*:)?(\d+)(?:\.(\d+))?(?:\.(\d+))?", text)
    return tuple(int(p) for p in match.groups() if p is not None) if match else None


def sized_text(named: Named, engine: str, version: Version) -> str:
    """The named config's text, with its host size's cache and log options after it."""
    text = named.config.text()
    if named.size is None:
        return text
    head = "" if named.config.base else PART.format(named.config.name)
    return head + text.rstrip("\n") + "\n" + PART.format(named.name) + named.size.lines(engine, version)


def named_text(target: TargetSpec, version: str, ram: int | None = None) -> str | None:
    """The text of the target's named config, checked against the version its server reports and,
    with a host size and `ram` (this host's bytes), against this host: a cache sized for a bigger
    host would not fit."""
    if target.named_config is None:
        return None
    parsed = version_of(version)
    named = check_named(target.named_config, target.engine, parsed, f"target {target.name}")
    if named.size is not None and ram is not None and named.size.cache_gb * GiB > ram * 0.8:
        raise InputError(f"target {target.name}: config {target.named_config!r} gives the cache "
                         f"{named.size.cache_gb} GB, sized for a {named.size.ram_gb} GB host; this one has "
                         f"{ram / GiB:.0f} GB",
                         f"use config = {named.config.name!r}: dbdrift then sizes the cache from this host's RAM")
    return sized_text(named, target.engine, parsed or (99, 99))
