"""`recheck --set KEY=VALUE`: checked as a campaign file's keys are (the same messages, exit 2,
nothing started) and applied to the recheck it runs (tests/server/test_campaign_run.py runs one)."""
from __future__ import annotations

import pytest

from tests.helpers import dbdrift
from tests.unit.test_recheck import recheckable_store

OFFLINE = {"DBDRIFT_NPM_REGISTRY": "http://127.0.0.1:9", "DBDRIFT_MAVEN_REPOSITORY": "http://127.0.0.1:9"}


def campaign_file(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('name = "c"\n[[targets]]\nname = "pg17"\nversion = "17.10"\n'
                    '[[targets]]\nname = "pg18"\nversion = "18.4"\n')
    return path


@pytest.mark.fault("store")
@pytest.mark.parametrize("assignment", ["rows=0", "no_such_key=1", "targets.pg18.settings.listen_addresses='*'"])
def test_recheck_refuses_a_bad_set_as_run_refuses_it_in_a_campaign_file(tmp_path, assignment):
    store = recheckable_store(tmp_path / "s.db")
    recheck = dbdrift("recheck", "--pin-defaults", "--store", store, "--set", assignment, "--check",
                      extra_env=OFFLINE)
    run = dbdrift("run", "--check", campaign_file(tmp_path), "--store", tmp_path / "new.db", "--set", assignment,
                  extra_env=OFFLINE)
    assert recheck.returncode == run.returncode == 2, recheck.stderr
    assert recheck.stderr.replace("dbdrift recheck", str(tmp_path / "c.toml")) == run.stderr
    assert "Traceback" not in recheck.stderr


@pytest.mark.fault("store")
def test_a_valid_set_is_in_the_campaign_the_recheck_runs(tmp_path):
    store = recheckable_store(tmp_path / "s.db")
    result = dbdrift("recheck", "--pin-defaults", "--store", store, "--set", "write_s=1",
                     "--set", "targets.pg18.settings.jit=off", "--print-campaign")
    assert result.returncode == 0, result.stderr
    assert "\nwrite_s = 1\n" in result.stdout
    pg18 = result.stdout.split('name = "pg18"')[1].split("[[targets]]")[0]
    assert 'jit = "off"' in pg18
