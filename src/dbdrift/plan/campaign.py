"""Campaign files (TOML): parse and validate everything before any server starts.

Owns the CampaignSpec type and its defaults; knows nothing about servers or the store.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from dbdrift import cpus
from dbdrift.catalog.ibench import IBenchSizes, settle_seconds
from dbdrift.catalog.sysbench import MicrobenchmarkSpec, select_tests
from dbdrift.errors import UserError
from dbdrift.model import ENGINES, IBENCH_STEPS, TargetSpec
from dbdrift.units import parse_duration_s

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
_VERSION = re.compile(r"^\d+(\.\d+){0,2}(-[A-Za-z0-9.]+)?$")


@dataclass(frozen=True)
class CampaignSpec:
    """What to run: targets x microbenchmarks x thread counts x repeats, with durations."""

    name: str
    targets: tuple[TargetSpec, ...]
    tests: tuple[MicrobenchmarkSpec, ...]
    tables: int = 1
    rows: int = 1_000_000
    threads: tuple[int, ...] = (1,)
    read_s: float = 300.0
    write_s: float = 600.0
    insert_s: float = 600.0
    warmup_s: float = 5.0
    scan_warm_s: float = 60.0
    settle_s: float | None = None  # None: spec §1.9 T = min(1200, 60 + tables*rows/1e6)
    warm_runs: bool = True
    repeats: int = 1
    # repeat: every server restarts before each repeat after a test's first | never | reload: the
    # whole test sequence runs once per repeat, each time on a new server loaded afresh
    restart: str = "repeat"
    prepared: bool = True
    seed: int = 1
    interval_s: float = 1.0
    order: str = "interleaved"  # interleaved | sequential (see README: Noise)
    slice_s: float = 0.01  # interleaved: seconds each target has before the next one takes over
    cpus: str | tuple[str, str] = "auto"  # auto | shared | (driver, server) CPU lists (dbdrift/cpus.py)
    calibration: bool = False  # an A/A campaign made by `dbdrift calibrate`
    count_instructions: bool = False  # also count instructions per event under callgrind
    timed: bool = True  # False: only count instructions, no timed runs
    flamegraphs: bool = False  # perf record the backends during each timed run
    source: str = "<built-in>"
    test_names: tuple[str, ...] = field(default=("default32",))
    workload: str = "sysbench"  # sysbench | insert-benchmark
    ibench: IBenchSizes = field(default_factory=IBenchSizes)  # the Insert Benchmark's sizes
    ibench_steps: tuple[str, ...] = IBENCH_STEPS

    @property
    def base(self) -> TargetSpec:
        return next((t for t in self.targets if t.base), self.targets[0])

    def duration_for(self, test: MicrobenchmarkSpec) -> float:
        return {"read": self.read_s, "write": self.write_s, "insert": self.insert_s}[test.duration_kind]

    def settle_total_s(self) -> float:
        if self.settle_s is not None:
            return self.settle_s
        if self.workload == "insert-benchmark":
            return settle_seconds(self.ibench)
        return min(1200.0, 60.0 + self.tables * self.rows / 1e6)

    def to_dict(self) -> dict:
        """JSON-able form stored with the campaign."""
        return {
            "name": self.name, "source": self.source, "tables": self.tables, "rows": self.rows,
            "threads": list(self.threads), "read_s": self.read_s, "write_s": self.write_s,
            "insert_s": self.insert_s, "warmup_s": self.warmup_s, "scan_warm_s": self.scan_warm_s,
            "settle_s": self.settle_s, "warm_runs": self.warm_runs, "repeats": self.repeats,
            "restart": self.restart, "prepared": self.prepared, "seed": self.seed, "interval_s": self.interval_s,
            "order": self.order, "slice_s": self.slice_s,
            "cpus": self.cpus if isinstance(self.cpus, str) else {"driver": self.cpus[0], "server": self.cpus[1]},
            "calibration": self.calibration, "count_instructions": self.count_instructions, "timed": self.timed,
            "flamegraphs": self.flamegraphs,
            "tests": list(self.test_names),
            "workload": self.workload,
            **({"insert_benchmark": {**asdict(self.ibench), "steps": list(self.ibench_steps)}}
               if self.workload == "insert-benchmark" else {}),
            "targets": [target_to_dict(t) for t in self.targets],
        }


def target_to_dict(t: TargetSpec) -> dict:
    return {
        "name": t.name, "engine": t.engine, "version": t.version,
        "basedir": str(t.basedir) if t.basedir else None, "system": t.system,
        "config": str(t.config_file) if t.config_file else None, "settings": dict(t.settings),
        "data_checksums": t.data_checksums, "base": t.base, "port": t.port,
    }


_TOP_KEYS = {
    "name", "targets", "tests", "tables", "rows", "threads", "read_s", "write_s", "insert_s",
    "warmup_s", "scan_warm_s", "settle_s", "warm_runs", "repeats", "restart", "prepared", "seed", "interval_s",
    "order", "slice_s", "cpus", "count_instructions", "flamegraphs", "workload", "insert_benchmark",
}
_IBENCH_KEYS = {"clients", "rows_l_i0", "rows_l_i1", "rows_l_i2", "query_s", "deletes", "shared_table", "steps"}
_TARGET_KEYS = {"name", "engine", "version", "basedir", "system", "config", "settings",
                "data_checksums", "base", "port"}


def load_campaign(path: Path) -> CampaignSpec:
    """Read and validate a campaign file; every problem is a UserError naming file and key."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise UserError(f"campaign file {path} does not exist",
                        "check the path; `dbdrift demo --print-campaign` shows an example") from None
    except OSError as exc:
        raise UserError(f"cannot read campaign file {path}: {exc.strerror}", "check its permissions") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path} is not valid TOML: {exc}",
                        "fix the syntax at the position shown; strings need quotes") from None
    return parse_campaign(data, source=str(path), base_dir=path.parent, default_name=path.stem)


def parse_campaign(data: dict, source: str, base_dir: Path, default_name: str) -> CampaignSpec:
    where = source
    _check_keys(data, _TOP_KEYS, where)
    raw_targets = data.get("targets")
    if not isinstance(raw_targets, list) or not raw_targets:
        raise UserError(f"{where}: no [[targets]] defined",
                        "add at least one [[targets]] table with name and version, basedir or system")
    targets = tuple(_parse_target(t, i, where, base_dir) for i, t in enumerate(raw_targets))
    _check_targets(targets, where)
    test_names = data.get("tests", ["default32"])
    if isinstance(test_names, str):
        test_names = [test_names]
    tests = select_tests(_str_list(test_names, f"{where}: tests"))
    if not tests:
        raise UserError(f"{where}: tests selects no microbenchmark", "list names from `dbdrift catalog`")
    write_s = _duration(data, "write_s", 600.0, where)
    spec = CampaignSpec(
        name=_name(data.get("name", default_name), f"{where}: name"),
        targets=targets,
        tests=tuple(tests),
        test_names=tuple(test_names),
        tables=_positive_int(data, "tables", 1, where),
        rows=_positive_int(data, "rows", 1_000_000, where),
        threads=_threads(data.get("threads", [1]), where),
        read_s=_duration(data, "read_s", 300.0, where),
        write_s=write_s,
        insert_s=_duration(data, "insert_s", write_s, where),
        warmup_s=_duration(data, "warmup_s", 5.0, where),
        scan_warm_s=_duration(data, "scan_warm_s", 60.0, where),
        settle_s=None if data.get("settle_s", "auto") == "auto" else _duration(data, "settle_s", 0, where),
        warm_runs=_bool(data, "warm_runs", True, where),
        repeats=_positive_int(data, "repeats", 1, where),
        restart=_choice(data, "restart", ("repeat", "never", "reload"), "repeat", where),
        prepared=_bool(data, "prepared", True, where),
        seed=_positive_int(data, "seed", 1, where),
        interval_s=_duration(data, "interval_s", 1.0, where),
        order=_choice(data, "order", ("interleaved", "sequential"), "interleaved", where),
        slice_s=_duration(data, "slice_s", 0.01, where),
        cpus=_cpus(data.get("cpus", "auto"), where),
        count_instructions=_bool(data, "count_instructions", False, where),
        flamegraphs=_bool(data, "flamegraphs", False, where),
        source=source,
        workload=_choice(data, "workload", ("sysbench", "insert-benchmark"), "sysbench", where),
    )
    if spec.workload == "insert-benchmark":
        spec = _with_ibench(spec, data.get("insert_benchmark", {}), where)
        for key in ("tests", "count_instructions", "flamegraphs", "threads", "tables", "rows"):
            if key in data:
                raise UserError(f"{where}: {key} applies to the sysbench workload, not the Insert Benchmark",
                                f"remove {key}; the Insert Benchmark's sizes are in [insert_benchmark]")
    elif "insert_benchmark" in data:
        raise UserError(f"{where}: [insert_benchmark] is set but workload is sysbench",
                        'add workload = "insert-benchmark" or remove the [insert_benchmark] table')
    if not 0.001 <= spec.slice_s <= 60:
        raise UserError(f"{where}: slice_s = {spec.slice_s:g} is out of range",
                        "interleaved targets take turns every slice_s seconds inside one driver run; "
                        "use 0.001 to 60, e.g. the default 0.01")
    if spec.interval_s <= 0:
        raise UserError(f"{where}: interval_s must be > 0", "use e.g. interval_s = 1")
    return spec


def _with_ibench(spec: CampaignSpec, raw: object, where: str) -> CampaignSpec:
    """The [insert_benchmark] table: clients (dop), rows of l.i0, l.i1 and l.i2 for all clients,
    seconds per query step, deletes, one shared table, and optionally a subset of the steps."""
    label = f"{where}: [insert_benchmark]"
    if not isinstance(raw, dict):
        raise UserError(f"{label} is not a table", "write [insert_benchmark] followed by key = value lines")
    _check_keys(raw, _IBENCH_KEYS, label)
    default = IBenchSizes()
    rows_l_i1 = _positive_int(raw, "rows_l_i1", default.rows_l_i1, label)
    sizes = IBenchSizes(
        clients=_positive_int(raw, "clients", default.clients, label),
        rows_l_i0=_positive_int(raw, "rows_l_i0", default.rows_l_i0, label),
        rows_l_i1=rows_l_i1,
        rows_l_i2=_positive_int(raw, "rows_l_i2", max(1, rows_l_i1 // 4), label),
        query_s=_duration(raw, "query_s", default.query_s, label),
        deletes=_bool(raw, "deletes", default.deletes, label),
        shared_table=_bool(raw, "shared_table", default.shared_table, label),
    )
    if sizes.shared_table and sizes.deletes and sizes.clients > 1:
        raise UserError(f"{label}: shared_table with deletes and several clients",
                        "clients deleting the oldest rows of one table would delete each other's: "
                        "set deletes = false or shared_table = false (spec §2.1)")
    names = raw.get("steps", list(IBENCH_STEPS))
    names = _str_list([names] if isinstance(names, str) else names, f"{label}: steps")
    unknown = [n for n in names if n not in IBENCH_STEPS]
    if unknown:
        raise UserError(f"{label}: unknown step {unknown[0]!r}", f"steps are {', '.join(IBENCH_STEPS)}")
    return replace(spec, ibench=sizes, ibench_steps=tuple(n for n in IBENCH_STEPS if n in names),
                   test_names=(), order="sequential")


def _parse_target(raw: object, index: int, where: str, base_dir: Path) -> TargetSpec:
    if not isinstance(raw, dict):
        raise UserError(f"{where}: targets[{index}] is not a table", "write each target as [[targets]]")
    label = f"{where}: target {raw.get('name', f'#{index + 1}')!r}"
    _check_keys(raw, _TARGET_KEYS, label)
    name = _name(raw.get("name"), f"{label}: name")
    engine = raw.get("engine", "postgres")
    if engine not in ENGINES:
        raise UserError(f"{label}: unknown engine {engine!r}", f"supported engines: {', '.join(ENGINES)}")
    version, basedir, system = raw.get("version"), raw.get("basedir"), raw.get("system", False)
    sources = [s for s in (version is not None, basedir is not None, bool(system)) if s]
    if len(sources) != 1:
        raise UserError(f"{label}: give exactly one of version, basedir or system = true",
                        'e.g. version = "17.10" (fetched), basedir = "/opt/pg17" (your build), system = true')
    if version is not None:
        version = str(version)
        if not _VERSION.match(version):
            raise UserError(f"{label}: version {version!r} is not a version number", 'write e.g. version = "17.10"')
    if basedir is not None:
        basedir = (base_dir / Path(str(basedir)).expanduser()).resolve()
        if not basedir.is_dir():
            raise UserError(f"{label}: basedir {basedir} does not exist",
                            "point basedir at the install prefix that holds "
                            + ("bin/postgres" if engine == "postgres" else "bin/mysqld or bin/mariadbd"))
    config = raw.get("config")
    if config is not None:
        config = (base_dir / Path(str(config)).expanduser()).resolve()
        if not config.is_file():
            raise UserError(f"{label}: config file {config} does not exist",
                            "paths are relative to the campaign file")
    settings = raw.get("settings", {})
    if not isinstance(settings, dict):
        raise UserError(f"{label}: settings must be a table", 'write settings = { shared_buffers = "4GB" }')
    if engine != "postgres" and raw.get("data_checksums"):
        raise UserError(f"{label}: data_checksums is a PostgreSQL option (initdb --data-checksums)",
                        f"remove it from this {engine} target; InnoDB checksums are a setting: "
                        "settings = { innodb_checksum_algorithm = \"crc32\" }")
    port = raw.get("port")
    if port is not None and (not isinstance(port, int) or not 1024 <= port <= 65535):
        raise UserError(f"{label}: port {port!r} is not a port number in 1024..65535",
                        "remove port to let dbdrift pick a free one")
    return TargetSpec(
        name=name, engine=engine, version=version, basedir=basedir, system=bool(system),
        config_file=config, settings={str(k): _setting(v) for k, v in settings.items()},
        data_checksums=_bool(raw, "data_checksums", False, label), base=_bool(raw, "base", False, label),
        port=port,
    )


def _check_targets(targets: tuple[TargetSpec, ...], where: str) -> None:
    names = [t.name for t in targets]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UserError(f"{where}: target name {dupes[0]!r} is used twice", "give every target its own name")
    bases = [t.name for t in targets if t.base]
    if len(bases) > 1:
        raise UserError(f"{where}: more than one base target ({', '.join(bases)})",
                        "set base = true on one target only")
    ports = [t.port for t in targets if t.port is not None]
    if len(ports) != len(set(ports)):
        raise UserError(f"{where}: two targets use the same port", "remove port to let dbdrift pick free ports")


def as_calibration(spec: CampaignSpec, target_name: str | None) -> CampaignSpec:
    """An A/A campaign: one target against an identical copy of itself, interleaved."""
    name = target_name or spec.base.name
    target = next((t for t in spec.targets if t.name == name), None)
    if target is None:
        raise UserError(f"--target {name}: no such target in {spec.source}",
                        f"targets: {', '.join(t.name for t in spec.targets)}")
    copy = replace(target, name=f"{name}-aa"[:64], base=False, port=None)
    return replace(spec, name=f"calibrate-{name}"[:64], targets=(replace(target, base=True), copy),
                   order="interleaved", calibration=True)


def with_base(spec: CampaignSpec, base_name: str | None) -> CampaignSpec:
    if base_name is None:
        return spec
    if base_name not in {t.name for t in spec.targets}:
        raise UserError(f"--base {base_name}: no such target", f"targets: {', '.join(t.name for t in spec.targets)}")
    return replace(spec, targets=tuple(replace(t, base=t.name == base_name) for t in spec.targets))


_RETIRED = {"slice_warmup_s": "remove it: interleaved targets now take turns inside one driver run, so no slice "
                             "pays a warm-up (slice_s is the length of each turn, default 0.01 s)"}


def _check_keys(data: dict, known: set[str], where: str) -> None:
    import difflib

    for key in data:
        if key in _RETIRED:
            raise UserError(f"{where}: {key} is no longer used", _RETIRED[key])
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(sorted(known))}"
            raise UserError(f"{where}: unknown key {key!r}", hint)


def _name(value: object, what: str) -> str:
    if not isinstance(value, str) or not _NAME.match(value):
        raise UserError(f"{what}: {value!r} is not a valid name",
                        "use letters, digits, '.', '_', '+', '-' (at most 64 characters)")
    return value


def _setting(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _str_list(value: object, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f"{what} must be a list of strings", 'e.g. tests = ["point", "update-index"]')
    return value


def _choice(data: dict, key: str, choices: tuple[str, ...], default: str, where: str) -> str:
    value = data.get(key, default)
    if value not in choices:
        raise UserError(f"{where}: {key} must be one of {', '.join(choices)}, got {value!r}",
                        f'write {key} = "{default}"')
    return value


def _bool(data: dict, key: str, default: bool, where: str) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise UserError(f"{where}: {key} must be true or false, got {value!r}", f"write {key} = true")
    return value


def _positive_int(data: dict, key: str, default: int, where: str) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"{where}: {key} must be a positive integer, got {value!r}", f"write e.g. {key} = {default}")
    return value


def _duration(data: dict, key: str, default: float, where: str) -> float:
    return parse_duration_s(data.get(key, default), f"{where}: {key}")


def _cpus(value: object, where: str) -> str | tuple[str, str]:
    """cpus = "auto" | "shared" | { driver = "0", server = "1-3" } (dbdrift/cpus.py)."""
    if isinstance(value, str) and value in cpus.MODES:
        return value
    if isinstance(value, dict):
        _check_keys(value, {"driver", "server"}, f"{where}: cpus")
        if set(value) == {"driver", "server"}:
            lists = tuple(str(value[k]) for k in ("driver", "server"))
            for key, text in zip(("driver", "server"), lists):
                cpus.parse_list(text, f"{where}: cpus.{key}")
            return lists
    raise UserError(f"{where}: cpus must be \"auto\", \"shared\" or a table with driver and server, got {value!r}",
                    'write cpus = "auto" (driver and servers on separate CPUs when there are two or more), '
                    'cpus = "shared", or cpus = { driver = "0", server = "1-3" }')


def _threads(value: object, where: str) -> tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if (not isinstance(value, list) or not value
            or not all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 1024 for v in value)):
        raise UserError(f"{where}: threads must be a list of client counts in 1..1024, got {value!r}",
                        "write e.g. threads = [1] or threads = [1, 8]")
    return tuple(dict.fromkeys(value))
