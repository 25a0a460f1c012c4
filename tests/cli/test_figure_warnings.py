"""Figures a campaign accepts but that measure little (a 1 ms run, 64 client threads on 2 CPUs)
are warned about with the figure and why, by --check and as the run starts, and not refused."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dbdrift.workloads.registry import parse_campaign
from tests.helpers import cli_env

TWO = {"targets": [{"name": "a", "version": "17.10"}, {"name": "b", "version": "18.4"}]}


def on_two_cpus(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """`dbdrift ARGS` allowed CPUs 0 and 1 only (taskset), as on the 2-CPU VMs the docs measure on."""
    return subprocess.run(["taskset", "-c", "0,1", sys.executable, "-m", "dbdrift", *args], capture_output=True,
                          text=True, env=cli_env(), cwd=cwd, timeout=300)


def warnings(spec, host_cpus: int) -> list[str]:
    from dbdrift.app import figures  # imported here, so the CLI cases run (and fail) without it

    return figures.warnings(spec, host_cpus)


def spec_of(**keys):
    data = {"name": "f", **TWO, **keys}
    return parse_campaign(data, "test", Path("."), "f")


@pytest.mark.fault("cli")
def test_compare_check_warns_of_a_1ms_run_with_the_figure_and_why(tmp_path):
    result = on_two_cpus(tmp_path, "compare", "17.10", "18.4", "--duration", "1ms", "--check")
    assert result.returncode == 0, result.stderr
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("  warning: read_s"))
    assert line.startswith("  warning: read_s, write_s and insert_s 1ms: a measured run gives about 0 pairs of turns "
                           "(turn_s 10ms, 2 targets a run), fewer than the 40 an interval wants")
    assert "measure for 800ms or more" in line


@pytest.mark.fault("cli")
def test_compare_check_warns_of_64_threads_on_2_cpus(tmp_path):
    result = on_two_cpus(tmp_path, "compare", "17.10", "18.4", "--threads", "64", "--check")
    assert result.returncode == 0, result.stderr
    assert ("  warning: threads 64: 64 client threads on 2 CPU(s) (32 per CPU), each with a server connection to "
            "serve: they queue for the CPUs, so the run measures the host's scheduler more than the server and its "
            "intervals widen; at most 8 threads on this host, or a host with more CPUs\n") in result.stdout


def test_the_defaults_and_the_demos_lengths_are_not_warned_about():
    assert warnings(spec_of(), host_cpus=2) == []
    assert warnings(spec_of(read_s=4.5, write_s=4.5, threads=[1, 8]), host_cpus=2) == []


def test_a_run_one_at_a_time_is_warned_below_ten_reporting_intervals():
    [line] = warnings(spec_of(order="sequential", read_s=5, write_s=60, tests=["point-query", "insert"]),
                              host_cpus=2)
    assert line.startswith("read_s 5s: a measured run gives about 5 reporting intervals (interval_s 1s), fewer than "
                           "the 10")


def test_instruction_counts_alone_have_no_timed_figures_to_warn_about():
    from dataclasses import replace

    assert warnings(replace(spec_of(read_s=0.001, threads=[64]), timed=False), host_cpus=2) == []


@pytest.mark.fault("cli")
def test_bisect_check_warns_of_a_1ms_qps_run(tmp_path):
    result = on_two_cpus(tmp_path, "bisect", "--good", "17.0", "--bad", "17.10", "--test", "point-query", "--metric", "qps",
                     "--duration", "1ms", "--check")
    assert result.returncode == 0, result.stderr
    assert "  warning: read_s 1ms: a measured run gives about 0 reporting intervals" in result.stdout
