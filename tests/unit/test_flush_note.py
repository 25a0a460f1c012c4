"""A comparison of durability settings judged by the device's flush time (analysis/defaults.flush_note)."""
from dbdrift.analysis.defaults import flush_differences, flush_note


def test_a_durability_comparison_is_judged_by_how_long_the_device_takes_to_flush():
    differences = flush_differences({"synchronous_commit": "on", "work_mem": "4MB"},
                                    {"synchronous_commit": "off", "work_mem": "8MB"})
    assert [d.name for d in differences] == ["synchronous_commit"]  # set or not: work_mem is no durability setting
    pairs = [("pg17-sync0", "pg17-sync1", d) for d in differences]
    slow = flush_note(pairs, {"p50_us": 2000.0}, 200.0)
    assert slow.startswith("host warning: durability settings differ (pg17-sync0 vs pg17-sync1: synchronous_commit "
                           "off vs on)") and "2,000 µs per flush" in slow and "at most 500/s per client" in slow
    fast = flush_note(pairs, {"p50_us": 45.0}, 200.0)
    assert "flushes in 45 µs" in fast and "the difference is the server's" in fast and "warning" not in fast
    assert "not measured" in flush_note(pairs, None, 200.0)
    assert flush_note([], {"p50_us": 2000.0}, 200.0) == ""
