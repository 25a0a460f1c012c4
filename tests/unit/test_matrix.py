"""Configuration matrices: axes expanded into variants, named config files, the layers
`config show` prints, and whether the variants fit in memory together."""
from pathlib import Path

import pytest

from dbdrift.catalog.configs import NAMED
from dbdrift.errors import UserError
from dbdrift.workloads.registry import parse_campaign
from dbdrift.runner.memory import fit_order, size_bytes
from dbdrift.server import mycnf, pgconf
from dbdrift.server.layers import effective, parse_my_cnf, parse_postgresql_conf

GiB = 2**30
MYSQL_AXES = {
    "bl": {"0": {"mysql": {"skip_log_bin": ""}}, "1": {"mysql": {}}},
    "sync": {"0": {"mysql": {}}, "1": {"mysql": {"innodb_flush_log_at_trx_commit": 1, "sync_binlog": 1}}},
    "dw": {"0": {"mysql": {"innodb_doublewrite": "OFF"}}, "1": {"mysql": {"innodb_doublewrite": "ON"}},
           "DO": {"mysql": {"innodb_doublewrite": "DETECT_ONLY"}}},
}
PG_AXES = {
    "sync": {"0": {"postgres": {"synchronous_commit": "off"}}, "1": {"postgres": {"synchronous_commit": "on"}}},
    "fpi": {"0": {"postgres": {"full_page_writes": False}}, "1": {"postgres": {"full_page_writes": True}}},
}


def parse(data, tmp=Path(".")):
    return parse_campaign(data, source="c.toml", base_dir=tmp, default_name="c")


def refused(data, tmp=Path(".")) -> UserError:
    with pytest.raises(UserError) as err:
        parse(data, tmp)
    assert err.value.hint
    return err.value


def test_two_by_two_axes_make_four_variants_named_as_the_posts_name_them():
    spec = parse({"axes": PG_AXES, "targets": [{"name": "pg17", "version": "17.10"}]})
    assert [t.name for t in spec.targets] == ["pg17-sync0_fpi0", "pg17-sync0_fpi1", "pg17-sync1_fpi0",
                                              "pg17-sync1_fpi1"]
    assert [t.base for t in spec.targets] == [True, False, False, False]
    last = spec.targets[-1]
    assert (last.parent, last.variant) == ("pg17", "sync1_fpi1")
    assert [(lv.axis, lv.name, lv.settings) for lv in last.levels] == [
        ("sync", "1", {"synchronous_commit": "on"}), ("fpi", "1", {"full_page_writes": "on"})]


def test_a_mysql_matrix_of_2x2x3_makes_12_variants_in_axis_order():
    spec = parse({"axes": MYSQL_AXES, "targets": [{"name": "my8", "engine": "mysql", "version": "8.0.31"}]})
    assert [t.variant for t in spec.targets] == [
        f"bl{b}_sync{s}_dw{d}" for b in "01" for s in "01" for d in ("0", "1", "DO")]


def test_an_axis_for_one_engine_does_not_multiply_the_other_engines_targets():
    spec = parse({"axes": MYSQL_AXES, "targets": [{"name": "pg17", "version": "17.10", "base": True},
                                                  {"name": "my8", "engine": "mysql", "version": "8.0.31"}]})
    assert [t.name for t in spec.targets][:2] == ["pg17", "my8-bl0_sync0_dw0"]
    assert len(spec.targets) == 13 and spec.targets[0].base and spec.targets[0].variant is None


def test_variants_choose_by_shell_glob_and_the_first_kept_is_the_base():
    spec = parse({"axes": MYSQL_AXES, "variants": ["bl1_*"],
                  "targets": [{"name": "my8", "engine": "mysql", "version": "8.0.31"}]})
    assert [t.variant for t in spec.targets] == [f"bl1_sync{s}_dw{d}" for s in "01" for d in ("0", "1", "DO")]
    assert spec.targets[0].base and sum(t.base for t in spec.targets) == 1
    err = refused({"axes": MYSQL_AXES, "variants": "bl2_*",
                   "targets": [{"name": "my8", "engine": "mysql", "version": "8.0.31"}]})
    assert "select no variant" in err.message and "bl0_sync0_dw0" in err.hint


@pytest.mark.parametrize("axes, needle", [
    ({"sync": {"0": {"postgres": {}}}}, "needs two levels"),
    ({"s_y": {"0": {"postgres": {}}, "1": {"postgres": {}}}}, "axis name 's_y'"),
    ({"sync": {"o_n": {"postgres": {}}, "1": {"postgres": {}}}}, "level name 'o_n'"),
    ({"sync": {"0": {"oracle": {}}, "1": {"postgres": {}}}}, "'oracle' is not an engine"),
    ({"sync": {"0": {}, "1": {}}}, "applies to none"),
    ({"sync": {"0": {"postgres": {"synchronous_commit": "off"}}, "1": {"mysql": {}}}},
     "level 0 says nothing for mysql"),
    ({"sync": {"0": {"postgres": {"bad key": 1}}, "1": {"postgres": {}}}}, "axis sync, level 0, postgres"),
    ({"sync": {"0": "off", "1": "on"}}, "not a table of engines"),
])
def test_a_malformed_axis_names_the_axis_and_level_at_fault(axes, needle):
    err = refused({"axes": axes, "targets": [{"name": "pg17", "version": "17.10"}]})
    assert needle in err.message


def test_a_fixed_port_cannot_be_shared_by_variants_and_names_must_stay_unique():
    assert "cannot be shared" in refused({"axes": PG_AXES, "targets": [
        {"name": "pg17", "version": "17.10", "port": 6000}]}).message
    assert "used twice" in refused({"axes": PG_AXES, "targets": [
        {"name": "pg17", "version": "17.10"}, {"name": "pg17-sync0_fpi0", "engine": "mysql", "version": "8.0.31"}]}).message


def test_variants_without_axes_are_refused():
    assert "no [axes.NAME]" in refused({"variants": ["x"], "targets": [{"name": "a", "version": "17.10"}]}).message


def test_the_axes_and_each_variant_are_stored_with_the_campaign():
    spec = parse({"axes": PG_AXES, "targets": [{"name": "pg17", "version": "17.10", "config": "cx10a"}]})
    stored = spec.to_dict()
    assert [a["name"] for a in stored["axes"]] == ["sync", "fpi"]
    assert {"variant": "sync0_fpi1", "parent": "pg17", "levels": {"sync": "0", "fpi": "1"},
            "named_config": "cx10a"}.items() <= stored["targets"][1].items()


def test_a_named_config_is_refused_on_an_engine_or_version_it_is_not_written_for(tmp_path):
    assert "use config = 'z13a'" in refused({"targets": [
        {"name": "my", "engine": "mysql", "version": "8.4.3", "config": "z12a"}]}).hint
    assert "use config = 'cx10b'" in refused({"targets": [{"name": "pg", "version": "18.4", "config": "cx10a"}]}).hint
    assert "not mysql" in refused({"targets": [
        {"name": "my", "engine": "mysql", "version": "8.0.31", "config": "cx10b"}]}).message
    assert "did you mean the named file 'z12a'" in refused({"targets": [
        {"name": "my", "engine": "mysql", "version": "8.0.31", "config": "z12aa"}]}, tmp_path).hint
    (tmp_path / "extra.cnf").write_text("[mysqld]\nmax_connections = 10\n")
    spec = parse({"targets": [{"name": "my", "engine": "mysql", "version": "8.0", "config": ["z12a", "extra.cnf"]}]},
                 tmp_path)
    assert (spec.targets[0].named_config, spec.targets[0].config) == ("z12a", tmp_path / "extra.cnf")


@pytest.mark.parametrize("name", sorted(NAMED))
def test_every_named_file_has_a_comment_on_each_option_and_no_option_dbdrift_owns(name):
    text = NAMED[name].text()
    engine = next(iter(NAMED[name].versions))
    parse_file = parse_postgresql_conf if engine == "postgres" else parse_my_cnf
    owned = pgconf.OWNED_SETTINGS if engine == "postgres" else mycnf.OWNED_SETTINGS
    pairs = parse_file(text)
    assert len(pairs) >= 10
    assert not {mycnf.normalize(k) for k, _ in pairs} & set(owned)
    above = None  # the nearest line above an option that is not an option: its comment
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            assert line.startswith("[") or (above or "").startswith("#"), f"{name}: {line!r} has no comment above"
        else:
            above = line
    assert not any(k in ("shared_buffers", "innodb_buffer_pool_size", "innodb_redo_log_capacity") for k, _ in pairs)


def test_layers_say_where_each_option_came_from_and_what_it_replaced(tmp_path):
    (tmp_path / "mine.conf").write_text("work_mem = '64MB'  # mine\nsynchronous_commit = local\n")
    spec = parse({"axes": PG_AXES, "targets": [{"name": "pg17", "version": "17.10", "config": ["cx10a", "mine.conf"],
                                                "settings": {"full_page_writes": "on"}}]}, tmp_path)
    target = next(t for t in spec.targets if t.variant == "sync1_fpi0")
    layers = pgconf.config_layers(target, 17, ram_bytes=8 * GiB, socket_dir="/s", port=5432,
                                  config_file_text=pgconf.read_config_file(target), named_text=NAMED["cx10a"].text())
    found = {e.key: e for e in effective(layers, str.lower)}
    assert (found["synchronous_commit"].value, found["synchronous_commit"].source) == ("on", "matrix level sync1")
    assert [s for s, _ in found["synchronous_commit"].overrode] == [
        "default", "named file cx10a", f"user file {tmp_path / 'mine.conf'}"]
    assert (found["full_page_writes"].value, found["full_page_writes"].source) == ("on", "settings")
    assert found["full_page_writes"].overrode == (("matrix level fpi0", "off"),)
    assert (found["work_mem"].value, found["shared_buffers"].source) == ("64MB", "default")
    assert found["wal_buffers"].source == "named file cx10a"
    assert found["port"].source == "dbdrift (owned)"
    written = pgconf.render_config(target, 17, ram_bytes=8 * GiB, socket_dir=Path("/s"), port=5432,
                                   config_file_text=pgconf.read_config_file(target), named_text=NAMED["cx10a"].text())
    order = [written.index(s) for s in ("dbdrift defaults", "shipped with dbdrift", "mine.conf",
                                        "matrix axis sync, level 1", "matrix axis fpi, level 0", "settings of target pg17")]
    assert order == sorted(order)


def test_a_my_cnf_is_read_from_the_sections_a_server_reads():
    text = "[client]\nport = 1\n[mysqld]\nskip_log_bin\nsql_mode = 'A,B' # c\n[mysqldump]\nquick\n[server]\nx=1\n"
    assert parse_my_cnf(text) == [("skip_log_bin", ""), ("sql_mode", "A,B"), ("x", "1")]


def test_cache_sizes_are_read_as_each_engine_reads_them():
    assert size_bytes("4GB", "postgres") == 4 * GiB
    assert size_bytes("16384", "postgres") == 128 * 2**20  # 8 kB pages
    assert size_bytes("512M", "mysql") == 512 * 2**20
    assert size_bytes("lots", "mysql") is None


def test_variants_that_do_not_fit_in_memory_together_run_sequentially():
    data = {"axes": MYSQL_AXES, "rows": 10_000_000, "targets": [{"name": "my8", "engine": "mysql", "version": "8.0.31"}]}
    spec = parse(data)
    changed, note = fit_order(spec, ram=24 * GiB, available=20 * GiB)
    assert changed.order == "sequential" and "12 servers need about" in note
    small = parse({**data, "rows": 100_000})
    assert fit_order(small, ram=24 * GiB, available=20 * GiB) == (small, None)
    sized = parse({**data, "targets": [{"name": "my8", "engine": "mysql", "version": "8.0.31",
                                        "settings": {"innodb_buffer_pool_size": "512M"}}]})
    assert fit_order(sized, ram=24 * GiB, available=20 * GiB)[0].order == "turns"


def test_config_show_prints_each_option_with_its_source_and_refuses_an_unknown_target(tmp_path, capsys):
    from dbdrift.cli import main as cli_main

    (tmp_path / "m.toml").write_text(
        '[axes.sync]\n0 = { postgres = { synchronous_commit = "off" } }\n1 = { postgres = { synchronous_commit = "on" } }\n'
        '[[targets]]\nname = "pg17"\nversion = "17.10"\nconfig = "cx10a"\nsettings = { work_mem = "8MB" }\n')
    assert cli_main.main(["config", "show", str(tmp_path / "m.toml"), "pg17-sync1", "--set", "rows=10"]) == 0
    lines = {ln.split()[0]: ln.split()[1:] for ln in capsys.readouterr().out.splitlines()[2:]}
    assert lines["synchronous_commit"][:4] == ["on", "matrix", "level", "sync1"]
    assert lines["work_mem"] == ["8MB", "settings"]
    assert lines["wal_buffers"] == ["16MB", "named", "file", "cx10a"]
    assert cli_main.main(["config", "show", str(tmp_path / "m.toml"), "--variants", "sync0"]) == 0
    assert "target pg17-sync0: postgres 17.10" in capsys.readouterr().out
    assert cli_main.main(["config", "show", str(tmp_path / "m.toml"), "pg17"]) == 2
    assert "no target 'pg17'" in capsys.readouterr().err
    assert cli_main.main(["config", "show", str(tmp_path / "m.toml"), "--variants", "a,,b"]) == 2
    assert cli_main.main(["config", "cat", "z12a"]) == 0 and "innodb_doublewrite = 1" in capsys.readouterr().out
    assert cli_main.main(["config", "cat", "z99"]) == 2
