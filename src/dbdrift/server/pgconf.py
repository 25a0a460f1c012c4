"""PostgreSQL configuration as dbdrift writes it: initdb flags, built-in defaults, layering.

Pure text rendering (plus reading the user's config file); no processes are started here.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from dbdrift.errors import UserError
from dbdrift.model import TargetSpec
from dbdrift.server.layers import Layer, Pairs, parse_postgresql_conf, render, target_layers

OWNED_SETTINGS = ("listen_addresses", "unix_socket_directories", "unix_socket_permissions", "port")
GiB = 1024**3
MiB = 1024**2


def major_version(version: str) -> int:
    """"17.10" -> 17, "9.6.24" -> 9, "19devel" -> 19."""
    match = re.match(r"\d+", version)
    if not match:
        raise ValueError(f"not a PostgreSQL version: {version!r}")
    return int(match.group())


def initdb_args(major: int, data_checksums: bool) -> list[str]:
    """Checksums are set explicitly for every target: 18 turned them on by default. Local
    (socket) connections are trusted: the socket is in a directory only dbdrift and the
    server user can enter; TCP is refused outright (and not listened on)."""
    args = ["-U", "postgres", "--auth-local=trust", "--auth-host=reject", "-E", "UTF8", "--locale=C.UTF-8",
            "--no-sync"]
    if data_checksums:
        args.append("--data-checksums")
    elif major >= 18:
        args.append("--no-data-checksums")
    return args


def shared_buffers_mb(ram_bytes: int) -> int:
    """25 % of RAM, at most 16 GiB, at least 128 MiB."""
    return max(128 * MiB, min(ram_bytes // 4, 16 * GiB)) // MiB


def default_settings(major: int, ram_bytes: int) -> list[tuple[str, str]]:
    """dbdrift's base config, in the spirit of the cached-database configs cx10a (≤17) and
    cx10b (18+): big cache, relaxed durability, no parallel query/JIT, eager autovacuum."""
    settings = [
        ("shared_buffers", f"{shared_buffers_mb(ram_bytes)}MB"),
        ("huge_pages", "off"),
        ("max_connections", "100"),
        ("synchronous_commit", "off"),
        ("max_wal_size", "8GB"),
        ("min_wal_size", "1GB"),
        ("checkpoint_timeout", "1800s"),
        ("checkpoint_completion_target", "0.9"),
        ("max_parallel_workers_per_gather", "0"),
        ("jit", "off"),
        ("autovacuum_naptime", "10s"),
        ("autovacuum_vacuum_scale_factor", "0.05"),
        ("autovacuum_vacuum_insert_scale_factor", "0.05"),
        ("autovacuum_analyze_scale_factor", "0.05"),
    ]
    if major >= 18:
        settings.append(("io_method", "sync"))
    settings += [
        ("shared_preload_libraries", ""),
        ("log_destination", "stderr"),  # pg_ctl -l captures stderr into server.log
        ("logging_collector", "off"),
    ]
    return settings


def render_config(
    target: TargetSpec, major: int, *, ram_bytes: int, socket_dir: Path, port: int,
    config_file_text: str | None = None, named_text: str | None = None,
) -> str:
    """Text appended to postgresql.conf; later lines win: defaults, the named config file, the
    target's config file, its matrix levels, its settings, then the connection settings dbdrift owns."""
    return render(config_layers(target, major, ram_bytes=ram_bytes, socket_dir=socket_dir, port=port,
                                config_file_text=config_file_text, named_text=named_text))


def config_layers(target: TargetSpec, major: int, *, ram_bytes: int, socket_dir: Path | str, port: int | str,
                  config_file_text: str | None = None, named_text: str | None = None) -> list[Layer]:
    check_settings(target)
    owned = [("listen_addresses", "''"), ("unix_socket_directories", str(socket_dir)),
             ("unix_socket_permissions", "0700"), ("port", str(port))]
    return target_layers(target, default_settings(major, ram_bytes), owned, lines=_lines, parse=parse_postgresql_conf,
                         named_text=named_text, file_text=config_file_text)


_BARE = re.compile(r"-?\d+(\.\d+)?([a-zA-Z]+)?|[A-Za-z_][A-Za-z0-9_]*")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def quote_value(value: object) -> str:
    """A postgresql.conf value: numbers, numbers with units and plain words stay bare;
    anything else is single-quoted with ' and \\ escaped; a value already in '...' is kept."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (int, float)):
        return str(value)
    text = str(value)
    if _BARE.fullmatch(text):
        return text
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def _lines(pairs: Pairs) -> str:
    return "\n".join(f"{key} = {quote_value(value)}" for key, value in pairs)


def check_settings(target: TargetSpec) -> None:
    for key in [*target.settings, *(k for level in target.levels for k in level.settings)]:
        if not _KEY.fullmatch(key):
            raise UserError(f"target {target.name}: {key!r} is not a PostgreSQL setting name",
                            "setting names are letters, digits, _ and . (e.g. work_mem)")
        if key in OWNED_SETTINGS:
            raise UserError(f"target {target.name}: setting {key!r} is chosen by dbdrift",
                            "use `port` in the target to choose the socket's port number; the server "
                            "listens only on a socket in its private run directory")


def read_config_file(target: TargetSpec) -> str | None:
    if target.config is None:
        return None
    try:
        return Path(target.config).read_text()
    except OSError as exc:
        raise UserError(f"target {target.name}: cannot read its config file {target.config}: "
                        f"{exc.strerror}", "fix the path in the campaign file") from exc


def ram_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
