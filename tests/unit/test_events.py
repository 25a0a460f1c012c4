"""Dips of a per-second rate and the engine events that coincide (analysis/events.py), and the
stored form of the engine's counters (runner/events.events_of), on literal series."""
import pytest

from dbdrift.analysis.events import episodes, event_starts, explain, rank
from dbdrift.runner.events import events_of


def test_a_dip_is_a_run_of_seconds_below_80_percent_of_the_median_and_starts_at_its_first():
    t = [float(s) for s in range(20)]
    rate = [100.0] * 20
    for s in (5, 6, 12):
        rate[s] = 50.0
    rate[0] = 10.0  # the first seconds are skipped: connections and caches warming
    starts, mid = episodes(t, rate, below=0.8)
    assert starts == [5.0, 12.0] and mid == 100.0
    assert episodes(t, [None] * 20, below=0.8) == ([], 0.0)


def test_vacuum_starts_checkpoints_bursts_and_falls_are_events_at_their_first_second():
    t = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    series = {"wal_mb": [1.0, 1.0, 5.0, 6.0, 1.0, 1.0], "dead_tuples": [100.0, 200.0, 300.0, 20.0, 40.0, 60.0]}
    events = [{"t": 2.0, "kind": "vacuum", "what": "pi1"}, {"t": 5.0, "kind": "checkpoint", "what": ""}]
    starts = event_starts(t, series, events)
    assert starts == {"vacuum of pi1": [2.0], "checkpoint": [5.0], "WAL burst": [3.0], "dead tuples fall": [4.0]}


def test_events_are_ranked_by_the_dips_they_start_beside_against_chance():
    t = [float(s) for s in range(2, 42)]
    dips = [10.0, 20.0, 30.0]
    ranked = rank(dips, {"vacuum of pi1": [9.5, 20.0, 30.5], "checkpoint": [35.0]}, t)
    assert [(c.kind, c.hits) for c in ranked] == [("vacuum of pi1", 3), ("checkpoint", 0)]
    assert ranked[0].by_chance == pytest.approx(3 * 7 / 40)  # 7 of 40 seconds lie within 1 s of a vacuum start


def test_explain_words_the_dips_and_what_coincides_as_the_posts_do():
    t = [float(s) for s in range(30)]
    rate = [100.0 if s % 10 else 40.0 for s in range(30)]  # every 10 s
    dips = explain("inserts/s", "dip", t, rate, t, {}, [{"t": float(s), "kind": "vacuum", "what": "pi1"}
                                                        for s in (10, 20)])
    assert dips.starts == (10.0, 20.0)
    assert dips.line("l.i2 pg17") == ("l.i2 pg17: 2 dips of inserts/s below 80% of its median (100); 2 of 2 start "
                                      "within 1 s of a vacuum of pi1 (by chance 0.4)")  # 6 of 28 seconds


def test_stored_counters_are_per_second_rates_levels_and_events_from_the_drivers_start():
    rows = [(10.0, {"wal_bytes": 0.0, "dead_tuples": 5.0, "vacuums": [], "checkpoints": 3.0,
                    "checkpoint_buffers": 0.0}),
            (11.0, {"wal_bytes": 2 * 2**20, "dead_tuples": 9.0, "vacuums": ["pi1"], "checkpoints": 4.0,
                    "checkpoint_buffers": 50.0})]
    stored = events_of(rows, origin=9.5)
    assert stored["t"] == [1.5]
    assert stored["series"] == {"wal_mb": [2.0], "dead_tuples": [9.0], "checkpoint_buffers": [50.0]}
    assert stored["events"] == [{"t": 1.5, "kind": "vacuum", "what": "pi1"}, {"t": 1.5, "kind": "checkpoint", "what": ""}]
    innodb = events_of([(0.0, {"Innodb_os_log_written": 0.0, "Innodb_history_list_length": 10.0}),
                        (1.0, {"Innodb_os_log_written": 2**20, "Innodb_history_list_length": 4.0})], origin=0.0)
    assert innodb["series"]["redo_mb"] == [1.0] and innodb["series"]["history_length"] == [4.0]
    assert innodb["series"]["dirty_pages"] == [None]  # a counter the server does not have
    assert events_of([], None) is None
