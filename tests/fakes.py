"""Stand-ins that let the campaign runner (runner/campaign.py and session.py, workloads/sysbench/session.py
and turns.py) run without a database: a fake `Server` per target that records every start and stop in one
shared event log, a dialect whose driver backend is `null`, and a wrapper around
driver/process.run_driver that gives timed runs a `null` section (docs/protocol.md "null
backend"), records which targets each timed run measured, and injects faults (a server that
dies during a run, Ctrl-C during a run). The real dbdrift-driver binary does every run and
every `exec` job (load, settle, prewarm), so specs, intervals, rounds and summaries are the
driver's own.

`Lab.install(monkeypatch)` routes the runner through all of it; see tests/unit/test_runner.py.
"""
from __future__ import annotations

from pathlib import Path

from dbdrift.workloads.sysbench import catalog as sysbench
from dbdrift.driver import process
from dbdrift.driver.protocol import DriverOutput
from dbdrift.errors import ServerError
from dbdrift.metrics import perf
from dbdrift.model import ConnectionInfo, InstallInfo, ServerInfo, TargetSpec
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.workloads.registry import parse_campaign
from dbdrift.runner import campaign as campaign_mod
from dbdrift.runner import session as session_mod
from dbdrift.runner.session import TargetSession
from dbdrift.server import engines, rundir
from dbdrift.server.base import Server
from dbdrift.workloads.sysbench import session as sysbench_session_mod
from dbdrift.workloads.sysbench.dialect import PostgresSysbench
from dbdrift.workloads.sysbench.plan import params as sysbench_params

# What the null backend simulates per timed run (all threads together).
NULL_SECTION = {"ops_per_s": 2000, "latency_us": 100, "rows_per_statement": 1}

_real_run_driver = process.run_driver


class NullDialect(PostgresSysbench):
    """PostgreSQL's load, prewarm and settle jobs, sent to the driver's null backend: every
    `exec` job answers "NULL" with no rows (so settings are {} and the settle's vacuum is
    done after one pass). `family` stands for the engine family: targets whose dialects
    differ in it cannot take turns in one driver run (turns.can_take_turns), as
    PostgreSQL and InnoDB targets cannot; Lab.run_driver sends both to `null`."""

    sql_dialect = "postgres"  # `$n` placeholders: what the null backend's workload compiler reads

    def __init__(self, version: str, family: str = "postgres") -> None:
        super().__init__(version)
        self.backend = "null" if family == "postgres" else f"null-{family}"


class FakeServer(Server):
    """A server that runs nothing: start/stop flip a flag and go into the lab's event log as
    ("start", name) / ("stop", name) (a stop of a server that is not running is the real
    servers' no-op and is not logged). Faults come from the lab: a start that fails with the
    ServerError a real server raises, and a death that makes check_alive raise "... died"."""

    PID_FILE = "fake.pid"

    def __init__(self, target: TargetSpec, install: InstallInfo, run_dir: Path, lab: "Lab",
                 owner: dict | None = None) -> None:
        super().__init__(target, install, run_dir, owner)
        self.lab = lab
        self.port = lab.port_of(target.name)
        self.config_text = "# fake server: nothing appended\n"
        self.running = False
        self.dead = False
        self.starts = 0

    @property
    def server_pid(self) -> int | None:
        return None  # nothing to sample or watch with perf

    def init(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.lab.events.append(("init", self.name))

    def start(self) -> None:
        self.starts += 1
        if self.starts in self.lab.failing_starts.get(self.name, ()):
            self.lab.events.append(("start failed", self.name))
            raise ServerError(f"{self.label} did not start: FATAL:  fake start failure (start #{self.starts})",
                              f"see {self.log_path}")
        self.running, self.dead, self.launched = True, False, True
        with self.log_path.open("a") as log:
            log.write(f"fake server {self.name} started (start #{self.starts})\n")
        self.lab.events.append(("start", self.name))

    def stop(self) -> None:
        if self.running and not self.dead:
            self.lab.events.append(("stop", self.name))
        self.running = False

    def die(self) -> None:
        self.dead = True
        self.lab.events.append(("died", self.name))

    def is_alive(self) -> bool:
        return self.running and not self.dead

    def check_alive(self) -> None:
        if not self.running:
            raise ServerError(f"{self.label} is not running (stopped, or never started)",
                              "start the server before checking on it")
        if self.dead:
            raise ServerError(f"{self.label} died (fake postmaster is gone); last lines of {self.log_path}",
                              f"see {self.log_path}")

    @property
    def connection(self) -> ConnectionInfo:
        return ConnectionInfo(socket_dir=self.socket_dir, port=self.port, user="fake", dbname="postgres")

    def info(self, settings: dict[str, str]) -> ServerInfo:
        return ServerInfo(self.install.engine, self.install.version, f"FakeSQL {self.install.version}",
                          self.data_dir, self.log_path, settings)


class RecordingProgress:
    """A ProgressSink that keeps the messages (the runner's notes on skipped and failed targets)."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.steps: list[tuple[str, str, str]] = []  # (target, label, status)
        self.progress: list[tuple[str, str, float, str]] = []  # (target, label, fraction, rate) inside steps

    def campaign_start(self, total_s, total_steps): pass
    def step_start(self, target, label, expected_s, wall_s=None): pass
    def advance(self, seconds, steps=0): pass

    def step_progress(self, target, label, fraction, rate):
        self.progress.append((target, label, fraction, rate))

    def step_end(self, target, label, status, detail):
        self.steps.append((target, label, status))

    def message(self, text):
        self.messages.append(text)


class Lab:
    """The fakes of one test and what they saw.

    `events` is the one shared log, in call order: ("init"|"start"|"stop"|"start failed"|
    "died", target) from the servers and ("run", "A+B", test, repeat) for each timed driver
    run, naming the targets it measured ("A+B": one run in which A and B took turns).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.events: list[tuple] = []
        self.servers: dict[str, FakeServer] = {}
        self.failing_starts: dict[str, set[int]] = {}  # target -> which of its starts fail (1-based)
        self.deaths: dict[int, str] = {}  # timed run number (1-based) -> the target that dies in it
        self.deaths_after: dict[int, str] = {}  # timed run number -> the target that dies once it is over
        self.interrupt_at: int | None = None  # timed run number in which the user presses Ctrl-C
        self.timed_runs = 0
        self.spec: CampaignSpec | None = None
        self._ports: dict[str, int] = {}

    # -- setting up ----------------------------------------------------------------------------
    def campaign(self, targets=("A", "B"), engines_=None, **keys) -> CampaignSpec:
        """A tiny campaign from a dict, as parse_campaign reads a TOML file."""
        data = {"name": "unit", "tables": 1, "rows": 200, "threads": [1], "read_s": 0.2, "write_s": 0.2,
                "warmup_s": 0, "scan_warm_s": 0.2, "settle_s": 0, "interval_s": 0.1, "warm_runs": False,
                "cpus": "shared", "tests": ["point-query", "update-index"], **keys}
        data["targets"] = [{"name": name, "engine": (engines_ or {}).get(name, "postgres"), "version": "17.10"}
                           for name in targets]
        self.spec = parse_campaign(data, source="unit.toml", base_dir=self.root, default_name="unit")
        return self.spec

    def port_of(self, name: str) -> int:
        return self._ports.setdefault(name, 40000 + len(self._ports))

    def install(self, monkeypatch) -> "Lab":
        work = self.root / "work"
        work.mkdir(mode=0o700, exist_ok=True)
        monkeypatch.setattr(rundir, "work_dir", lambda: work)  # no server user, no /var/tmp
        monkeypatch.setattr(engines, "resolve_install", self.resolve_install)
        monkeypatch.setattr(session_mod, "make_server", self.make_server)
        monkeypatch.setattr(session_mod, "for_engine", lambda engine, version: NullDialect(version, engine))
        monkeypatch.setattr(sysbench_session_mod, "for_engine", lambda engine, version: NullDialect(version, engine))
        monkeypatch.setattr(process, "run_driver", self.run_driver)
        # host facts with a 1 s steal window and a perf probe are the campaign's, not the runner's logic
        monkeypatch.setattr(campaign_mod, "host_info", lambda support, placement: {"fake": True})
        monkeypatch.setattr(perf, "probe", lambda *a, **k: perf.PerfSupport(False, False, False, "fake host"))
        # after a failed run a live server is looked at for 1 s before it counts as alive
        monkeypatch.setattr(TargetSession.raise_if_dead, "__defaults__", (0.05,))
        return self

    # -- the fakes -----------------------------------------------------------------------------
    def resolve_install(self, target: TargetSpec, cache_dir: Path, progress=None) -> InstallInfo:
        return InstallInfo(target.engine, self.root / "no-such-bindir", target.version or "0", "fake")

    def make_server(self, target: TargetSpec, install: InstallInfo, run_dir: Path, owner: dict | None = None):
        server = FakeServer(target, install, run_dir, self, owner)
        self.servers[target.name] = server
        return server

    def run_driver(self, mode: str, spec: dict, timeout_s: float, on_line=None, driver=None, on_start=None,
                   cpus=None) -> process.DriverResult:
        """The real driver, on the null backend; timed runs are logged and may meet a fault."""
        if str(spec.get("backend", "")).startswith("null"):
            spec = dict(spec, backend="null")
        if mode != "run":
            return _real_run_driver(mode, spec, timeout_s, on_line, driver, on_start, cpus)
        spec = dict(spec, null=NULL_SECTION)
        connections = spec["turns"]["connections"] if "turns" in spec else [spec["connection"]]
        names = [self.name_of_port(c["port"]) for c in connections]
        self.timed_runs += 1
        self.events.append(("run", "+".join(names), self.test_of(spec["workload"]), spec["seed"] - self.spec.seed))
        victim = self.deaths.get(self.timed_runs)
        if victim is not None:
            # The server dies while the run is on: the driver loses its connection and exits 1
            # with a connect error (a fatal error on one target ends a run in turns).
            self.servers[victim].die()
            where = f"target {names.index(victim)}: " if len(names) > 1 else ""
            fatal = {"type": "fatal", "class": "connect",
                     "message": f"{where}server closed the connection unexpectedly"}
            return process.DriverResult(DriverOutput(fatal=fatal), 1, "", False, 0.01)
        if self.timed_runs == self.interrupt_at:
            on_line = _ctrl_c_at_first_interval(on_line)
        result = _real_run_driver(mode, spec, timeout_s, on_line, driver, on_start, cpus)
        if self.timed_runs in self.deaths_after:  # dies between this run and the next
            self.servers[self.deaths_after[self.timed_runs]].die()
        return result

    # -- reading what happened -----------------------------------------------------------------
    def name_of_port(self, port: int) -> str:
        return next(name for name, p in self._ports.items() if p == port)

    def test_of(self, workload: dict) -> str:
        rows = sysbench_params(self.spec).rows
        return next((t.name for t in sysbench.CATALOG.values()
                     if sysbench.render_workload(t, "postgres", rows) == workload), "?")

    def runs(self) -> list[tuple]:
        """The timed runs: (targets, test, repeat)."""
        return [e[1:] for e in self.events if e[0] == "run"]

    def server_events(self) -> list[tuple[str, str]]:
        return [e for e in self.events if e[0] in ("start", "stop", "start failed", "died")]


def _ctrl_c_at_first_interval(on_line):
    """The user presses Ctrl-C once the run's first interval is in: KeyboardInterrupt is
    raised where process.run_driver reads the driver's lines, as SIGINT would raise it."""
    pressed = []

    def wrapped(obj: dict) -> None:
        if on_line is not None:
            on_line(obj)
        if obj.get("type") == "interval" and not pressed:
            pressed.append(True)
            raise KeyboardInterrupt

    return wrapped


def store_rows(store, campaign_id: int, superseded: bool = False) -> list[dict]:
    """Every stored run of a campaign (with superseded ones when asked), as dicts with `target`."""
    rows = store.db.execute(
        "SELECT runs.*, targets.name AS target FROM runs JOIN targets ON targets.id = runs.target_id "
        "WHERE targets.campaign_id = ? AND (? OR runs.superseded = 0) ORDER BY runs.id",
        (campaign_id, int(superseded))).fetchall()
    return [dict(r) for r in rows]

