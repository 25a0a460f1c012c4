"""The campaign runner (runner/campaign.py, workloads/sysbench/run.py, session.py, turns.py over expand.py) without
a database: fake servers (tests/fakes.py) that log every start and stop in one shared event
log, and the real dbdrift-driver on its `null` backend for every timed run and every load,
settle and prewarm job. What tests/server checks end to end on real servers, here in seconds:
restart order, resume, failure isolation and the two orders of targets.

Campaigns are tiny (200 rows, 0.1-0.2 s runs, no warm-up, no settle sleep). Plans run
update-index before point-query (the catalog's run order).
"""
from __future__ import annotations

import json

import pytest

from dbdrift.runner.campaign import Runner
from dbdrift.store.store import Store
from dbdrift.workloads.registry import workload_of
from tests.fakes import Lab, RecordingProgress, store_rows

UI, PQ = "update-index", "point-query"  # in the order the plan runs them




def run(lab: Lab, store: Store, resume: bool = False, **keys):
    spec = lab.spec if not keys else lab.campaign(**keys)
    progress = RecordingProgress()
    return Runner(spec, store, resume=resume, progress=progress, workload=workload_of(spec)).run(), progress


def keys_by_target(rows: list[dict], status: str | None = "ok") -> dict[str, list[tuple]]:
    """(test, threads, repeat) of each target's stored runs (of `status`), in stored order."""
    out: dict[str, list[tuple]] = {}
    for r in rows:
        if status is None or r["status"] == status:
            out.setdefault(r["target"], []).append((r["test"], r["threads"], r["repeat"]))
    return out


def restart(order: str) -> list[tuple[str, str]]:
    """Every server in `order` stops, then every one starts again in the same order."""
    return [("stop", n) for n in order] + [("start", n) for n in order]


# -- restarts between repeats ---------------------------------------------------------------------

def test_turns_restart_stops_every_server_then_starts_all_in_the_balanced_order(lab, store):
    outcome, _ = run(lab, store, targets=("A", "B", "C"), repeats=3, restart="repeat", read_s=0.1, write_s=0.1)
    assert (outcome.runs_ok, outcome.runs_failed, outcome.runs_skipped) == (18, 0, 0)
    started = [("start", n) for n in "ABC"]
    expected = [  # the rows of the Williams square (plan/rounds.repeat_order): every place once per 3 repeats
        *started, ("run", "A+B+C", UI, 0),
        *restart("BCA"), ("run", "A+B+C", UI, 1),
        *restart("CAB"), ("run", "A+B+C", UI, 2),
        ("run", "A+B+C", PQ, 0),  # a test's first repeat runs on the servers as they are
        *restart("BCA"), ("run", "A+B+C", PQ, 1),
        *restart("CAB"), ("run", "A+B+C", PQ, 2),
        *[("stop", n) for n in "ABC"],
    ]
    assert [e for e in lab.events if e[0] in ("start", "stop", "run")] == expected


def test_round_order_alternating_restarts_in_listed_then_reversed_order(lab, store):
    outcome, _ = run(lab, store, targets=("A", "B", "C"), repeats=3, restart="repeat", read_s=0.1, write_s=0.1,
                     round_order="alternating", tests=[PQ])
    assert outcome.runs_ok == 9
    expected = [
        *[("start", n) for n in "ABC"], ("run", "A+B+C", PQ, 0),
        *restart("CBA"), ("run", "A+B+C", PQ, 1),  # before an odd repeat: reversed
        *restart("ABC"), ("run", "A+B+C", PQ, 2),  # before an even one: as listed
        *[("stop", n) for n in "ABC"],
    ]
    assert [e for e in lab.events if e[0] in ("start", "stop", "run")] == expected


def test_restart_never_keeps_the_servers_up_between_repeats(lab, store):
    run(lab, store, repeats=2, restart="never", tests=[PQ], read_s=0.1)
    assert lab.server_events() == [("start", "A"), ("start", "B"), ("stop", "A"), ("stop", "B")]
    assert lab.runs() == [("A+B", PQ, 0), ("A+B", PQ, 1)]


def test_restart_reload_retires_every_server_then_inits_and_starts_new_ones_in_alternating_order(lab, store):
    outcome, _ = run(lab, store, repeats=2, restart="reload", tests=[PQ], read_s=0.1)
    assert outcome.runs_ok == 4
    assert [e for e in lab.events if e[0] != "run"] == [
        ("init", "A"), ("start", "A"), ("init", "B"), ("start", "B"),
        ("stop", "B"), ("stop", "A"),  # repeat #2 is odd: reversed, all stop before any starts
        ("init", "B"), ("start", "B"), ("init", "A"), ("start", "A"),
        ("stop", "A"), ("stop", "B")]
    assert lab.runs() == [("A+B", PQ, 0), ("A+B", PQ, 1)]
    steps = [r["label"] for r in store.db.execute("SELECT label FROM steps WHERE kind = 'load' ORDER BY id")]
    assert len(steps) == 4  # each new server is loaded afresh


def test_sequential_runs_targets_one_after_the_other_each_restarting_alone(lab, store):
    outcome, _ = run(lab, store, order="sequential", repeats=2, tests=[PQ], read_s=0.1)
    assert outcome.runs_ok == 4
    assert [e for e in lab.events if e[0] in ("start", "stop", "run")] == [
        ("start", "A"), ("run", "A", PQ, 0), ("stop", "A"), ("start", "A"), ("run", "A", PQ, 1), ("stop", "A"),
        ("start", "B"), ("run", "B", PQ, 0), ("stop", "B"), ("start", "B"), ("run", "B", PQ, 1), ("stop", "B")]
    rows = store_rows(store, outcome.campaign_id)
    assert all(r["status"] == "ok" and r["value"] > 0 for r in rows)
    intervals = store.db.execute("SELECT round FROM intervals").fetchall()
    assert intervals and all(r[0] is None for r in intervals)  # runs of their own: no turns


# -- turns: one driver run per step, turns stored as rounds --------------------------------

def test_targets_take_turns_in_one_driver_run_and_store_their_turns_as_rounds(lab, store):
    outcome, _ = run(lab, store, tests=[PQ], read_s=0.3)
    assert lab.runs() == [("A+B", PQ, 0)]  # one driver run measured both
    rows = store_rows(store, outcome.campaign_id)
    assert [(r["target"], r["status"]) for r in rows] == [("A", "ok"), ("B", "ok")]
    rounds = {}
    for r in rows:
        spec = json.loads(r["driver_spec_json"])
        assert [c["port"] for c in spec["turns"]["connections"]] == [lab.port_of("A"), lab.port_of("B")]
        assert spec["duration_s"] == pytest.approx(0.6)  # each target gets read_s of its own turns
        ivs = store.intervals(r["id"])
        assert all(iv["round"] == iv["idx"] // 2 for iv in ivs)  # round = slot index / targets
        rounds[r["target"]] = [iv["round"] for iv in ivs]
        assert r["value"] > 0 and r["events"] == sum(iv["events"] for iv in ivs)
    # one turn per target per round: the rounds pair up, A B then B A
    assert rounds["A"] == rounds["B"] == list(range(len(rounds["A"]))) and len(rounds["A"]) >= 10
    first = {r["target"]: [iv["idx"] for iv in store.intervals(r["id"])][:2] for r in rows}
    assert first == {"A": [0, 3], "B": [1, 2]}


def test_targets_of_different_engine_families_take_whole_runs_in_turn_order_flipping_per_repeat(lab, store):
    outcome, progress = run(lab, store, targets=("A", "M"), engines_={"M": "mariadb"}, repeats=2, tests=[PQ],
                            read_s=0.1)
    assert outcome.runs_ok == 4
    assert any("cannot take turns inside one driver run" in m for m in progress.messages)
    assert [e for e in lab.events if e[0] in ("start", "stop", "run")] == [
        ("start", "A"), ("start", "M"), ("run", "A", PQ, 0), ("run", "M", PQ, 0),
        *restart("MA"), ("run", "M", PQ, 1), ("run", "A", PQ, 1),
        ("stop", "A"), ("stop", "M")]
    places = {(r["target"], r["repeat"]): r["position"] for r in store.db.execute(
        "SELECT t.name AS target, r.repeat, r.position FROM runs r JOIN targets t ON t.id = r.target_id")}
    assert places == {("A", 0): 0, ("M", 0): 1, ("M", 1): 0, ("A", 1): 1}  # each run stores its place


# -- resume ---------------------------------------------------------------------------------------

def test_sequential_resume_after_ctrl_c_runs_only_what_each_target_lacks(lab, store):
    # intervals of 0.05 s: Ctrl-C comes at the first, while the driver still runs
    lab.campaign(order="sequential", repeats=2, read_s=0.1, write_s=0.2, interval_s=0.05)
    lab.interrupt_at = 6  # A's four runs, B's update-index #1, then Ctrl-C during B's update-index #2
    with pytest.raises(KeyboardInterrupt):
        run(lab, store)
    campaign_id = store.latest_campaign_id("unit")
    before = keys_by_target(store_rows(store, campaign_id), status=None)
    assert before == {"A": [(UI, 1, 0), (UI, 1, 1), (PQ, 1, 0), (PQ, 1, 1)], "B": [(UI, 1, 0), (UI, 1, 1)]}
    assert [r["status"] for r in store_rows(store, campaign_id) if r["target"] == "B"] == ["ok", "interrupted"]
    assert lab.server_events()[-1] == ("stop", "B")  # Ctrl-C still stops the server

    lab.events.clear()
    outcome, progress = run(lab, store, resume=True)
    assert outcome.campaign_id == campaign_id
    assert lab.runs() == [("B", UI, 1), ("B", PQ, 0), ("B", PQ, 1)]
    assert ("start", "A") not in lab.events  # nothing left to run: A's server never starts
    assert "A: all runs already stored, skipped (--resume)" in progress.messages
    assert (outcome.runs_ok, outcome.runs_failed, outcome.runs_skipped, outcome.runs_kept) == (3, 0, 0, 5)  # A 4, B 1
    every = sorted((r, 1, p) for r in (UI, PQ) for p in (0, 1))
    ok = keys_by_target(store_rows(store, campaign_id))
    assert {t: sorted(k) for t, k in ok.items()} == {"A": every, "B": every}  # each key once, no duplicate

    lab.events.clear()  # everything stored: a second resume starts and runs nothing
    outcome, _ = run(lab, store, resume=True)
    assert lab.events == [] and (outcome.runs_ok, outcome.runs_kept) == (0, 8)
    assert len(store_rows(store, campaign_id)) == 8  # the interrupted run's row left reports when it was rerun
    superseded = [(r["target"], r["test"], r["repeat"], r["status"])
                  for r in store_rows(store, campaign_id, superseded=True) if r["superseded"]]
    assert superseded == [("B", UI, 1, "interrupted")]


def test_turns_resume_reruns_an_incomplete_test_for_every_target_and_supersedes_its_runs(lab, store):
    lab.campaign(repeats=2, read_s=0.1, write_s=0.1)
    lab.interrupt_at = 3  # update-index #1 and #2 done, Ctrl-C during point-query #1
    with pytest.raises(KeyboardInterrupt):
        run(lab, store)
    campaign_id = store.latest_campaign_id("unit")
    assert [(r["target"], r["test"], r["repeat"], r["status"]) for r in store_rows(store, campaign_id)][-2:] == [
        ("A", PQ, 0, "interrupted"), ("B", PQ, 0, "interrupted")]

    lab.events.clear()
    outcome, _ = run(lab, store, resume=True)
    assert lab.runs() == [("A+B", PQ, 0), ("A+B", PQ, 1)]  # update-index is not run again
    assert (outcome.runs_ok, outcome.runs_failed, outcome.runs_skipped, outcome.runs_kept) == (4, 0, 0, 4)
    rows = store_rows(store, campaign_id)
    assert all(r["status"] == "ok" for r in rows)
    assert {t: sorted(k) for t, k in keys_by_target(rows).items()} == {
        t: sorted((x, 1, p) for x in (UI, PQ) for p in (0, 1)) for t in "AB"}
    superseded = [(r["target"], r["test"], r["status"]) for r in store_rows(store, campaign_id, superseded=True)
                  if r["superseded"]]
    assert superseded == [("A", PQ, "interrupted"), ("B", PQ, "interrupted")]


def test_turns_resume_reruns_a_test_one_target_lacks_for_all_so_its_runs_stay_paired(lab, store):
    lab.campaign(repeats=2, read_s=0.1, write_s=0.1)
    lab.deaths = {3: "B"}  # B dies in point-query #1: A measures point-query #1 and #2 alone
    outcome, _ = run(lab, store)
    assert lab.runs()[2:] == [("A+B", PQ, 0), ("A", PQ, 0), ("A", PQ, 1)]
    campaign_id = outcome.campaign_id
    assert sorted(keys_by_target(store_rows(store, campaign_id))["A"]) == sorted(
        (x, 1, p) for x in (UI, PQ) for p in (0, 1))

    lab.events.clear()
    outcome, _ = run(lab, store, resume=True)
    # A has every run, but its point-query runs were not taken in turns with B's: all again, together
    assert lab.runs() == [("A+B", PQ, 0), ("A+B", PQ, 1)]
    assert (outcome.runs_ok, outcome.runs_failed, outcome.runs_skipped) == (4, 0, 0)
    rows = store_rows(store, campaign_id)
    assert all(r["status"] == "ok" for r in rows)
    assert {t: sorted(k) for t, k in keys_by_target(rows).items()} == {
        t: sorted((x, 1, p) for x in (UI, PQ) for p in (0, 1)) for t in "AB"}
    superseded = sorted((r["target"], r["test"], r["repeat"], r["status"])
                        for r in store_rows(store, campaign_id, superseded=True) if r["superseded"])
    assert superseded == [("A", PQ, 0, "ok"), ("A", PQ, 1, "ok"), ("B", PQ, 0, "failed"), ("B", PQ, 1, "skipped")]


# -- one target's failure ends that target only ---------------------------------------------------

def test_a_server_that_does_not_start_gets_its_runs_stored_skipped_and_the_others_run_everything(lab, store):
    lab.failing_starts = {"B": {1}}
    outcome, progress = run(lab, store, targets=("A", "B", "C"), repeats=2, read_s=0.1, write_s=0.1)
    assert (outcome.runs_ok, outcome.runs_failed, outcome.runs_skipped) == (8, 0, 4)
    assert outcome.failed_targets == ["B"] and outcome.failures == {"B": "server did not start"}
    assert outcome.summary() == "8 runs (0 failed, 4 skipped: B server did not start)"
    assert {targets for targets, *_ in lab.runs()} == {"A+C"} and len(lab.runs()) == 4
    assert ("start", "B") not in lab.events
    rows = store_rows(store, outcome.campaign_id)
    every = sorted((x, 1, p) for x in (UI, PQ) for p in (0, 1))
    assert {t: sorted(k) for t, k in keys_by_target(rows).items()} == {"A": every, "C": every}
    skipped = [r for r in rows if r["target"] == "B"]
    assert sorted((r["test"], r["threads"], r["repeat"]) for r in skipped) == every
    assert {(r["status"], r["error"]) for r in skipped} == {("skipped", "skipped: server did not start")}
    failed_step = store.db.execute("SELECT s.label, s.error FROM steps s JOIN targets t ON t.id = s.target_id "
                                   "WHERE t.name = 'B' AND s.status = 'failed'").fetchall()
    assert [tuple(r) for r in failed_step] == [("start postgres 17.10", failed_step[0]["error"])]
    assert "did not start: FATAL:  fake start failure" in failed_step[0]["error"]
    assert any(m.startswith("B: remaining runs skipped (server did not start)") for m in progress.messages)


def test_a_server_that_dies_in_a_run_in_turns_fails_that_run_and_the_others_run_it_again_without_it(
        lab, store):
    lab.deaths = {2: "B"}  # B dies during update-index #2
    outcome, _ = run(lab, store, targets=("A", "B", "C"), repeats=2, read_s=0.1, write_s=0.1)
    assert lab.runs() == [("A+B+C", UI, 0), ("A+B+C", UI, 1), ("A+C", UI, 1), ("A+C", PQ, 0), ("A+C", PQ, 1)]
    assert (outcome.runs_ok, outcome.runs_failed, outcome.runs_skipped) == (9, 1, 2)
    assert outcome.failures == {"B": "server died"}
    after = lab.server_events()[lab.server_events().index(("died", "B")):]
    assert all(name != "B" for _, name in after[1:])  # never restarted: no revival of a dead server
    assert after[1:] == [*restart("CA"), ("stop", "A"), ("stop", "C")]  # the survivors restart together
    rows = store_rows(store, outcome.campaign_id)
    b = [(r["test"], r["repeat"], r["status"], r["error"]) for r in rows if r["target"] == "B"]
    assert b[0] == (UI, 0, "ok", None)
    assert b[1][:3] == (UI, 1, "failed") and "server closed the connection unexpectedly" in b[1][3]
    assert sorted(b[2:]) == [(PQ, 0, "skipped", "skipped: server died"), (PQ, 1, "skipped", "skipped: server died")]
    ok = keys_by_target(rows)
    assert sorted(ok["A"]) == sorted(ok["C"]) == sorted((x, 1, p) for x in (UI, PQ) for p in (0, 1))
    # what A and C store for update-index #2 is the rerun without B: two targets' turns
    rerun = [r for r in rows if r["test"] == UI and r["repeat"] == 1 and r["status"] == "ok"]
    assert all(len(json.loads(r["driver_spec_json"])["turns"]["connections"]) == 2 for r in rerun)


def test_a_server_that_dies_between_runs_is_not_restarted_and_the_others_restart_without_it(lab, store):
    lab.deaths_after = {1: "B"}  # B dies after update-index #1, before the restart for #2
    outcome, _ = run(lab, store, repeats=2, read_s=0.1, write_s=0.1)
    assert lab.runs() == [("A+B", UI, 0), ("A", UI, 1), ("A", PQ, 0), ("A", PQ, 1)]
    assert lab.server_events() == [("start", "A"), ("start", "B"), ("died", "B"),
                                   *restart("A"), *restart("A"), ("stop", "A")]
    assert (outcome.runs_ok, outcome.runs_failed, outcome.runs_skipped) == (5, 1, 2)
    assert outcome.failures == {"B": "server died"}
    b = [(r["test"], r["repeat"], r["status"], r["error"]) for r in store_rows(store, outcome.campaign_id)
         if r["target"] == "B"]
    assert b[0] == (UI, 0, "ok", None)
    assert b[1][:3] == (UI, 1, "failed") and " died (fake postmaster is gone)" in b[1][3]  # the run it missed
    assert sorted(b[2:]) == [(PQ, 0, "skipped", "skipped: server died"), (PQ, 1, "skipped", "skipped: server died")]


def test_a_server_that_dies_in_a_sequential_run_ends_its_target_and_the_next_target_still_runs(lab, store):
    lab.deaths = {5: "B"}  # A's four runs, then B dies in its first
    outcome, _ = run(lab, store, targets=("A", "B", "C"), order="sequential", repeats=2, read_s=0.1, write_s=0.1)
    assert [t for t, *_ in lab.runs()] == ["A"] * 4 + ["B"] + ["C"] * 4
    assert (outcome.runs_ok, outcome.runs_failed, outcome.runs_skipped) == (8, 1, 3)
    assert outcome.failed_targets == ["B"] and outcome.failures == {"B": "server died"}
    rows = store_rows(store, outcome.campaign_id)
    b = [(r["test"], r["repeat"], r["status"]) for r in rows if r["target"] == "B"]
    assert b[0] == (UI, 0, "failed")
    assert sorted(b[1:]) == sorted([(UI, 1, "skipped"), (PQ, 0, "skipped"), (PQ, 1, "skipped")])
    assert len(keys_by_target(rows)["C"]) == 4
    events = lab.server_events()
    assert [e for e in events if e[1] == "B"] == [("start", "B"), ("died", "B")]  # no restart after death
    assert events.index(("start", "C")) > events.index(("died", "B"))


def test_the_eta_of_targets_in_turns_counts_every_targets_share_of_each_run(lab, store):
    """Every step that starts ends under the same key, and the work done adds up to the estimate:
    otherwise the ETA, which scales the remaining estimate by elapsed / done, grows to hours."""
    import io

    from dbdrift.cli.progress import ConsoleProgress

    progress = ConsoleProgress(stream=io.StringIO())
    spec = lab.campaign(targets=("A", "B", "C", "D"))
    Runner(spec, store, progress=progress, workload=workload_of(spec)).run()
    assert progress.expected == {}
    assert progress.done_s == pytest.approx(progress.total_s)  # each run is credited its setup too (run_s)


def test_an_early_fast_step_moves_the_eta_by_its_own_share_only(monkeypatch):
    """A server start expected to take 2 s of a 1000 s estimate that took 1 s saves about 2 s of
    the ETA, not half of it (more on the estimator: tests/unit/test_progress.py)."""
    import io

    from dbdrift.cli import progress as progress_mod

    clock = [100.0]
    monkeypatch.setattr(progress_mod.time, "monotonic", lambda: clock[0])
    p = progress_mod.ConsoleProgress(stream=io.StringIO())
    p.campaign_start(1000.0, 10)
    p.step_start("a", "start", 2.0)
    clock[0] += 1.0
    p.step_end("a", "start", "ok", "")
    assert p.eta_s() == pytest.approx(998, abs=2)


# -- waits say what they are and how long, before they start --------------------------------------

@pytest.mark.parametrize("order", ["turns", "sequential"])
def test_a_settle_wait_and_a_warm_up_are_announced_with_their_length_before_they_start(lab, store, monkeypatch, order):
    """On a log (not a terminal) a long step says so when it starts: the settle's quiet wait after
    its "ok 0.3s" of work, and a warm-up run that no report shows."""
    import io

    from dbdrift.cli import progress as progress_mod
    from dbdrift.runner import session as session_mod

    stream = io.StringIO()
    slept = []
    monkeypatch.setattr(session_mod.time, "sleep", lambda s: slept.append((s, stream.getvalue())))
    monkeypatch.setattr(progress_mod, "ANNOUNCE_S", 0.1)  # the warm-up lasts 0.2 s here, not minutes
    spec = lab.campaign(settle_s=60, warm_runs=True, order=order)
    Runner(spec, store, progress=progress_mod.ConsoleProgress(stream=stream), workload=workload_of(spec)).run()
    # a wait sleeps in slices of a second (its progress moves between them); what was said before its first
    slices = [(s, before) for s, before in slept if 0.9 < s <= 1.0]
    waits = list(dict.fromkeys(before for _, before in slices))
    assert len(waits) == (2 if order == "turns" else 4)  # after the load and after the writes; per target in sequence
    assert sum(s for s, _ in slices) == pytest.approx(60.0 * len(waits), abs=1.0)
    for before in waits:
        announced = before.strip().splitlines()[-1]
        assert "settle after" in announced and ": quiet for 60s" in announced
        assert announced.endswith("(about 1m00s) ...")
    warm = [line for line in stream.getvalue().splitlines() if "point-query.warm x1 (warm-up, not reported)" in line]
    assert warm[0].endswith(" ...") and ": ok " in warm[-1]
    # in turns each target's line gives its own time and the run's, which lasts both targets' turns
    assert ("(about 1s of turns in 1s)" if order == "turns" else "(about 1s)") in warm[0]  # 0.2 s and the run's setup
