"""`history --metric M` on a store without M names what the store holds and the --metric that
shows it."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_cli_errors import assert_user_error
from tests.helpers import dbdrift, instructions_only_store
from tests.unit.test_reports import make_store


def counts_store(path: Path) -> Path:
    """Two versions' instruction counts and no timed run, as `--instructions-only` stores them."""
    return instructions_only_store(path, versions=("17.10", "18.4"))


@pytest.mark.fault("cli")
def test_history_qps_on_a_store_of_instruction_counts_names_metric_instructions(tmp_path):
    result = dbdrift("history", "--store", counts_store(tmp_path / "c.db"), "--metric", "qps")
    assert_user_error(result, "holds no qps measurement", "it holds instruction counts (callgrind)",
                      "hint: pass --metric instructions; or run a campaign into this store")
    assert result.returncode == 2
    shown = dbdrift("history", "--store", tmp_path / "c.db", "--metric", "instructions")
    assert shown.returncode == 0 and "point-query" in shown.stdout


def test_history_rate_on_a_sysbench_store_names_each_metric_it_holds(tmp_path):
    make_store(tmp_path / "s.db").close()
    result = dbdrift("history", "--store", tmp_path / "s.db", "--metric", "rate")
    assert_user_error(result, "it holds timed throughput (qps) and instruction counts (callgrind) and CPU per "
                              "operation", "pass --metric qps (or instructions, cpu_us/o)")


def test_a_store_without_the_tests_asked_for_still_says_to_run_a_campaign(tmp_path):
    result = dbdrift("history", "--store", counts_store(tmp_path / "c.db"), "--metric", "qps", "--tests", "scan")
    assert_user_error(result, "holds no qps measurement of scan", "run a campaign into this store first")
