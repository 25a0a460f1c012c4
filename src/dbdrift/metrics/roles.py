"""Who in the server does the work: foreground (the clients' statements) or which background
job (vacuum, checkpoints, page flushing, purge), per process or per thread (docs/hardware.md).

PostgreSQL runs one process per job and names it in its title ("postgres: checkpointer",
"postgres: autovacuum worker sbtest"); a backend's title names its user and database instead.
MariaDB and MySQL run threads in one process. MariaDB names them ("one_connection",
"page_cleaner", "ib_tpool_worker"); MySQL names them only through the performance schema,
which dbdrift's config turns off, so there the threads alive before the server accepted its
first connection are its background and every later thread serves a connection.
"""
from __future__ import annotations

import re
from dbdrift.model import ServerRoles

FOREGROUND = "foreground"
BACKGROUND = "background"  # a background thread the server does not name (MySQL)

POSTGRES_JOBS = (
    ("autovacuum launcher", "autovacuum"), ("autovacuum worker", "autovacuum"), ("checkpointer", "checkpointer"),
    ("background writer", "bgwriter"), ("walwriter", "walwriter"), ("walsummarizer", "walsummarizer"),
    ("io worker", "io workers"), ("logical replication launcher", "replication"), ("archiver", "archiver"),
    ("stats collector", "stats collector"), ("startup", "startup"), ("walsender", "walsender"),
    ("walreceiver", "walreceiver"),
)
"""PostgreSQL's background processes by title, and the role each is counted under. A parallel
worker runs part of a client's query: it is foreground work."""

INNODB_THREADS = {
    "one_connection": FOREGROUND, "page_cleaner": "page cleaner", "ib_tpool_worker": "innodb workers",
    "checkpoint_bg": "checkpoint", "io_uring_wait": "io", "binlog_bg": "binlog", "manager": "manager",
    "statement_timer": "timer", "signal_handler": "signals",
}
"""MariaDB's thread names (pthread_setname_np) and their roles; InnoDB's purge and
asynchronous I/O completion run in its thread pool (ib_tpool_worker). Other names are their
own role."""

UNNAMED = ("mysqld", "mariadbd")  # a thread carrying only the program's name

_TITLE = re.compile(r"^postgres:\s+(?:[^:]+:\s+)?(.*)$")  # "postgres: [cluster_name: ]job"


def postgres_role(title: str, root: bool = False) -> str | None:
    """The role of a PostgreSQL process from its title; None for a child not yet retitled
    (its title is still the postmaster's command line: ask again later)."""
    if root:
        return "postmaster"
    match = _TITLE.match(title.strip())
    if match is None:
        return None
    job = match.group(1)
    for prefix, role in POSTGRES_JOBS:
        if job.startswith(prefix):
            return role
    return FOREGROUND


def thread_role(name: str, tid: int, startup: frozenset[int]) -> str:
    """The role of a MariaDB or MySQL thread from its name, else from whether it was alive
    before the first connection (`startup`)."""
    if name in UNNAMED or not name:
        return BACKGROUND if tid in startup else FOREGROUND
    return INNODB_THREADS.get(name, name)


def role_of(roles: ServerRoles, pid: int, tid: int, name: str, root: bool) -> str | None:
    """The role of a process (`pid`, PostgreSQL) or thread (`tid`, InnoDB engines) by `name`:
    a process title or a thread name."""
    if roles.threads:
        return thread_role(name, tid, roles.startup)
    return postgres_role(name, root)
