"""my.cnf rendering for MariaDB targets and the MySQL greeting parser, without a server."""
from __future__ import annotations

from pathlib import Path

import pytest

from dbdrift.errors import UserError
from dbdrift.model import TargetSpec
from dbdrift.server import mycnf
from dbdrift.server.mariadb import _error_line, parse_greeting

GiB = 1024**3


def render(target: TargetSpec, version: str = "10.11.5", ram: int = 32 * GiB,
           config_file_text: str | None = None) -> str:
    run = Path("/run/t")
    return mycnf.render_config(target, version, ram=ram, basedir=Path("/opt/mariadb"),
                               data_dir=run / "data", socket_path=run / "sock/mysqld.sock",
                               port=3307, log_path=run / "server.log", pid_path=run / "mysqld.pid",
                               config_file_text=config_file_text)


def effective(text: str) -> dict[str, str]:
    """What mariadbd would use from [mysqld]: later lines win, other groups are ignored."""
    values: dict[str, str] = {}
    group = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            group = line.strip("[]")
            continue
        if group == "mysqld":
            key, _, value = line.partition("=")
            values[mycnf.normalize(key.strip())] = value.strip()
    return values


def test_the_buffer_pool_is_a_quarter_of_ram():
    assert mycnf.buffer_pool_mb(32 * GiB) == 8192


def test_the_buffer_pool_is_at_most_16_gib_and_at_least_128_mib():
    assert mycnf.buffer_pool_mb(256 * GiB) == 16384
    assert mycnf.buffer_pool_mb(256 * 1024**2) == 128


def test_redo_is_half_the_buffer_pool_in_one_file_from_10_5():
    assert mycnf.log_file_size_mb((10, 11, 5), 32 * GiB) == 4096


def test_redo_is_split_over_two_files_before_10_5():
    assert mycnf.log_file_size_mb((10, 2, 11), 32 * GiB) == 2048


def test_redo_is_at_least_256_mib_and_at_most_8_gib():
    assert mycnf.log_file_size_mb((11, 4, 5), 1 * GiB) == 256
    assert mycnf.log_file_size_mb((11, 4, 5), 512 * GiB) == 8192


def test_defaults_follow_the_cached_innodb_config():
    values = effective(render(TargetSpec("t", engine="mariadb")))
    assert values["innodb_buffer_pool_size"] == "8192M"
    assert values["log_bin"] == "binlog"
    assert values["sync_binlog"] == "0"
    assert values["innodb_flush_log_at_trx_commit"] == "2"
    assert values["character_set_server"] == "latin1"
    assert values["performance_schema"] == "0"
    assert values["max_connections"] == "1000"


def test_the_config_file_overrides_defaults_and_settings_override_the_file():
    target = TargetSpec("t", engine="mariadb", config=Path("z12a.cnf"),
                        settings={"max_connections": "200"})
    text = "[mysqld]\nmax_connections = 500\ninnodb_buffer_pool_size = 1G\n"
    values = effective(render(target, config_file_text=text))
    assert values["innodb_buffer_pool_size"] == "1G"
    assert values["max_connections"] == "200"


def test_settings_go_to_mysqld_even_after_a_config_file_ending_in_another_group():
    target = TargetSpec("t", engine="mariadb", config=Path("x.cnf"), settings={"sync_binlog": "1"})
    values = effective(render(target, config_file_text="[client]\ndefault-character-set = latin1\n"))
    assert values["sync_binlog"] == "1"


def test_dbdrift_owns_socket_port_address_and_files():
    values = effective(render(TargetSpec("t", engine="mariadb")))
    assert values["socket"] == "/run/t/sock/mysqld.sock"
    assert values["port"] == "3307"
    assert values["skip_networking"] == "1" and "bind_address" not in values  # a private socket, no TCP
    assert values["datadir"] == "/run/t/data"
    assert values["log_error"] == "/run/t/server.log"
    assert values["tmpdir"] == "/run/t/tmp"  # not /tmp: servers sharing it collided on temporary tables


@pytest.mark.parametrize("key", ["port", "socket", "bind-address", "datadir", "loose-log_error"])
def test_an_owned_setting_is_refused(key):
    with pytest.raises(UserError, match="chosen by dbdrift"):
        render(TargetSpec("t", engine="mariadb", settings={key: "x"}))


def test_a_malformed_option_name_is_refused():
    with pytest.raises(UserError, match="not a MariaDB option name"):
        render(TargetSpec("t", engine="mariadb", settings={"bad name": "1"}))


def test_an_empty_value_is_written_as_a_bare_flag():
    assert "\nskip_log_bin\n" in render(TargetSpec("t", engine="mariadb", settings={"skip_log_bin": ""}))


def test_values_with_spaces_are_double_quoted():
    assert mycnf.quote_value("a b") == '"a b"'
    assert mycnf.quote_value("8G") == "8G"
    assert mycnf.quote_value(True) == "ON"


def test_a_version_string_gives_its_numeric_parts():
    assert mycnf.version_tuple("11.4.5-MariaDB-log") == (11, 4, 5)


def test_a_greeting_gives_the_server_version():
    payload = b"\x0a" + b"11.4.5-MariaDB-log\x00" + b"\x01\x00\x00\x00"
    packet = len(payload).to_bytes(3, "little") + b"\x00" + payload
    assert parse_greeting(packet) == "11.4.5-MariaDB-log"


def test_an_error_greeting_still_means_the_server_is_up():
    payload = b"\xff\x10\x04Too many connections"
    assert parse_greeting(len(payload).to_bytes(3, "little") + b"\x00" + payload) == ""


def test_garbage_is_not_a_greeting():
    assert parse_greeting(b"\x01\x00") is None


def test_the_first_error_line_is_the_cause():
    log = ("2026-11-22 17:39:07 0 [Note] Starting\n"
           "2026-11-22 17:39:07 0 [ERROR] mariadbd: unknown variable 'no_such_option=1'\n"
           "2026-11-22 17:39:07 0 [ERROR] Aborting\n")
    assert _error_line(log) == "[ERROR] mariadbd: unknown variable 'no_such_option=1'"


def test_a_failed_bootstrap_statement_is_the_cause_not_the_aborting_after_it():
    log = ("2026-11-27  4:15:06 1 [Warning] Could not remove temporary table: '/tmp/#sql-temptable-4e70-1-3'\n"
           "ERROR: 1051  Unknown table 'mysql.tmp_user_sys'\n"
           "2026-11-27  4:15:06 0 [ERROR] Aborting\n")
    assert _error_line(log) == "ERROR: 1051 Unknown table 'mysql.tmp_user_sys'"


def test_a_mysql_target_switches_tls_and_the_x_plugin_off_where_its_version_has_them():
    assert (mysql_values("8.0.36")["ssl"], mysql_values("8.0.36")["mysqlx"]) == ("0", "0")
    assert "\nssl = 0" in render(TargetSpec("my", engine="mysql"), version="8.0.36")
    assert "ssl" not in mysql_values("9.7.4") and mysql_values("9.7.4")["mysqlx"] == "0"  # 8.4 removed ssl
    assert "mysqlx" not in mysql_values("5.6.14") and mysql_values("5.6.14")["ssl"] == "0"  # X plugin: 5.7.12
    assert "\nssl = 0" in render(TargetSpec("ma", engine="mariadb"))


def test_mysql_initialize_puts_the_defaults_file_first():
    from dbdrift.server.mariadb import initialize_args
    args = initialize_args(Path("/r/my.cnf"), Path("/opt/mysql"), Path("/r/data"))
    assert args[0] == "--defaults-file=/r/my.cnf" and "--initialize-insecure" in args
    assert "--datadir=/r/data" in args


def mysql_values(version: str) -> dict[str, str]:
    return effective(render(TargetSpec("my", engine="mysql"), version=version))


def test_mysql_redo_is_the_same_total_under_each_versions_option_names():
    # 32 GiB of RAM: 8 GiB buffer pool, 4 GiB of redo on every version
    assert mysql_values("5.7.22")["innodb_log_file_size"] == "2048M"  # two files
    assert mysql_values("8.0.15")["innodb_log_file_size"] == "2048M"
    assert mysql_values("8.0.31")["innodb_redo_log_capacity"] == "4096M"
    assert "innodb_log_file_size" not in mysql_values("8.0.31")  # deprecated from 8.0.30


def test_mysql_binlog_expiry_is_one_day_under_each_versions_option_name():
    assert mysql_values("5.7.22")["expire_logs_days"] == "1"
    assert "binlog_expire_logs_seconds" not in mysql_values("5.7.22")
    assert mysql_values("8.0.15")["binlog_expire_logs_seconds"] == "86400"
    assert "expire_logs_days" not in mysql_values("8.0.15")


def test_every_mysql_uses_latin1_and_native_password_authentication_where_it_can_be_chosen():
    for version in ("5.6.14", "5.7.22", "8.0.15", "8.0.31", "8.4.3", "9.7.4"):
        values = mysql_values(version)
        assert (values["character_set_server"], values["collation_server"]) == ("latin1", "latin1_swedish_ci")
    for version in ("5.7.22", "8.0.31"):
        assert mysql_values(version)["default_authentication_plugin"] == "mysql_native_password"
    for version in ("5.6.14", "8.4.3", "9.7.4"):  # 5.6 has only native; 8.4 removed the option, 9.x the plugin
        assert "default_authentication_plugin" not in mysql_values(version)


def test_binlog_format_is_set_only_where_it_is_not_deprecated():
    assert mysql_values("8.0.33")["binlog_format"] == "ROW" and mysql_values("5.6.14")["binlog_format"] == "ROW"
    assert "binlog_format" not in mysql_values("8.0.34") and "binlog_format" not in mysql_values("9.7.4")
    assert effective(render(TargetSpec("ma", engine="mariadb")))["binlog_format"] == "ROW"


def test_mariadb_keeps_its_option_names():
    values = effective(render(TargetSpec("ma", engine="mariadb")))
    assert values["expire_logs_days"] == "1" and "innodb_redo_log_capacity" not in values
    assert "default_authentication_plugin" not in values


def test_a_stop_waits_for_a_shutdown_whose_answer_was_lost_but_not_for_a_refused_one():
    import pymysql

    from dbdrift.errors import ServerError
    from dbdrift.server.mariadb import _answer_lost

    def failed(cause):
        try:
            raise ServerError("SHUTDOWN failed", "see the log") from cause
        except ServerError as exc:
            return exc
    assert _answer_lost(failed(pymysql.err.OperationalError(2013, "Lost connection to MySQL server during query")))
    assert not _answer_lost(failed(pymysql.err.ProgrammingError(1064, "You have an error in your SQL syntax")))
    assert not _answer_lost(ServerError("cannot connect", "see the log"))
