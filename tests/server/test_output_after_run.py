"""-o on a verb that measures: the report of a real, short comparison is written to the file once
the run has ended, and stdout stays empty."""
from __future__ import annotations

import pytest

from tests.helpers import dbdrift, shared_work_dir

pytestmark = pytest.mark.server


@pytest.mark.fault("cli")
def test_compare_o_writes_the_report_of_the_run_to_the_file(tmp_path):
    result = dbdrift("compare", "17.10", "again=17.10", "--tests", "point-query", "--rows", "2000", "--duration", "1s",
                     "--set", "settle_s=0", "--set", "warm_runs=false", "--set", "warmup_s=0.2", "--store",
                     tmp_path / "s.db", "--format", "markdown", "-o", tmp_path / "report.md", "-q",
                     work_dir=shared_work_dir("output-run"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == ""
    written = (tmp_path / "report.md").read_text()
    assert "point-query" in written and "again" in written
    again = dbdrift("report", "--store", tmp_path / "s.db", "--format", "markdown")
    assert again.stdout.splitlines()[-5:] == written.splitlines()[-5:]  # the stored campaign's report
