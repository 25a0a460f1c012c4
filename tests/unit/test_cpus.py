import os
import subprocess
import sys

import pytest

from dbdrift import cpus
from dbdrift.cpus import Placement, format_list, parse_list, place
from dbdrift.errors import UserError
from tests.helpers import process_tree, tasks_of
from tests.unit.test_campaign import MINIMAL, parse


@pytest.mark.parametrize("text, expected", [
    ("0", {0}), ("1-3", {1, 2, 3}), ("0,2-3", {0, 2, 3}), ("0, 5", {0, 5}), ("4-4", {4}),
])
def test_cpu_lists_in_the_kernels_format(text, expected):
    assert parse_list(text, "x") == expected


@pytest.mark.parametrize("text", ["", "a", "1-", "-1", "1,,2", "3-1", "1.5"])
def test_malformed_cpu_lists_are_refused(text):
    with pytest.raises(UserError) as err:
        parse_list(text, "cpus.server")
    assert "cpus.server" in err.value.message and err.value.hint


def test_format_list_is_the_compact_form():
    assert format_list(frozenset({0, 1, 2, 5, 7, 8})) == "0-2,5,7-8"
    assert format_list(frozenset({3})) == "3"
    assert parse_list(format_list(frozenset({0, 2, 3, 9})), "x") == {0, 2, 3, 9}


@pytest.mark.parametrize("n, driver, server", [
    (2, {0}, {1}), (4, {0}, {1, 2, 3}), (8, {0, 1}, set(range(2, 8))), (16, set(range(4)), set(range(4, 16))),
])
def test_auto_gives_the_driver_a_quarter_and_the_servers_the_rest(n, driver, server):
    placement = place("auto", frozenset(range(n)))
    assert placement.driver == driver and placement.server == server


def test_auto_on_one_cpu_and_shared_pin_nothing():
    assert not place("auto", frozenset({3})).pinned
    assert not place("shared", frozenset(range(8))).pinned
    assert place("auto", frozenset({2, 5})) == Placement(frozenset({2}), frozenset({5}))


def test_explicit_lists_must_name_usable_cpus():
    assert place(("0", "1-3"), frozenset(range(4))) == Placement(frozenset({0}), frozenset({1, 2, 3}))
    with pytest.raises(UserError) as err:
        place(("0", "1-7"), frozenset(range(4)))
    assert "cpus.server" in err.value.message and "4-7" in err.value.message and "0-3" in err.value.hint


def test_placement_round_trips_through_the_stored_facts():
    placement = Placement(frozenset({0}), frozenset({1, 2}))
    assert placement.to_dict() == {"pinned": True, "driver": "0", "server": "1-2"}
    assert Placement.from_dict(placement.to_dict()) == placement
    assert not Placement.from_dict({"pinned": False}).pinned
    assert placement.describe() == ("driver on CPU 0, servers on CPU 1-2, dbdrift itself unpinned "
                                    "(its CPU counted, not foreign load)")


def test_a_child_started_while_pinned_inherits_the_set_and_the_caller_is_restored():
    before = os.sched_getaffinity(0)
    one = frozenset({min(before)})
    with cpus.pinned(one):
        child = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                               capture_output=True, text=True, check=True)
    assert child.stdout.strip() == str(sorted(one))
    assert os.sched_getaffinity(0) == before


def test_process_tree_finds_children_and_grandchildren():
    script = ("import subprocess, sys, time; "
              "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)']); "
              "print(p.pid, flush=True); time.sleep(30)")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        grandchild = int(parent.stdout.readline())
        tree = process_tree(os.getpid())
        assert parent.pid in tree and grandchild in tree
        assert len(tasks_of(os.getpid())) >= 1
    finally:
        subprocess.run(["kill", str(grandchild)])
        parent.kill()
        parent.wait()


@pytest.mark.parametrize("value, needle", [
    ("pinned", "cpus must be"), ({"driver": "0"}, "cpus must be"), ({"driver": "0", "server": "x"}, "cpus.server"),
    ({"driver": "0", "servers": "1"}, "unknown key 'servers'"), (3, "cpus must be"),
])
def test_bad_cpus_options_are_refused_with_a_hint(value, needle):
    with pytest.raises(UserError) as err:
        parse({**MINIMAL, "cpus": value})
    assert needle in err.value.message and err.value.hint


def test_cpus_option_is_parsed_and_stored():
    assert parse(MINIMAL).cpus == "auto"
    spec = parse({**MINIMAL, "cpus": {"driver": "0", "server": "1-3"}})
    assert spec.cpus == ("0", "1-3") and spec.to_dict()["cpus"] == {"driver": "0", "server": "1-3"}
    assert parse({**MINIMAL, "cpus": "shared"}).to_dict()["cpus"] == "shared"
