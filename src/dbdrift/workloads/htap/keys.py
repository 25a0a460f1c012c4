"""CH-benCHmark's campaign keys: the rows of its `[htap]` table, each with its type, default,
range and meaning, read by its plan.py (`top.subtable(..., KEYS)`) and written word for word into
docs/campaign.md (tests/unit/test_campaign_keys.py). The defaults are its record's (HtapParams,
catalog.py); plan/keys.py holds the Key type and the top-level keys.
"""
from __future__ import annotations

from dataclasses import replace

from dbdrift.plan.keys import DAY_S, DURATION, FLAG, HOUR_S, INTEGER, LIST, Key
from dbdrift.workloads.htap.catalog import HtapParams
from dbdrift.workloads.tpcc import keys as tpcc


def _tpcc_key(name: str, default: object = None, doc: str = "") -> Key:
    """TPROC-C's key of that name in the `[htap]` table, with this table's default (and meaning,
    if given): the transactions and their load are TPROC-C's, so its limits and their reasons are too."""
    key = next(k for k in tpcc.KEYS if k.name == name)
    return replace(key, table='htap', default=default, doc=doc or key.doc)


KEYS: tuple[Key, ...] = (
    _tpcc_key('warehouses', default=HtapParams.warehouses,
              doc='W, TPROC-C\'s warehouses (about 500,000 rows, ~100 MB each); the analytical queries read them all.'),
    Key('htap', 'clients', INTEGER, 'integer', default=HtapParams.clients, low=1, high=1024,
        why="each client is a connection and a thread",
        doc='Transactional virtual users (TPROC-C\'s), each with the home warehouse k mod W + 1.'),
    Key('htap', 'streams', INTEGER, 'integer', default=HtapParams.streams, low=1, high=64,
        why="each stream is a connection and a thread running one query at a time",
        doc=('Analytical streams: each runs the queries one after the other, stream k starting k/streams of the way '
         'down the list, over and over.')),
    Key('htap', 'queries', LIST, 'list of strings, or one string', default=HtapParams.queries, shown="all 22",
        doc=("CH-benCHmark's queries the streams run, `\"Q1\"` to `\"Q22\"`; each repeat starts the list at "
         'another place, so a window too short for all of them still reaches each over the repeats.')),
    _tpcc_key('load_clients'),
    Key('htap', 'rampup_s', DURATION, 'duration', default=HtapParams.rampup_s, large=2 * HOUR_S,
        doc='Before each of the three windows: the window\'s clients run but are not counted; 0 is allowed.'),
    Key('htap', 'duration_s', DURATION, 'duration', default=HtapParams.duration_s, measured=True, large=DAY_S,
        doc=('The length of each measured window: analytics alone, transactions alone, then both together. NOPM, '
         'queries per hour, each query\'s latency and the host samples are of these windows.')),
    Key('htap', 'consistency_checks', FLAG, 'boolean', default=HtapParams.consistency_checks,
        doc=('After the last window, check the consistency conditions of TPC-C clause 3.3.2; a violation fails '
         'the repeat.')),
)
