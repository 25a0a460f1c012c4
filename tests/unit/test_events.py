"""Dips of a per-second rate and the engine events that coincide (analysis/events.py), and the
stored form of the engine's counters (runner/events.events_of), on literal series."""
import pytest

from dbdrift.analysis.events import Episode, episodes, event_starts, explain, rank
from dbdrift.runner.events import events_of


def test_a_dip_is_a_run_of_seconds_below_80_percent_of_the_median_from_its_first_to_its_last():
    t = [float(s) for s in range(20)]
    rate = [100.0] * 20
    for s, v in ((5, 50.0), (6, 30.0), (12, 50.0)):
        rate[s] = v
    rate[0] = 10.0  # the first seconds are skipped: connections and caches warming
    spans, mid = episodes(t, rate, below=0.8)
    assert [(e.start, e.end, e.extreme) for e in spans] == [(5.0, 6.0, 30.0), (12.0, 12.0, 50.0)] and mid == 100.0
    assert episodes(t, [None] * 20, below=0.8) == ([], 0.0)


def test_the_peak_before_a_dip_is_the_last_run_at_or_above_the_median_since_the_dip_before():
    t = [float(s) for s in range(2, 14)]
    rate = [100.0, 120.0, 90.0, 130.0, 140.0, 85.0, 40.0, 100.0, 110.0, 90.0, 50.0, 100.0]  # median 100
    spans, _ = episodes(t, rate, below=0.8)
    assert spans == [Episode(8.0, 8.0, 40.0, (5.0, 6.0)), Episode(12.0, 12.0, 50.0, (9.0, 10.0))]
    assert episodes(t, [50.0, 100.0, 100.0, 100.0, 50.0], below=0.8)[0][0].peak is None  # nothing before it


def test_vacuum_starts_checkpoints_bursts_and_falls_are_events_at_their_first_second():
    t = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    series = {"wal_mb": [1.0, 1.0, 5.0, 6.0, 1.0, 1.0], "dead_tuples": [100.0, 200.0, 300.0, 20.0, 40.0, 60.0]}
    events = [{"t": 2.0, "kind": "vacuum", "what": "pi1"}, {"t": 5.0, "kind": "checkpoint", "what": ""}]
    starts = event_starts(t, series, events)
    assert starts == {"vacuum of pi1": [2.0], "checkpoint": [5.0], "WAL burst": [3.0], "dead tuples fall": [4.0]}


def test_events_are_ranked_by_the_dips_they_start_beside_against_chance():
    t = [float(s) for s in range(2, 42)]
    dips = [Episode(s, s, 0.0) for s in (10.0, 20.0, 30.0)]
    ranked = rank(dips, {"vacuum of pi1": [9.5, 20.0, 30.5], "checkpoint": [35.0]}, t)
    assert [(c.kind, c.hits) for c in ranked] == [("vacuum of pi1", 3), ("checkpoint", 0)]
    assert ranked[0].by_chance == pytest.approx(3 * 7 / 40)  # 7 of 40 seconds lie within 1 s of a vacuum start


def test_an_event_anywhere_in_a_long_dip_coincides_with_it_not_only_at_its_start():
    t = [float(s) for s in range(2, 42)]
    long_dip = [Episode(10.0, 16.0, 0.0)]
    (ranked,) = rank(long_dip, {"vacuum of pi3": [14.0]}, t)
    assert ranked.hits == 1
    assert ranked.by_chance == pytest.approx(9 / 40)  # a 7 s span widened by 1 s holds 14 from 9 of 40 places


def test_events_in_the_peak_before_a_dip_are_counted_apart_from_those_in_it():
    t = [float(s) for s in range(2, 42)]
    dips = [Episode(12.0, 13.0, 0.0, (5.0, 10.0)), Episode(30.0, 31.0, 0.0, (25.0, 28.0))]
    ranked = {c.kind: c for c in rank(dips, {"dead tuples fall": [7.0, 26.0], "vacuum of pi1": [12.0, 31.0]}, t)}
    assert (ranked["vacuum of pi1"].hits, ranked["vacuum of pi1"].peak_hits) == (2, 0)
    fall = ranked["dead tuples fall"]
    assert (fall.hits, fall.peak_hits, fall.peaks) == (0, 2, 2)


def test_explain_words_the_dips_and_what_coincides_as_the_posts_do():
    t = [float(s) for s in range(30)]
    rate = [100.0 if s % 10 else 40.0 for s in range(30)]  # every 10 s
    dips = explain("inserts/s", "dip", t, rate, t, {}, [{"t": float(s), "kind": "vacuum", "what": "pi1"}
                                                        for s in (10, 20)])
    assert dips.starts == (10.0, 20.0)
    assert dips.line("l.i2 pg17") == ("l.i2 pg17: 2 dips of inserts/s below 80% of its median (100), 1 s long at "
                                      "the median; 2 of 2 dips span a vacuum of pi1 (by chance 0.4); peaks before: "
                                      "no engine event more often than chance")  # 6 of 28 seconds
    assert dips.during == (("vacuum of pi1",), ("vacuum of pi1",)) and dips.before == ((), ())


def test_a_vacuum_sine_wave_in_the_delete_rate_names_the_vacuum_in_each_dip_and_the_dead_tuples_before_it():
    t = [float(s) for s in range(60)]
    deletes = [1000.0 if s % 15 < 11 else 300.0 for s in range(60)]  # 4 s down every 15 s
    dead = [float(100 * (s % 15)) if s % 15 < 12 else 0.0 for s in range(60)]  # built up, then vacuumed away
    wal = [9.0 if s % 15 == 6 else 1.0 for s in range(60)]  # a burst of WAL mid-peak
    vacuums = [{"t": float(s), "kind": "vacuum", "what": "pi1"} for s in (12, 27, 42, 57)]
    dips = explain("deletes/s", "dip", t, deletes, t, {"dead_tuples": dead, "wal_mb": wal}, vacuums)
    assert [(e.start, e.end) for e in dips.spans] == [(11.0, 14.0), (26.0, 29.0), (41.0, 44.0), (56.0, 59.0)]
    assert [e.peak for e in dips.spans] == [(2.0, 10.0), (15.0, 25.0), (30.0, 40.0), (45.0, 55.0)]
    assert "4 of 4 dips span a vacuum of pi1" in dips.told() and "4 of 4 dips span a dead tuples fall" in dips.told()
    assert dips.told_before().startswith("4 of 4 hold a WAL burst (by chance")
    assert dips.during[0] == ("vacuum of pi1", "dead tuples fall") and dips.before[0] == ("WAL burst",)


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


def test_an_event_read_just_before_a_peaks_first_second_ends_is_in_the_peak():
    t = [float(s) for s in range(2, 42)]
    (ranked,) = rank([Episode(12.0, 13.0, 0.0, (5.0, 10.0))], {"checkpoint": [4.5]}, t)
    assert ranked.peak_hits == 1  # the line at t=5 covers (4, 5]
    (late,) = rank([Episode(12.0, 13.0, 0.0, (5.0, 10.0))], {"checkpoint": [11.5]}, t)
    assert late.peak_hits == 0 and late.hits == 1  # (11, 12] is the dip's second 12
