"""A flamegraph read as the posts read a TPROC-C one: the share of all samples in the client, the
server's foreground (the connections' work) and its background (vacuum, checkpoints, flushing,
purge), and the foreground's share by statement kind (update, insert, delete, select, commit,
parse, network), each decided by the frames of a stack (docs/hardware.md, "Flamegraph areas").

Pure functions of folded stacks {"comm;outermost;...;innermost": samples}; the client's stacks
are those whose comm is CLIENT (metrics/flame.py names the driver's so). The frame patterns of
PostgreSQL and of MySQL/MariaDB (InnoDB) are one table: their function names do not overlap, so
a stack of either engine finds its own.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dbdrift.model import FLAME_CLIENT as CLIENT

AREAS = ("client", "db-fg", "db-bg", "other")
KINDS = ("update", "insert", "delete", "select", "commit", "parse", "network", "fg-other")
"""The foreground's statement kinds; fg-other is the rest of a connection's work (waiting for the
next command, starting a transaction, bookkeeping)."""


def _words(*names: str) -> re.Pattern[str]:
    """A frame matches when one of `names` is its function: the whole name, or a C++ method
    (`Class::name`) or a demangled name with its arguments (`name(THD*, ...)`)."""
    return re.compile(r"^(?:.*::)?(?:" + "|".join(names) + r")(?:\(.*)?$")


# A stack's area is decided in this order: a PostgreSQL auxiliary process's main function (they are
# forked from the postmaster's ServerLoop, as backends are), then a connection's frames, then the
# server's other frames (the postmaster itself; InnoDB's threads, whose functions a connection's
# thread may call too, as log_write_up_to at commit).
AUXILIARY = _words(
    "AutoVacWorkerMain", "AutoVacLauncherMain", "AutoVacuumWorkerMain", "do_autovacuum", "CheckpointerMain",
    "BackgroundWriterMain", "WalWriterMain", "PgArchiverMain", "WalSummarizerMain", "IoWorkerMain", "SysLoggerMain",
    "PgstatCollectorMain", "StartupProcessMain", "ApplyLauncherMain")
BACKGROUND = _words(
    "ServerLoop", "PostmasterMain",
    r"buf_flush_page_cleaner\w*", r"pc_flush\w*", r"srv_purge\w*", r"srv_worker_thread", r"srv_master\w*",
    r"purge_\w*callback", r"trx_purge\w*", "log_writer", "log_flusher", r"log_\w*notifier", "log_checkpointer",
    r"log_write_up_to", "io_handler_thread", "fil_aio_wait", r"buf_dump_thread", r"dict_stats_\w*thread",
    r"dict_stats_func", r"fts_optimize\w*", r"lock_wait_timeout\w*", r"srv_\w*monitor\w*", "worker_main",
    r"signal_hand", r"timer_handler", r"buf_resize_thread", r"ib_wqueue\w*", r"binlog_background_thread")
FOREGROUND = _words(
    "PostgresMain", "BackendMain", "exec_simple_query", "exec_execute_message", "exec_bind_message",
    "do_command", "dispatch_command", "handle_connection", "do_handle_one_connection", "tp_callback",
    "mysql_execute_command")
# The statement kinds in the order they are tried: the outermost DML frame of a stack names its
# kind (an UPDATE inserts index entries), then commit, parse and network, then the executor's frames
# (what is left of a statement is a read).
DML = (("insert", _words("ExecInsert", "mysql_insert", r"Sql_cmd_insert\w*::execute\w*", r"Sql_cmd_insert\w*")),
       ("update", _words("ExecUpdate", "mysql_update", "mysql_multi_update", r"Sql_cmd_update::\w+",
                         r"Sql_cmd_update")),
       ("delete", _words("ExecDelete", "mysql_delete", r"Sql_cmd_delete::\w+", r"Sql_cmd_delete")))
OTHER_KINDS = (
    ("commit", _words("CommitTransactionCommand", "CommitTransaction", "finish_xact_command",
                      "RecordTransactionCommit", "_SPI_commit", "trans_commit", "trans_commit_stmt",
                      "trans_commit_implicit", "ha_commit_trans", "ha_commit_low", "innobase_commit",
                      "ordered_commit", "trx_commit", r"trx_commit_\w+", "MYSQL_BIN_LOG::commit")),
    ("parse", _words("pg_parse_query", "raw_parser", "base_yyparse", r"parse_analyze\w*",
                     r"pg_analyze_and_rewrite\w*", "pg_rewrite_query", "pg_plan_queries", "pg_plan_query",
                     "planner", "standard_planner", "exec_parse_message", "BuildCachedPlan",
                     "RevalidateCachedQuery", "parse_sql", "MYSQLparse", "my_sql_parser_parse", "THD::sql_parser",
                     "mysqld_stmt_prepare", "Prepared_statement::prepare")),
    ("network", _words("ReadCommand", "SocketBackend", "pq_getbyte", "pq_getmessage", "pq_recvbuf",
                       "secure_read", "secure_write", "pq_flush", "internal_flush", "internal_flush_buffer",
                       "socket_flush", "socket_putmessage", "my_net_read", "my_net_read_packet", "net_read_packet",
                       "my_net_write", "net_flush", "net_write_command", "net_write_buff", r"vio_\w+",
                       r"Protocol_classic::\w+", r"Protocol::\w+", "net_send_ok", "net_send_eof")),
    ("select", _words("ExecutorRun", "standard_ExecutorRun", "ExecutePlan", "PortalRunSelect", "ExecScan",
                      "mysql_select", "handle_select", r"JOIN::\w+", r"Sql_cmd_dml::execute\w*",
                      r"Query_expression::execute", "mysqld_stmt_execute", "row_search_mvcc")),
)


@dataclass(frozen=True)
class AreaShares:
    """A flamegraph's samples by area and, in the foreground, by statement kind, each as a share
    (0..1) of all its samples."""

    samples: int
    areas: dict[str, float]  # AREAS
    kinds: dict[str, float]  # KINDS, summing to areas["db-fg"]

    def share(self, name: str) -> float:
        return self.areas.get(name, self.kinds.get(name, 0.0))


def area_of(stack: list[str]) -> str:
    """AREAS' name of one stack (its comm first, then its frames outermost first)."""
    if not stack:
        return "other"
    if stack[0] == CLIENT:
        return "client"
    frames = stack[1:]
    for area, pattern in (("db-bg", AUXILIARY), ("db-fg", FOREGROUND), ("db-bg", BACKGROUND)):
        if any(pattern.match(f) for f in frames):
            return area
    return "other"


def kind_of(frames: list[str]) -> str:
    """KINDS' name of a foreground stack's frames, outermost first."""
    for frame in frames:  # the outermost DML frame
        for name, pattern in DML:
            if pattern.match(frame):
                return name
    for name, pattern in OTHER_KINDS:
        if any(pattern.match(f) for f in frames):
            return name
    return "fg-other"


def shares(folded: Mapping[str, int]) -> AreaShares | None:
    """The areas and kinds of one flamegraph's folded stacks; None without samples."""
    areas = dict.fromkeys(AREAS, 0)
    kinds = dict.fromkeys(KINDS, 0)
    for stack, count in folded.items():
        parts = stack.split(";")
        area = area_of(parts)
        areas[area] += count
        if area == "db-fg":
            kinds[kind_of(parts[1:])] += count
    total = sum(areas.values())
    if total <= 0:
        return None
    return AreaShares(total, {k: v / total for k, v in areas.items()}, {k: v / total for k, v in kinds.items()})


def merged(parts: Iterable[Mapping[str, int] | None]) -> dict[str, int]:
    """Several recordings' folded stacks as one (a target's repeats)."""
    out: dict[str, int] = {}
    for part in parts:
        for stack, count in (part or {}).items():
            out[stack] = out.get(stack, 0) + count
    return out


ROWS = (*AREAS, *KINDS)


def table(columns: list[tuple[str, AreaShares]]) -> list[list[str]]:
    """Rows of ROWS (the statement kinds indented under db-fg), one column of % per flamegraph,
    the base's first, then the samples each holds."""
    rows = [[name if name in AREAS else f"  {name}", *(f"{100 * s.share(name):.1f}" for _, s in columns)]
            for name in ROWS]
    return rows + [["samples", *(str(s.samples) for _, s in columns)]]


SHALLOW = 0.5  # a graph with this share or more in `other` is read as one of shallow stacks


def shallow(columns: list[tuple[str, AreaShares]]) -> list[str]:
    """The flamegraphs whose stacks mostly reach no known frame: a build without frame pointers
    stops perf's stack walk at the function sampled, so their areas and kinds cannot be told."""
    return [name for name, s in columns if s.areas["other"] >= SHALLOW]
