"""A campaign for a cluster on a host without Dask: `run --check` refuses it as `run` does, with
exit 2 and the install hint, and `run` refuses before it makes the store (issue 65: everything
`run` refuses before its first measurement, `--check` refuses)."""
from __future__ import annotations

import pytest

from tests.cli.test_cli_errors import assert_user_error
from tests.helpers import dbdrift, shared_work_dir, without_modules

pytestmark = pytest.mark.fault("input")

def campaign(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('name = "c"\ntests = ["point-query"]\n[[targets]]\nname = "a"\nversion = "17.10"\n'
                    '[[targets]]\nname = "b"\nversion = "17.10"\n')
    return path


@pytest.mark.parametrize("verb", [["run", "--check"], ["run"]], ids=["check", "run"])
def test_a_cluster_campaign_without_dask_is_refused_alike_before_the_store_is_made(tmp_path, verb):
    result = dbdrift(*verb, campaign(tmp_path), "--cluster", "tcp://127.0.0.1:9", "--store", tmp_path / "s.db",
                     work_dir=shared_work_dir("nodask"), extra_env=without_modules(tmp_path, "distributed", "dask"))
    assert_user_error(result, "running on a cluster needs Dask distributed, which is not installed", "[cluster]")
    assert result.returncode == 2 and not (tmp_path / "s.db").exists()
