"""Every campaign key is validated before anything starts: bad input is a UserError naming the
key and the fix (see also test_campaign_fuzz.py)."""
from pathlib import Path

import pytest

from dbdrift.errors import UserError
from dbdrift.workloads.registry import load_campaign, parse_campaign
from dbdrift.workloads.sysbench.plan import params

MINIMAL = {"targets": [{"name": "a", "version": "17.10", "base": True}, {"name": "b", "version": "18.4"}]}

pytestmark = pytest.mark.fault("input")


def parse(data, tmp=Path(".")):
    return parse_campaign(data, "c.toml", tmp, "c")

TARGET = '\n[[targets]]\nname = "a"\nversion = "17.10"\n'


def load_text(tmp_path, text: str | bytes):
    path = tmp_path / "c.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return load_campaign(path)


def refused(tmp_path, text: str | bytes) -> UserError:
    with pytest.raises(UserError) as err:
        load_text(tmp_path, text)
    assert err.value.message and err.value.hint
    return err.value


def test_an_unquoted_version_is_refused_with_the_quoted_text_as_written(tmp_path):
    err = refused(tmp_path, '[[targets]]\nname = "a"\nversion = 17.10\n')
    assert "version 17.10 is a number, not a string" in err.message and "target a" in err.message
    assert err.hint == 'write version = "17.10" (TOML reads 17.10 unquoted as the number 17.1)'


def test_an_integer_version_is_refused_with_the_quoted_text(tmp_path):
    err = refused(tmp_path, '[[targets]]\nname = "a"\nversion = 17\n')
    assert "version 17 is a number" in err.message and 'write version = "17"' in err.hint


def test_the_version_hint_quotes_the_text_of_the_target_at_fault(tmp_path):
    err = refused(tmp_path, '# version = 17.1\n'
                            'targets = [{name = "a", version = "17.1"}, {name = "b", version = 17.10}]\n')
    assert "target b" in err.message and 'write version = "17.10"' in err.hint


def test_a_numeric_version_given_without_file_text_still_says_to_quote_it():
    with pytest.raises(UserError) as err:
        parse({"targets": [{"name": "a", "version": 17.1}]})
    assert "is a number, not a string" in err.value.message
    assert 'version = "17.1"' in err.value.hint and "17.10 becomes 17.1" in err.value.hint


def test_a_version_of_another_type_is_refused():
    with pytest.raises(UserError, match="version must be a string"):
        parse({"targets": [{"name": "a", "version": ["17.10"]}]})


def test_an_empty_tests_list_is_refused_instead_of_running_the_default32():
    with pytest.raises(UserError) as err:
        parse({**MINIMAL, "tests": []})
    assert "tests = [] selects no microbenchmark" in err.value.message
    assert "dbdrift catalog" in err.value.hint and "leave tests out" in err.value.hint


@pytest.mark.parametrize("key", ["read_s", "write_s", "insert_s", "interval_s", "turn_s"])
def test_a_measured_duration_of_zero_is_refused(key):
    with pytest.raises(UserError, match=f"{key}: duration must be more than 0"):
        parse({**MINIMAL, key: 0})


def test_an_insert_benchmark_query_s_of_zero_is_refused():
    with pytest.raises(UserError, match="query_s: duration must be more than 0"):
        parse({**MINIMAL, "workload": "insert-benchmark", "insert_benchmark": {"query_s": "0s"}})


def test_warmup_scan_warm_and_settle_may_be_zero():
    spec = parse({**MINIMAL, "warmup_s": 0, "scan_warm_s": 0, "settle_s": 0})
    own = params(spec)
    assert (own.warmup_s, own.scan_warm_s, spec.settle_total_s()) == (0, 0, 0)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), "nan", "inf", "1e999", "9" * 400,
                                   2**1100])
def test_a_duration_that_is_not_a_finite_number_is_refused(value):
    with pytest.raises(UserError) as err:
        parse({**MINIMAL, "warmup_s": value})
    assert "warmup_s" in err.value.message and err.value.hint


def test_nan_written_in_the_file_is_refused(tmp_path):
    assert "read_s: nan is not a finite duration" in refused(tmp_path, "read_s = nan" + TARGET).message


def test_a_duration_over_24_hours_needs_allow_large():
    with pytest.raises(UserError) as err:
        parse({**MINIMAL, "read_s": "25h"})
    assert "read_s = '25h' is longer than 24 h" in err.value.message and "allow_large = true" in err.value.hint
    assert params(parse({**MINIMAL, "read_s": "25h", "allow_large": True})).read_s == 25 * 3600


@pytest.mark.parametrize("key", ["warmup_s", "scan_warm_s", "settle_s"])
def test_a_wait_over_2_hours_needs_allow_large(key):
    with pytest.raises(UserError, match=f"{key} = 7201 is longer than 2 h"):
        parse({**MINIMAL, key: 7201})
    assert parse({**MINIMAL, key: 7201, "allow_large": True})


def test_a_duration_over_365_days_is_refused_even_with_allow_large():
    with pytest.raises(UserError, match="warmup_s = 9223372036854775807 is more than 365 days"):
        parse({**MINIMAL, "warmup_s": 2**63 - 1, "allow_large": True})


def test_a_campaign_file_that_is_not_utf8_names_the_line_and_byte_offset(tmp_path):
    err = refused(tmp_path, b'name = "x"\n[[targets]]\nname = "caf\xe9"\n')
    assert "c.toml is not valid UTF-8" in err.message
    assert "byte 0xe9 at line 3, column 12 (byte offset 34)" in err.message and "UTF-8" in err.hint


def test_rows_beyond_sql_integer_are_refused_even_with_allow_large():
    with pytest.raises(UserError) as err:
        parse({**MINIMAL, "rows": 2**31, "allow_large": True})
    assert "rows = 2147483648 is more than 2147483647" in err.value.message and "INTEGER" in err.value.message


def test_tables_beyond_32_bits_are_refused_even_with_allow_large():
    with pytest.raises(UserError, match="tables = 4294967296 is more than 4294967295"):
        parse({**MINIMAL, "tables": 2**32, "allow_large": True})


@pytest.mark.parametrize("key, value", [("rows", 10**9 + 1), ("tables", 129), ("repeats", 101)])
def test_sizes_beyond_the_soft_limits_need_allow_large(key, value):
    with pytest.raises(UserError) as err:
        parse({**MINIMAL, key: value})
    assert f"{key} = {value} is more than" in err.value.message and "allow_large = true" in err.value.hint
    accepted = parse({**MINIMAL, key: value, "allow_large": True})
    assert getattr(accepted if key == "repeats" else params(accepted), key) == value


def test_repeats_beyond_1000_are_refused_even_with_allow_large():
    with pytest.raises(UserError, match="repeats = 1001 is more than 1000"):
        parse({**MINIMAL, "repeats": 1001, "allow_large": True})


def test_seed_plus_repeats_must_stay_within_64_bits():
    assert parse({**MINIMAL, "seed": 2**63 - 3, "repeats": 2}).seed == 2**63 - 3
    with pytest.raises(UserError, match="seed = 9223372036854775806 with repeats = 2"):
        parse({**MINIMAL, "seed": 2**63 - 2, "repeats": 2})


def test_allow_large_must_be_true_or_false():
    with pytest.raises(UserError, match="allow_large must be true or false"):
        parse({**MINIMAL, "allow_large": 1})


def test_allow_large_is_stored_with_the_campaign():
    assert parse(MINIMAL).to_dict()["allow_large"] is False
    assert parse({**MINIMAL, "allow_large": True}).to_dict()["allow_large"] is True


def test_an_integer_beyond_64_bits_is_refused_naming_its_key(tmp_path):
    err = refused(tmp_path, f'[[targets]]\nname = "a"\nversion = "17.10"\nsettings = {{ work_mem = {2**64} }}\n')
    assert "targets[0].settings.work_mem = 18446744073709551616 does not fit in a 64-bit integer" in err.message


def test_an_integer_of_thousands_of_digits_is_refused(tmp_path):
    assert "more than 4300 digits" in refused(tmp_path, "seed = " + "9" * 5000 + TARGET).message


def test_arrays_nested_too_deeply_to_read_are_refused(tmp_path):
    assert "too deeply" in refused(tmp_path, "threads = " + "[" * 5000 + "]" * 5000 + TARGET).message


def test_insert_benchmark_clients_beyond_1024_are_refused():
    with pytest.raises(UserError, match="clients = 1025 is more than 1024"):
        parse({**MINIMAL, "workload": "insert-benchmark", "insert_benchmark": {"clients": 1025}, "allow_large": True})


def test_insert_benchmark_rows_beyond_ten_billion_need_allow_large():
    data = {**MINIMAL, "workload": "insert-benchmark", "insert_benchmark": {"rows_l_i0": 10**10 + 1}}
    with pytest.raises(UserError, match="rows_l_i0 = 10000000001 is more than 10,000,000,000"):
        parse(data)
    assert parse({**data, "allow_large": True}).params.rows_l_i0 == 10**10 + 1


def test_insert_benchmark_rows_beyond_bigint_ids_are_refused():
    sizes = {"rows_l_i0": 2**62, "rows_l_i1": 2**62, "rows_l_i2": 1}
    with pytest.raises(UserError, match="more than transactionid"):
        parse({**MINIMAL, "workload": "insert-benchmark", "insert_benchmark": sizes, "allow_large": True})


def test_an_empty_insert_benchmark_steps_list_is_refused():
    with pytest.raises(UserError, match=r"steps = \[\] selects no step"):
        parse({**MINIMAL, "workload": "insert-benchmark", "insert_benchmark": {"steps": []}})


def test_the_first_target_is_the_implicit_base_when_none_sets_base():
    spec = parse({"targets": [{"name": "a", "version": "17.10"}, {"name": "b", "version": "18.4"}]})
    assert spec.base.name == "a" and spec.base_is_implicit


def test_the_base_is_explicit_when_a_target_sets_base():
    assert not parse(MINIMAL).base_is_implicit


@pytest.mark.parametrize("data, needle", [
    ({**MINIMAL, "name": 5}, "name: 5 is not a valid name"),
    ({**MINIMAL, "threads": [1.5]}, "threads must be a list"),
    ({**MINIMAL, "threads": [[1]]}, "threads must be a list"),
    ({**MINIMAL, "threads": True}, "threads must be a list"),
    ({**MINIMAL, "rows": True}, "rows must be a positive integer"),
    ({**MINIMAL, "tables": 1.0}, "tables must be a positive integer"),
    ({**MINIMAL, "repeats": "3"}, "repeats must be a positive integer"),
    ({**MINIMAL, "order": ["sequential"]}, "order must be one of"),
    ({**MINIMAL, "tests": [["point"]]}, "tests must be a list of strings"),
    ({**MINIMAL, "cpus": 2}, "cpus must be"),
    ({**MINIMAL, "cpus": {"driver": True, "server": "1"}}, "cpus.driver must be a CPU list"),
    ({**MINIMAL, "cpus": {"driver": ["0"], "server": "1"}}, "cpus.driver must be a CPU list"),
    ({**MINIMAL, "cpus": {"driver": "0-99999999", "server": "1"}}, "names a CPU beyond 8191"),
    ({**MINIMAL, "workload": "insert-benchmark", "insert_benchmark": {"steps": [["l.i0"]]}}, "steps must be a list"),
    ({**MINIMAL, "workload": "insert-benchmark", "insert_benchmark": {"steps": 3}}, "steps must be a list"),
    ({**MINIMAL, "workload": "insert-benchmark", "insert_benchmark": {"clients": True}}, "clients must be a positive"),
    ({"targets": [{"name": "a", "version": "17.10", "port": 5432.0}]}, "port 5432.0 is not a port number"),
    ({"targets": [{"name": "a", "version": "17.10", "port": True}]}, "port True is not a port number"),
    ({"targets": [{"name": "a", "version": "17.10", "settings": {"work_mem": {"a": 1}}}]},
     "settings.work_mem = {'a': 1} is not a value"),
    ({"targets": [{"name": "a", "version": "17.10", "settings": {"work_mem": ["4MB"]}}]}, "is not a value"),
    ({"targets": [{"name": "a", "version": "17.10", "settings": {"work_mem": float("nan")}}]}, "is not a value"),
    ({"targets": [{"name": "a", "version": "17.10", "settings": {"work_mem": "4MB\nfsync = off"}}]},
     "is not a value"),
    ({"targets": [{"name": "a", "version": "17.10", "settings": {"work mem": "4MB"}}]}, "not a server option name"),
    ({"targets": [{"name": "a", "engine": ["postgres"], "version": "17.10"}]}, "unknown engine"),
    ({"targets": [{"name": "a", "system": "yes"}]}, "system must be true or false"),
    ({"targets": [{"name": "a", "basedir": 5}]}, "basedir must be a path"),
    ({"targets": [{"name": "a", "basedir": ""}]}, "basedir must be a path"),
    ({"targets": [{"name": "a", "basedir": "~nosuchuser-dbdrift/pg"}]}, "not a usable path"),
    ({"targets": [{"name": "a", "version": "17.10", "config": ["a.conf", "b.conf"]}]}, "at most one named file and one path"),
    ({"targets": [{"name": "a", "version": "17.10", "config": 5}]}, "config must be a name, a path"),
    ({"targets": [{"name": "a", "version": "17.10", "base": 1}]}, "base must be true or false"),
    ({"targets": [{"name": 17, "version": "17.10"}]}, "name: 17 is not a valid name"),
    ({"targets": [[{"name": "a", "version": "17.10"}]]}, "targets[0] is not a table"),
])
def test_a_value_of_the_wrong_type_is_refused_with_the_key_named(data, needle):
    with pytest.raises(UserError) as err:
        parse(data)
    assert needle in err.value.message and err.value.hint


def test_parse_duration_s_allows_zero_unless_the_duration_is_measured():
    from dbdrift.quantities import parse_duration_s

    assert parse_duration_s("0s", "--steal-window") == 0
    with pytest.raises(UserError, match="must be more than 0"):
        parse_duration_s("0s", "read_s", positive=True)


def test_a_percentage_reads_alike_on_the_command_line_and_in_a_campaign_key():
    from dbdrift.cli.options import percent

    two = {"name": "c", "order": "turns", "restart": "repeat",
           "targets": [{"name": "a", "version": "17.10"}, {"name": "b", "version": "18.4"}]}
    for written, share in (("2%", 0.02), ("2", 0.02), (" 2 % ", 0.02), ("0.5", 0.005), ("0.5%", 0.005)):
        assert percent("--min-effect")(written) == share
        assert parse({**two, "detect": written}).detect == share
    for number, share in ((2, 0.02), (2.0, 0.02), (0.5, 0.005), (12.5, 0.125)):
        assert parse({**two, "detect": number}).detect == share


@pytest.mark.parametrize("value, message, hint", [
    (0.02, "c.toml: detect: 0.02 would be 0.02%", 'did you mean 2%? to mean 0.02%, write "0.02%"'),
    ("0.02", "c.toml: detect: '0.02' would be 0.02%", "did you mean 2%?"),
    ("two", "c.toml: detect: 'two' is not a percentage", 'bare numbers are percents: write e.g. 2 or "2%"'),
    (True, "c.toml: detect: expected a percentage, got True", 'write e.g. 2 or "2%"'),
    (-2, "c.toml: detect: -2 is negative", "use 0.1% to 50%"),
    (80, "c.toml: detect: 80 is out of range", "use 0.1% to 50%"),
    ("0.05%", "c.toml: detect: '0.05%' is out of range", "use 0.1% to 50%"),
])
def test_a_bad_detect_is_refused_naming_the_key_and_the_fix(value, message, hint):
    with pytest.raises(UserError) as err:
        parse({"name": "c", "detect": value, "targets": MINIMAL["targets"]})
    assert err.value.message.startswith(message) and hint in err.value.hint and err.value.exit_code == 2
