"""analysis/position.py on turns made up with known effects: a target offset, a position effect,
and what an unbalanced order makes of the latter."""
from __future__ import annotations

import math
import random

from dbdrift.analysis.position import Turn, order_notes, position_effects
from dbdrift.plan import rounds


def made_up(order: tuple[tuple[int, ...], ...], rounds_n: int, place_effect: list[float],
            target_effect: list[float], sd: float = 0.01, seed: int = 1) -> list[Turn]:
    rng = random.Random(seed)
    names = ["a", "b", "c", "d"][:len(order[0])]
    out = []
    for r in range(rounds_n):
        drift = rng.gauss(0, 0.05)  # what every target of a round sees alike
        for p, t in enumerate(order[r % len(order)]):
            rate = 1000 * math.exp(drift + place_effect[p] + target_effect[t] + rng.gauss(0, sd))
            out.append(Turn(0, r, p, names[t], rate))
    return out


def test_identical_targets_in_a_balanced_order_show_the_place_effect_and_no_bias():
    turns = made_up(rounds.cycle(4), 480, [-0.08, 0.0, 0.0, 0.08], [0.0] * 4)
    pe = position_effects(turns)
    assert pe is not None and pe.rounds == 480
    assert pe.positions[0].value < -0.06 and pe.positions[3].value > 0.06 and pe.positions[0].excludes_zero
    assert all(abs(e.value) < 0.005 for e in pe.targets.values())
    assert pe.residual() == {}
    assert order_notes({"point-query (1 thr)": turns}) == ()


def test_the_alternating_order_cannot_tell_places_from_targets_and_the_note_says_so():
    # with four targets a and d only ever hold places 1 and 4, b and c places 2 and 3: a place
    # effect that is not symmetric lands on the targets and no fit can take it out
    turns = made_up(rounds.alternating(4), 480, [-0.08, 0.0, 0.0, 0.0], [0.0] * 4)
    pe = position_effects(turns)
    assert pe is not None and not pe.separable and pe.positions == {} and pe.residual() == {}
    assert pe.targets["a"].value < -0.015 and pe.targets["b"].value > 0.015
    [note] = order_notes({"point-query (1 thr)": turns})
    assert note.startswith("order: the targets' turns kept to some places only (point-query (1 thr))")


def test_an_unbalanced_order_biases_the_targets_it_favours_and_the_note_names_them():
    order = ((0, 1, 2), (0, 2, 1), (0, 1, 2), (1, 0, 2))  # a first in 3 rounds of 4
    turns = made_up(order, 480, [-0.08, 0.0, 0.0], [0.0] * 3)
    pe = position_effects(turns)
    assert pe is not None and pe.separable
    assert abs(pe.positions[0].value - math.expm1(-0.08 + 0.08 / 3)) < 0.01  # the effect, centred
    assert set(pe.residual()) == {"a", "c"} and pe.bias["a"] < -0.03 and pe.bias["c"] > 0.02
    [note] = order_notes({"insert (1 thr)": turns})
    assert note.startswith("order: on insert (1 thr), the places its turns took in the order moved a by -3.")


def test_a_real_target_offset_is_found_whatever_the_order():
    turns = made_up(rounds.cycle(3), 360, [0.0, -0.05, 0.05], [0.1, 0.0, 0.0])
    pe = position_effects(turns)
    assert pe is not None
    a = pe.targets["a"]
    assert a.lower is not None and a.upper is not None and a.lower < math.expm1(0.1 - 0.1 / 3) < a.upper


def test_incomplete_rounds_and_single_rounds_give_nothing():
    assert position_effects([Turn(0, 0, 0, "a", 1.0), Turn(0, 0, 1, "b", 1.0)]) is None
    assert position_effects([Turn(0, r, 0, "a", 1.0) for r in range(5)]) is None


def test_tproc_c_and_insert_benchmark_reports_note_repeats_kept_to_some_places():
    from dbdrift.model import InsertStepResult, TpccResult
    from dbdrift.workloads.ibench.results import ibench_report
    from dbdrift.workloads.tpcc.results import tpcc_report
    alternating = [rounds.repeat_order(r, 3, "alternating") for r in range(4)]
    names = ["a", "b", "c"]
    tpcc = [TpccResult(target=names[t], status="ok", warehouses=1, clients=1, procedures=False, elapsed_s=60.0,
                       nopm=1000.0 + 10 * r + t, repeat=r, position=p)
            for r, order in enumerate(alternating) for p, t in enumerate(order)]
    assert any(n.startswith("order: the targets' repeats kept to some places only (NOPM)")
               for n in tpcc_report(tpcc, names).notes)
    balanced = [rounds.repeat_order(r, 3) for r in range(6)]
    tpcc = [TpccResult(target=names[t], status="ok", warehouses=1, clients=1, procedures=False, elapsed_s=60.0,
                       nopm=1000.0 + 10 * r + t, repeat=r, position=p)
            for r, order in enumerate(balanced) for p, t in enumerate(order)]
    assert not any(n.startswith("order:") for n in tpcc_report(tpcc, names).notes)
    steps = [InsertStepResult(target=names[t], step="l.i0", status="ok", clients=1, elapsed_s=10.0, inserted=100,
                              deleted=0, queries=0, ips=1000.0 + r + t, dps=0.0, qps=0.0, repeat=r, position=p)
             for r, order in enumerate(alternating) for p, t in enumerate(order)]
    assert any(n.startswith("order: the targets' repeats kept to some places only (l.i0)")
               for n in ibench_report(steps, names).notes)
