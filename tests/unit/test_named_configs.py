"""The named configs as the posts define them (z12a/z12b's flush methods, z13a's gtid options,
z13b's optimizer, the sync, doublewrite and binlog-in-InnoDB variants, z11a/z11b), each refused
with its reason on a version that lacks its options, and the host-size suffix that sizes the
cache and log. Rendered as the server would read them; no server."""
from __future__ import annotations

from pathlib import Path

import pytest

from dbdrift.catalog.configs import NAMED, check_named, named_text, resolve
from dbdrift.errors import UserError
from dbdrift.model import TargetSpec
from dbdrift.server import mycnf, pgconf
from dbdrift.server.layers import effective

GiB = 1024**3


def final(name: str, engine: str, version: str) -> dict[str, tuple[str, str]]:
    """option -> (value, source) as a target of `name` on `version` gets it."""
    target = TargetSpec("t", engine=engine, version=version, named_config=name)
    text = named_text(target, version)
    if engine == "postgres":
        layers = pgconf.config_layers(target, pgconf.major_version(version), ram_bytes=16 * GiB, socket_dir="/s",
                                      port=5432, named_text=text)
        return {e.key: (e.value, e.source) for e in effective(layers, str.lower)}
    layers = mycnf.config_layers(target, version, ram=16 * GiB, basedir="/b", data_dir="/d", socket_path="/s",
                                 port=3306, log_path="/l", pid_path="/r/p", named_text=text)
    return {e.key: (e.value, e.source) for e in effective(layers, mycnf.normalize)}


def refusal(name: str, engine: str, version: tuple[int, ...]) -> UserError:
    with pytest.raises(UserError) as caught:
        check_named(name, engine, version, "target t")
    return caught.value


def test_z12a_writes_data_files_with_o_direct_no_fsync_on_mysql_and_mariadb():
    assert final("z12a", "mariadb", "10.11.5")["innodb_flush_method"] == ("O_DIRECT_NO_FSYNC", "named file z12a")
    assert final("z12a", "mysql", "8.0.33")["innodb_flush_method"] == ("O_DIRECT_NO_FSYNC", "named file z12a")


def test_z12b_is_z12a_with_o_direct_under_10x_and_11x_names():
    options = final("z12b", "mariadb", "11.4.5")
    assert options["innodb_flush_method"] == ("O_DIRECT", "named file z12b")
    assert options["innodb_data_file_buffering"] == ("OFF", "named file z12b")
    assert options["sql_mode"][1] == "named file z12a"  # the rest is z12a's


def test_z12a_is_refused_on_mariadb_11_for_its_lost_flush_method_and_z12b_is_named():
    error = refusal("z12a", "mariadb", (11, 4, 5))
    assert "MDEV-33545" in error.message and "O_DIRECT_NO_FSYNC" in error.message
    assert error.hint == "use config = 'z12b'"


def test_z13a_turns_off_the_gtid_defaults_mysql_9_6_turned_on():
    options = final("z13a", "mysql", "9.7.4")
    assert options["gtid_mode"] == ("OFF", "named file z13a")
    assert options["enforce_gtid_consistency"] == ("OFF", "named file z13a")
    assert options["innodb_flush_method"][0] == "O_DIRECT_NO_FSYNC"  # as close as possible to z12a


def test_z13b_is_z13a_with_the_hypergraph_optimizer():
    options = final("z13b", "mysql", "9.7.4")
    assert options["optimizer_switch"] == ("hypergraph_optimizer=on", "named file z13b")
    assert options["gtid_mode"] == ("OFF", "named file z13a")


def test_the_sync_variants_sync_each_commit_and_dw0_turns_doublewrite_off():
    b_sync = final("z12b_sync_dw0", "mariadb", "10.11.5")
    assert b_sync["innodb_flush_log_at_trx_commit"][0] == "1" and b_sync["sync_binlog"][0] == "1"
    assert b_sync["innodb_doublewrite"] == ("0", "named file z12b_sync_dw0")
    c_sync = final("z12c_sync_dw0", "mariadb", "12.3.1")
    assert c_sync["binlog_storage_engine"] == ("innodb", "named file z12c")
    assert c_sync["log_bin"] == ("", "named file z12c")  # given bare, as the InnoDB binlog requires
    assert c_sync["innodb_flush_log_at_trx_commit"] == ("1", "named file z12c_sync")
    assert c_sync["sync_binlog"][0] == "0"  # nothing else to sync: the binlog is in InnoDB


@pytest.mark.parametrize("name", ["z12c", "z12c_sync", "z12c_sync_dw0"])
def test_the_binlog_in_innodb_is_refused_before_mariadb_12_3_with_the_reason(name):
    error = refusal(name, "mariadb", (12, 2, 1))
    assert "binlog_storage_engine" in error.message and "12.3" in error.message
    assert error.hint == "use config = 'z12b'"


def test_z11a_and_z11b_split_mariadb_at_11_as_the_posts_cz11a_and_cz11b():
    assert final("z11a", "mariadb", "10.5.29")["innodb_flush_method"][0] == "O_DIRECT_NO_FSYNC"
    assert final("cz11b", "mariadb", "11.8.9")["innodb_data_file_buffering"] == ("OFF", "named file cz11b")
    assert "z11a before" in refusal("z11b", "mariadb", (10, 11)).message


def test_every_named_file_opens_with_a_comment_naming_it_and_the_versions_it_takes():
    for config in NAMED.values():
        first = config.own_text().splitlines()[0]
        assert first.startswith(f"# {config.name}"), config.name
        engine = {"postgres": "PostgreSQL", "mysql": "MySQL", "mariadb": "MariaDB"}[next(iter(config.versions))]
        assert engine in config.own_text().split("[mysqld]")[0], config.name


@pytest.mark.parametrize(("engine", "version", "expected"), [
    ("mysql", "8.0.33", {"innodb_buffer_pool_size": "23G", "innodb_redo_log_capacity": "30G"}),
    ("mysql", "5.7.22", {"innodb_log_files_in_group": "15", "innodb_log_file_size": "2G"}),
    ("mariadb", "10.11.5", {"innodb_buffer_pool_size": "23G", "innodb_log_file_size": "30G"}),
])
def test_the_c8r32_suffix_sizes_the_buffer_pool_and_redo_under_each_versions_names(engine, version, expected):
    options = final("z12a_c8r32", engine, version)
    assert {k: options[k][0] for k in expected} == expected
    assert options["innodb_buffer_pool_size"][1] == "named file z12a_c8r32"


def test_the_suffix_sizes_postgres_shared_buffers_and_wal_and_the_posts_spelling_is_the_same_config():
    options = final("cx10a_c8r32", "postgres", "17.10")
    assert (options["shared_buffers"][0], options["max_wal_size"][0]) == ("23GB", "40GB")
    named = resolve("cz12a_c32r128")
    assert named is not None and (named.config.name, named.name) == ("z12a", "z12a_c32r128")


def test_a_suffix_sized_for_a_bigger_host_is_refused_on_this_one():
    target = TargetSpec("t", engine="mysql", version="8.0.33", named_config="z12a_c32r128")
    with pytest.raises(UserError) as caught:
        named_text(target, "8.0.33", ram=32 * GiB)
    assert "100 GB" in caught.value.message and "128 GB host" in caught.value.message
    assert caught.value.hint.startswith("use config = 'z12a'")
    assert named_text(target, "8.0.33", ram=256 * GiB) is not None


def test_a_campaign_takes_a_sized_name_as_a_named_config(tmp_path: Path):
    from dbdrift.workloads.registry import parse_campaign
    spec = parse_campaign({"targets": [{"name": "m", "engine": "mariadb", "version": "10.11.5",
                                        "config": "z12b_c24r64"}]}, "c.toml", tmp_path, "c")
    assert spec.targets[0].named_config == "z12b_c24r64" and spec.targets[0].config is None


def test_config_show_prints_a_named_config_with_each_options_file(capsys):
    from dbdrift.cli import main as cli_main
    assert cli_main.main(["config", "show", "z12b", "--version", "mariadb:10.11.5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("target z12b: mariadb 10.11.5")
    line = next(ln for ln in out.splitlines() if ln.split()[:1] == ["innodb_flush_method"])
    assert line.split()[1:5] == ["O_DIRECT", "named", "file", "z12b"] and "O_DIRECT_NO_FSYNC from named file z12a" in line


def test_config_show_refuses_a_named_config_on_a_version_that_lacks_its_options(capsys):
    from dbdrift.cli import main as cli_main
    assert cli_main.main(["config", "show", "z12c_sync", "--version", "mariadb:12.2.1"]) == 2
    err = capsys.readouterr().err
    assert "binlog_storage_engine" in err and "use config = 'z12b'" in err
