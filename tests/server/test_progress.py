"""Progress inside a step on real servers, through the CLI with stderr a log (not a terminal):
every workload's measured step of more than LOG_EVERY_S (10 s) says how far it is and its rate
now, as pgbench -P does, and the last step's ETA is 0. One PostgreSQL target each."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import run_campaign

pytestmark = pytest.mark.server

TARGET = '[[targets]]\nname = "pg"\nversion = "{version}"\nsettings = {{ shared_buffers = "256MB" }}\n'
# (campaign keys, the PostgreSQL build, the step's label and its rate, as the log line gives them)
WORKLOADS = {
    "sysbench": ('tables = 1\nrows = 20000\nwarmup_s = 0.5\nread_s = 11\nsettle_s = 0\nwarm_runs = false\n'
                 'tests = ["point-query"]\n', "17.10", r"point-query x1", r"[\d,]+ QPS"),
    "tpcc": ('workload = "tpcc"\n[tpcc]\nwarehouses = 1\nclients = 1\nrampup_s = 1\nduration_s = 11\n', "17.10",
             r"TPROC-C 1 VU\(s\), 1 warehouse\(s\)", r"[\d,]+ NOPM"),
    "htap": ('workload = "htap"\n[htap]\nwarehouses = 1\nclients = 1\nstreams = 1\nrampup_s = 0.5\nduration_s = 11\n',
             "17.10", r"[^:]+: 1 VU\(s\), 1 stream\(s\)", r"[\d,]+ NOPM, \d+ queries in [\d.]+s"),
    "ibench": ('workload = "insert-benchmark"\nsettle_s = 1\n[insert_benchmark]\nclients = 1\nrows_l_i0 = 5000\n'
               'query_s = 11\nsteps = ["l.i0", "l.x", "qr100"]\n', "17.10", r"qr100 \([^)]*\)",
               r"[\d,]+ inserts/s, [\d,]+ queries/s"),
    "vector": ('workload = "vector"\n[vector]\nrows = 3000\ndim = 128\nqueries = 60\nef_search = [40]\n'
               'warmup_s = 0.3\nduration_s = 11\n', "debian:18.6", r"search [^:]+", r"[\d,]+ QPS"),
}


@pytest.mark.fault("progress")
@pytest.mark.parametrize("workload", WORKLOADS)
def test_a_long_step_logs_how_far_it_is_and_its_rate_every_ten_seconds(tmp_path: Path, workload: str):
    keys, version, label, rate = WORKLOADS[workload]
    path = tmp_path / f"prog-{workload}.toml"
    top, _, table = keys.partition("\n[")  # the workload's table after the target, the top-level keys before
    path.write_text(f'name = "prog-{workload}"\n{top}\n' + TARGET.format(version=version)
                    + (f"[{table}" if table else ""), encoding="utf-8")
    _, result = run_campaign(path, "--no-report", timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    ticks = [line for line in result.stderr.splitlines()
             if re.fullmatch(rf"pg: {label}: \d+% \(1\ds\), {rate} \(ETA \S+\)", line)]
    assert ticks, result.stderr[-3000:]
    ended = [line for line in result.stderr.splitlines() if line.startswith("[")]
    counts = [tuple(map(int, re.match(r"\[(\d+)/(\d+)\]", line).groups())) for line in ended]
    assert counts[-1][0] == counts[-1][1] and ended[-1].endswith("(ETA 0s)"), result.stderr[-3000:]
