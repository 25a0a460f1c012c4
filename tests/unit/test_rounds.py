"""plan/rounds.py: the balanced cycle of rounds, checked by counting what follows what and who
holds which place, over the cycle as the driver runs it (the last turn precedes the first)."""
from __future__ import annotations

from collections import Counter

import pytest

from dbdrift.plan import rounds


def follows(cycle: tuple[tuple[int, ...], ...]) -> Counter:
    seq = [t for r in cycle for t in r]
    return Counter(zip(seq, seq[1:] + seq[:1]))


def places(cycle: tuple[tuple[int, ...], ...]) -> Counter:
    return Counter((t, k) for r in cycle for k, t in enumerate(r))


@pytest.mark.parametrize("n", range(3, rounds.SEARCHED + 1))
def test_every_target_follows_every_other_equally_often_and_holds_every_place_equally_often(n):
    cycle = rounds.cycle(n)
    assert all(sorted(r) == list(range(n)) for r in cycle)
    assert len(cycle) == n * n * (n - 1)
    pairs = follows(cycle)
    others = [pairs[(a, b)] for a in range(n) for b in range(n) if a != b]
    # each pair n² times; the pairs (x + 1, x) once less (no block can close them, rounds.py)
    assert min(others) >= n * n - 1 and max(others) == n * n
    assert sum(c < n * n for c in others) <= n
    assert {pairs[(a, a)] for a in range(n)} == {1}  # each target follows itself once, alike for all
    assert set(places(cycle).values()) == {n * (n - 1)}


def test_two_targets_keep_a_b_then_b_a():
    assert rounds.cycle(2) == ((0, 1), (1, 0))
    assert [rounds.repeat_order(r, 2) for r in range(3)] == [(0, 1), (1, 0), (0, 1)]


def test_the_pairs_balance_already_within_each_block_of_n_times_n_minus_1_rounds():
    n = 5
    block = rounds.cycle(n)[:n * (n - 1)]
    seq = [t for r in block for t in r]
    within = Counter(zip(seq, seq[1:]))
    assert max(within.values()) == n and min(within[(a, b)] for a in range(n) for b in range(n) if a != b) >= n - 1


def test_many_targets_get_the_williams_square():
    n = rounds.SEARCHED + 2
    cycle = rounds.cycle(n)
    assert cycle == rounds.williams(n) and len(cycle) == n
    assert set(places(cycle).values()) == {1}
    pairs = follows(cycle)
    assert all(pairs[(a, a)] == 0 for a in range(n))
    assert max(pairs.values()) <= 2


@pytest.mark.parametrize("n", [3, 4, 5])
def test_repeats_follow_the_williams_rows_every_place_once_per_n_repeats(n):
    period = n if n % 2 == 0 else 2 * n
    orders = [rounds.repeat_order(r, n) for r in range(period)]
    assert set(places(tuple(orders[:n])).values()) == {1}  # a Latin square: each place once in n repeats
    within = Counter(p for o in orders for p in zip(o, o[1:]))
    assert set(within.values()) == {period // n}


def test_alternating_is_listed_then_reversed():
    assert rounds.rounds_for(3, "alternating") == ((0, 1, 2), (2, 1, 0))
    assert [rounds.repeat_order(r, 3, "alternating") for r in range(3)] == [(0, 1, 2), (2, 1, 0), (0, 1, 2)]
    assert rounds.rounds_for(3, "balanced") == rounds.cycle(3)


def test_the_cycle_is_the_same_every_time():
    rounds.cycle.cache_clear()
    first = rounds.cycle(7)
    rounds.cycle.cache_clear()
    assert rounds.cycle(7) == first
