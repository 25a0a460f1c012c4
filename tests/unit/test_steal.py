"""Host steal per interval (runner/steal.py), with a fake /proc/stat reader and clock."""
from dbdrift.runner.steal import StealClock, WindowedSteal


class Host:
    """Steal and total jiffies that the test advances, read as cpu_jiffies() gives them, and a
    clock it sets."""

    def __init__(self):
        self.steal, self.total, self.now = 0, 0, 0.0

    def read(self):
        return {"user": self.total - self.steal, "steal": self.steal}

    def clock(self):
        return self.now

    def spend(self, seconds, steal_share):
        jiffies = int(seconds * 200)  # two CPUs at 100 Hz
        self.total += jiffies
        self.steal += int(jiffies * steal_share)
        self.now += seconds


def test_steal_clock_annotates_each_interval_with_steal_since_the_previous_line():
    host = Host()
    clock = StealClock(reader=host.read)
    clock.on_line({"type": "warmup"})
    host.spend(1.0, 0.25)
    line = {"type": "interval"}
    clock.on_line(line)
    assert line["steal_pct"] == 25.0


def test_windowed_steal_gives_every_turn_of_a_window_that_windows_steal():
    host = Host()
    steal = WindowedSteal(window_s=0.999, reader=host.read, clock=host.clock)
    host.spend(2.0, 0.9)  # warmup: not any turn's steal
    steal.on_line({"type": "warmup"})
    first = [{"type": "interval", "index": i} for i in range(100)]
    for i, line in enumerate(first):
        host.spend(0.01, 0.0 if i < 50 else 0.5)  # the window's steal: 25%
        steal.on_line(line)
    assert all(line["steal_pct"] == 25.0 for line in first)
    last = [{"type": "interval", "index": 100}, {"type": "interval", "index": 101}]
    for line in last:
        host.spend(0.01, 0.5)
        steal.on_line(line)
    assert all("steal_pct" not in line for line in last)  # window still open
    steal.close()
    assert all(line["steal_pct"] == 50.0 for line in last)


def test_windowed_steal_without_proc_stat_leaves_turns_unannotated():
    steal = WindowedSteal(reader=lambda: None, clock=lambda: 0.0)
    line = {"type": "interval"}
    steal.on_line(line)
    steal.close()
    assert "steal_pct" not in line
