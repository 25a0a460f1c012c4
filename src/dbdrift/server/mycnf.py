"""MariaDB/MySQL configuration as dbdrift writes it: built-in defaults, layering, my.cnf text.

Pure text rendering (plus reading the user's config file); no processes are started here.
"""
from __future__ import annotations

import re
from pathlib import Path

from dbdrift.errors import UserError
from dbdrift.model import TargetSpec
from dbdrift.server.layers import Layer, Pairs, parse_my_cnf, render, target_layers
from dbdrift.server.pgconf import read_config_file, ram_bytes  # engine-neutral helpers

__all__ = ["OWNED_SETTINGS", "buffer_pool_mb", "default_settings", "log_file_size_mb",
           "read_config_file", "ram_bytes", "render_config", "version_tuple"]

GiB = 1024**3
MiB = 1024**2
# Settings dbdrift owns: it picks the files, socket, address and port of every server it starts.
OWNED_SETTINGS = ("datadir", "basedir", "socket", "port", "bind_address", "log_error",
                  "pid_file", "skip_networking", "user", "tmpdir", "secure_file_priv")


def version_tuple(version: str) -> tuple[int, ...]:
    """"10.11.5" -> (10, 11, 5); "11.4.5-MariaDB-log" -> (11, 4, 5)."""
    match = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", version)
    if not match:
        raise ValueError(f"not a MariaDB version: {version!r}")
    return tuple(int(p or 0) for p in match.groups())


def buffer_pool_mb(ram: int) -> int:
    """25 % of RAM, at most 16 GiB, at least 128 MiB (as pgconf sizes shared_buffers)."""
    return max(128 * MiB, min(ram // 4, 16 * GiB)) // MiB


def log_file_size_mb(version: tuple[int, ...], ram: int, engine: str = "mariadb") -> int:
    """innodb_log_file_size: total redo = half the buffer pool, 256 MiB..8 GiB. InnoDB keeps
    innodb_log_files_in_group (default 2) files of this size in MariaDB before 10.5 and in
    MySQL before 8.0.30, so halve it there."""
    total = redo_total_mb(ram)
    two_files = version < (10, 5) if engine == "mariadb" else version < (8, 0, 30)
    return total // 2 if two_files else total


def redo_total_mb(ram: int) -> int:
    return max(256, min(buffer_pool_mb(ram) // 2, 8 * 1024))


def default_settings(version: tuple[int, ...], ram: int, engine: str = "mariadb") -> list[tuple[str, str]]:
    """dbdrift's base config in the spirit of the cached-database InnoDB config z12a: big
    buffer pool, binlog on but not synced, relaxed redo flushing, latin1, no P_S. The same
    behaviour on every version, under each version's option names (version_specific)."""
    return [
        ("innodb_buffer_pool_size", f"{buffer_pool_mb(ram)}M"),
        ("innodb_flush_log_at_trx_commit", "2"),
        ("innodb_doublewrite", "1"),
        ("innodb_adaptive_hash_index", "0"),
        ("innodb_io_capacity", "10000"),
        ("innodb_io_capacity_max", "20000"),
        # Fresh data directories: dumping/loading the buffer pool only costs start/stop time.
        ("innodb_buffer_pool_dump_at_shutdown", "0"),
        ("innodb_buffer_pool_load_at_startup", "0"),
        ("log_bin", "binlog"),
        ("sync_binlog", "0"),
        ("server_id", "1"),
        ("character_set_server", "latin1"),
        ("collation_server", "latin1_swedish_ci"),
        ("performance_schema", "0"),
        ("max_connections", "1000"),
        ("max_prepared_stmt_count", "1000000"),
        ("table_open_cache", "4000"),
        ("skip_name_resolve", "1"),
        *version_specific(version, ram, engine),
    ]


def version_specific(version: tuple[int, ...], ram: int, engine: str) -> list[tuple[str, str]]:
    """Where versions name the same behaviour differently:
    - redo size: innodb_log_file_size per file (two files in MySQL < 8.0.30 and MariaDB < 10.5),
      innodb_redo_log_capacity for the total in MySQL 8.0.30+;
    - binlog expiry (one day): expire_logs_days in MySQL 5.7 and MariaDB,
      binlog_expire_logs_seconds in MySQL 8.0+ (expire_logs_days is deprecated there);
    - binlog_format = ROW where it is not the only choice and not deprecated (before MySQL 8.0.34);
    - authentication: mysql_native_password for root in MySQL 5.7 to 8.3 (8.0 defaults to
      caching_sha2_password; 8.4 removed the option and 9.x the plugin; 5.6 knows only native);
    - TLS and the X plugin: off. MySQL's `ssl` is set where it exists (5.7 to 8.3) and the X
      plugin (its own port, 33060, on every address) where it exists (5.7.12 on); MariaDB 11.4+
      otherwise generates a self-signed certificate at every start (~20 s of CPU)."""
    if engine == "mysql":
        if version >= (8, 0, 30):
            redo = [("innodb_redo_log_capacity", f"{redo_total_mb(ram)}M")]
        else:
            redo = [("innodb_log_file_size", f"{log_file_size_mb(version, ram, engine)}M")]
        expiry = ([("binlog_expire_logs_seconds", "86400")] if version >= (8, 0)
                  else [("expire_logs_days", "1")])
        # row format is the only default from 8.0.34, where binlog_format became deprecated
        binlog = [("binlog_format", "ROW")] if version < (8, 0, 34) else []
        # 8.4 removed default_authentication_plugin and ssl (9.x has no mysql_native_password)
        auth = [("default_authentication_plugin", "mysql_native_password")] if (5, 7) <= version < (8, 4) else []
        tls = [("ssl", "0")] if version < (8, 4) else []
        xplugin = [("loose_mysqlx", "0")] if version >= (5, 7, 12) else []  # not in 5.6
        return [*redo, *expiry, *binlog, *auth, *tls, *xplugin]
    return [("innodb_log_file_size", f"{log_file_size_mb(version, ram, engine)}M"),
            ("binlog_format", "ROW"), ("expire_logs_days", "1"), ("ssl", "0")]


def render_config(
    target: TargetSpec, version: str, *, ram: int, basedir: Path, data_dir: Path,
    socket_path: Path, port: int, log_path: Path, pid_path: Path,
    config_file_text: str | None = None, named_text: str | None = None,
) -> str:
    """A whole my.cnf; within [mysqld] later lines win: defaults, the named config file, the
    target's config file, its matrix levels, its settings, then the files and connection
    settings dbdrift owns."""
    return render(config_layers(target, version, ram=ram, basedir=basedir, data_dir=data_dir, socket_path=socket_path,
                                port=port, log_path=log_path, pid_path=pid_path, config_file_text=config_file_text,
                                named_text=named_text))


def config_layers(target: TargetSpec, version: str, *, ram: int, basedir: Path | str, data_dir: Path | str,
                  socket_path: Path | str, port: int | str, log_path: Path | str, pid_path: Path | str,
                  config_file_text: str | None = None, named_text: str | None = None) -> list[Layer]:
    check_settings(target)
    owned = [("basedir", str(basedir)), ("datadir", str(data_dir)), ("socket", str(socket_path)), ("port", str(port)),
             ("skip_networking", "1"), ("log_error", str(log_path)), ("pid_file", str(pid_path)),
             # the server's own temporary tables: two servers sharing /tmp have collided on a name
             ("tmpdir", str(Path(pid_path).parent / "tmp"))]
    if target.engine == "mysql":  # a packaged build's compiled-in /var/lib/mysql-files may not exist here
        owned.append(("secure_file_priv", str(Path(pid_path).parent)))
    return target_layers(target, default_settings(version_tuple(version), ram, target.engine), owned,
                         lines=_lines, parse=parse_my_cnf, head="[mysqld]\n", named_text=named_text,
                         file_text=config_file_text)


_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)?")


def quote_value(value: object) -> str:
    """A my.cnf value: booleans as ON/OFF, anything with spaces, # or quotes double-quoted."""
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    text = str(value)
    if re.fullmatch(r"[A-Za-z0-9_.,:/+\-=%@]*", text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _lines(pairs: Pairs) -> str:
    # An empty value is a bare option (e.g. skip_log_bin), as my.cnf writes flags.
    return "\n".join(f"{k} = {quote_value(v)}" if str(v) != "" else k for k, v in pairs)


def normalize(key: str) -> str:
    """my.cnf treats - and _ alike in option names; loose_ only silences unknown options."""
    key = key.replace("-", "_").lower()
    return key[len("loose_"):] if key.startswith("loose_") else key


def check_settings(target: TargetSpec) -> None:
    for key in [*target.settings, *(k for level in target.levels for k in level.settings)]:
        if not _KEY.fullmatch(key):
            raise UserError(f"target {target.name}: {key!r} is not a MariaDB option name",
                            "option names are letters, digits, _ and - (e.g. innodb_buffer_pool_size)")
        if normalize(key) in OWNED_SETTINGS:
            raise UserError(f"target {target.name}: setting {key!r} is chosen by dbdrift",
                            "the server listens only on a socket in its private run directory")
