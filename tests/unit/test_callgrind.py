"""metrics.callgrind on real callgrind output, and analysis.instructions on literal numbers.

The fixtures in tests/data/callgrind come from src/prog.c via src/make_fixtures.sh: main calls
f() n times, f calls g(3), g recurses to depth 0. The hard-coded counts below are what
`callgrind_annotate` (valgrind 3.19) printed for those files; rerun it after regenerating.
"""
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from dbdrift.analysis.instructions import EventCost, function_delta, per_event, repeatability
from dbdrift.errors import UserError
from dbdrift.metrics.callgrind import (find_profiles, is_complete, merge_profiles, parse_profile,
                                       wait_complete)

DATA = Path(__file__).resolve().parents[1] / "data" / "callgrind"

# The "Extended Example" of the Callgrind Format Specification, with name compression.
SPEC_EXAMPLE = """# callgrind format
events: Instructions
fl=(1) file1.c
fn=(1) main
16 20
cfn=(2) func1
calls=1 50
16 400
cfi=(2) file2.c
cfn=(3) func2
calls=3 20
16 400
fn=(2)
51 100
cfi=(2)
cfn=(3)
calls=2 20
51 300
fl=(2)
fn=(3)
20 700
"""


@pytest.fixture(scope="module")
def n1000():
    return parse_profile(DATA / "small_n1000.out")


@pytest.fixture(scope="module")
def n5000():
    return parse_profile(DATA / "small_n5000.out")


def test_total_ir_matches_callgrind_annotate_program_totals(n1000, n5000):
    # callgrind_annotate: "249,003 (100.0%)  PROGRAM TOTALS" and "753,003 ... PROGRAM TOTALS"
    assert n1000.total_ir == 249_003 and n5000.total_ir == 753_003


def test_self_ir_of_f_and_g_matches_callgrind_annotate(n1000):
    # callgrind_annotate small_n1000.out: f 53,000, g 17,000, g'2 46,000, main 10,027.
    # callgrind names recursion levels below the first g'2; dbdrift folds them into g.
    assert n1000.self_ir["f"] == 53_000
    assert n1000.self_ir["g"] == 17_000 + 46_000
    assert n1000.self_ir["main"] == 10_027
    assert "g'2" not in n1000.self_ir


def test_inclusive_ir_matches_callgrind_annotate_except_for_recursion(n1000):
    # callgrind_annotate --inclusive=yes: main 126,822, f 116,000, g 63,000 -- equal here.
    # It also prints g'2 87,000: the 46,000 entering g'2 from g plus 41,000 of g'2 calling
    # itself, which is already inside the 46,000. dbdrift leaves self-calls out, so g'2 folded
    # into g stays 63,000 = g's whole subtree, which is also what f's call to g cost.
    assert n1000.inclusive_ir["main"] == 126_822
    assert n1000.inclusive_ir["f"] == 116_000
    assert n1000.inclusive_ir["g"] == 63_000


def test_difference_of_two_runs_gives_the_exact_instructions_per_iteration(n1000, n5000):
    cost = per_event(n1000, 1000, n5000, 5000)
    assert cost.self_per_event["f"] == 53.0  # (265,000 - 53,000) / 4,000 from callgrind_annotate
    assert cost.self_per_event["g"] == 63.0
    assert cost.inclusive_per_event["f"] == 116.0
    assert cost.ir_per_event == 126.0  # main's loop adds 10 per iteration around f
    assert "dl_main" not in cost.self_per_event  # start-up cancels


def test_instruction_positions_and_jump_lines_give_the_same_counts():
    # positions: instr line, relative subpositions, jcnd=/jump= lines; collected inside f only.
    profile = parse_profile(DATA / "instr_jumps_f.out")
    assert profile.total_ir == 116_000
    assert (profile.self_ir["f"], profile.self_ir["g"]) == (53_000, 63_000)
    assert profile.inclusive_ir["main"] == 116_000  # no self cost, only its call to f


def test_parts_of_one_file_are_summed():
    # Three dumps: summary 0 + 126,812 + 10. callgrind_annotate 3.19 misreads this file: it
    # warns on the part headers and reports the last part's 10 as PROGRAM TOTALS.
    profile = parse_profile(DATA / "parts_combined.out")
    assert (profile.parts, profile.total_ir) == (3, 126_822)
    assert profile.self_ir["main"] == 10_027
    assert profile.inclusive_ir["main"] == 126_822


def test_calls_with_zero_count_add_inclusive_not_self_cost():
    # A dump taken while a call is running writes calls=0; callgrind_annotate counts its cost
    # line as self cost of the caller, which is wrong.
    profile = parse_profile("events: Ir\nfn=a\n1 5\ncfn=b\ncalls=0 9\n1 40\n")
    assert profile.self_ir == {"a": 5} and profile.inclusive_ir["a"] == 45


def test_one_file_per_dump_merges_to_the_combined_file():
    files = find_profiles(DATA / "dumps")
    pid = parse_profile(files[0]).pid
    assert [p.name for p in files] == [f"cg.{pid}.out", f"cg.{pid}.out.1", f"cg.{pid}.out.2"]
    merged = merge_profiles([parse_profile(p) for p in find_profiles(DATA / "dumps", pid=pid)])
    combined = parse_profile(DATA / "parts_combined.out")
    assert merged.total_ir == combined.total_ir and merged.parts == 3
    assert merged.self_ir == combined.self_ir and merged.inclusive_ir == combined.inclusive_ir


def test_spec_example_gives_the_inclusive_costs_the_spec_states():
    profile = parse_profile(SPEC_EXAMPLE)
    assert profile.event == "Instructions" and profile.total_ir == 820  # no summary: sum of self
    assert profile.self_ir == {"main": 20, "func1": 100, "func2": 700}
    assert profile.inclusive_ir == {"main": 820, "func1": 400, "func2": 700}


def test_same_name_in_two_objects_is_merged_by_name_and_apart_by_symbol(n1000):
    # callgrind_annotate: 25 in libc's (below main), 11 in the program's.
    by_symbol = {k: v for k, v in n1000.self_ir_by_symbol.items() if k[1] == "(below main)"}
    assert sorted(by_symbol.values()) == [11, 25] and n1000.self_ir["(below main)"] == 36


def test_cob_names_the_object_of_one_call_only():
    text = "events: Ir\nob=lib\nfn=a\ncob=other\ncfn=b\ncalls=1 1\n1 10\ncfn=c\ncalls=1 1\n1 20\n"
    profile = parse_profile(text)
    assert profile.inclusive_ir_by_symbol == {("lib", "a"): 30}
    assert profile.inclusive_ir == {"a": 30}


def test_another_event_can_be_chosen():
    text = "events: Ir Dr\nfn=a\n1 10 3\n2 5\nsummary: 15 3\n"
    assert parse_profile(text, event="Dr").total_ir == 3
    assert parse_profile(text, event="Dr").self_ir == {"a": 3}


def test_the_total_is_what_the_listed_functions_cost_not_a_larger_summary():
    # A MariaDB dump under --toggle-collect=dispatch_command: summary: 198,584,278 but the
    # functions listed cost 120,793,128, and the excess changes from run to run.
    text = "events: Ir\nsummary: 198584278\nfn=dispatch_command\n1 120793128\ntotals: 120793128\n"
    profile = parse_profile(text)
    assert profile.total_ir == 120_793_128 == sum(profile.self_ir.values())
    assert profile.totals == {"Ir": 120_793_128}


def test_an_event_the_profile_lacks_is_a_user_error():
    with pytest.raises(UserError, match="no event 'Dr'"):
        parse_profile("events: Ir\nfn=a\n1 10\n", event="Dr")


def test_an_undefined_compressed_name_names_the_line():
    with pytest.raises(UserError, match="line 2: fn id \\(7\\) is used before it is defined"):
        parse_profile("events: Ir\nfn=(7)\n1 10\n")


def test_pid_and_command_are_read(n1000):
    assert n1000.cmd == "/tmp/dbdrift-cgprog 1000" and isinstance(n1000.pid, int)


def test_find_profiles_lists_only_callgrind_files_in_pid_order(tmp_path):
    for name in ("cg.20.out", "cg.3.out.2", "cg.3.out", "cg.3.out.10", "server.log", "cg.x"):
        (tmp_path / name).write_text("")
    assert [p.name for p in find_profiles(tmp_path)] == ["cg.3.out", "cg.3.out.2", "cg.3.out.10", "cg.20.out"]
    assert [p.name for p in find_profiles(tmp_path, pid=20)] == ["cg.20.out"]


def test_a_finished_profile_is_complete_and_a_cut_one_is_not(tmp_path):
    cut = tmp_path / "cg.1.out"
    cut.write_text((DATA / "small_n1000.out").read_text()[:5000])
    assert is_complete(DATA / "small_n1000.out")
    assert not is_complete(cut) and not is_complete(tmp_path / "missing.out")


def test_wait_complete_raises_a_user_error_when_the_profile_stays_cut(tmp_path):
    cut = tmp_path / "cg.1.out"
    cut.write_text("events: Ir\nfn=a\n1 10\n")
    with pytest.raises(UserError, match="not complete after 0 s"):
        wait_complete(cut, timeout_s=0)


def test_wait_complete_returns_once_the_totals_line_arrives(tmp_path):
    path = tmp_path / "cg.1.out"
    path.write_text("events: Ir\nfn=a\n1 10\n")
    finisher = threading.Timer(0.05, lambda: path.write_text("events: Ir\nfn=a\n1 10\ntotals: 10\n"))
    finisher.start()
    wait_complete(path, timeout_s=30, poll_s=0.01)
    finisher.join()


# analysis.instructions ------------------------------------------------------------------------

def counts(total, self_ir, inclusive_ir=None):
    return SimpleNamespace(total_ir=total, self_ir=self_ir, inclusive_ir=inclusive_ir or dict(self_ir))


def test_per_event_divides_differences_and_counts_missing_functions_as_zero():
    cost = per_event(counts(1000, {"a": 500, "b": 100, "start": 400}), 10,
                     counts(3000, {"a": 1500, "c": 1100, "start": 400}), 30)
    assert cost.ir_per_event == 100.0
    assert cost.self_per_event == {"a": 50.0, "b": -5.0, "c": 55.0}  # unchanged "start" left out


def test_per_event_needs_two_different_event_counts():
    with pytest.raises(ValueError):
        per_event(counts(1, {}), 5, counts(2, {}), 5)


def test_repeatability_is_the_spread_over_the_mean_in_percent():
    assert repeatability([98.0, 100.0, 102.0]) == pytest.approx(4.0)
    assert repeatability([1234.0]) == 0.0


def event_cost(total, self_per_event, inclusive_per_event=None):
    return EventCost(total, self_per_event, inclusive_per_event or {})


def test_function_delta_lists_the_largest_movers_each_way():
    base = event_cost(10_000, {"a": 100, "b": 200, "c": 50, "d": 10, "e": 5})
    new = event_cost(11_500, {"a": 1300, "b": 100, "c": 60, "d": 10.5, "f": 400})
    delta = function_delta(base, new, top=2)
    assert [r["function"] for r in delta["self"]["grew"]] == ["a", "f"]
    assert [r["function"] for r in delta["self"]["shrank"]] == ["b", "e"]
    assert delta["self"]["grew"][0] == {"function": "a", "base": 100, "new": 1300, "delta": 1200}
    assert delta["total_delta"] == 1500
    assert delta["explained"] == pytest.approx((1200 + 400) / 1500)  # d's +0.5 is below 1


def test_function_delta_lists_inclusive_movers_separately():
    base = event_cost(100, {"leaf": 10}, {"root": 100, "mid": 60, "leaf": 10})
    new = event_cost(135, {"leaf": 40, "root": 5}, {"root": 135, "mid": 90, "leaf": 40})
    delta = function_delta(base, new)
    assert [r["function"] for r in delta["inclusive"]["grew"]] == ["leaf", "mid"]
    assert delta["inclusive"]["shrank"] == [] and delta["explained"] == 1.0


def test_root_frames_holding_every_event_are_left_out_of_the_inclusive_movers():
    base = event_cost(1000, {"f": 100}, {"(below main)": 1000, "PostmasterMain": 990, "exec": 900, "f": 100})
    new = event_cost(1200, {"f": 300}, {"(below main)": 1200, "PostmasterMain": 1190, "exec": 1100, "f": 300})
    grew = [r["function"] for r in function_delta(base, new)["inclusive"]["grew"]]
    assert grew == ["exec", "f"]  # exec holds 90% and 92%: below the root share, a frame that says something


def test_function_delta_explains_nothing_when_the_total_did_not_move():
    delta = function_delta(event_cost(100, {"a": 10, "b": 20}), event_cost(100.5, {"a": 20, "b": 10.5}))
    assert delta["explained"] is None
    assert [r["function"] for r in delta["self"]["shrank"]] == ["b"]


def test_compiler_clones_of_one_function_compare_as_one_function():
    from dbdrift.analysis.instructions import EventCost, canonical, function_delta
    assert canonical("varstrfastcmp_locale.isra.8") == "varstrfastcmp_locale"
    assert canonical("CreateExprContextInternal.constprop.4") == "CreateExprContextInternal"
    assert canonical("RelationCloseCleanup.part.5") == "RelationCloseCleanup"
    base = EventCost(1000.0, {"cmp.isra.7": 500.0, "f": 100.0}, {})
    new = EventCost(1010.0, {"cmp.isra.8": 504.0, "f": 106.0}, {})
    delta = function_delta(base, new)
    assert [(r["function"], r["delta"]) for r in delta["self"]["grew"]] == [("f", 6.0), ("cmp", 4.0)]


def test_postgres_is_counted_per_backend_and_mysql_inside_dispatch_command():
    from dbdrift.workloads.sysbench.instructions import supports, valgrind_command
    pg = valgrind_command("valgrind", "/o", "postgres")
    my = valgrind_command("valgrind", "/o", "mysql")
    assert "--trace-children=yes" in pg and "--toggle-collect=PostgresMain" in pg
    assert "--trace-children=yes" not in my and "--toggle-collect=dispatch_command(*" in my
    assert "--zero-before=Item_func_sleep::val_int*" in my and "--dump-before=Item_func_benchmark::val_int*" in my
    assert not any("PostgresMain" in word for word in my)
    assert my[-1] == "--callgrind-out-file=/o/cg.%p.out"
    assert all(supports(engine) for engine in ("postgres", "mysql", "mariadb"))


def test_function_keys_drop_cxx_parameter_lists_and_pool_unnamed_code():
    from dbdrift.workloads.sysbench.instructions import STRIPPED, _significant, function_key
    assert function_key("rec_get_offsets_func(unsigned char const*, dict_index_t const*)") == "rec_get_offsets_func"
    assert function_key("PolicyMutex<TTASEventMutex<GenericPolicy> >::enter(unsigned int) const") == \
        "PolicyMutex<TTASEventMutex<GenericPolicy> >::enter"
    assert function_key("std::function<void ()>::operator()() const") == "std::function<void ()>::operator()"
    assert function_key("PostgresMain") == "PostgresMain" and function_key("0x0000000001ee2130") == STRIPPED
    # a signature that changed between versions is one function; unnamed code one bucket
    assert _significant({"f(int)": 3.0, "f(long)": 2.0, "0x1a": 1.0, "0x2b": 0.25, "g": 0.1}) == {
        "f": 5.0, STRIPPED: 1.25}


def test_a_profile_that_ends_between_a_call_and_its_cost_is_refused():
    with pytest.raises(UserError, match="between a calls= line and its cost line"):
        parse_profile("events: Ir\nfn=a\n1 5\ncfn=b\ncalls=1 9\n")


def test_a_call_cost_counts_for_the_caller_inclusive_and_the_callee_named_by_cob():
    profile = parse_profile("events: Ir\nob=x\nfn=a\n1 5\ncob=y\ncfn=b\ncalls=1 9\n1 40\nob=y\nfn=b\n1 40\n")
    assert profile.self_ir == {"a": 5, "b": 40}
    assert profile.inclusive_ir_by_symbol[("x", "a")] == 45 and profile.inclusive_ir_by_symbol[("y", "b")] == 40
