"""TPROC-C's campaign keys: the rows of its `[tpcc]` table, each with its type, default,
range and meaning, read by its plan.py (`top.subtable(..., KEYS)`) and written word for word into
docs/campaign.md (tests/unit/test_campaign_keys.py). The defaults are its record's (TpccParams,
catalog.py); plan/keys.py holds the Key type and the top-level keys.
"""
from __future__ import annotations

from dbdrift.plan.keys import DAY_S, DURATION, FLAG, HOUR_S, INTEGER, Key
from dbdrift.workloads.tpcc.catalog import TpccParams

KEYS: tuple[Key, ...] = (
    Key('tpcc', 'warehouses', INTEGER, 'integer', default=TpccParams.warehouses, high=1_000_000, large=5_000,
        why="each warehouse loads about 500,000 rows (~100 MB)",
        doc=('W, the number of warehouses loaded (about 500,000 rows, ~100 MB each). More than 5,000 needs '
         '`allow_large`.')),
    Key('tpcc', 'clients', INTEGER, 'integer', default=TpccParams.clients, high=1024,
        why="each client is a connection and a thread, like threads (at most 1024)",
        doc='Virtual users, each a connection and a thread with the home warehouse k mod W + 1, 1..1024.'),
    Key('tpcc', 'load_clients', INTEGER, 'integer', default=None, shown="one per host CPU, at most W", high=1024,
        why="each loader is a connection and a thread",
        doc='Loader connections; the warehouses are split between them.'),
    Key('tpcc', 'rampup_s', DURATION, 'duration', default=TpccParams.rampup_s, large=2 * HOUR_S,
        doc='Transactions run but are not counted; 0 is allowed.'),
    Key('tpcc', 'duration_s', DURATION, 'duration', default=TpccParams.duration_s, measured=True, large=DAY_S,
        doc='The measured window: NOPM, TPM, response times and the host samples are of this window.'),
    Key('tpcc', 'procedures', FLAG, 'boolean, or a list of both', default=TpccParams.procedures,
        doc=('Run the five transactions as stored procedures created at load time instead of statements sent by the '
         'driver (see [protocol.md](protocol.md)). `[false, true]` runs every target both ways, as the variants '
         '`sp0` and `sp1` of an axis `sp` (the last axis; the first value is the base): the report then has the '
         "posts' table of NOPM and cpuPer per DBMS without and with stored procedures.")),
    Key('tpcc', 'consistency_checks', FLAG, 'boolean', default=TpccParams.consistency_checks,
        doc=('After each run, check the consistency conditions of TPC-C clause 3.3.2 on the database; a violation '
             'fails the run. `false` skips them (they scan every district and order line, minutes at large '
             '`warehouses`), and the report says they were not checked.')),
)
