"""The order in which targets take their turns: a cycle of rounds, each round one turn of every
target, balanced so that no target's place in the order favours or hurts it.

A turn is slowed or sped up by the turn before it: right after the same server's own turn it is
warm (docs/noise.md E14), right after a server that flushes (fsync on) it waits on the disk.
Rounds run back to back, so the last turn of one round precedes the first of the next. In the
cycle built here, counting those boundaries too:
  - every target follows every other target equally often and never itself;
  - every target holds every position of the round equally often.
It is a Williams design (a Latin square balanced for the previous turn) carried across the round
boundaries. A search finds n(n − 1) rounds in which each ordered pair of targets is adjacent n
times; the cycle is that block n times, its targets renumbered x + c (mod n) in copy c, which
gives every target every position equally often and keeps the pairs exact when each block's
last turn precedes the next block's first. The cycle has n²(n − 1) rounds; the pairs balance
already every n(n − 1). Two targets keep A B, B A: each follows itself and the other once per
cycle and holds each position once (D5).

Sysbench turns cycle through these rounds (the driver, 10 ms per turn). Whole runs taken in
turn (targets that cannot share a driver run), the order servers start in, and Insert
Benchmark and TPROC-C repeats use repeat_order: a campaign has a few repeats, so those follow
the rows of the Williams square, balanced every n (odd n: 2n) repeats.
"""
from __future__ import annotations

import math
from functools import lru_cache

Round = tuple[int, ...]

SEARCHED = 18  # up to this many targets the balanced block is searched for (at most 0.1 s)

@lru_cache(maxsize=64)
def cycle(n: int) -> tuple[Round, ...]:
    """The balanced cycle of rounds for `n` targets (targets are 0 .. n−1)."""
    if n < 1:
        raise ValueError("a round needs at least one target")
    if n == 1:
        return ((0,),)
    if n == 2:
        return ((0, 1), (1, 0))
    if n > SEARCHED:
        return williams(n)
    block = next((b for v in range(8) if (b := _block(n, v, closed=True)) is not None), None)
    if block is None:  # the renumbered copies then meet at another step: two pair classes off by one
        block = _block(n, 0, closed=False)
    assert block is not None
    return tuple(tuple((x + c) % n for x in r) for c in range(n) for r in block)


def alternating(n: int) -> tuple[Round, ...]:
    """Listed order, then reversed (round_order = "alternating"): A B C, C B A."""
    return (tuple(range(n)), tuple(reversed(range(n))))


def rounds_for(n: int, round_order: str) -> tuple[Round, ...]:
    """The cycle of rounds the campaign key `round_order` names."""
    return cycle(n) if round_order == "balanced" else alternating(n)


def repeat_order(repeat: int, n: int, round_order: str = "balanced") -> Round:
    """The order of the targets in repeat `repeat` (counting from 0) when whole runs take turns
    (server starts, Insert Benchmark and TPROC-C repeats). A campaign has a few repeats, not
    thousands of rounds, so the balanced order here is the Williams square itself: every n
    repeats (2n for odd n) each target runs once in each place, and within them each one right
    after each other once (twice)."""
    rows = williams(n) if round_order == "balanced" else alternating(n)
    return rows[repeat % len(rows)]


def _block(n: int, variant: int, closed: bool) -> tuple[Round, ...] | None:
    """Depth-first search for n(n − 1) rounds, read as one sequence of turns, in which no
    target follows itself, each ordered pair of different targets is adjacent at most n times,
    and the last turn's target minus the first's is prime to n; renumbering x -> x·k (mod n),
    which keeps all of that, makes it 1. Then only one pair is adjacent n − 1
    times, and it is of the form (x + 1, x): the sum of the steps b − a over a sequence is its
    last minus its first, n² times every step is 0 (mod n), so the missing step is −1. The
    renumbered copies then meet turn x + 1 to turn x + 1: each target follows itself once per
    cycle, alike for all, and the pairs (x + 1, x) are adjacent n² − 1 times against n² for
    every other pair (no block can close them exactly: its missing step is always last − first).
    A search that has not closed after a few passes' worth of steps gives up (None); the next
    `variant` breaks ties between equally used pairs in another order. Without `closed` any end
    will do (and the search runs to its end). Milliseconds, deterministic."""
    total = n * n * (n - 1)
    pair = [[0] * n for _ in range(n)]
    seq: list[int] = []
    stack: list[list[int]] = []  # per depth: the candidates not tried yet

    def candidates() -> list[int]:
        k = len(seq) % n
        in_round = set(seq[len(seq) - k:]) if k else set()
        prev = seq[-1] if seq else None
        out = [t for t in range(n) if t not in in_round and t != prev and (prev is None or pair[prev][t] < n)]
        out.sort(key=lambda t: (pair[prev][t] if prev is not None else 0, (t * (variant + 1) + variant) % n, t),
                 reverse=True)
        return out  # least used pair first (popped from the end)

    def closes() -> bool:
        return not closed or math.gcd((seq[-1] - seq[0]) % n, n) == 1

    stack.append(candidates())
    steps = 0
    while stack and (steps < 5 * total or not closed):
        steps += 1
        if len(seq) == total and closes():
            # renumber x -> scale·x: last − first becomes 1
            scale = pow(seq[-1] - seq[0], -1, n) if closed else 1
            return tuple(tuple(scale * x % n for x in seq[r * n:(r + 1) * n]) for r in range(n * (n - 1)))
        if len(seq) == total or not stack[-1]:
            stack.pop()
            if seq:
                t = seq.pop()
                if seq:
                    pair[seq[-1]][t] -= 1
            continue
        t = stack[-1].pop()
        if seq:
            pair[seq[-1]][t] += 1
        seq.append(t)
        stack.append(candidates() if len(seq) < total else [])
    return None


def williams(n: int) -> tuple[Round, ...]:
    """The textbook Williams square (its mirror too for odd n): every ordered pair adjacent once
    (twice) within the rows, each target once (twice) in each position; the boundaries between
    rows add one pair per row, so the pairs are balanced to within one in n (or 2n)."""
    base = [0]
    for k in range(1, n):
        base.append((k + 1) // 2 if k % 2 else n - k // 2)
    rows = [tuple((i + b) % n for b in base) for i in range(n)]
    if n % 2:
        rows += [tuple(reversed(r)) for r in rows]
    return tuple(rows)
