"""Foreign load and the measured window's edges on literal counters (metrics/foreign.py,
metrics/sampler.py, analysis/foreign.py; docs/hardware.md "Foreign load")."""
from __future__ import annotations

from dataclasses import replace

import pytest

from dbdrift.analysis import foreign as judged
from dbdrift.metrics import foreign
from dbdrift.metrics.sampler import Counters, Sampler, delta, interpolate

FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def jiffies(**busy: float) -> dict[str, float]:
    return {k: float(busy.get(k, 0)) for k in FIELDS}


def counters(t: float, cpu: dict[str, float], server: float = 0.0, client: float = 0.0, own: float = 0.0,
             peer: float = 0.0, disk: tuple[float, float] | None = None,
             io: tuple[float, float] | None = (0.0, 0.0)) -> Counters:
    dstats = None if disk is None else {"reads": 0.0, "read_bytes": disk[0], "writes": 0.0, "write_bytes": disk[1]}
    return Counters(t, cpu, 0, dstats, server, client, 0, {}, own, peer, io)


def test_foreign_cpu_is_the_hosts_busy_time_less_every_process_of_dbdrifts_as_a_share_of_all_cpus():
    # 2 CPUs for 1 s at 100 ticks/s: 200 jiffies, 150 of them busy (user 120, system 20, softirq 10)
    before = jiffies()
    after = jiffies(user=120, system=20, softirq=10, idle=45, steal=5)
    # servers 0.6 s, driver 0.2 s, dbdrift 0.1 s, another target's server 0.1 s: 1.0 s of 1.5 s busy
    assert foreign.cpu(before, after, ours_s=1.0, ticks=100) == (0.5, 25.0)


def test_foreign_cpu_never_reads_below_zero_when_our_processes_count_a_tick_more_than_the_host():
    assert foreign.cpu(jiffies(), jiffies(user=50, idle=150), ours_s=0.52, ticks=100) == (0.0, 0.0)


def test_foreign_cpu_of_no_elapsed_time_is_zero():
    assert foreign.cpu(jiffies(user=7), jiffies(user=7), ours_s=0.0) == (0.0, 0.0)


def test_foreign_io_is_the_devices_bytes_less_ours_and_unknown_without_either():
    assert foreign.io_kb(4 * 1024 * 1024, 1024 * 1024) == 3072.0
    assert foreign.io_kb(1024, 8192) == 0.0  # our dirty pages not yet written back
    assert foreign.io_kb(None, 0) is None and foreign.io_kb(1024, None) is None


def test_a_delta_carries_the_foreign_share_with_the_peers_and_dbdrifts_own_cpu_accounted():
    a = counters(10.0, jiffies(), disk=(0, 0), io=(0, 0))
    b = counters(11.0, jiffies(user=150, idle=50), server=0.6, client=0.2, own=0.1, peer=0.1,
                 disk=(1024 * 1024, 3 * 1024 * 1024), io=(0, 1024 * 1024))
    d = delta(a, b)
    assert (d.own_cpu_s, d.peer_cpu_s) == (0.1, 0.1)
    assert d.foreign_cpu_s == pytest.approx(1.5 * 100 / foreign.CLOCK_TICKS - 1.0)
    assert (d.ours_read_kb, d.ours_write_kb) == (0.0, 1024.0)
    assert (d.foreign_read_kb, d.foreign_write_kb) == (1024.0, 2048.0)
    window = d.as_dict()
    assert window["foreign_read_kb"] == 1024.0 and window["peer_cpu_s"] == 0.1


def test_foreign_io_is_not_known_when_a_servers_proc_io_could_not_be_read():
    d = delta(counters(0.0, jiffies(), disk=(0, 0), io=None), counters(1.0, jiffies(idle=200), disk=(0, 4096)))
    assert d.foreign_write_kb is None and d.ours_write_kb is None and d.write_kb == 4.0


def test_an_edge_between_two_readings_takes_the_counters_interpolated_at_the_drivers_instant():
    readings = [counters(100.0, jiffies(user=0, idle=0), server=1.0, disk=(0, 0)),
                counters(101.0, jiffies(user=100, idle=100), server=2.0, disk=(0, 4096))]
    edge = interpolate(readings, 100.25)
    assert edge.t == 100.25 and edge.cpu_jiffies["user"] == 25.0 and edge.cpu_jiffies["idle"] == 25.0
    assert edge.server_cpu_s == 1.25 and edge.disk is not None and edge.disk["write_bytes"] == 1024.0


def test_an_edge_outside_the_readings_takes_the_nearest_reading():
    readings = [counters(100.0, jiffies(), server=1.0), counters(101.0, jiffies(user=10), server=2.0)]
    assert interpolate(readings, 99.0).server_cpu_s == 1.0
    assert interpolate(readings, 105.0).server_cpu_s == 2.0


def test_the_window_spans_exactly_the_drivers_stamped_edges_however_late_the_lines_were_read(tmp_path):
    """Part 7 of the issue: a 1.50 s run whose lines the runner read late gave a 2.22 s window;
    the edges now come from the driver's clock stamps, interpolated between the 1 s readings."""
    sampler = Sampler(None, tmp_path)
    sampler._raw = [counters(float(t), jiffies(user=100 * t, idle=100 * t), server=0.5 * t) for t in range(10, 14)]
    sampler.mark("start", 10.4)
    sampler.mark("end", 11.9)  # stamped 11.9; read by dbdrift at, say, 12.62
    window = sampler.window()
    assert window is not None and window.elapsed_s == 1.5
    assert window.server_cpu_s == pytest.approx(0.75) and window.cpu_user_pct == 50.0


def test_a_short_turn_gets_the_foreign_share_of_the_second_around_it(tmp_path):
    sampler = Sampler(None, tmp_path)
    ticks = foreign.CLOCK_TICKS
    # second 10-11 quiet (our server busy on one CPU), 11-12 with a hog on the other CPU
    sampler._raw = [counters(10.0, jiffies(), server=0.0),
                    counters(11.0, jiffies(user=ticks, idle=ticks), server=1.0),
                    counters(12.0, jiffies(user=3 * ticks, idle=ticks), server=2.0)]
    cpu_pct, kb = sampler.foreign_between(11.495, 11.505)
    assert cpu_pct == pytest.approx(50.0) and kb is None  # no block device: I/O not known
    assert sampler.foreign_between(10.0, 11.0)[0] == 0.0


def window(**kw: float | None) -> dict:
    base = {"elapsed_s": 10.0, "foreign_cpu_pct": 1.0, "read_kb": 0.0, "write_kb": 1000.0, "foreign_read_kb": 0.0,
            "foreign_write_kb": 10.0}
    return {**base, **kw}


def test_a_quiet_window_is_not_flagged():
    assert judged.judge(window()) == [] and judged.flag(window()) is None
    assert judged.judge(None) == [] and judged.judge({"elapsed_s": 1.0}) == []  # stored before it was sampled


def test_foreign_cpu_above_the_threshold_is_flagged_with_its_figure():
    [(kind, message)] = judged.judge(window(foreign_cpu_pct=34.4))
    assert kind == "foreign_cpu" and "34%" in message and "threshold 10%" in message
    assert judged.flag(window(foreign_cpu_pct=34.4)) == "foreign CPU 34%"


def test_foreign_io_needs_both_its_share_of_the_device_and_a_rate_to_be_flagged():
    # a dd writer: 200 MB over 10 s beside the servers' 1 MB
    dd = window(write_kb=201 * 1024.0, foreign_write_kb=200 * 1024.0)
    [(kind, message)] = judged.judge(dd)
    assert kind == "foreign_io" and "100%" in message and "20.0 MB/s" in message
    # the journal's few KB on a read-only test: all of the device's bytes, but 1 KB/s
    assert judged.judge(window(write_kb=10.0, foreign_write_kb=10.0)) == []
    assert judged.foreign_io_pct(window(foreign_write_kb=None)) is None


def test_a_one_repeat_sequential_campaign_under_foreign_load_says_its_ratios_may_be_the_neighbours():
    [note] = judged.neighbours_note("the campaign", 3, repeats=1, turns=False)
    assert "ratios may be the neighbours'" in note and "3 of its measurements" in note
    assert judged.neighbours_note("the campaign", 0, repeats=1, turns=False) == ()
    assert judged.neighbours_note("the campaign", 3, repeats=2, turns=False) == ()
    assert judged.neighbours_note("the campaign", 3, repeats=1, turns=True) == ()


def test_pages_an_earlier_run_dirtied_and_the_device_writes_now_are_not_foreign_io():
    """The host's dirty pool shrank by what the device wrote: an earlier run's server dirtied
    those pages (its /proc/PID/io counted them then), not a neighbour now."""
    a = counters(0.0, jiffies(), disk=(0, 0), io=(0, 0))
    b = counters(1.0, jiffies(idle=200), disk=(0, 8 * 1024 * 1024), io=(0, 0))
    a.dirty_bytes, b.dirty_bytes = 9 * 1024 * 1024, 1024 * 1024
    assert delta(a, b).foreign_write_kb == 0.0
    a.dirty_bytes = b.dirty_bytes  # the pool did not drain: a neighbour wrote those 8 MB
    assert delta(a, b).foreign_write_kb == 8192.0
    assert foreign.drained(None, 5.0) == 0.0 and foreign.dirty_bytes() is not None


def test_the_mean_runnable_count_of_a_window_is_its_summed_count_over_its_seconds_edges_interpolated():
    a, b = counters(0.0, jiffies()), counters(4.0, jiffies(user=400))
    a, b = replace(a, runnable_s=0.0), replace(b, runnable_s=6.0)  # 1.5 tasks runnable on average
    assert delta(a, b).runnable == 1.5 and delta(a, b).as_dict()["runnable"] == 1.5
    middle = interpolate([a, b], 2.0)
    assert middle.runnable_s == 3.0 and delta(a, middle).runnable == 1.5
    assert delta(counters(0.0, jiffies()), b).runnable is None and "runnable" not in delta(counters(0.0, jiffies()),
                                                                                          b).as_dict()
