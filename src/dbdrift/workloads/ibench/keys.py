"""The Insert Benchmark's campaign keys: the rows of its `[insert_benchmark]` table, each with its type, default,
range and meaning, read by its plan.py (`top.subtable(..., KEYS)`) and written word for word into
docs/campaign.md (tests/unit/test_campaign_keys.py). The defaults are its record's (IBenchParams,
catalog.py); plan/keys.py holds the Key type and the top-level keys.
"""
from __future__ import annotations

from dbdrift.plan.keys import DAY_S, DURATION, FLAG, INT64_MAX, INTEGER, LIST, Key
from dbdrift.workloads.ibench.catalog import IBenchParams

KEYS: tuple[Key, ...] = (
    Key('insert_benchmark', 'clients', INTEGER, 'integer', default=IBenchParams.clients, high=1024,
        why="each client is a connection and a thread, like threads (at most 1024)",
        doc=("Number of clients (the benchmark's dop), 1..1024. Each client has its own table `pi1` … `piN` unless "
         '`shared_table` is set.')),
    Key('insert_benchmark', 'rows_l_i0', INTEGER, 'integer', default=IBenchParams.rows_l_i0, high=INT64_MAX,
        large=10_000_000_000, why="transactionid is a BIGINT",
        doc='Rows inserted by `l.i0`, the load without secondary indexes. Also sets the `"auto"` settle time.'),
    Key('insert_benchmark', 'rows_l_i1', INTEGER, 'integer', default=IBenchParams.rows_l_i1, high=INT64_MAX,
        large=10_000_000_000, why="transactionid is a BIGINT",
        doc='Rows inserted by `l.i1` (50 rows per INSERT, deleting as many when `deletes` is on).'),
    Key('insert_benchmark', 'rows_l_i2', INTEGER, 'integer', default=None,
        shown="a quarter of `rows_l_i1` (at least 1)", high=INT64_MAX, large=10_000_000_000,
        why="transactionid is a BIGINT",
        doc='Rows inserted by `l.i2` (5 rows per INSERT).'),
    Key('insert_benchmark', 'query_s', DURATION, 'duration', default=IBenchParams.query_s, measured=True, large=DAY_S,
        doc=('Target length of each query step: every client writes `query_s` × rate rows at 100, 500 or 1000 rows/s, '
         'and the step ends when every client has written its rows.')),
    Key('insert_benchmark', 'deletes', FLAG, 'boolean', default=IBenchParams.deletes,
        doc='From `l.i1` on, delete as many of the oldest rows as are inserted, so the table keeps its size.'),
    Key('insert_benchmark', 'shared_table', FLAG, 'boolean', default=IBenchParams.shared_table,
        doc=('All clients write one table, `pi1`. Cannot be combined with `deletes = true` and more than one client '
         "(clients would delete each other's rows).")),
    Key('insert_benchmark', 'io_bound', FLAG, 'boolean', default=IBenchParams.io_bound,
        doc=("The IO-bound setup: each target's cache is sized well below the table, a tenth of what `l.i0` and `l.x` "
         'build (250 bytes per `rows_l_i0` row, at least 16 MB): `shared_buffers` on PostgreSQL, '
         "`innodb_buffer_pool_size` with `innodb_flush_method = O_DIRECT` on MySQL and MariaDB. A target's own "
         '`settings` win. PostgreSQL reads through the OS page cache, so its cache misses reach storage only when '
         "the table also outgrows the host's free memory; InnoDB's misses with O_DIRECT always do. The report's "
         '`rpq`/`rkbpq` show which.')),
    Key('insert_benchmark', 'steps', LIST, 'list of strings, or one string', default=IBenchParams.steps,
        shown="all ten steps",
        doc=('A subset of `l.i0`, `l.x`, `l.i1`, `l.i2`, `qr100`, `qp100`, `qr500`, `qp500`, `qr1000`, `qp1000`; they '
         'always run in that order. An empty list is an error. The settle step follows `l.i2` when it is selected.')),
)
