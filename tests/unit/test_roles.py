"""Which process or thread of a server does background work (metrics/roles.py), and the disk
counters read for it (metrics/sampler.read_diskstats)."""
from dbdrift.metrics.roles import BACKGROUND, FOREGROUND, postgres_role, role_of, thread_role
from dbdrift.metrics.sampler import delta, read_diskstats, Counters
from dbdrift.model import ServerRoles


def test_postgres_processes_are_named_by_their_title():
    assert postgres_role("postgres: checkpointer ") == "checkpointer"
    assert postgres_role("postgres: autovacuum worker sbtest") == "autovacuum"
    assert postgres_role("postgres: autovacuum launcher ") == "autovacuum"
    assert postgres_role("postgres: io worker 2") == "io workers"
    assert postgres_role("postgres: background writer ") == "bgwriter"
    assert postgres_role("postgres: main: walwriter ") == "walwriter"  # with cluster_name
    assert postgres_role("postgres: postgres sbtest [local] SELECT") == FOREGROUND
    assert postgres_role("postgres: parallel worker for PID 12") == FOREGROUND  # part of a client's query
    assert postgres_role("/usr/lib/postgresql/18/bin/postgres -D /data", root=True) == "postmaster"
    assert postgres_role("/usr/lib/postgresql/18/bin/postgres -D /data") is None  # forked, not yet retitled


def test_innodb_threads_by_name_else_by_whether_they_predate_the_first_connection():
    startup = frozenset({10, 11})
    assert thread_role("one_connection", 99, startup) == FOREGROUND
    assert thread_role("page_cleaner", 12, startup) == "page cleaner"
    assert thread_role("ib_tpool_worker", 13, startup) == "innodb workers"
    assert thread_role("mysqld", 10, startup) == BACKGROUND
    assert thread_role("mysqld", 50, startup) == FOREGROUND  # created for a connection
    assert role_of(ServerRoles(threads=True, startup=startup), 1, 11, "mysqld", False) == BACKGROUND
    assert role_of(ServerRoles(threads=False), 1, 1, "postgres: walwriter ", False) == "walwriter"


def test_diskstats_fields_are_read_where_the_kernel_has_them(tmp_path):
    stats = tmp_path / "diskstats"
    stats.write_text("   8       0 sda 100 0 800 60 200 0 1600 90 0 150 170 5 0 40 3 7 11\n"
                     "   8       1 sdb 1 0 8 1 2 0 16 1 0 1 1\n")
    sda = read_diskstats("sda", stats)
    assert sda == {"reads": 100, "read_bytes": 800 * 512, "read_ms": 60, "writes": 200, "write_bytes": 1600 * 512,
                   "write_ms": 90, "queue_ms": 170, "discards": 5, "flushes": 7, "flush_ms": 11}
    assert "flushes" not in read_diskstats("sdb", stats) and read_diskstats("sdc", stats) is None


def test_a_window_keeps_only_background_roles_and_the_disk_counters_it_has():
    jiffies = dict.fromkeys(("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"), 0)
    disk = {"reads": 0, "read_bytes": 0, "writes": 0, "write_bytes": 0, "flushes": 0}
    a = Counters(0.0, jiffies, 0, disk, 1.0, 0.0, 0, {FOREGROUND: 0.5, "checkpointer": 0.1})
    b = Counters(1.0, jiffies, 0, dict(disk, flushes=4), 3.0, 0.0, 0, {FOREGROUND: 2.0, "checkpointer": 0.3,
                                                                        "autovacuum": 0.2})
    window = delta(a, b, split=True).as_dict()
    assert window["flushes"] == 4 and "read_ms" not in window
    assert window["background"] == {"autovacuum": 0.2, "checkpointer": 0.2}
    assert abs(window["server_bg_cpu_s"] - 0.4) < 1e-9
    assert "background" not in delta(a, b).as_dict()


def test_fsync_latency_is_measured_in_the_directory_and_leaves_nothing_behind(tmp_path):
    from dbdrift.metrics.fsync import measure
    flush = measure(tmp_path, seconds=0.05, max_ops=50)
    assert flush is not None and 5 <= flush["ops"] <= 50 and flush["path"] == str(tmp_path)
    assert 0 < flush["p50_us"] <= flush["p99_us"] and flush["mean_us"] > 0
    assert list(tmp_path.iterdir()) == []
    assert measure(tmp_path / "missing") is None


def test_a_role_s_cpu_is_read_to_the_nanosecond_not_in_clock_ticks():
    """A background process that runs a few milliseconds in a window must not read as 0 or
    as 10 ms (/proc's clock ticks): it is read from its schedstat, for a process and a thread."""
    import subprocess
    import sys
    from dbdrift.metrics.sampler import ProcessTreeCpu
    child = subprocess.Popen([sys.executable, "-c", "import time\nprint('up', flush=True)\ntime.sleep(30)"],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "up\n"  # it has run its start-up: some tens of milliseconds
        for roles in (ServerRoles(threads=False), ServerRoles(threads=True, startup=frozenset({child.pid}))):
            tree = ProcessTreeCpu(child.pid, roles)
            total = tree.read()
            [(role, cpu)] = tree.by_role().items()
            assert role in ("postmaster", "python") and 0 < cpu < 5, (role, cpu)  # by title; by thread name
            assert abs(cpu * 100 - round(cpu * 100)) > 1e-6, cpu  # not a whole number of 10 ms ticks
            assert abs(total - cpu) < 0.02, (total, cpu)
    finally:
        child.kill()
        child.wait()
