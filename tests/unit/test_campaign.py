from pathlib import Path

import pytest

from dbdrift.errors import UserError
from dbdrift.model import is_warm_run
from dbdrift.workloads.registry import load_campaign, parse_campaign
from dbdrift.plan.lifecycle import SettleStep
from dbdrift.workloads.sysbench.plan import params
from dbdrift.workloads.sysbench.expand import FreshStep, LoadStep, RunStep, estimate_s, expand, restarts_before

MINIMAL = {"targets": [{"name": "a", "version": "17.10", "base": True}, {"name": "b", "version": "18.4"}]}


def parse(data, tmp=Path(".")):
    return parse_campaign(data, "c.toml", tmp, "c")


def test_defaults_follow_the_spec():
    spec = parse(MINIMAL)
    assert (params(spec).read_s, params(spec).write_s, params(spec).insert_s, params(spec).warmup_s) == (300, 600, 600, 5)
    assert len(spec.tests) == 32 and spec.base.name == "a"
    assert spec.settle_total_s() == 61.0


def test_durations_accept_units():
    spec = parse({**MINIMAL, "read_s": "2m", "write_s": "90s"})
    assert (params(spec).read_s, params(spec).write_s, params(spec).insert_s) == (120, 90, 90)


def test_malformed_toml_names_the_file(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("name = \n")
    with pytest.raises(UserError) as err:
        load_campaign(path)
    assert "bad.toml" in err.value.message and "not valid TOML" in err.value.message


@pytest.mark.parametrize("data, needle", [
    ({**MINIMAL, "treads": [1]}, "unknown key 'treads'"),
    ({"targets": []}, "no [[targets]]"),
    ({"targets": [{"name": "a"}]}, "exactly one of version, basedir or system"),
    ({"targets": [{"name": "a", "version": "17.10"}, {"name": "a", "version": "18.4"}]}, "used twice"),
    ({"targets": [{"name": "a", "version": "x.y"}]}, "not a version number"),
    ({"targets": [{"name": "a", "engine": "oracle", "version": "1"}]}, "unknown engine"),
    ({**MINIMAL, "tests": ["nope"]}, "unknown microbenchmark"),
    ({**MINIMAL, "threads": [0]}, "threads"),
    ({"targets": [{"name": "a", "basedir": "/nonexistent/pg"}]}, "does not exist"),
])
def test_bad_campaigns_are_rejected_with_the_object_named(data, needle):
    with pytest.raises(UserError) as err:
        parse(data)
    assert needle in err.value.message
    assert err.value.hint


def test_plan_loads_settles_warms_and_settles_again_after_read_write_100():
    spec = parse({**MINIMAL, "tests": ["all42"], "settle_s": 0, "order": "sequential"})
    steps = expand(spec)[0].steps
    assert isinstance(steps[0], LoadStep) and isinstance(steps[1], SettleStep)
    names = [s.name if isinstance(s, RunStep) else type(s).__name__ for s in steps]
    assert names[2] == "point-query.warm"
    settle = names.index("SettleStep", 2)
    assert names[settle - 1] == "read-write_range=100"
    assert names.index("scan.warm") == names.index("scan") - 1
    assert names[-2:] == ["delete", "insert"]
    assert names.index("update-inlist") < names.index("write-only") < names.index("read-write_range=10")


def test_write_only_runs_for_read_seconds_like_all_small_sh():
    spec = parse({**MINIMAL, "read_s": 3, "write_s": 7, "tests": ["write-only", "update-index", "insert"]})
    runs = {s.name: s.duration_s for s in expand(spec)[0].runs if not s.warm}
    assert runs == {"write-only": 3, "update-index": 7, "insert": 7}


def test_each_test_runs_once_per_thread_count_and_repeat():
    spec = parse({**MINIMAL, "threads": [1, 4], "repeats": 2, "tests": ["point-query"], "warm_runs": False,
                  "order": "sequential"})
    keys = [s.key for s in expand(spec)[0].runs]
    assert keys == [("point-query", 1, 0), ("point-query", 1, 1), ("point-query", 4, 0), ("point-query", 4, 1)]


def test_turns_are_whole_runs_in_which_targets_take_turns():
    spec = parse({**MINIMAL, "read_s": 60, "warmup_s": 5, "repeats": 2, "tests": ["point-query"], "warm_runs": False})
    runs = expand(spec)[0].runs
    assert [(r.repeat, r.duration_s, r.warmup_s) for r in runs] == [(0, 60, 5), (1, 60, 5)]
    assert spec.order == "turns" and params(spec).turn_s == 0.01


def test_every_repeat_after_a_tests_first_runs_on_restarted_servers_unless_restart_is_never():
    data = {**MINIMAL, "repeats": 3, "tests": ["point-query", "update-index"]}
    spec = parse(data)
    assert params(spec).restart == "repeat" and spec.to_dict()["restart"] == "repeat"
    steps = expand(spec)[0].steps
    assert [s.label for s in steps if restarts_before(spec, s)] == [
        "update-index x1 #2", "update-index x1 #3", "point-query x1 #2", "point-query x1 #3"]
    never = parse({**data, "restart": "never"})
    assert not any(restarts_before(never, s) for s in steps)
    assert estimate_s(expand(spec)[0], spec) - estimate_s(expand(never)[0], never) == pytest.approx(4 * 3.0)
    with pytest.raises(UserError) as err:
        parse({**data, "restart": "always"})
    assert "restart must be one of" in err.value.message


def test_reload_runs_the_whole_sequence_once_per_repeat_each_on_a_new_loaded_server():
    data = {**MINIMAL, "repeats": 3, "tests": ["point-query", "update-index"], "restart": "reload"}
    spec = parse(data)
    steps = expand(spec)[0].steps
    labels = [s.label for s in steps]
    one_pass = ["load 1x1,000,000 rows", "settle after load", "point-query.warm x1{}", "update-index x1{}",
                "settle after the write phase", "point-query x1{}"]

    def numbered(n: int) -> list[str]:
        return [label.format(f" #{n}" if n > 1 else "") + (" (warm-up, not reported)" if ".warm" in label else "")
                for label in one_pass]
    assert labels == (numbered(1) + ["new server for repeat #2"] + numbered(2)
                      + ["new server for repeat #3"] + numbered(3))
    assert [s.repeat for s in steps if isinstance(s, FreshStep)] == [1, 2]
    assert not any(restarts_before(spec, s) for s in steps)
    # every measured key once, as with the other restart modes, so reports and resume see the same runs
    assert sorted(r.key for r in expand(spec)[0].runs if not r.warm) == sorted(
        r.key for r in expand(parse({**data, "restart": "repeat"}))[0].runs if not r.warm)
    # each repeat pays for a new server, its load and its settle
    repeat = parse({**data, "restart": "repeat"})
    extra = estimate_s(expand(spec)[0], spec) - estimate_s(expand(repeat)[0], repeat)
    one_more = 3.0 + (3.0 + 1_000_000 / 150_000) + (spec.settle_total_s() + 1.0) * 2 + params(spec).read_s + params(spec).warmup_s + 0.5
    assert extra == pytest.approx(2 * one_more - 4 * 3.0)


def test_slice_warmup_s_is_refused_with_what_replaced_it():
    with pytest.raises(UserError) as err:
        parse({**MINIMAL, "slice_warmup_s": 1})
    assert "no longer used" in err.value.message and "take turns" in err.value.hint


@pytest.mark.parametrize("value", [0, 0.0001, 61])
def test_turn_s_out_of_range_is_refused(value):
    with pytest.raises(UserError) as err:
        parse({**MINIMAL, "turn_s": value})
    assert "turn_s" in err.value.message


def test_order_must_be_turns_or_sequential():
    with pytest.raises(UserError) as err:
        parse({**MINIMAL, "order": "random"})
    assert "order must be one of" in err.value.message


def test_calibration_runs_the_base_against_a_copy_of_itself_in_turns():
    from dbdrift.plan.campaign import as_calibration

    spec = as_calibration(parse({**MINIMAL, "order": "sequential"}), None)
    assert [t.name for t in spec.targets] == ["a", "a-aa"]
    assert spec.targets[0].version == spec.targets[1].version == "17.10"
    assert spec.order == "turns" and spec.calibration and spec.name == "calibrate-a"
    with pytest.raises(UserError):
        as_calibration(spec, "nope")


def test_reads_after_writes_are_settled_even_without_read_write_100():
    spec = parse({**MINIMAL, "tests": ["update-index", "points-covered-pk", "delete"], "order": "sequential",
                  "warm_runs": False, "settle_s": 0})
    names = [s.name if isinstance(s, RunStep) else s.label for s in expand(spec)[0].steps]
    assert names == ["load 1x1,000,000 rows", "settle after load", "update-index", "settle after the write phase",
                     "points-covered-pk", "delete"]


def test_no_extra_settle_when_no_write_ran_before_the_reads():
    spec = parse({**MINIMAL, "tests": ["point-query", "delete"], "order": "sequential", "warm_runs": False})
    labels = [s.label for s in expand(spec)[0].steps if isinstance(s, SettleStep)]
    assert labels == ["settle after load"]


def test_every_warm_up_run_the_plan_marks_is_one_a_stored_row_is_known_by():
    spec = parse({**MINIMAL, "tests": ["all42"], "settle_s": 0, "order": "sequential"})
    runs = [s for s in expand(spec)[0].steps if isinstance(s, RunStep)]
    assert {s.name for s in runs if s.warm} == {"point-query.warm", "scan.warm", "points-covered-si.warm"}
    assert all(s.warm == is_warm_run(s.name) for s in runs)
    assert not is_warm_run("warmth")


def test_within_starts_drops_the_runs_beyond_each_tests_planned_starts_and_what_they_cost():
    from dbdrift.workloads.sysbench.expand import MEASURED, SETUP, estimate_parts, run_cost_s, within_starts
    spec = parse({**MINIMAL, "repeats": 5, "tests": ["point-query", "update-index"], "read_s": 10, "write_s": 10})
    plans = expand(spec)
    kept = within_starts(plans, {("point-query", 1): 3, ("update-index", 1): 5})
    assert sorted(r.key for r in kept[0].runs if not r.warm) == sorted(
        [("point-query", 1, i) for i in range(3)] + [("update-index", 1, i) for i in range(5)])
    assert [r for r in kept[0].runs if r.warm] == [r for r in plans[0].runs if r.warm]
    dropped = [r for r in plans[0].runs if r.name == "point-query" and not r.warm and r.repeat >= 3]
    full, cut = estimate_parts(plans[0], spec), estimate_parts(kept[0], spec)
    assert (full[MEASURED] + full[SETUP]) - (cut[MEASURED] + cut[SETUP]) == pytest.approx(
        sum(run_cost_s(spec, r) for r in dropped))


@pytest.mark.fault("progress")
def test_point_query_warm_runs_only_where_a_read_test_follows():
    writes = [s.name for s in expand(parse({**MINIMAL, "tests": ["update-index", "insert"]}))[0].runs]
    assert writes == ["update-index", "insert"]  # no 300 s of reads that no test makes
    mixed = [s.name for s in expand(parse({**MINIMAL, "tests": ["update-index", "point-query"]}))[0].runs]
    assert mixed == ["point-query.warm", "update-index", "point-query"]
