"""The campaign file's keys, declared once: the Key type (a row: its table, type, default, range,
workloads, meaning and retired names) and the rows of the core's tables, the top level,
[[targets]], `cpus` and [cluster]. A workload's own keys are its slice's: workloads/<name>/keys.py
declares their rows, its plan.py reads them and its WorkloadPlan carries them (`keys`), which is
how the campaign reader, the docs and recheck find them without this module importing a slice.
Most are a table of the workload's own ([tpcc], [vector], ...); sysbench's are top-level keys,
which `top` places among the core's. docs/campaign.md's key tables are all these rows
(tests/unit/test_campaign_keys.py holds them equal).

plan/fields.py reads a value by its Key (type, range, soft limit); plan/campaign.py takes the known
keys, the defaults, to_dict's fields and the workload checks from here. Nothing here reads a file.
Defaults of the target keys belong to TargetSpec, lower in the import order; their rows point at it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from dbdrift.model import ENGINES, TargetSpec

INT64_MAX = 2**63 - 1
HOUR_S, DAY_S = 3600.0, 86400.0
REQUIRED = object()  # the key has no default: leaving it out is an error
ALL_WORKLOADS = ("sysbench", "insert-benchmark", "tpcc", "vector", "htap")
TABLES = ("top", "targets", "cpus", "cluster")  # the core's tables ("top": the file's top level); a workload's is its slice's

# kinds: how plan/fields.py reads the value
INTEGER, DURATION, FLAG, CHOICE, NAME, STRING, PATH, LIST, TABLE, THREADS, CPUS, CPULIST, PERCENT = (
    "integer", "duration", "flag", "choice", "name", "string", "path", "list", "table", "threads", "cpus", "cpulist",
    "percent")

T = TypeVar("T")


@dataclass(frozen=True)
class Key:
    """One key of one campaign table. `default` is the value when the key is left out (None: none,
    or one the parser derives from other keys, which `shown` then says); `high` is a hard limit
    (what the driver or the schema can take), `large` a soft one (refused unless allow_large);
    `retired` maps an old name (of the key, or for a choice of a value) to its current one (None:
    the old one is gone)."""

    table: str
    name: str
    kind: str
    type: str  # as docs/campaign.md's type column says it
    default: object = None
    doc: str = ""  # docs/campaign.md's meaning column
    shown: str | None = None  # docs/campaign.md's default column, when not the default itself
    low: float | None = None
    high: float | None = None
    large: float | None = None
    why: str = ""  # why `high` is the most the key can take
    measured: bool = False  # a duration that must be more than 0
    choices: tuple[str, ...] = ()
    workloads: tuple[str, ...] = ALL_WORKLOADS
    retired: dict[str, str | None] = field(default_factory=dict)
    attr: str | None = None  # the CampaignSpec (or a workload's Params) field, when not `name`
    # a workload's top-level row (sysbench's): the row of the top-level table it follows (`top`); None:
    # the workload's row before it
    after: str | None = None

    @property
    def field_name(self) -> str:
        return self.attr or self.name

    def bounds(self) -> tuple[float, float]:
        """(low, high) of a key with a hard range; a key without `low` starts at 0."""
        if self.high is None:
            raise TypeError(f"{self.table}.{self.name} has no hard limit")
        return (self.low or 0.0), self.high

    def shown_default(self) -> str:
        """The default as docs/campaign.md's default column writes it."""
        if self.shown is not None:
            return self.shown
        return "required" if self.default is REQUIRED else "none" if self.default is None else f"`{toml(self.default)}`"

    def doc_row(self) -> str:
        text = self.doc.replace("{low}", toml(self.low)).replace("{high}", toml(self.high))
        return f"| `{self.name}` | {self.type} | {self.shown_default()} | {text} |"


def toml(value: object) -> str:
    """A default as a campaign file writes it: true, 300, 1.5, "turns", ["default32"]."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    return str(value)


KEYS: tuple[Key, ...] = (

    # --- top -----------------------------------------------------------------------------
    Key('top', 'name', NAME, 'name', default=None, shown="the file name without `.toml`",
        doc=("The campaign's name in the store and in reports. A campaign runs at most once at a time per store, and "
         '`--resume` finds the runs stored under this name.')),
    Key('top', 'workload', CHOICE, 'string', default="sysbench", choices=ALL_WORKLOADS,
        doc=('`"sysbench"` runs the sysbench-style microbenchmarks; `"insert-benchmark"` runs the Insert Benchmark '
         'configured in `[insert_benchmark]`; `"tpcc"` runs TPROC-C configured in `[tpcc]`; `"vector"` runs vector '
         'search (k nearest neighbours by an index, recall against QPS) configured in `[vector]`; `"htap"` runs '
         "CH-benCHmark (TPROC-C's transactions beside 22 analytical queries) configured in `[htap]`.")),
    Key('top', 'targets', TABLE, 'array of tables', default=REQUIRED,
        doc='The servers to compare, written as `[[targets]]` tables (see below); at least one.'),
    Key('top', 'insert_benchmark', TABLE, 'table', default=None, shown="see below", workloads=("insert-benchmark",),
        doc=("The Insert Benchmark's sizes and steps, written as an `[insert_benchmark]` table. Only with `workload = "
         '"insert-benchmark"`; with another workload it is an error.')),
    Key('top', 'tpcc', TABLE, 'table', default=None, shown="see below", workloads=("tpcc",),
        doc=("TPROC-C's warehouses, virtual users and windows, written as a `[tpcc]` table. Only with `workload = "
         '"tpcc"`.')),
    Key('top', 'vector', TABLE, 'table', default=None, shown="see below", workloads=("vector",),
        doc=("Vector search's data set, index builds, searches and windows, written as a `[vector]` table. Only with "
         '`workload = "vector"`.')),
    Key('top', 'htap', TABLE, 'table', default=None, shown="see below", workloads=("htap",),
        doc=("CH-benCHmark's warehouses, virtual users, analytical streams and windows, written as an `[htap]` table. "
         'Only with `workload = "htap"`.')),
    Key('top', 'axes', TABLE, 'tables', default=None,
        doc=('Configuration matrix axes, written as `[axes.NAME]` tables of levels; every target runs once per '
         'combination of the levels that apply to its engine (see [Configuration '
         'matrices](#configuration-matrices-axes)).')),
    Key('top', 'variants', LIST, 'list of strings, or one string', default=(), shown="all",
        doc=('Which variants of the axes run: shell globs on variant names, e.g. `["bl1_*"]`. A target no axis applies'
         " to always runs. `--variants 'bl1_*,*_dw0'` on the command line replaces it.")),
    Key('top', 'cluster', TABLE, 'table', default=None,
        doc=("Run the campaign's units on a Dask cluster, written as a `[cluster]` table (see below). `dbdrift run "
         '--cluster ADDRESS` does the same without it.')),
    Key('top', 'allow_large', FLAG, 'boolean', default=False,
        doc=('Accept sizes and durations beyond the soft limits above. Set it when you really mean e.g. 10^9 rows; the'
         ' hard limits still apply.')),
    Key('top', 'flamegraphs', FLAG, 'boolean', default=False, workloads=("sysbench", "insert-benchmark", "tpcc"),
        doc=("Record the server with `perf record` during each measured run (sysbench: its backends; an Insert "
         "Benchmark step or a TPROC-C run: its whole process tree, background work included), for `dbdrift report "
         '--flamegraphs DIR`. Same as `--flamegraph`; needs perf.')),
    Key('top', 'settle_s', DURATION, 'duration or `"auto"`', default=None, shown='`"auto"`', large=2 * HOUR_S,
        doc=('Time of each settle step: after the load, after `read-write_range=100` (or before the reads that follow '
         'the write phase) and, for the Insert Benchmark, after `l.i2`. The settle work (vacuum, analyze and '
         'checkpoint on PostgreSQL; the InnoDB flushing steps on MariaDB/MySQL) runs first and dbdrift sleeps only'
         ' the remainder; `0` does the work without waiting. `"auto"` is min(1200, 60 + tables × rows / 10^6) s, '
         'or min(1200, 60 + rows_l_i0 / 10^6) s for the Insert Benchmark.')),
    Key('top', 'interval_s', DURATION, 'duration', default=1.0, measured=True, large=DAY_S,
        doc=("The driver's reporting interval. In sequential runs it is the unit of throughput samples and of steal "
         'filtering (an interval in a second with more than 10% host steal is left out); runs in turns use their '
         'turns instead. For the Insert Benchmark it is the period of the per-second client report.')),
    Key('top', 'repeats', INTEGER, 'integer', default=1, high=1000, large=100,
        why="every repeat runs every test again",
        doc=('How many times each measured test runs (repeat n uses seed `seed + n`). With 3 or more, results in turns'
         ' get intervals over server starts; 5 with shorter runs gives verdicts to trust. At most 1000; more than '
         '100 needs `allow_large`.')),
    Key('top', 'round_order', CHOICE, 'string', default="balanced", choices=("balanced", "alternating"),
        doc=('The order of the targets in each round of turns, of whole runs taken in turn, of server starts and of '
         'Insert Benchmark and TPROC-C repeats. `"balanced"`: a cycle of rounds in which every target follows every'
         ' other equally often and holds every place equally often, so no target gains or loses from its place '
         '(docs/noise.md D5). `"alternating"`: listed order and reversed in turn (A B C, C B A), the order before '
         'the balanced one, kept to compare with campaigns stored then; with three or more targets the first and '
         'last listed follow themselves and the others never do. With two targets both are A B, B A.')),
    Key('top', 'detect', PERCENT, 'percentage', default=None, shown="none (the campaign's own repeats and lengths)",
        low=0.001, high=0.5,
        doc=('Plan the campaign to see a change of this size, in percent (`2` or `"2%"`): from the noise of each test '
         'on this host that the store has seen (its A/A calibrations and the server starts of its other campaigns '
         'of the workload, once half the tests have 8 or more; else its newest calibration, `dbdrift calibrate` '
         'with `repeats` of 3 or more), `run` '
         'chooses how many server starts each test gets (sysbench: and `read_s`, `write_s` and `insert_s`; the Insert Benchmark and TPROC-C: one '
         'number of repeats, as every start runs all their steps, their lengths as the campaign sets them), so that '
         'each verdict\'s interval detects the change with 80% power; `run --check` prints the plan and its cost. '
         'Each test stops once decided, after 3 starts or more (`sequential`; a workload whose every start runs all '
         'its tests, such as the Insert Benchmark and TPROC-C, runs another start while one of them is undecided); with '
         '`sequential = false` the number of starts is decided before the first and raised '
         'at most once, after the first 3 starts, from their spread only (docs/noise.md, "Campaigns planned to a '
         'detectable change"). sysbench needs `order = "turns"` '
         'and `restart = "repeat"`; `repeats` is then set by the plan. 0.1% to 50%.')),
    Key('top', 'aa_twin', FLAG, 'boolean', default=False,
        doc=('Add an A/A twin of the base: the same build and configuration as another target, named `<base>-aa`, '
         'run like every target. Its verdicts against the base are false by construction, so the report counts them '
         '(the false verdicts and their rate over the twin\'s cells), `history --metric false-verdicts` and the '
         'published site follow that rate per host over time, and its starts join the noise `detect` plans from. '
         'Reports leave the twin out of `--fail-on`. Same as `run --aa-twin` and `compare --aa-twin`; no target may have the twin\'s name, '
         'and a campaign with `axes` refuses it (the matrix pairs variants by their levels).')),
    Key('top', 'budget', DURATION, 'duration', default=None, shown="none", measured=True, large=7 * DAY_S,
        doc=('With `detect`: the most the campaign may take (`"30m"`). sysbench with `sequential` (the default): each '
         'start beyond a test\'s first 3 runs only while the test is undecided and within its share of what is left '
         '(the tests still to come keep their first 3 and their planned starts). Otherwise the plan cuts the starts '
         'beyond the first 3 to fit. Once the budget is spent, the sysbench tests still to run get 3 starts each, and '
         'an Insert Benchmark or '
         'TPROC-C campaign starts no repeat past the third that would overrun it. Tests that could not reach `detect` '
         'are named in the report with the change they could detect.')),
    Key('top', 'sequential', FLAG, 'boolean', default=True,
        doc=('With `detect`: the sequential rule. After its first 3 starts each test is looked at before every further '
         'start and stops once its interval says "different" (it excludes 1) or "same" (it lies inside ±`detect`: no '
         'change of that size or more), each look at a level that spends part of the 5% error (O\'Brien-Fleming '
         'alpha spending, docs/noise.md D26), or at its cap, or when its share of `budget` is spent; with '
         '`count_instructions` the budget goes first to the tests the counts cannot see (writes, I/O, locks) and '
         'those whose counts moved (counted before the timed runs). Reports say where each test stopped and after how '
         'many starts. `false`: the fixed plan (each test\'s starts decided before the first, raised at most once '
         'after 3 from their spread). A workload whose every start runs all its tests (the Insert Benchmark, TPROC-C, '
         'vector search, HTAP) runs another start while one of its tests is undecided, below its most and within the '
         'budget; each test\'s stop is reported the same way.')),
    Key('top', 'cpus', CPUS, '`"auto"`, `"shared"` or table', default="auto",
        doc=('Where the driver and the servers run. `"auto"`: with two or more usable CPUs the driver is pinned to the'
         ' lowest quarter of them (at least one) and every server process to the rest; with one CPU, or for the '
         'Insert Benchmark, nothing is pinned. `"shared"`: no pinning. A table `{ driver = "0", server = "1-3" }` '
         'chooses both sets (see [`cpus`](#cpus-table)).')),
    Key('top', 'seed', INTEGER, 'integer', default=1, high=INT64_MAX, why="the driver's seed is a 64-bit integer",
        doc=('Seed of the parameter generator, so every target sees the same key sequence. Repeat n uses `seed + n`; '
         '`seed + repeats` must stay within 2^63-1.')),

    # --- targets -------------------------------------------------------------------------
    Key('targets', 'name', NAME, 'name', default=REQUIRED,
        doc="The target's name in reports and in `--base NAME`; unique within the campaign."),
    Key('targets', 'engine', CHOICE, 'string', default=TargetSpec.engine, choices=ENGINES,
        doc='`"postgres"`, `"mariadb"` or `"mysql"`. MariaDB and MySQL run the same tests on InnoDB.'),
    Key('targets', 'version', STRING, 'string', default=None,
        doc=('A release for dbdrift to fetch and cache (see [Where the binaries come '
         'from](#where-the-binaries-come-from)). One of `version`, `basedir` and `system = true` is required.')),
    Key('targets', 'basedir', PATH, 'path', default=None,
        doc=('Your own build: the install prefix (the `--prefix` of `make install`). It must exist when the file is '
         'read.')),
    Key('targets', 'system', FLAG, 'boolean', default=TargetSpec.system,
        doc="`true` uses the host's installed server."),
    Key('targets', 'config', PATH, 'name, path, or a list of one of each', default=None,
        doc=("A configuration file appended after dbdrift's defaults: to `postgresql.conf` on PostgreSQL, after the "
         '`[mysqld]` defaults of `my.cnf` on MariaDB/MySQL. A name (`"z12a"`, `"z12b"`, `"z13a"`, `"cx10a"`, '
         '`"z12a_c8r32"`, ...) is one of the [named files](#named-configuration-files) dbdrift ships; anything else is a path to your own '
         'file, which must exist when the file is read. `["z12a", "my.cnf"]` appends the named file, then yours.')),
    Key('targets', 'settings', TABLE, 'inline table', default={}, shown="`{}`",
        doc='Server options, written after `config` so they win (see [Server settings](#server-settings)).'),
    Key('targets', 'data_checksums', FLAG, 'boolean', default=TargetSpec.data_checksums,
        doc=('PostgreSQL only: initialise the data directory with data checksums. Every target gets them set '
         'explicitly (PostgreSQL 18 would turn them on by default). An error on MariaDB/MySQL targets, where '
         '`settings = { innodb_checksum_algorithm = "crc32" }` is the equivalent.')),
    Key('targets', 'base', FLAG, 'boolean', default=TargetSpec.base,
        doc=('The target every other target is compared with (rQPS = QPS(target) / QPS(base)). At most one target may '
         'set it; without it the first target is the base and `run` says so. `--base NAME` on `run` and `report` '
         'overrides it.')),
    Key('targets', 'port', INTEGER, 'integer', default=None, shown="a free port", low=1024, high=65535,
        doc=('A port number in 1024..65535, unique among the targets. Servers never listen on TCP: on PostgreSQL the '
         'number only names the Unix socket (`.s.PGSQL.<port>`); on MariaDB/MySQL it is written to `my.cnf` while '
         'networking stays off. Leave it out unless something needs a fixed number.')),

    # --- cpus ----------------------------------------------------------------------------
    Key('cpus', 'driver', CPULIST, 'CPU list', default=REQUIRED,
        doc=('CPUs the load driver runs on, in the kernel\'s list format: `"0"`, `"1-3"`, `"0,2-3"` (or a single CPU '
         'number).')),
    Key('cpus', 'server', CPULIST, 'CPU list', default=REQUIRED,
        doc='CPUs every server process runs on, in the same format.'),

    # --- cluster -------------------------------------------------------------------------
    Key('cluster', 'address', STRING, 'string', default=None, shown="none (runs here)",
        doc=('The scheduler\'s address as `dask scheduler` prints it, e.g. `"tcp://10.0.0.5:8786"`; `HOST:PORT` means '
         '`tcp://HOST:PORT`.')),
    Key('cluster', 'hosts', LIST, 'list of names', default=(), shown="none",
        doc=('Host kinds, e.g. `["small", "large"]`: each kind runs the whole campaign on the workers started with '
         '`dbdrift worker ADDRESS --kind KIND`, and its results form a campaign of their own, `<name>@<kind>`. '
         'Without it any worker takes any unit and there is one campaign.')),
    Key('cluster', 'units', INTEGER, 'integer', default=None, shown="one per worker of the kind", high=10_000,
        why="each unit starts and loads its own servers",
        doc=("How many units a sysbench campaign's tests are split into, per host kind, each of about equal expected "
         "time. An Insert Benchmark or TPROC-C campaign's repeats are dealt out instead (at most one unit per "
         'repeat).')),
    Key('cluster', 'wait_s', DURATION, 'duration', default=600.0, measured=True,
        doc=('How long to wait for a worker that can take a unit: at the start, and after every worker of a kind is '
         'gone (its units are then stored as failed).')),
)

_BY = {(k.table, k.name): k for k in KEYS}


def key(table: str, name: str) -> Key:
    return _BY[(table, name)]


def default(table: str, name: str) -> object:
    return _BY[(table, name)].default


def default_as(table: str, name: str, kind: type[T]) -> T:
    """A key's default as the type of the field it fills (CampaignSpec's, a table's list); a row
    whose default is of another type is a mistake in the table above, said at import."""
    value = _BY[(table, name)].default
    if not isinstance(value, kind):
        raise TypeError(f"the default of {table}.{name} is {value!r}, not a {kind.__name__}")
    return value


def names(table: str) -> set[str]:
    """The keys a core table accepts: what check_keys holds unknown keys against."""
    return {k.name for k in KEYS if k.table == table}


def of(table: str) -> tuple[Key, ...]:
    return tuple(k for k in KEYS if k.table == table)


def top(*workload_rows: tuple[Key, ...]) -> tuple[Key, ...]:
    """Every row of the top-level table: the core's, and among them the top-level rows the
    workloads' plans carry (sysbench's; a workload's rows of its own table are left out), each
    group after the row its first row names (`after`), so that docs/campaign.md and the spec
    stored with a campaign keep one order."""
    merged = list(of("top"))
    for rows in workload_rows:
        at = len(merged)
        for k in rows:
            if k.table != "top":
                continue
            if k.after is not None:
                at = next((i + 1 for i, m in enumerate(merged) if m.name == k.after), -1)
                if at < 0:
                    raise TypeError(f"top-level row {k.name} follows {k.after}, which is no top-level row")
            merged.insert(at, k)
            at += 1
    return tuple(merged)


def only_for(workload: str, rows: tuple[Key, ...]) -> tuple[str, ...]:
    """Top-level keys of the other workloads among `rows` (`top`'s): refused in a `workload`
    campaign, not ignored."""
    return tuple(k.name for k in rows if k.table == "top" and k.workloads != ALL_WORKLOADS
                 and workload not in k.workloads and k.kind != TABLE)


def retired(rows: tuple[Key, ...] = KEYS) -> dict[str, str]:
    """Old key name (of any table of `rows`: the core's, or a workload's) -> the hint that says
    what replaced it."""
    hints = {}
    for k in rows:
        if k.kind == CHOICE:
            continue  # retired values, not names: fields.Table.choice says them
        for old, gone in k.retired.items():  # None: renamed to k; else why it is gone and what to do
            hints[old] = (f"it is now called {k.name}: write {k.name} = <{_unit(k)}> (default {toml(k.default)})"
                          if gone is None else gone.format(default=toml(k.default)))
    return hints


def _unit(k: Key) -> str:
    return "seconds" if k.kind == DURATION else "value"
