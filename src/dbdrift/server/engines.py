"""Which installer and which server class serve each engine (model.ENGINES)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from dbdrift.errors import InputError, UserError
from dbdrift.model import ENGINES, InstallInfo, TargetSpec
from dbdrift.server.base import Server
from dbdrift.server import builds, mycnf, pgconf, versions
from dbdrift.server.fetch import Progress, locate_local, resolve_postgres
from dbdrift.server.fetch_mysql import resolve_mysql_family
from dbdrift.server.mariadb import MariaDBServer, MySQLServer
from dbdrift.server.postgres import PostgresServer

_SERVERS: dict[str, type[Server]] = {"postgres": PostgresServer, "mariadb": MariaDBServer, "mysql": MySQLServer}


def resolve_install(target: TargetSpec, cache_dir: Path, progress: Progress | None = None) -> InstallInfo:
    """Where `target`'s binaries are: fetched+cached (`version`, the catalogue's), `basedir`,
    or `system`."""
    if target.engine not in ENGINES:
        raise InputError(f"target {target.name}: unknown engine {target.engine!r}", f"engines: {', '.join(ENGINES)}")
    if target.version:
        return builds.resolve_fetched(target.engine, target.version, cache_dir, progress)
    if target.engine == "postgres":
        return resolve_postgres(target)
    return resolve_mysql_family(target)


def locate(target: TargetSpec, cache_dir: Path) -> str:
    """One line on where `target`'s binaries would come from, downloading nothing (for
    `run --check`); raises the UserErrors resolve_install would."""
    if target.engine not in ENGINES:
        raise InputError(f"target {target.name}: unknown engine {target.engine!r}", f"engines: {', '.join(ENGINES)}")
    if target.version:
        return builds.locate_fetched(target.engine, target.version, cache_dir)
    return locate_local(target, resolve_install(target, cache_dir))


def check_setting_names(target: TargetSpec) -> None:
    """Refuse a setting name the engine cannot have or that dbdrift owns (the socket, no TCP),
    whether the campaign file or --set gave it: a UserError naming target and setting."""
    if target.engine == "postgres":
        pgconf.check_settings(target)
    elif target.engine in ENGINES:
        mycnf.check_settings(target)


def cached_install(target: TargetSpec, cache_dir: Path) -> InstallInfo | None:
    """The install `run` would use when it needs no download (a cached build, a basedir, the
    system's), else None."""
    if target.version:
        return builds.cached_install(target.engine, target.version, cache_dir)
    return resolve_install(target, cache_dir)


def to_fetch(target: TargetSpec, cache_dir: Path) -> tuple[versions.Build, dict[str, str]] | None:
    """For a target whose build `run` would download: the build the catalogue picks and the
    extra packages (name -> version) it comes with, asking for metadata only
    (builds.planned); None when `run` needs no download (cached_install has the install)."""
    if not target.version or cached_install(target, cache_dir) is not None:
        return None
    return builds.planned(target.engine, target.version, cache_dir)


def make_server(target: TargetSpec, install: InstallInfo, run_dir: Path, owner: dict[str, Any] | None = None) -> Server:
    """A server object (not started) of the install's engine; `owner` goes into the run
    directory's owner file (server/rundir.py)."""
    return _SERVERS[install.engine](target, install, run_dir, owner=owner)


def server_class(engine: str) -> type[Server] | None:
    """The server class of an engine id (None for an unknown one, e.g. a damaged owner file)."""
    return _SERVERS.get(engine)


def catalogue(engine: str, cache_dir: Path, progress: Progress | None = None) -> versions.Catalogue:
    """The version catalogue of an engine (its sources are asked when its builds are read)."""
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}", f"engines: {', '.join(ENGINES)}")
    return versions.Catalogue(engine, cache_dir, progress)


def damaged(path: Path, cache_dir: Path, exc: UserError) -> UserError:
    """A UserError about a file of an install, naming the cache entry it is in (and removing
    it as the fix) when it is one."""
    return builds.as_damaged(path, cache_dir, exc)


def cached_builds(engine: str, cache_dir: Path) -> list[builds.Cached]:
    """Builds of `engine` already in the cache (complete ones: with the marker file)."""
    return builds.cached_entries(engine, cache_dir)
