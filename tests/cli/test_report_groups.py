"""`dbdrift report --groups five` on the command line: the five groups' sections, and a campaign
with a test outside the 42 refused with status 2, naming it and the fix."""
from __future__ import annotations

import pytest

from dbdrift.store.store import RunRecord
from tests.cli.test_cli_errors import assert_user_error
from tests.helpers import dbdrift
from tests.unit.test_reports import make_store

pytestmark = pytest.mark.fault("cli")


def test_report_groups_five_prints_the_five_group_sections(tmp_path):
    make_store(tmp_path / "r.db").close()
    result = dbdrift("report", "--store", tmp_path / "r.db", "--groups", "five")
    assert result.returncode == 0 and "-- point query, part 1" in result.stdout
    assert "-- point queries" not in result.stdout


def test_report_groups_on_a_campaign_outside_the_42_exits_2_with_the_fix(tmp_path):
    store = make_store(tmp_path / "r.db")
    target = store.targets(store.latest_campaign_id(None))[0].id
    store.add_run(target, RunRecord(test="read-only-sum", test_group="range-agg", threads=1, repeat=0, status="ok",
                                    warmup_s=1, duration_s=3, metric="qps", driver_spec={}, value=1000.0))
    store.close()
    result = dbdrift("report", "--store", tmp_path / "r.db", "--groups", "five")
    assert_user_error(result, "read-only-sum", "--tests")
    assert result.returncode == 2
