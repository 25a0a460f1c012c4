"""Default drift: the server settings whose values differ between a target and its reference
although neither's configuration set them (a default that changed, a setting that appeared or
went away), ranked by how often such a setting moves a benchmark.

The posts find these by hand ("a default changed in 9.6, so I added two options to undo it");
here every target's effective settings are stored when its server starts (pg_settings, SHOW
GLOBAL VARIABLES), and its configuration file says what was set, so the drift is a difference of
two dictionaries less what either file names, less the settings that only name this server
(paths, ports, versions, sizes computed from memory). Pure functions; no I/O.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from dbdrift.model import DURABILITY_SETTINGS

# How often a changed default of each kind moves a benchmark, most first; a setting belongs to
# the first category one of whose patterns matches its name (regular expressions, whole name).
CATEGORIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("durability", (r"fsync", r"synchronous_commit", r"wal_sync_method", r"full_page_writes", r"wal_level",
                    r"innodb_flush_log_at_trx_commit", r"sync_binlog", r"innodb_doublewrite.*", r"log_bin",
                    r"binlog_.*", r"innodb_flush_method", r"innodb_use_fdatasync", r"innodb_log_writer_threads", r"wal_.*",
                    r"commit_.*", r"gtid_.*", r"enforce_gtid_consistency")),
    ("I/O method", (r"io_.*", r".*io_concurrency", r"innodb_io_capacity.*", r"innodb_use_native_aio",
                    r"innodb_.*io_threads", r"innodb_linux_aio", r"file_copy_method", r"innodb_flush_neighbors",
                    r"innodb_log_write_ahead_size", r"innodb_log_file_buffering", r"innodb_data_file_buffering")),
    ("memory", (r"shared_buffers", r"work_mem", r"maintenance_work_mem", r"effective_cache_size", r"temp_buffers",
                r"wal_buffers", r"innodb_buffer_pool.*", r"innodb_log_buffer_size", r".*_buffer_size",
                r"innodb_log_file_size", r"innodb_redo_log_capacity", r"table_open_cache.*", r"huge_pages",
                r"innodb_adaptive_hash_index.*", r"thread_cache_size", r"max_heap_table_size", r"tmp_table_size",
                r"temptable_.*", r"innodb_numa_interleave")),
    ("optimizer", (r"enable_.*", r"optimizer_.*", r"jit.*", r".*_cost", r"random_page_cost", r"seq_page_cost",
                   r"default_statistics_target", r"plan_cache_mode", r"from_collapse_limit", r"join_collapse_limit",
                   r"geqo.*", r"eq_range_index_dive_limit", r"range_optimizer_max_mem_size", r"histogram_size",
                   r"use_stat_tables", r"max_parallel_.*", r"parallel_.*", r"min_parallel_.*")),
    ("background work", (r"autovacuum.*", r"vacuum_.*", r"checkpoint_.*", r"bgwriter_.*", r"max_wal_size",
                         r"min_wal_size", r"innodb_purge.*", r"innodb_max_dirty_pages.*", r"innodb_adaptive_flushing.*",
                         r"innodb_page_cleaners", r"innodb_lru_scan_depth", r"innodb_max_purge_lag.*",
                         r"innodb_change_buffer.*", r"innodb_stats_.*")),
    ("concurrency", (r"max_connections", r"back_log", r"innodb_thread_concurrency", r"thread_handling", r"thread_pool.*",
                     r"innodb_spin_wait.*", r"innodb_sync_spin_loops", r"max_worker_processes",
                     r"deadlock_timeout", r"lock_timeout", r"innodb_lock_wait_timeout", r"transaction_isolation",
                     r"default_transaction_isolation", r"innodb_autoinc_lock_mode")),
)
OTHER = "other"

# Settings that only name this server or this run: never drift. Of the gtid settings only the
# transaction sets and positions are (they hold this server's uuid and its history); gtid_mode and
# the others are defaults like any other, and MySQL 9.6 changed one (the posts' z13a undoes it).
IDENTITY = re.compile(
    r"(.*_file|.*_directory|.*_directories|.*dir|data_dir|config_file|hba_file|ident_file|port|socket|pid_file|"
    r"hostname|server_uuid|server_id|server_version.*|version.*|.*_version|build_id|shared_memory_size.*|"
    r"num_os_semaphores|"
    r"log_error|general_log_file|slow_query_log_file|tmpdir|datadir|basedir|plugin_dir|lc_messages_dir|"
    r"character_sets_dir|innodb_data_home_dir|innodb_log_group_home_dir|secure_file_priv|report_.*|"
    r"pseudo_.*|timestamp|rand_seed.*|last_insert_id|insert_id|warning_count|error_count|identity|"
    r"external_user|proxy_user|gtid_executed|gtid_purged|gtid_owned|gtid_next|gtid_next_list|gtid_seq_no|"
    r"gtid_binlog_pos|gtid_binlog_state|gtid_current_pos|gtid_slave_pos|.*_uuid|bind_address|mysqlx_.*socket|mysqlx_port|admin_port|"
    r"innodb_buffer_pool_filename|log_bin_basename|log_bin_index|relay_log.*|unix_socket_.*|listen_addresses|"
    r"krb_server_keyfile|ssl_.*_file|cluster_name)")


@dataclass(frozen=True)
class Drift:
    """One setting that differs; None for a side that does not have it."""

    name: str
    reference: str | None
    target: str | None
    category: str

    @property
    def kind(self) -> str:
        if self.reference is None:
            return "appeared"
        if self.target is None:
            return "went away"
        return "changed"


@dataclass(frozen=True)
class DriftTable:
    """A target's drift from its reference, most likely to matter first."""

    target: str
    reference: str
    rows: tuple[Drift, ...]

    def ranked(self) -> tuple[Drift, ...]:
        """The rows of a category that moves benchmarks (all but OTHER)."""
        return tuple(d for d in self.rows if d.category != OTHER)

    def others(self) -> tuple[Drift, ...]:
        return tuple(d for d in self.rows if d.category == OTHER)


def category_of(name: str) -> str:
    for category, patterns in CATEGORIES:
        if any(re.fullmatch(p, name) for p in patterns):
            return category
    return OTHER


RANK = {c: i for i, (c, _) in enumerate(CATEGORIES)} | {OTHER: len(CATEGORIES)}


def set_names(config_text: str) -> set[str]:
    """The settings a server's configuration file sets (PostgreSQL's `name = value`, my.cnf's
    `name = value` or `name=value`, `loose_` or `loose-` prefixes and dashes as underscores)."""
    out = set()
    for line in config_text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        name = re.split(r"[=\s]", line, maxsplit=1)[0].replace("-", "_").lower()
        out.add(name.removeprefix("loose_"))
    return out


def _same(a: str | None, b: str | None) -> bool:
    return a == b or (a is not None and b is not None and a.strip().lower() == b.strip().lower())


def _flags(value: str) -> dict[str, str] | None:
    """A switch list such as optimizer_switch's `index_merge=on,mrr=on,...` as a dict; None for
    any other value."""
    parts = [p.split("=", 1) for p in value.split(",")]
    if len(parts) < 2 or any(len(p) != 2 for p in parts):
        return None
    return {k.strip(): v.strip() for k, v in parts}


def _only_differing(a: str, b: str) -> tuple[str, str]:
    """Two switch lists cut to the flags whose values differ (a flag one lacks shows as absent)."""
    fa, fb = _flags(a), _flags(b)
    if fa is None or fb is None:
        return a, b
    keys = [k for k in dict.fromkeys([*fa, *fb]) if fa.get(k) != fb.get(k)]
    return (",".join(f"{k}={fa.get(k, '(absent)')}" for k in keys),
            ",".join(f"{k}={fb.get(k, '(absent)')}" for k in keys))


def drift(reference: dict[str, str], target: dict[str, str], configured: set[str]) -> list[Drift]:
    """The settings that differ and that neither configuration set, most likely to matter
    first (CATEGORIES' order, then by name); identity settings and values that hold a path of the
    run are left out. A switch list (optimizer_switch) keeps only the flags that differ."""
    out = []
    for name in sorted(reference.keys() | target.keys()):
        key = name.lower()
        if key in configured or IDENTITY.fullmatch(key):
            continue
        a, b = reference.get(name), target.get(name)
        if _same(a, b) or any(v is not None and "/dbdrift-" in v for v in (a, b)):
            continue
        if a is not None and b is not None:
            a, b = _only_differing(a, b)
        out.append(Drift(name, a, b, category_of(key)))
    return sorted(out, key=lambda d: (RANK[d.category], d.name))


def flush_differences(reference: dict[str, str], target: dict[str, str]) -> list[Drift]:
    """The model.DURABILITY_SETTINGS whose values differ, configured or not."""
    return [d for d in drift(reference, target, set()) if d.name.lower() in DURABILITY_SETTINGS]


def flush_note(differences: list[tuple[str, str, Drift]], fsync: dict[str, float] | None,
               slow_us: float) -> str:
    """What a comparison of durability settings measured, given how long this host's device
    takes to flush (`fsync`: its p50_us): the device (slow: a warning) or the server. `differences`
    are (target, reference, setting) triples; empty gives ""."""
    if not differences:
        return ""
    shown = "; ".join(f"{t} vs {r}: {d.name} {d.target or '(absent)'} vs {d.reference or '(absent)'}"
                      for t, r, d in differences[:4]) + (" ..." if len(differences) > 4 else "")
    if not fsync:
        return f"durability settings differ ({shown}); this device's flush time was not measured"
    p50 = fsync["p50_us"]
    if p50 >= slow_us:
        return (f"host warning: durability settings differ ({shown}) on a device that takes {p50:,.0f} µs per flush "
                f"(8 KB write + fdatasync, median; `dbdrift system check`): a commit that waits for one is paced by "
                f"the device (at most {1e6 / p50:,.0f}/s per client), so these cells compare the device as much as "
                f"the server")
    return (f"durability settings differ ({shown}); this device flushes in {p50:,.0f} µs (median), less than the "
            f"server's work per commit: the difference is the server's")
