"""perf stat support probing, CSV parsing and per-query normalisation, on literal perf output:
real captures from a VM without a PMU (vm-*.csv) and a hand-made bare-metal sample."""
import subprocess
from pathlib import Path

import pytest

from dbdrift.analysis.hardware import DERIVED, per_query
from dbdrift.metrics import perf

PERF = Path(__file__).resolve().parents[1] / "data" / "host" / "perf"
HOST = PERF.parent


def sample(name: str) -> str:
    return (PERF / name).read_text()


def fake_runner(prefix: str, returncode: int = 0):
    """A subprocess.run stand-in: perf's CSV goes to stderr, one fixture file per probed event."""
    calls = []

    def run(cmd, **kwargs):
        calls.append(cmd)
        event = cmd[cmd.index("-e") + 1]
        return subprocess.CompletedProcess(cmd, returncode, stdout="", stderr=sample(f"{prefix}-{event}.csv"))
    run.calls = calls
    return run


def text_runner(stderr: str, returncode: int = 0):
    return lambda cmd, **kwargs: subprocess.CompletedProcess(cmd, returncode, stdout="", stderr=stderr)


def missing_binary(cmd, **kwargs):
    raise FileNotFoundError(2, "No such file or directory", "perf")


# -- counter groups and command -------------------------------------------------------------

def test_there_are_seven_counter_groups_from_cpu_clock_to_faults():
    assert len(perf.COUNTER_GROUPS) == 7
    assert perf.COUNTER_GROUPS[0] == "cpu-clock,cycles,bus-cycles,instructions,branches,branch-misses"
    assert perf.COUNTER_GROUPS[6] == "alignment-faults,context-switches,migrations,major-faults,minor-faults,faults"


def test_stat_command_attaches_to_a_pid_for_the_given_seconds():
    assert perf.stat_command(4242, perf.COUNTER_GROUPS[2], 10) == [
        "perf", "stat", "-x,", "-e", "L1-dcache-loads,L1-dcache-load-misses,L1-dcache-stores",
        "-p", "4242", "--", "sleep", "10"]


def test_stat_command_joins_a_list_of_events():
    assert perf.stat_command(1, ["cycles", "instructions"], 0.5)[4:] == [
        "cycles,instructions", "-p", "1", "--", "sleep", "0.5"]


# -- parsing --------------------------------------------------------------------------------

def test_not_supported_parses_as_none_and_software_events_as_numbers():
    counters = perf.parse_perf_stat_csv(sample("vm-instructions-task-clock.csv"))
    assert counters == {"instructions": None, "task-clock": 0.48}


def test_every_event_of_the_seven_groups_appears_in_the_vm_capture():
    counters = perf.parse_perf_stat_csv(sample("vm-all-groups.csv"))
    expected = [e for group in perf.COUNTER_GROUPS for e in group.split(",")]
    assert list(counters) == expected


def test_on_the_vm_only_cpu_clock_and_software_events_are_counted():
    counters = perf.parse_perf_stat_csv(sample("vm-all-groups.csv"))
    counted = [e for e, v in counters.items() if v is not None]
    assert counted == ["cpu-clock", "alignment-faults", "context-switches", "migrations", "major-faults",
                       "minor-faults", "faults"]


def test_bare_metal_sample_parses_values_not_metrics():
    counters = perf.parse_perf_stat_csv(sample("baremetal-all-groups.csv"))
    assert counters["cycles"] == 38521345112.0 and counters["cpu-clock"] == 9876.54
    assert counters["stalled-cycles-backend"] is None and counters["context-switches"] == 51234.0


def test_not_counted_parses_as_none():
    assert perf.parse_perf_stat_csv("<not counted>,,cycles,0,0.00,,\n") == {"cycles": None}


def test_metric_only_lines_blank_lines_and_comments_are_skipped():
    text = "# started on Mon\n\n100,,instructions,10,100.00,0.50,insn per cycle\n,,,,,0.25,stalled cycles per insn\n"
    assert perf.parse_perf_stat_csv(text) == {"instructions": 100.0}


def test_event_modifiers_are_dropped_from_the_name():
    assert perf.parse_perf_stat_csv("1234,,cycles:u,10,100.00,,\n") == {"cycles": 1234.0}


# -- per query ------------------------------------------------------------------------------

def test_per_query_divides_each_counter_by_the_queries():
    result = per_query({"instructions": 5e9, "context-switches": 500.0}, 50_000)
    assert (result["instructions"], result["context-switches"]) == (100_000.0, 0.01)


def test_per_query_derives_ipc_ghz_and_miss_ratios_from_the_bare_metal_sample():
    result = per_query(perf.parse_perf_stat_csv(sample("baremetal-all-groups.csv")), 50_000)
    assert result["ipc"] == pytest.approx(1.35272, abs=1e-5)
    assert result["ghz"] == pytest.approx(3.90029, abs=1e-5)
    assert result["branch-miss-pct"] == pytest.approx(0.94954, abs=1e-5)
    assert result["cache-miss-pct"] == pytest.approx(15.0)
    assert result["L1-dcache-load-miss-pct"] == pytest.approx(5.0)
    assert result["dTLB-load-miss-pct"] == pytest.approx(0.2)


def test_per_query_skips_ratios_whose_denominator_was_not_supported():
    result = per_query(perf.parse_perf_stat_csv(sample("baremetal-all-groups.csv")), 50_000)
    assert "iTLB-load-miss-pct" not in result and "L1-icache-load-miss-pct" not in result


def test_per_query_derives_itlb_and_l1_icache_miss_pct_when_both_are_counted():
    counters = {"iTLB-load-misses": 5.0, "iTLB-loads": 1000.0, "L1-icache-loads-misses": 20.0,
                "L1-icache-loads": 400.0}
    result = per_query(counters, 10)
    assert (result["iTLB-load-miss-pct"], result["L1-icache-load-miss-pct"]) == (0.5, 5.0)


def test_per_query_on_the_vm_keeps_none_and_derives_nothing_hardware():
    result = per_query(perf.parse_perf_stat_csv(sample("vm-all-groups.csv")), 10)
    assert result["instructions"] is None and result["minor-faults"] == 4.9
    assert not set(DERIVED) & set(result)


def test_per_query_with_zero_queries_keeps_the_ratios_only():
    result = per_query({"instructions": 200.0, "cycles": 100.0}, 0)
    assert result == {"instructions": None, "cycles": None, "ipc": 2.0}


# -- probe ----------------------------------------------------------------------------------

def test_probe_on_this_vm_finds_software_events_but_no_hardware_counters():
    support = perf.probe(fake_runner("vm"), root=HOST / "vm", is_root=True)
    assert (support.available, support.hardware_counters, support.software_events) == (True, False, True)
    assert support.reason == ("`perf stat -e instructions true` reports <not supported>: "
                              "this CPU/VM exposes no hardware PMU")


def test_probe_runs_instructions_then_task_clock_in_csv_mode():
    runner = fake_runner("vm")
    perf.probe(runner, root=HOST / "vm", is_root=True)
    assert runner.calls == [["perf", "stat", "-x,", "-e", "instructions", "true"],
                            ["perf", "stat", "-x,", "-e", "task-clock", "true"]]


def test_probe_on_bare_metal_finds_hardware_counters():
    support = perf.probe(fake_runner("baremetal"), root=HOST / "tuned", is_root=True)
    assert (support.available, support.hardware_counters, support.software_events) == (True, True, True)
    assert "counted 512389 instructions" in support.reason


def test_probe_without_a_perf_binary_says_how_to_install_it():
    support = perf.probe(missing_binary, root=HOST / "vm", is_root=True)
    assert (support.available, support.hardware_counters, support.software_events) == (False, False, False)
    assert "perf not found" in support.reason and "apt-get install linux-perf" in support.reason


def test_probe_with_a_perf_wrapper_that_fails_is_unavailable():
    runner = text_runner("WARNING: perf not found for kernel 6.8.0-45\n", returncode=2)
    support = perf.probe(runner, root=HOST / "laptop", is_root=True)
    assert not support.available and "exited 2: WARNING: perf not found for kernel 6.8.0-45" in support.reason


def test_probe_explains_not_counted():
    support = perf.probe(text_runner("<not counted>,,instructions,0,0.00,,\n"), root=HOST / "vm", is_root=True)
    assert not support.hardware_counters and "<not counted>" in support.reason


def test_probe_mentions_perf_event_paranoid_for_a_non_root_user():
    support = perf.probe(fake_runner("vm"), root=HOST / "laptop", is_root=False)
    assert support.perf_event_paranoid == 4 and "kernel.perf_event_paranoid is 4" in support.reason


def test_probe_as_root_does_not_mention_perf_event_paranoid():
    support = perf.probe(fake_runner("vm"), root=HOST / "vm", is_root=True)
    assert support.perf_event_paranoid == 2 and "paranoid" not in support.reason


class _FakePerf:
    """Stands in for the `perf stat` process: prints a captured CSV on stderr when done."""

    def __init__(self, text: str):
        self.text, self.cmd = text, None

    def __call__(self, cmd, **kwargs):
        self.cmd = cmd
        return self

    def communicate(self, timeout=None):
        return "", self.text


def test_stat_collector_attaches_to_every_backend_and_parses_the_counters():
    fake = _FakePerf(sample("baremetal-all-groups.csv"))
    collector = perf.StatCollector(popen=fake)
    collector.start([101, 102], perf.COUNTER_GROUPS[0], 4.5)
    counters = collector.finish()
    assert fake.cmd[fake.cmd.index("-p") + 1] == "101,102" and fake.cmd[-1] == "4.5"
    assert counters["instructions"] > 0 and collector.error == ""


def test_stat_collector_that_cannot_start_perf_gives_no_counters_and_a_reason():
    def missing(cmd, **kwargs):
        raise FileNotFoundError(2, "No such file or directory", "perf")
    collector = perf.StatCollector(popen=missing)
    collector.start([101], perf.COUNTER_GROUPS[0], 1.0)
    assert collector.finish() == {} and "did not start" in collector.error


def test_rounds_cycle_through_the_seven_counter_groups():
    assert [perf.group_for_round(r)[0] for r in range(9)] == [1, 2, 3, 4, 5, 6, 7, 1, 2]
