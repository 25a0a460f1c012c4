"""Client CPU per insert of dbdrift-driver's Insert Benchmark step l.i0, next to a Python
client that does what iibench.py does for that step.

One PostgreSQL server, database `ib`, table pi1 as dbdrift creates it (no secondary index).
Per round both clients insert the same number of rows into a freshly recreated pi1 with
literal multi-row INSERTs of 100 rows in autocommit, one client, no deletes, no queries,
no rate limit, interleaved ABBA (driver, python, python, driver, ...):

- dbdrift-driver: `dbdrift-driver ibench --spec <file>` with the runner's spec for l.i0.
- python: this script again, with the hidden `--python-client` argument: iibench.py's l.i0
  path in Python 3 with psycopg2 over the Unix socket. As iibench.py: a statement-maker
  process builds each INSERT's text in Python (random module seeded once, one local-time
  stamp per statement, data = 'a' padding + a slice of a base64 text of 4 MiB of random
  bytes, price printed `%.2f`, tuples joined by `,\\n`) and hands it through a
  multiprocessing Queue(8) to an inserter process that runs it with cursor.execute on an
  autocommit connection, keeps the response-time histogram and the shared counters; the
  main process prints the per-second line. One change: the main process waits on the
  inserter's exit for up to a second instead of sleeping the whole second, so the client
  ends when its last INSERT does (iibench.py's sleep adds up to 1 s of idle wall time).

Client CPU is wait4's of each client process (with the children it reaped: the python
client's statement maker and inserter), start-up and connection included for both.
Steal comes from /proc/stat; "other" is the host's busy CPU time less the client's and the
server's (postmaster tree, psutil) over the run, i.e. what the rest of the machine used.

    .venv/bin/python bench/ibench_client.py [--version 17.10] [--rows 500000] [--rounds 3]

Needs psycopg2 in this Python: `.venv/bin/python -m pip install psycopg2-binary` (or the
`bench` extra of pyproject.toml).
"""
from __future__ import annotations

import argparse
import base64
import math
import os
import random
import sys
import time
import timeit
from pathlib import Path

CLIENT_FLAG = "--python-client"
PSYCOPG2_HINT = f"install it with: {sys.executable} -m pip install psycopg2-binary"

# --- the Python client: iibench.py's l.i0 path, one client --------------------------------------
# Kept in iibench.py's shape on purpose (its functions, flags and per-statement work); only what
# l.i0 on PostgreSQL reaches is here: no deletes, no queries, no prepared inserts.

FLAGS = argparse.Namespace()
YOU_ARE_DONE = "done"


def client_main(argv: list[str]) -> int:
    global FLAGS, psycopg2
    parser = argparse.ArgumentParser(prog=f"ibench_client.py {CLIENT_FLAG}")
    for name in ("db_host", "db_name", "db_user", "table_name"):
        parser.add_argument(f"--{name}", required=True)
    for name, default in (("db_port", 5432), ("max_rows", 10000), ("rows_per_commit", 100), ("seed", 1),
                          ("data_length_min", 10), ("data_length_max", 20), ("data_random_pct", 50),
                          ("secs_per_report", 1), ("cashregisters", 1000), ("products", 10000),
                          ("customers", 100000), ("max_price", 500), ("inserts_per_second", 0)):
        parser.add_argument(f"--{name}", type=int, default=default)
    FLAGS = parser.parse_args(argv)
    try:
        import psycopg2
    except ImportError:
        print(f"error: psycopg2 is not installed in {sys.executable}\nhint: {PSYCOPG2_HINT}", file=sys.stderr)
        return 1
    print('i_sec\tt_sec\ti_ips\tt_ips\ti_dps\tt_dps\ti_qps\tt_qps\tmax_i\tmax_d\tmax_q\tt_ins\tt_del\tt_query'
          '\tretry_i\tretry_d\tretry_q')
    return run_benchmark()


psycopg2 = None  # imported by client_main: the bench side does not need it


def get_conn():
    conn = psycopg2.connect(dbname=FLAGS.db_name, host=FLAGS.db_host, port=FLAGS.db_port, user=FLAGS.db_user)
    conn.set_session(autocommit=True)
    return conn


def generate_cols(rand_data_buf):
    cashregisterid = random.randrange(0, FLAGS.cashregisters)
    productid = random.randrange(0, FLAGS.products)
    customerid = random.randrange(0, FLAGS.customers)
    price = random.randrange(0, FLAGS.max_price)
    data_len = random.randrange(FLAGS.data_length_min, FLAGS.data_length_max + 1)
    # multiply by 0.75 to account of base64 overhead
    rand_data_len = int(data_len * 0.75 * (float(FLAGS.data_random_pct) / 100))
    rand_data_off = random.randrange(0, len(rand_data_buf) - rand_data_len)
    nonrand_data_len = data_len - rand_data_len
    data = '%s%s' % ('a' * nonrand_data_len, rand_data_buf[rand_data_off:(rand_data_off + rand_data_len)])
    return cashregisterid, productid, customerid, price, data


def generate_row(when, rand_data_buf):
    cashregisterid, productid, customerid, price, data = generate_cols(rand_data_buf)
    return "('%s',%d,%d,%d,%.2f,'%s')" % (when, cashregisterid, customerid, productid, price, data)


def generate_insert_rows(rand_data_buf):
    when = time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(time.time()))
    rows = [generate_row(when, rand_data_buf) for i in range(FLAGS.rows_per_commit)]
    sql_data = ',\n'.join(rows)
    return 'insert into %s (dateandtime,cashregisterid,customerid,productid,price,data) values %s' % (
        FLAGS.table_name, sql_data)


def rthist_finish(obj, start):
    elapsed = timeit.default_timer() - start
    if elapsed >= obj['max']:
        obj['max'] = elapsed
    rt = obj['hist']
    for i, bound in enumerate((0.000256, 0.001, 0.004, 0.016, 0.064, 0.256, 1, 4, 16)):
        if elapsed <= bound:
            rt[i] += 1
            break
    else:
        rt[9] += 1
    return int(elapsed * 1000000.0)


def statement_maker(rounds, insert_stmt_q, done_flag, barrier, rand_data_buf):
    barrier.wait()
    rounds_per_second = 0
    if FLAGS.inserts_per_second:
        rounds_per_second = max(1, int(math.ceil(float(FLAGS.inserts_per_second) / FLAGS.rows_per_commit)))
        last_rate_check = time.time()
    for r in range(rounds):
        if done_flag.value:
            break
        insert_stmt_q.put(generate_insert_rows(rand_data_buf))
        now = time.time()
        if rounds_per_second and (r % rounds_per_second) == 0:
            if last_rate_check < now < last_rate_check + 0.95:
                time.sleep(1.0 - (now - last_rate_check))
            last_rate_check = time.time()
    insert_stmt_q.put(YOU_ARE_DONE)
    insert_stmt_q.close()


def statement_executor(stmt_q, shared_var, done_flag, barrier, result_q):
    barrier.wait()
    db_conn = get_conn()
    cursor = db_conn.cursor()
    rthist = {'hist': [0] * 10, 'max': 0}
    while True:
        stmt = stmt_q.get()
        if stmt == YOU_ARE_DONE:
            break
        ts = timeit.default_timer()
        try:
            cursor.execute(stmt)
        except psycopg2.Error as e:
            print("SQL error: %s\n%s" % (e.pgerror, e.pgcode), file=sys.stderr)
            sys.exit(1)
        elapsed = rthist_finish(rthist, ts)
        with shared_var[2].get_lock():
            if elapsed > shared_var[2].value:
                shared_var[2].value = elapsed
        shared_var[0].value = shared_var[0].value + FLAGS.rows_per_commit
    done_flag.value = 1
    stmt_q.close()
    db_conn.close()
    result_q.put('Insert rt: %s max %.6f' % (' '.join(map(str, rthist['hist'])), rthist['max']))


def run_benchmark() -> int:
    from multiprocessing import Barrier, Process, Queue, Value

    random.seed(FLAGS.seed)
    rounds = int(math.ceil(float(FLAGS.max_rows) / FLAGS.rows_per_commit))
    conn = get_conn()
    conn.close()
    rand_data_buf = base64.b64encode(os.urandom(1024 * 1024 * 4)).decode('ascii')
    barrier = Barrier(3)  # main, inserter, statement maker
    done_flag = Value('i', 0)
    # inserts, queries (unused), max response time µs per interval, retries
    shared_var = (Value('i', 0), Value('i', 0), Value('i', -1), Value('i', 0))
    insert_stmt_q = Queue(8)
    insert_stmt_result = Queue()
    inserter = Process(target=statement_executor,
                       args=(insert_stmt_q, shared_var, done_flag, barrier, insert_stmt_result))
    request_gen = Process(target=statement_maker, args=(rounds, insert_stmt_q, done_flag, barrier, rand_data_buf))
    inserter.start()
    request_gen.start()
    barrier.wait()

    start_time = last_report = time.time()
    prev_inserted = 0
    while True:
        inserter.join(FLAGS.secs_per_report)  # iibench.py: time.sleep(FLAGS.secs_per_report)
        inserted = shared_var[0].value
        now = time.time()
        max_i = max(shared_var[2].value, 0)
        shared_var[2].value = -1
        print('%.1f\t%.1f\t%.0f\t%.0f\t0\t0\t0\t0\t%d\t0\t0\t%d\t0\t0\t0\t0\t0' % (
            now - last_report, now - start_time, (inserted - prev_inserted) / (now - last_report),
            inserted / (now - start_time), max_i, inserted))
        sys.stdout.flush()
        prev_inserted, last_report = inserted, now
        if done_flag.value == 1 or inserter.exitcode is not None:
            break
    inserter.join()
    if inserter.exitcode != 0:
        request_gen.terminate()
        request_gen.join()
        print(f"error: the inserter process exited with status {inserter.exitcode}", file=sys.stderr)
        return 1
    print(insert_stmt_result.get())
    request_gen.join()
    test_end = time.time()
    print('Totals: %.1f secs, %.1f rows/sec, %s rows, %d %d %d insert-delete-query retry' % (
        test_end - start_time, inserted / (test_end - start_time), inserted, 0, 0, 0))
    print('Done')
    return 0


# The client mode ends here, before the bench's imports: importing dbdrift costs about 0.2 s
# of CPU that would be billed to the Python client.
if __name__ == "__main__" and sys.argv[1:2] == [CLIENT_FLAG]:
    sys.exit(client_main(sys.argv[2:]))

# --- the benchmark ---------------------------------------------------------------------------------

import importlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import psutil  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c  # noqa: E402
from dbdrift.workloads.ibench import catalog as ibench  # noqa: E402
from dbdrift.driver import process  # noqa: E402
from dbdrift.driver.protocol import PROTOCOL_VERSION, parse_lines  # noqa: E402
from dbdrift.errors import UserError  # noqa: E402
from dbdrift.metrics.procstat import cpu_jiffies  # noqa: E402
from dbdrift.runner.dialect import for_engine  # noqa: E402

DRIVER, PYTHON = "dbdrift-driver", "python"
TABLE = "pi1"
ROWS_PER_STATEMENT = 100
WARM_ROWS = 20_000          # one uncounted run per client before round 1 (page cache, first extends)
SETTLE_S = 0.3              # after a run, so the postmaster has reaped the client's backend
NOISY_STEAL_PCT = 5.0
TARGET_CPU_RATIO = 0.25     # driver/python client CPU per insert, as the issue asks
CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass
class Sample(c.StealShare):
    """One timed client run."""

    round: int
    tool: str
    rows: int
    wall_s: float       # the client process, start to exit
    step_s: float       # the client's own elapsed (driver summary elapsed_s, iibench Totals secs)
    user_s: float
    sys_s: float
    server_s: float
    window_s: float
    busy_ticks: int
    steal_ticks: int
    all_ticks: int

    def us_per_insert(self, seconds: float) -> float:
        return seconds * 1e6 / self.rows

    @property
    def ips(self) -> float:
        return self.rows / self.wall_s

    @property
    def step_ips(self) -> float:
        return self.rows / self.step_s if self.step_s else float("nan")

    @property
    def other_pct(self) -> float:
        """CPU the rest of the machine used, in % of all its CPUs (busy less client and server)."""
        other = self.busy_ticks / CLK_TCK - self.user_s - self.sys_s - self.server_s
        return max(0.0, 100.0 * other / (self.window_s * (os.cpu_count() or 1)))


# --- the two clients -----------------------------------------------------------------------------


def driver_spec(conn: dict, rows: int, seed: int) -> dict:
    """As workloads/ibench/run.py driver_spec builds it for l.i0 with one client and no rate limit."""
    dialect = for_engine("postgres", "")
    step = ibench.IBenchStep("l.i0", rows, ROWS_PER_STATEMENT)
    return {"protocol": PROTOCOL_VERSION, "backend": dialect.backend, "connection": conn, "seed": seed,
            "step": step.name, "clients": 1, "tables": [TABLE], "interval_s": 1,
            "rows_per_client": step.rows_per_client, "rows_per_statement": step.rows_per_statement,
            "inserts_per_second": step.inserts_per_second, "deletes": step.deletes, "query": step.query,
            "query_threads": 0, "data_length": [10, 20], "sql": ibench.ibench_sql(dialect.sql_dialect, step)}


def timeout_s(rows: int) -> float:
    return max(600.0, rows / 200 + 120)


def run_driver(conn: dict, rows: int, seed: int, workdir: Path) -> tuple[c.ProcessResult, float]:
    spec_path = workdir / f"l.i0-{seed}.json"
    spec_path.write_text(json.dumps(driver_spec(conn, rows, seed)))
    result = c.run_measured([str(process.find_driver()), "ibench", "--spec", str(spec_path)], timeout_s(rows))
    c.check_ok(result, "dbdrift-driver ibench")
    summary = parse_lines(result.stdout).summary or {}
    if int(summary.get("inserted") or 0) != rows:
        raise UserError(f"dbdrift-driver ibench reported {summary.get('inserted')} rows inserted, not {rows}",
                        f"its output ended with: {result.stdout.strip()[-300:]}")
    return result, float(summary["elapsed_s"])


_TOTALS = re.compile(r"^Totals: ([\d.]+) secs, [\d.]+ rows/sec, (\d+) rows", re.M)


def run_python(conn: dict, rows: int, seed: int) -> tuple[c.ProcessResult, float]:
    cmd = [sys.executable, str(Path(__file__).resolve()), CLIENT_FLAG, f"--db_host={conn['socket_dir']}",
           f"--db_port={conn['port']}", f"--db_user={conn['user']}", f"--db_name={conn['dbname']}",
           f"--table_name={TABLE}", f"--max_rows={rows}", f"--rows_per_commit={ROWS_PER_STATEMENT}",
           f"--seed={seed}", "--data_length_min=10", "--data_length_max=20", "--secs_per_report=1"]
    result = c.run_measured(cmd, timeout_s(rows))
    c.check_ok(result, "the Python client")
    match = _TOTALS.search(result.stdout)
    if not match or int(match.group(2)) != rows:
        raise UserError(f"the Python client did not report {rows} rows inserted",
                        f"its output ended with: {result.stdout.strip()[-300:]}")
    return result, float(match.group(1))


def recreate_table(conn: dict) -> None:
    """Untimed, before every run: pi1 as dbdrift creates it, empty, and no dirty pages left."""
    c.sql(conn, *ibench.create_table_sql(TABLE, "postgres"), "CHECKPOINT")


def check_inserted(conn: dict, rows: int, tool: str) -> None:
    found = process.query(conn, f"SELECT count(*), min(length(data)), max(length(data)) FROM {TABLE}")
    count, shortest, longest = (int(v) for v in found[0])
    if (count, shortest, longest) != (rows, 10, 20):
        raise UserError(f"{tool} left {count} rows in {TABLE} with data lengths {shortest}..{longest} "
                        f"(expected {rows} rows, lengths 10..20)", "check the server log under the dbdrift work dir")


def server_cpu_s(pid: int | None) -> float:
    """CPU seconds of the postmaster, its live children and the children it has reaped
    (a client's backend exits with the client and lands in children_user/children_system)."""
    try:
        root = psutil.Process(pid)
        t = root.cpu_times()
        total = t.user + t.system + t.children_user + t.children_system
        for child in root.children():
            try:
                ct = child.cpu_times()
                total += ct.user + ct.system
            except psutil.Error:
                continue
        return total
    except (psutil.Error, TypeError, ValueError):
        return 0.0


def busy_ticks() -> int:
    jiffies = cpu_jiffies() or {}
    return sum(jiffies.values()) - jiffies.get("idle", 0) - jiffies.get("iowait", 0)


def measure(tool: str, round_no: int, rows: int, server, conn: dict, workdir: Path) -> Sample:
    recreate_table(conn)
    seed = 1000 + round_no
    all0, steal0 = c.cpu_ticks()
    busy0, srv0, t0 = busy_ticks(), server_cpu_s(server.server_pid), time.monotonic()
    result, step_s = run_driver(conn, rows, seed, workdir) if tool == DRIVER else run_python(conn, rows, seed)
    time.sleep(SETTLE_S)
    all1, steal1 = c.cpu_ticks()
    busy1, srv1, t1 = busy_ticks(), server_cpu_s(server.server_pid), time.monotonic()
    check_inserted(conn, rows, tool)
    return Sample(round_no, tool, rows, result.wall_s, step_s, result.user_s, result.sys_s, srv1 - srv0,
                  t1 - t0, busy1 - busy0, steal1 - steal0, all1 - all0)


# --- report --------------------------------------------------------------------------------------

ROW = "{:>5} {:<15} {:>7} {:>7} {:>9} {:>9} {:>6} {:>6} {:>6} {:>7} {:>6} {:>6} {:>6}"


def print_round_header(out) -> None:
    out(ROW.format("round", "client", "wall s", "step s", "ins/s", "ins/s", "user", "sys", "total", "server",
                   "other", "steal", "steal"))
    out(ROW.format("", "", "", "", "(wall)", "(step)", "µs/ins", "µs/ins", "µs/ins", "µs/ins", "%", "ticks", "%"))


def print_sample(out, s: Sample) -> None:
    flag = "  noisy" if s.steal_pct > NOISY_STEAL_PCT else ""
    out(ROW.format(s.round, s.tool, f"{s.wall_s:.2f}", f"{s.step_s:.2f}", f"{s.ips:,.0f}", f"{s.step_ips:,.0f}",
                   f"{s.us_per_insert(s.user_s):.2f}", f"{s.us_per_insert(s.sys_s):.2f}",
                   f"{s.us_per_insert(s.user_s + s.sys_s):.2f}", f"{s.us_per_insert(s.server_s):.2f}",
                   f"{s.other_pct:.0f}", s.steal_ticks, f"{s.steal_pct:.1f}") + flag)


def client_medians(samples: list[Sample], tool: str) -> dict[str, float | None]:
    mine = [s for s in samples if s.tool == tool]
    return {"ips": c.median([s.ips for s in mine]), "step_ips": c.median([s.step_ips for s in mine]),
            "user": c.median([s.us_per_insert(s.user_s) for s in mine]),
            "sys": c.median([s.us_per_insert(s.sys_s) for s in mine]),
            "total": c.median([s.us_per_insert(s.user_s + s.sys_s) for s in mine]),
            "server": c.median([s.us_per_insert(s.server_s) for s in mine])}


def paired(samples: list[Sample], round_no: int, value) -> float | None:
    by_tool = {s.tool: value(s) for s in samples if s.round == round_no}
    return by_tool[DRIVER] / by_tool[PYTHON] if by_tool.get(PYTHON) and DRIVER in by_tool else None


def cpu_target(key: str, ratio: float | None) -> str:
    """The issue's target, on client CPU per insert only."""
    if key != "total":
        return ""
    met = ratio is not None and ratio <= TARGET_CPU_RATIO
    return f"≤ {TARGET_CPU_RATIO}×   {'met' if met else 'NOT MET'}"


def print_summary(out, samples: list[Sample], args) -> None:
    d, p = client_medians(samples, DRIVER), client_medians(samples, PYTHON)
    rows = [("ips", "inserts/s (rows / client wall)", ",.0f"), ("step_ips", "inserts/s (rows / step elapsed)", ",.0f"),
            ("user", "client CPU user µs/insert", ".2f"), ("sys", "client CPU sys µs/insert", ".2f"),
            ("total", "client CPU total µs/insert", ".2f"), ("server", "server CPU µs/insert", ".2f")]
    fmt_row = "{:<33} {:>15} {:>10} {:>14}   {}"
    out(f"\nsummary: l.i0, 1 client, {ROWS_PER_STATEMENT} rows per INSERT (autocommit), {args.rounds} round(s) of "
        f"{args.rows:,} rows per client, postgres {args.version}; medians per client")
    c.ratio_table(out, fmt_row, (DRIVER, PYTHON, "driver/python"), rows, d, p, cpu_target)
    rounds = range(1, args.rounds + 1)
    cpu = [paired(samples, r, lambda s: s.user_s + s.sys_s) for r in rounds]
    ips = [paired(samples, r, lambda s: s.ips) for r in rounds]
    out("per-round ratio driver/python: client CPU per insert " + ", ".join(c.fmt(x, ".3f") for x in cpu)
        + "; inserts/s " + ", ".join(c.fmt(x, ".3f") for x in ips))
    noisy = sorted({s.round for s in samples if s.steal_pct > NOISY_STEAL_PCT})
    out(f"rounds with steal > {NOISY_STEAL_PCT:.0f} % of CPU time: {', '.join(map(str, noisy)) or 'none'}")
    other = [s.other_pct for s in samples]
    out(f"other load (host busy less client and server, % of {os.cpu_count()} CPUs): "
        f"median {c.fmt(c.median(other), '.0f')} %, max {max(other):.0f} %")


# --- main ----------------------------------------------------------------------------------------


def require_psycopg2() -> str:
    try:
        module = importlib.import_module("psycopg2")
    except ImportError:
        raise UserError(f"psycopg2 is not installed in {sys.executable} (the Python client of this "
                        "benchmark needs it)", PSYCOPG2_HINT) from None
    return f"psycopg2 {module.__version__.split()[0]} (libpq {module.__libpq_version__})"


def print_header(out, args, client_lib: str) -> None:
    drv = subprocess.run([str(process.find_driver()), "--version"], capture_output=True, text=True).stdout.strip()
    out(f"ibench_client: {' '.join(sys.argv[1:]) or '(defaults)'}")
    out(f"host: {platform.node()}, {os.cpu_count()} CPUs, kernel {platform.release()}, load average "
        f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])}; {drv}; "
        f"Python {platform.python_version()}, {client_lib}")


def run_rounds(server, conn: dict, args, out) -> list[Sample]:
    with tempfile.TemporaryDirectory(prefix="dbdrift-bench-ibench-") as tmp:
        workdir = Path(tmp)
        for tool in (DRIVER, PYTHON):
            c.progress(f"uncounted warm-up: {tool} {min(args.rows, WARM_ROWS):,} rows")
            measure(tool, 0, min(args.rows, WARM_ROWS), server, conn, workdir)
        out(f"\nrounds ({args.rows:,} rows into an empty {TABLE} per run, ABBA order; µs per inserted row; "
            "step = the client's own elapsed):")
        print_round_header(out)
        return c.abba_rounds(args.rounds, DRIVER, PYTHON, f"{args.rows:,} rows",
                             lambda tool, round_no: measure(tool, round_no, args.rows, server, conn, workdir),
                             lambda sample: print_sample(out, sample))


def body(args):
    def run(out) -> None:
        client_lib = require_psycopg2()
        print_header(out, args, client_lib)
        with c.started_server(args.version, "bench-ibench-client", out) as server:
            dialect = for_engine("postgres", args.version)
            process.exec_jobs(server.connection.to_driver(), dialect.create_database(ibench.DBNAME),
                              backend=dialect.backend, what="create database")
            conn = server.connection.with_dbname(ibench.DBNAME).to_driver()
            samples = run_rounds(server, conn, args, out)
        print_summary(out, samples, args)
    return run


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/ibench_client.py",
        description="Client CPU per insert and inserts/s of Insert Benchmark step l.i0 (one client): "
                    "dbdrift-driver vs an iibench.py-style Python client (psycopg2).")
    parser.add_argument("--version", default="17.10", help="PostgreSQL version to fetch and run (default 17.10)")
    parser.add_argument("--rows", type=int, default=500_000,
                        help=f"rows per run, a multiple of {ROWS_PER_STATEMENT} (default 500000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of one run per client, ABBA order (default 3)")
    args = parser.parse_args(argv)
    if args.rows < ROWS_PER_STATEMENT or args.rows % ROWS_PER_STATEMENT or args.rounds < 1:
        parser.error(f"--rows must be a positive multiple of {ROWS_PER_STATEMENT} and --rounds at least 1")
    return args


if __name__ == "__main__":
    sys.exit(c.run_main("ibench_client", body(parse_args())))
