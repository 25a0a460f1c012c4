"""`run --check` asks the cached server whether it accepts the settings dbdrift would write,
without starting it (issue 44, item 8a): PostgreSQL `postgres -C`, MariaDB `--help --verbose`."""
from __future__ import annotations

import pytest

from tests.cli.test_cli_errors import assert_user_error
from tests.helpers import dbdrift, shared_work_dir
from tests.server.servers import fetch

pytestmark = [pytest.mark.server, pytest.mark.fault("input")]


def check(tmp_path, target: str):
    path = tmp_path / "c.toml"
    path.write_text('name = "c"\nrows = 1000\ntests = ["point-query"]\n[[targets]]\n' + target)
    work = shared_work_dir("check-settings")
    result = dbdrift("run", "--check", path, "--store", tmp_path / "s.db", work_dir=work, timeout=120)
    assert list(work.iterdir()) == []  # the scratch directory is gone, nothing was started
    return result


@pytest.mark.parametrize("settings, words", [
    ('{ shared_buffers = "lots" }', 'invalid value for parameter "shared_buffers": "lots"'),
    ("{ no_such_setting = 1 }", 'unrecognized configuration parameter "no_such_setting"'),
])
def test_check_refuses_a_postgres_setting_the_server_rejects_in_its_own_words(tmp_path, settings, words, pg17):
    result = check(tmp_path, f'name = "pg"\nversion = "17.10"\nsettings = {settings}\n')
    assert_user_error(result, "the server rejects its settings", f"target pg (postgres 17.10): {words}")
    assert result.returncode == 2 and "nothing was started" not in result.stdout


def test_check_passes_postgres_settings_the_server_accepts(tmp_path, pg17):  # pg17: the build is cached
    result = check(tmp_path, 'name = "pg"\nversion = "17.10"\nsettings = { shared_buffers = "256MB" }\n')
    assert result.returncode == 0, result.stderr
    assert "not checked" not in result.stdout and "ok: nothing was started" in result.stdout


def test_check_refuses_a_mariadb_setting_the_server_rejects(tmp_path, ma114):  # ma114: the build is cached
    result = check(tmp_path, 'name = "ma"\nengine = "mariadb"\nversion = "11.4.5"\n'
                             'settings = { innodb_buffer_pool_size = "x" }\n')
    assert_user_error(result, "target ma (mariadb 11.4.5): Unknown suffix 'x' used for variable "
                              "'innodb-buffer-pool-size'")
    assert result.returncode == 2


def test_check_names_the_settings_check_it_could_not_make(tmp_path):
    fetch("mysql", "5.7.22")  # cached, so that --check reaches the server's own check
    result = check(tmp_path, 'name = "my"\nengine = "mysql"\nversion = "5.7.22"\n')
    assert result.returncode == 0, result.stderr
    assert "not checked: target my's settings by the server (mysql 5.7.22 has no --validate-config" in result.stdout
