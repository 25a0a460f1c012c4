"""sysbench's campaign keys: the rows of the top-level keys only sysbench takes (its tests, sizes,
durations, warm-up runs, restarts and turns), each with its type, default, range and meaning.
sysbench has no table of its own: these stay top-level keys of the campaign file, which the
campaign reader finds through sysbench's WorkloadPlan (`keys`) among the core's top-level rows
(plan/keys.py's `top`, each group after the core row its first row names with `after`, so
docs/campaign.md and the stored spec keep one order). Another workload's campaign refuses them
(plan/params.py's RefuseTopLevelKeys). The defaults are those of the record each key fills:
SysbenchParams (catalog.py), whose values the core asks for through sysbench's plan hooks, and
CampaignSpec for `tests` and `order`, which core modules read as its fields.
"""
from __future__ import annotations

from dbdrift.plan.campaign import CampaignSpec
from dbdrift.plan.keys import (CHOICE, DAY_S, DURATION, FLAG, HOUR_S, INTEGER, LIST, THREADS, Key)
from dbdrift.workloads.sysbench.catalog import SysbenchParams

SYSBENCH = ("sysbench",)

KEYS: tuple[Key, ...] = (
    Key('top', 'tests', LIST, 'list of strings, or one string', default=CampaignSpec.test_names, attr="test_names",
        workloads=SYSBENCH, after="allow_large",
        doc=('Which microbenchmarks run: test names, group names or sets (see [Test '
         'selection](#test-selection-tests)). `--tests` on the command line replaces it. An empty list is an '
         'error.')),
    Key('top', 'tables', INTEGER, 'integer', default=SysbenchParams.tables, high=2**32 - 1, large=128,
        why="the driver counts tables (sbtest1..sbtestN) in 32 bits", workloads=SYSBENCH,
        doc=('Number of sbtest tables (`sbtest1` … `sbtestN`); most statements pick one at random per execution. At '
         'most 2^32-1; more than 128 needs `allow_large`.')),
    Key('top', 'rows', INTEGER, 'integer', default=SysbenchParams.rows, high=2**31 - 1, large=1_000_000_000,
        why="sbtest's id and k are SQL INTEGER", workloads=SYSBENCH,
        doc=('Rows per table, loaded before the first test. At most 2,147,483,647 (`id` and `k` are SQL INTEGER); more'
         ' than 10^9 needs `allow_large`.')),
    Key('top', 'threads', THREADS, 'integer or list of integers', default=SysbenchParams.threads, low=1, high=1024,
        workloads=SYSBENCH,
        doc=('Client thread counts, each 1..1024; every test runs once per count, in the order given (duplicates are '
         'dropped).')),
    Key('top', 'count_instructions', FLAG, 'boolean', default=SysbenchParams.count_instructions, workloads=SYSBENCH,
        doc=('After the timed runs, also count instructions per event of each test under valgrind callgrind, on one '
         'more server per target. Same as `--count-instructions`; needs valgrind.')),
    Key('top', 'simulate_cache', FLAG, 'boolean', default=SysbenchParams.simulate_cache, workloads=SYSBENCH,
        doc=('With instruction counts (it turns them on): callgrind also simulates the caches and branch predictor, '
         'and reports give I1, D1 and LL misses and branch mispredicts per event next to instructions, labelled as'
         ' simulated. Slows the counting down; `run --simulate-cache` does the same.')),
    Key('top', 'read_s', DURATION, 'duration', default=SysbenchParams.read_s, measured=True, large=DAY_S,
        workloads=SYSBENCH, after="flamegraphs",
        doc=('Measured time of each read test, and of `write-only` (as the original scripts do). Also the length of '
         'the `point-query.warm` and `points-covered-si.warm` runs.')),
    Key('top', 'write_s', DURATION, 'duration', default=SysbenchParams.write_s, measured=True, large=DAY_S,
        workloads=SYSBENCH,
        doc='Measured time of each write test: the updates, `delete` and `read-write_range=*`.'),
    Key('top', 'insert_s', DURATION, 'duration', default=SysbenchParams.insert_s, shown="the value of `write_s`",
        measured=True, large=DAY_S, workloads=SYSBENCH,
        doc='Measured time of the `insert` test.'),
    Key('top', 'warmup_s', DURATION, 'duration', default=SysbenchParams.warmup_s, large=2 * HOUR_S, workloads=SYSBENCH,
        doc=('Unmeasured warm-up at the start of each run (sysbench `--warmup-time`). Interleaved, each target gets '
         'this much of its own turns.')),
    Key('top', 'scan_warm_s', DURATION, 'duration', default=SysbenchParams.scan_warm_s, large=2 * HOUR_S,
        workloads=SYSBENCH,
        doc='Length of the unreported `scan.warm` run before `scan`.'),
    Key('top', 'warm_runs', FLAG, 'boolean', default=SysbenchParams.warm_runs, workloads=SYSBENCH, after="settle_s",
        doc=('Run the unreported warm-up runs: `point-query.warm` after each load (one client per table; only when a '
             'read test is selected, so a campaign of writes alone has none), `scan.warm` '
         'before `scan` and `points-covered-si.warm` before `points-covered-si` (at the first thread count). Set '
         '`false` for shorter campaigns at the cost of measuring colder caches.')),
    Key('top', 'restart', CHOICE, 'string', default=SysbenchParams.restart, choices=("repeat", "never", "reload"),
        workloads=SYSBENCH, after="repeats",
        doc=('What happens between repeats. `"repeat"`: every server is stopped and started again on the same data '
         'before each repeat of a test after the first (in turns, all stop before any starts again). `"never"`: '
         'one start per server for all repeats (faster with big buffer pools). `"reload"`: the whole test sequence'
         ' runs once per repeat, each repeat after the first on new servers (new data directory, load, settle). No'
         ' effect with `repeats = 1`.')),
    Key('top', 'order', CHOICE, 'string', default=CampaignSpec.order, choices=("turns", "sequential"),
        retired={"interleaved": "turns"}, workloads=SYSBENCH,
        doc=('`"turns"`: all targets\' servers stay up and take turns of `turn_s` inside each driver run, so both sides'
         ' of a comparison see the same host noise. `"sequential"`: one server at a time, as the original scripts '
         'do; use it when the servers do not fit in memory together. Targets of different engine families '
         '(PostgreSQL and MariaDB/MySQL) cannot share a driver run and take whole runs in turn. The Insert '
         'Benchmark always runs sequentially.')),
    Key('top', 'turn_s', DURATION, 'duration', default=SysbenchParams.turn_s, measured=True, low=0.001, high=60.0,
        workloads=SYSBENCH,
        why="targets take turns of turn_s seconds inside one driver run",
        retired={"slice_s": None, "slice_warmup_s": (
            "remove it: targets take turns inside one driver run, so no turn pays a warm-up "
            "(turn_s is the length of each turn, default {default} s)")},
        doc=('With `order = "turns"` only: the length of each target\'s turn, {low} to {high} s. Tests with slow events get'
         ' longer turns automatically (about 10 mean event times; `scan` at least 1 s).')),
    Key('top', 'prepared', FLAG, 'boolean', default=SysbenchParams.prepared, workloads=SYSBENCH, after="seed",
        doc=('Sysbench runs send their statements as server-side prepared statements; `false` sends the SQL text with '
         'literals each time. The Insert Benchmark always prepares its queries.')),
)
