"""Store schema as an ordered list of migrations; `user_version` holds the applied count.

Append a migration to change the schema; never edit one that has shipped.
"""
from __future__ import annotations


def _real(column: str) -> str:
    """A REAL column as a JSON number with all 17 digits (json_object would print 15 and change it)."""
    return f"CASE WHEN {column} IS NULL THEN NULL ELSE json(printf('%!.17g', {column})) END"


MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE campaigns (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        spec_json TEXT NOT NULL,
        host_json TEXT NOT NULL,
        dbdrift_version TEXT NOT NULL
    );
    CREATE TABLE targets (
        id INTEGER PRIMARY KEY,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        name TEXT NOT NULL,
        engine TEXT NOT NULL,
        position INTEGER NOT NULL,
        is_base INTEGER NOT NULL,
        spec_json TEXT NOT NULL,
        install_json TEXT,
        server_json TEXT,
        UNIQUE (campaign_id, name)
    );
    CREATE TABLE steps (
        id INTEGER PRIMARY KEY,
        target_id INTEGER NOT NULL REFERENCES targets(id),
        kind TEXT NOT NULL,
        label TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at TEXT NOT NULL,
        elapsed_s REAL NOT NULL,
        detail_json TEXT NOT NULL,
        error TEXT
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        target_id INTEGER NOT NULL REFERENCES targets(id),
        test TEXT NOT NULL,
        test_group TEXT NOT NULL,
        threads INTEGER NOT NULL,
        repeat INTEGER NOT NULL,
        status TEXT NOT NULL,
        started_at TEXT NOT NULL,
        warmup_s REAL NOT NULL,
        duration_s REAL NOT NULL,
        measured_s REAL,
        events INTEGER,
        statements INTEGER,
        rows INTEGER,
        errors_json TEXT,
        metric TEXT NOT NULL,
        value REAL,
        qps REAL,
        tps REAL,
        latency_json TEXT,
        client_cpu_user_s REAL,
        client_cpu_sys_s REAL,
        warnings_json TEXT NOT NULL,
        error TEXT,
        server_log_tail TEXT,
        driver_spec_json TEXT NOT NULL
    );
    CREATE INDEX runs_by_target ON runs(target_id, test, threads, repeat);
    CREATE TABLE intervals (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        idx INTEGER NOT NULL,
        start_s REAL NOT NULL,
        end_s REAL NOT NULL,
        events INTEGER NOT NULL,
        statements INTEGER NOT NULL,
        rows INTEGER NOT NULL,
        errors_json TEXT NOT NULL,
        latency_json TEXT NOT NULL,
        PRIMARY KEY (run_id, idx)
    );
    """,
    # 2: host CPU steal per interval (noise filtering); `superseded` keeps runs out of reports
    # (an interleaved test rerun whole).
    """
    ALTER TABLE intervals ADD COLUMN steal_pct REAL;
    ALTER TABLE runs ADD COLUMN superseded INTEGER NOT NULL DEFAULT 0;
    """,
    # 3: hardware per run (samplers, docs/hardware.md) and instruction counts per event (callgrind).
    """
    ALTER TABLE runs ADD COLUMN hardware_json TEXT;
    ALTER TABLE runs ADD COLUMN host_json TEXT;
    CREATE TABLE samples (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        idx INTEGER NOT NULL,
        start_s REAL NOT NULL,
        elapsed_s REAL NOT NULL,
        cpu_user_pct REAL NOT NULL,
        cpu_sys_pct REAL NOT NULL,
        cpu_iowait_pct REAL NOT NULL,
        cpu_steal_pct REAL NOT NULL,
        cs INTEGER NOT NULL,
        reads INTEGER,
        read_kb REAL,
        writes INTEGER,
        write_kb REAL,
        server_cpu_s REAL NOT NULL,
        client_cpu_s REAL NOT NULL,
        server_rss_bytes INTEGER NOT NULL,
        PRIMARY KEY (run_id, idx)
    );
    CREATE TABLE instructions (
        id INTEGER PRIMARY KEY,
        target_id INTEGER NOT NULL REFERENCES targets(id),
        test TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at TEXT NOT NULL,
        elapsed_s REAL NOT NULL,
        n1 INTEGER NOT NULL,
        n2 INTEGER NOT NULL,
        ir_json TEXT NOT NULL,
        ir_per_event REAL,
        spread_pct REAL,
        self_json TEXT NOT NULL,
        inclusive_json TEXT NOT NULL,
        error TEXT
    );
    """,
    # 4: folded stacks of the server's backends during a run (perf record, for flamegraphs).
    """
    ALTER TABLE runs ADD COLUMN folded_json TEXT;
    """,
    # 5: Insert Benchmark steps: one row per step and target, client 1's per-second report
    # (the Insert Benchmark's graphs use client 1) and the response-time histograms of all clients.
    """
    CREATE TABLE ibench_steps (
        id INTEGER PRIMARY KEY,
        target_id INTEGER NOT NULL REFERENCES targets(id),
        step TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at TEXT NOT NULL,
        clients INTEGER NOT NULL,
        elapsed_s REAL NOT NULL,
        inserted INTEGER NOT NULL,
        deleted INTEGER NOT NULL,
        queries INTEGER NOT NULL,
        ips REAL NOT NULL,
        dps REAL NOT NULL,
        qps REAL NOT NULL,
        target_ips REAL,
        max_insert_us INTEGER,
        max_delete_us INTEGER,
        max_query_us INTEGER,
        histograms_json TEXT NOT NULL,
        per_second_json TEXT NOT NULL,
        hardware_json TEXT,
        table_rows INTEGER,
        driver_spec_json TEXT,
        error TEXT,
        superseded INTEGER NOT NULL DEFAULT 0
    );
    """,
    # 6: in interleaved runs the targets take turns inside one driver run; an interval is then
    # one turn, and `round` pairs it with the other targets' turns of the same round.
    """
    ALTER TABLE intervals ADD COLUMN round INTEGER;
    """,
    # 7: one name for turns: a campaign's order "interleaved" is "turns" and slice_s is turn_s;
    # a run's driver spec holds "turns" (turn_s, and measured_turn_s as the driver settled it)
    # where it held "alternate" (slot_s, and turn_s as settled).
    """
    UPDATE campaigns SET spec_json = json_set(spec_json, '$.order', 'turns')
        WHERE json_extract(spec_json, '$.order') = 'interleaved';
    UPDATE campaigns SET spec_json = json_remove(json_set(spec_json, '$.turn_s', json_extract(spec_json, '$.slice_s')),
                                                 '$.slice_s')
        WHERE json_type(spec_json, '$.slice_s') IS NOT NULL;
    UPDATE runs SET driver_spec_json = json_set(driver_spec_json, '$.alternate.measured_turn_s',
                                                json_extract(driver_spec_json, '$.alternate.turn_s'))
        WHERE json_type(driver_spec_json, '$.alternate.turn_s') IS NOT NULL;
    UPDATE runs SET driver_spec_json = json_remove(json_set(driver_spec_json, '$.alternate.turn_s',
                                                            json_extract(driver_spec_json, '$.alternate.slot_s')),
                                                   '$.alternate.slot_s')
        WHERE json_type(driver_spec_json, '$.alternate.slot_s') IS NOT NULL;
    UPDATE runs SET driver_spec_json = json_remove(json_set(driver_spec_json, '$.turns',
                                                            json(json_extract(driver_spec_json, '$.alternate'))),
                                                   '$.alternate')
        WHERE json_type(driver_spec_json, '$.alternate') IS NOT NULL;
    """,
    # 8: the query plan each statement of a test got on a target, after its first measured run
    """
    CREATE TABLE plans (
        id INTEGER PRIMARY KEY,
        target_id INTEGER NOT NULL REFERENCES targets(id),
        test TEXT NOT NULL,
        statement INTEGER NOT NULL,
        sql TEXT NOT NULL,
        plan_json TEXT,
        shape TEXT,
        error TEXT,
        UNIQUE (target_id, test, statement)
    );
    """,
    # 9: callgrind's simulated cache and branch events per event (count_instructions with
    # simulate_cache): Dr, Dw, I1mr, D1mr, D1mw, ILmr, DLmr, DLmw, Bc, Bcm, Bi, Bim
    """
    ALTER TABLE instructions ADD COLUMN simulated_json TEXT;
    """,
    # 10: Insert Benchmark database sizes after each step: the benchmark database (etl.sh's
    # dbgb1) and the whole data directory (dbgb2), in bytes
    """
    ALTER TABLE ibench_steps ADD COLUMN db_bytes INTEGER;
    ALTER TABLE ibench_steps ADD COLUMN datadir_bytes INTEGER;
    """,
    # 11: Insert Benchmark repeats: each repeat runs a target's steps again on a fresh server
    """
    ALTER TABLE ibench_steps ADD COLUMN repeat INTEGER NOT NULL DEFAULT 0;
    """,
    # 12: TPROC-C runs, one per target and repeat
    """
    CREATE TABLE tpcc_runs (
        id INTEGER PRIMARY KEY,
        target_id INTEGER NOT NULL REFERENCES targets(id),
        repeat INTEGER NOT NULL,
        status TEXT NOT NULL,
        started_at TEXT NOT NULL,
        warehouses INTEGER NOT NULL,
        clients INTEGER NOT NULL,
        procedures INTEGER NOT NULL,
        elapsed_s REAL NOT NULL,
        new_orders INTEGER NOT NULL,
        transactions INTEGER NOT NULL,
        nopm REAL NOT NULL,
        tpm REAL NOT NULL,
        by_type_json TEXT NOT NULL,
        intervals_json TEXT NOT NULL,
        hardware_json TEXT,
        consistency_json TEXT NOT NULL,
        load_s REAL,
        error TEXT,
        superseded INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX tpcc_runs_by_target ON tpcc_runs(target_id, repeat);
    """,
    # 13: units of a campaign run on a cluster (`run --cluster`): which host measured what (its
    # tests, or its repeats of an Insert Benchmark or TPROC-C campaign; none: all). Each result a
    # unit streamed back names its unit; results measured locally have none.
    """
    CREATE TABLE units (
        id INTEGER PRIMARY KEY,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        number INTEGER NOT NULL,
        host_kind TEXT,
        tests_json TEXT NOT NULL,
        repeats_json TEXT NOT NULL DEFAULT '[]',
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        worker TEXT,
        hostname TEXT,
        host_json TEXT,
        error TEXT,
        started_at TEXT,
        ended_at TEXT
    );
    CREATE INDEX units_by_campaign ON units(campaign_id, number);
    ALTER TABLE runs ADD COLUMN unit_id INTEGER REFERENCES units(id);
    ALTER TABLE instructions ADD COLUMN unit_id INTEGER REFERENCES units(id);
    ALTER TABLE ibench_steps ADD COLUMN unit_id INTEGER REFERENCES units(id);
    ALTER TABLE tpcc_runs ADD COLUMN unit_id INTEGER REFERENCES units(id);
    ALTER TABLE steps ADD COLUMN unit_id INTEGER REFERENCES units(id);
    """,
    # 14: the place of each turn in its round, and of each run in its repeat's order of targets
    # (whole runs taken in turn; Insert Benchmark steps; TPROC-C runs)
    # (plan/rounds.py), for the residual order effect (analysis/position.py); NULL before
    """
    ALTER TABLE intervals ADD COLUMN position INTEGER;
    ALTER TABLE runs ADD COLUMN position INTEGER;
    ALTER TABLE ibench_steps ADD COLUMN position INTEGER;
    ALTER TABLE tpcc_runs ADD COLUMN position INTEGER;
    """,
    # 15: a repeat of a target of a workload that keeps its result whole, as JSON (vector search
    # and the workloads after it): a new workload adds a slice, not a table
    """
    CREATE TABLE workload_runs (
        id INTEGER PRIMARY KEY,
        target_id INTEGER NOT NULL REFERENCES targets(id),
        workload TEXT NOT NULL,
        repeat INTEGER NOT NULL,
        status TEXT NOT NULL,
        started_at TEXT NOT NULL,
        elapsed_s REAL NOT NULL,
        record_json TEXT NOT NULL,
        error TEXT,
        position INTEGER,
        unit_id INTEGER REFERENCES units(id),
        superseded INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX workload_runs_by_target ON workload_runs(target_id, repeat);
    """,
    # 16: the engine's own counters once a second beside each Insert Benchmark step and TPROC-C run
    # (runner/events.py), NULL before
    """
    ALTER TABLE ibench_steps ADD COLUMN events_json TEXT;
    ALTER TABLE tpcc_runs ADD COLUMN events_json TEXT;
    """,
    # 17: the server's folded stacks over each Insert Benchmark step and TPROC-C run (`flamegraphs`), NULL before
    """
    ALTER TABLE ibench_steps ADD COLUMN folded_json TEXT;
    ALTER TABLE tpcc_runs ADD COLUMN folded_json TEXT;
    """,
    # 18: the worker that measured each result a unit streamed ("name address", as units.worker):
    # a unit re-queued after its host was lost holds results of two hosts, and its units row names
    # only the last. NULL for local results, and for those streamed before.
    """
    ALTER TABLE runs ADD COLUMN worker TEXT;
    ALTER TABLE instructions ADD COLUMN worker TEXT;
    ALTER TABLE ibench_steps ADD COLUMN worker TEXT;
    ALTER TABLE tpcc_runs ADD COLUMN worker TEXT;
    ALTER TABLE workload_runs ADD COLUMN worker TEXT;
    ALTER TABLE steps ADD COLUMN worker TEXT;
    """,
    # 19: indexes for reading one campaign of a store of thousands (publish, report, history):
    # without them each campaign's targets, counts and Insert Benchmark steps scan the whole table
    """
    CREATE INDEX targets_by_campaign ON targets(campaign_id);
    CREATE INDEX instructions_by_target ON instructions(target_id, test);
    CREATE INDEX ibench_steps_by_target ON ibench_steps(target_id);
    """,
    # 20: foreign load per interval and per 1 s sample (metrics/foreign.py): the share of the host's
    # CPU time that no process of dbdrift's used, and the device's KB that none of them moved
    # (NULL: not known, and before)
    """
    ALTER TABLE intervals ADD COLUMN foreign_cpu_pct REAL;
    ALTER TABLE intervals ADD COLUMN foreign_kb REAL;
    ALTER TABLE samples ADD COLUMN foreign_cpu_pct REAL;
    ALTER TABLE samples ADD COLUMN foreign_kb REAL;
    """,
    # 21: where each instruction count's time went, seconds per phase (workloads/sysbench/instructions.py
    # PHASES: a fresh copy of the data and its prewarm, the counted runs, reading the profiles),
    # NULL before
    """
    ALTER TABLE instructions ADD COLUMN phases_json TEXT;
    """,
    # 22: Insert Benchmark steps and TPROC-C runs are workload_runs rows, as vector search's and
    # HTAP's are (workload "insert-benchmark", one row per step; "tpcc", one per repeat): the
    # result's fields that are no column of workload_runs move into record_json, reals with all
    # 17 digits (SQLite's JSON would print 15), ids in their order, superseded rows kept
    f"""
    INSERT INTO workload_runs(target_id, workload, repeat, status, started_at, elapsed_s, record_json, error,
                              position, unit_id, worker, superseded)
        SELECT target_id, 'insert-benchmark', repeat, status, started_at, elapsed_s, json_object(
            'step', step, 'clients', clients, 'inserted', inserted, 'deleted', deleted, 'queries', queries,
            'ips', {_real("ips")}, 'dps', {_real("dps")}, 'qps', {_real("qps")}, 'target_ips', {_real("target_ips")},
            'max_insert_us', max_insert_us, 'max_delete_us', max_delete_us, 'max_query_us', max_query_us,
            'histograms', json(histograms_json), 'per_second', json(per_second_json), 'hardware', json(hardware_json),
            'table_rows', table_rows, 'db_bytes', db_bytes, 'datadir_bytes', datadir_bytes,
            'events', json(events_json), 'folded', json(folded_json), 'driver_spec', json(driver_spec_json)),
            error, position, unit_id, worker, superseded
        FROM ibench_steps ORDER BY id;
    INSERT INTO workload_runs(target_id, workload, repeat, status, started_at, elapsed_s, record_json, error,
                              position, unit_id, worker, superseded)
        SELECT target_id, 'tpcc', repeat, status, started_at, elapsed_s, json_object(
            'warehouses', warehouses, 'clients', clients, 'procedures',
            json(CASE WHEN procedures THEN 'true' ELSE 'false' END),
            'new_orders', new_orders, 'transactions', transactions, 'nopm', {_real("nopm")}, 'tpm', {_real("tpm")},
            'by_type', json(by_type_json), 'intervals', json(intervals_json), 'hardware', json(hardware_json),
            'consistency', json(consistency_json), 'load_s', {_real("load_s")}, 'events', json(events_json),
            'folded', json(folded_json)),
            error, position, unit_id, worker, superseded
        FROM tpcc_runs ORDER BY id;
    DROP TABLE ibench_steps;
    DROP TABLE tpcc_runs;
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)
