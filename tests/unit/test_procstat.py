"""The one /proc/stat reader (metrics/procstat.py): psutil on the live host, the file under a
test root, the same jiffies either way."""
from collections import namedtuple
from pathlib import Path

from dbdrift.metrics import procstat

DATA = Path(__file__).resolve().parents[1] / "data" / "host"
AFTER = DATA / "steal" / "stat.after"


def test_a_fixture_file_gives_the_aggregate_cpu_line_and_ctxt():
    assert procstat.cpu_jiffies(DATA / "steal", "stat.after") == {
        "user": 620110, "nice": 0, "system": 193375, "idle": 1044762, "iowait": 4472, "irq": 0, "softirq": 4135,
        "steal": 2683}
    assert procstat.context_switches(DATA / "steal", "stat.after") == 120334710


def test_psutil_seconds_become_the_same_jiffies_as_the_file(monkeypatch):
    values = AFTER.read_text().split("\n", 1)[0].split()[1:]
    fields = procstat.CPU_FIELDS + ("guest", "guest_nice")
    times = namedtuple("scputimes", fields)(*(int(v) / procstat.CLOCK_TICKS for v in values))
    monkeypatch.setattr(procstat.psutil, "cpu_times", lambda: times)
    assert procstat.cpu_jiffies() == procstat.cpu_jiffies(DATA / "steal", "stat.after")


def test_psutil_without_steal_gives_none(monkeypatch):
    times = namedtuple("scputimes", "user nice system idle")(1.0, 0.0, 1.0, 2.0)
    monkeypatch.setattr(procstat.psutil, "cpu_times", lambda: times)
    assert procstat.cpu_jiffies() is None


def test_the_live_host_is_read():
    now = procstat.cpu_jiffies()
    assert now is not None and set(now) == set(procstat.CPU_FIELDS) and sum(now.values()) > 0
    assert procstat.context_switches() > 0


def test_a_missing_or_short_file_gives_none(tmp_path):
    assert procstat.cpu_jiffies(tmp_path) is None and procstat.context_switches(tmp_path) is None
    (tmp_path / "stat").write_text("cpu  1 2 3 4\n")
    assert procstat.cpu_jiffies(tmp_path, "stat") is None


def test_busy_is_user_nice_system_irq_softirq_over_all_jiffies():
    before = procstat.cpu_jiffies(DATA / "steal", "stat.before")
    after = procstat.cpu_jiffies(DATA / "steal", "stat.after")
    assert procstat.busy_pct(before, after) == 60.0
    assert procstat.steal_pct(None, after) is None


def test_the_runnable_count_is_vmstats_r_from_procs_running(tmp_path):
    assert procstat.procs_running(DATA / "steal", "stat.after") == int(
        next(ln for ln in AFTER.read_text().splitlines() if ln.startswith("procs_running ")).split()[1])
    assert procstat.procs_running() >= 1  # the live host: at least this test is running
    assert procstat.procs_running(tmp_path) is None
