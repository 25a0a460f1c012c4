"""Host facts read from fixture trees (copies of /proc, /sys, /etc), warnings as pure functions
of the facts, and `dbdrift system check`."""
import json
import shutil
from pathlib import Path

import pytest

from dbdrift.cli import main as cli_main
from dbdrift.app import system
from dbdrift.metrics import host, procstat
from dbdrift.metrics.perf import PerfSupport

DATA = Path(__file__).resolve().parents[1] / "data" / "host"
FACT_KEYS = set(host.HostInfo.__dataclass_fields__)


def facts_of(tree: str) -> dict:
    return host.host_facts(DATA / tree, steal_window_s=0)


def kinds(facts: dict, **kwargs) -> list[str]:
    return [w["kind"] for w in host.check(facts, **kwargs)]


def hint_of(facts: dict, kind: str) -> str:
    return next(w["hint"] for w in host.check(facts) if w["kind"] == kind)


# -- facts ----------------------------------------------------------------------------------

def test_vm_copy_of_this_machine_has_no_cpufreq_and_no_turbo_knob():
    facts = facts_of("vm")
    assert (facts["governor"], facts["cpufreq_driver"], facts["turbo"]) == (None, None, None)


def test_vm_copy_reads_cpu_memory_kernel_and_os():
    facts = facts_of("vm")
    assert facts["cpu_model"] == "Intel(R) Xeon(R) Processor"
    assert (facts["cores"], facts["physical_cores"], facts["virtualized"]) == (2, 2, True)
    assert facts["memory_bytes"] == 24684092 * 1024
    assert facts["kernel"] == "6.18.44-fc-v657"
    assert facts["os"] == "Debian GNU/Linux 12 (bookworm)"
    assert (facts["thp"], facts["swap_total_bytes"], facts["swap_used_bytes"]) == ("madvise", 0, 0)
    assert facts["cpu_mhz"] == [2100.0, 2100.0]


def test_laptop_counts_hyperthreads_as_logical_cores_only():
    facts = facts_of("laptop")
    assert (facts["cores"], facts["physical_cores"], facts["virtualized"]) == (4, 2, False)


def test_intel_pstate_no_turbo_zero_means_turbo_on():
    facts = facts_of("laptop")
    assert (facts["turbo"], facts["turbo_knob"]) == (True, "/sys/devices/system/cpu/intel_pstate/no_turbo")
    assert (facts["governor"], facts["cpufreq_driver"]) == ("powersave", "intel_pstate")


def test_cpufreq_boost_zero_means_turbo_off():
    facts = facts_of("tuned")
    assert (facts["turbo"], facts["turbo_knob"]) == (False, "/sys/devices/system/cpu/cpufreq/boost")
    assert facts["governor"] == "performance"


def test_swap_used_is_total_minus_free():
    facts = facts_of("laptop")
    assert facts["swap_total_bytes"] == 2097148 * 1024
    assert facts["swap_used_bytes"] == (2097148 - 1048572) * 1024


def test_a_root_without_any_file_gives_none_facts_and_no_warnings(tmp_path):
    facts = host.host_facts(tmp_path, steal_window_s=0)
    assert set(facts) == FACT_KEYS
    assert all(facts[k] is None for k in ("cpu_model", "cores", "memory_bytes", "kernel", "os", "governor",
                                          "turbo", "thp", "swap_used_bytes", "load_1min", "virtualized"))
    assert host.check(facts) == []


def test_facts_are_json_serialisable():
    facts = facts_of("laptop")
    assert json.loads(json.dumps(facts)) == facts


def test_one_governor_on_every_core_is_reported_once():
    assert host.governor(DATA / "laptop") == "powersave"


def test_mixed_governors_across_cores_are_all_reported(tmp_path):
    for cpu, gov in (("cpu0", "performance"), ("cpu1", "powersave")):
        (tmp_path / host.CPU_DIR / cpu / "cpufreq").mkdir(parents=True)
        (tmp_path / host.CPU_DIR / cpu / "cpufreq" / "scaling_governor").write_text(gov + "\n")
    assert host.governor(tmp_path) == "performance,powersave"


# -- steal ----------------------------------------------------------------------------------

def test_steal_pct_is_steal_jiffies_over_all_jiffies():
    before = procstat.cpu_jiffies(DATA / "steal", "stat.before")
    after = procstat.cpu_jiffies(DATA / "steal", "stat.after")
    assert procstat.steal_pct(before, after) == 25.0


def test_steal_pct_without_elapsed_jiffies_is_none():
    same = procstat.cpu_jiffies(DATA / "vm")
    assert procstat.steal_pct(same, same) is None


def test_steal_is_measured_across_the_window(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(DATA / "vm", root)
    shutil.copy(DATA / "steal" / "stat.before", root / "proc" / "stat")
    slept = []

    def sleep(seconds):
        slept.append(seconds)
        shutil.copy(DATA / "steal" / "stat.after", root / "proc" / "stat")

    facts = host.host_facts(root, steal_window_s=2.5, sleep=sleep)
    assert (slept, facts["steal_pct"], facts["steal_window_s"]) == ([2.5], 25.0, 2.5)
    # user 80 + system 40 jiffies of 200
    assert facts["busy_pct"] == 60.0


def test_zero_window_does_not_sleep_or_measure_steal():
    facts = host.host_facts(DATA / "vm", steal_window_s=0, sleep=pytest.fail)
    assert facts["steal_pct"] is None


# -- warnings -------------------------------------------------------------------------------

def test_vm_without_cpufreq_has_no_warnings():
    assert host.check(facts_of("vm")) == []


def test_tuned_server_has_no_warnings():
    assert host.check(facts_of("tuned")) == []


def test_laptop_raises_every_kind_it_shows():
    assert kinds(facts_of("laptop")) == ["governor", "turbo", "swap", "frequency", "thp", "load"]


def test_every_warning_has_kind_message_and_hint():
    for w in host.check(facts_of("laptop")):
        assert set(w) == {"kind", "message", "hint"} and w["message"] and w["hint"]


def test_governor_other_than_performance_warns_with_cpupower_hint():
    assert kinds({"governor": "schedutil"}) == ["governor"]
    assert hint_of({"governor": "schedutil"}, "governor") == "cpupower frequency-set -g performance"


def test_performance_governor_does_not_warn():
    assert kinds({"governor": "performance"}) == []


def test_turbo_with_intel_pstate_hints_no_turbo_one():
    facts = {"turbo": True, "turbo_knob": "/sys/devices/system/cpu/intel_pstate/no_turbo"}
    assert hint_of(facts, "turbo") == "echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo"


def test_turbo_with_cpufreq_boost_hints_boost_zero():
    facts = {"turbo": True, "turbo_knob": "/sys/devices/system/cpu/cpufreq/boost"}
    assert hint_of(facts, "turbo") == "echo 0 > /sys/devices/system/cpu/cpufreq/boost"


def test_unknown_or_disabled_turbo_does_not_warn():
    assert kinds({"turbo": None}) == [] and kinds({"turbo": False}) == []


def test_swap_in_use_warns_with_swapoff_hint():
    assert kinds({"swap_used_bytes": 4096}) == ["swap"]
    assert hint_of({"swap_used_bytes": 4096}, "swap").startswith("swapoff -a")


def test_steal_above_threshold_warns():
    assert kinds({"steal_pct": 12.0, "steal_window_s": 1.0}) == ["steal"]


def test_steal_at_or_below_threshold_does_not_warn():
    assert kinds({"steal_pct": 10.0}) == []
    assert kinds({"steal_pct": 12.0}, steal_threshold_pct=15.0) == []


def test_cpu_mhz_spread_above_five_pct_across_cores_warns():
    assert kinds({"cpu_mhz": [2000.0, 2101.0], "cpu_mhz_after": [2000.0, 2101.0]}) == ["frequency"]


def test_cpu_mhz_spread_below_five_pct_does_not_warn():
    assert kinds({"cpu_mhz": [2000.0, 2099.0], "cpu_mhz_after": [2000.0, 2099.0]}) == []


def test_cpu_mhz_changing_between_two_readings_warns():
    facts = {"cpu_mhz": [3000.0, 3000.0], "cpu_mhz_after": [3000.0, 2400.0], "steal_window_s": 1.0}
    assert kinds(facts) == ["frequency"]
    assert "between two readings" in host.check(facts)[0]["message"]


def test_thp_always_is_an_informational_warning():
    [w] = host.check({"thp": "always"})
    assert w["kind"] == "thp" and "informational" in w["message"]
    assert w["hint"] == "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled"


def test_thp_madvise_does_not_warn():
    assert kinds({"thp": "madvise"}) == []


def test_load_above_half_the_cores_warns():
    assert kinds({"load_1min": 2.1, "cores": 4}) == ["load"]


def test_load_at_half_the_cores_does_not_warn():
    assert kinds({"load_1min": 2.0, "cores": 4}) == []


def test_a_high_load_average_over_idle_cpus_does_not_warn():
    # what a campaign that has just ended leaves behind: the CPUs are idle now
    assert kinds({"load_1min": 1.43, "cores": 2, "busy_pct": 1.5, "steal_window_s": 1.0}) == []


def test_cpus_busy_over_the_window_warn_whatever_the_load_average():
    [w] = host.check({"load_1min": 0.2, "cores": 2, "busy_pct": 60.0, "steal_window_s": 1.0})
    assert w["kind"] == "load" and w["message"].startswith("the CPUs were 60% busy over 1 s (above 25%)")


# -- dbdrift system check -------------------------------------------------------------------

def test_system_check_json_has_facts_warnings_and_perf(capsys):
    assert cli_main.main(["system", "check", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["facts"]) == FACT_KEYS
    assert isinstance(out["warnings"], list)
    assert isinstance(out["perf"]["hardware_counters"], bool)


def fake_check(monkeypatch, tree: str, support: PerfSupport, valgrind: str | None) -> None:
    facts = facts_of(tree)
    monkeypatch.setattr(system.host, "host_facts", lambda steal_window_s: facts)
    monkeypatch.setattr(system.perf, "probe", lambda: support)
    monkeypatch.setattr(system.shutil, "which", lambda name: valgrind)
    # the work directory's real flush time is this machine's: a busy disk (a server test beside) warns
    monkeypatch.setattr(system.fsync, "measure", lambda directory: {"path": str(directory), "ops": 100,
                                                                     "p50_us": 50.0, "p99_us": 90.0, "mean_us": 55.0,
                                                                     "method": "8 KB write + fdatasync"})


def test_system_check_text_on_a_vm_reports_no_cpufreq_as_a_fact(monkeypatch, capsys):
    support = PerfSupport(True, False, True, "reports <not supported>: this CPU/VM exposes no hardware PMU")
    fake_check(monkeypatch, "vm", support, "/usr/bin/valgrind")
    assert cli_main.main(["system", "check", "--steal-window", "0s"]) == 0
    out = capsys.readouterr().out
    assert "no cpufreq (typical of VMs)" in out
    assert "hardware counters no" in out and "no hardware PMU" in out
    assert "valgrind      yes (/usr/bin/valgrind)" in out
    assert out.endswith("no warnings\n")


def test_system_check_text_prints_each_warning_with_its_hint_and_exits_zero(monkeypatch, capsys):
    fake_check(monkeypatch, "laptop", PerfSupport(True, True, True, "hardware counters work"), None)
    assert cli_main.main(["system", "check"]) == 0
    out = capsys.readouterr().out
    assert "warning: CPU frequency governor is 'powersave'" in out
    assert "\n  hint: cpupower frequency-set -g performance\n" in out
    assert out.count("warning: ") == 6 and "valgrind      no" in out


def test_system_check_rejects_a_bad_steal_window(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli_main.main(["system", "check", "--steal-window", "soon"])
    assert exit_.value.code == 2
    assert "--steal-window: 'soon' is not a duration" in capsys.readouterr().err
