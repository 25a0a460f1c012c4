"""Campaign files (TOML; keys in docs/campaign.md): parse and validate everything before any
server starts.

Owns the CampaignSpec type and its defaults; plan/fields.py reads and limits each value. Knows
nothing about servers or the store. Bad input of any shape is a UserError naming the file and
key, never a traceback.
"""
from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from collections.abc import Mapping
from typing import Protocol, TypeVar

from dbdrift.errors import InputError, UserError
from dbdrift.model import ENGINES, JsonObject, TargetSpec
from dbdrift.workload import Capabilities, WorkloadPlan
from dbdrift.plan import fields, keys
from dbdrift.plan.axes import Axis, durability_axes, expand_targets, parse_axes, variant_patterns
from dbdrift.catalog.configs import NAMED, check_named, is_named, version_of
from dbdrift.plan.overrides import apply_sets
from dbdrift.plan.fields import TomlTable
from dbdrift.plan.keys import INT64_MAX
from dbdrift.quantities import brief_repr

T = TypeVar("T")


class Test(Protocol):
    """One test of the campaign's `tests` as this layer sees it (sysbench's MicrobenchmarkSpec,
    which its slice's parse puts there): its name and which duration key applies to it."""

    @property
    def name(self) -> str: ...
    @property
    def duration_kind(self) -> str: ...  # read | write | insert


Plan = WorkloadPlan["CampaignSpec", fields.Table, Axis, JsonObject, keys.Key]
"""A workload's plan part with this layer's types bound (each slice's plan.py makes one)."""

Plans = Mapping[str, Plan]
"""The plan parts by `workload` value. This layer sits below the slices and imports none of them:
the reader is handed them (workloads/registry.py's PLANS, which its load_campaign and
parse_campaign pass in), and the campaign it reads holds its own (CampaignSpec.workload_plan)."""


@dataclass(frozen=True)
class ClusterSettings:
    """The [cluster] table (docs/cluster.md): where the scheduler is, which host kinds run the
    whole campaign each, how many units the tests are split into, how long to wait for a worker."""

    address: str | None = None
    hosts: tuple[str, ...] = ()
    units: int | None = None  # None: one per worker of the host kind
    wait_s: float = keys.default_as("cluster", "wait_s", float)

    def to_dict(self) -> JsonObject:
        return {"address": self.address, "hosts": list(self.hosts), "units": self.units, "wait_s": self.wait_s}


def _default(name: str, kind: type[T]) -> T:
    return keys.default_as("top", name, kind)


@dataclass(frozen=True)
class CampaignSpec:
    """What to run: targets x microbenchmarks x thread counts x repeats, with durations. The
    fields of sysbench's keys here (tests, order) are those core modules read; their
    defaults are the fields' own, which the rows of its slice's keys.py point at. The keys only
    its slice reads are its SysbenchParams, in `params`."""

    name: str
    targets: tuple[TargetSpec, ...]
    workload_plan: Plan  # the plan part of this campaign's workload (its slice's plan.py), handed to the reader
    tests: tuple[Test, ...] = ()  # sysbench's tests, in run order (its parse resolves `tests`); () for the others
    settle_s: float | None = None  # None: "auto", the settle time settle_total_s computes
    repeats: int = _default("repeats", int)
    seed: int = _default("seed", int)
    interval_s: float = _default("interval_s", float)
    order: str = "turns"  # turns | sequential (docs/noise.md)
    round_order: str = _default("round_order", str)  # balanced | alternating (plan/rounds.py)
    cpus: str | tuple[str, str] = _default("cpus", str)  # auto | shared | (driver, server) CPU lists (dbdrift/cpus.py)
    calibration: bool = False  # an A/A campaign made by `dbdrift calibrate`
    aa_twin: bool = _default("aa_twin", bool)  # a twin of the base among the targets (with_twin)
    detect: float | None = None  # plan the campaign to see a change of this size (analysis/planning.py)
    budget: float | None = None  # with detect: the most the campaign may take, seconds
    sequential: bool = _default("sequential", bool)  # with detect: stop each cell once decided (runner/sequential.py)
    detect_plan: JsonObject | None = None  # the plan `run` made for detect (app/detect.py), stored with the campaign
    timed: bool = True  # False: only count instructions, no timed runs
    flamegraphs: bool = _default("flamegraphs", bool)  # perf record the backends during each timed run
    source: str = "<built-in>"
    test_names: tuple[str, ...] = ("default32",)
    # the workload's own keys read into its slice's Params record (TpccParams from [tpcc], ...; sysbench's
    # from top-level keys), which the slice reads back typed (its plan.py's params(spec))
    params: object = None
    allow_large: bool = _default("allow_large", bool)  # accept sizes and durations beyond the soft limits (plan/keys.py)
    axes: tuple[Axis, ...] = ()  # configuration matrix axes; targets are already expanded into their variants
    variant_patterns: tuple[str, ...] = ()  # `variants`: shell globs choosing which variants run
    cluster: ClusterSettings | None = None  # [cluster]: run the campaign's units on a Dask cluster
    only_repeats: tuple[int, ...] | None = None  # a cluster unit's repeats (Insert Benchmark, TPROC-C); None: all
    # the top-level rows the file was read with: the core's and those of every workload's plan (top_keys);
    # (): the core's and this campaign's workload's, for a spec made without a file
    top_keys: tuple[keys.Key, ...] = field(default=(), repr=False, compare=False)

    @property
    def workload(self) -> str:
        """The campaign's `workload` value, its plan part's name (the registry lists them)."""
        return self.workload_plan.name

    @property
    def caps(self) -> Capabilities:
        """What this campaign's workload can do, asked instead of its name."""
        return self.workload_plan.caps

    @property
    def base(self) -> TargetSpec:
        return next((t for t in self.targets if t.base), self.targets[0])

    @property
    def base_is_implicit(self) -> bool:
        """True when no target sets base = true and the first one is the base: worth saying so."""
        return not any(t.base for t in self.targets)

    def settle_total_s(self) -> float:
        if self.settle_s is not None:
            return self.settle_s
        return self.workload_plan.settle_s(self)

    def to_dict(self) -> JsonObject:
        """JSON-able form stored with the campaign: the top-level keys in their rows' order, then
        the workload's table."""
        own = self.workload_plan.stored(self)  # its table, or its top-level keys' values (sysbench's)
        top = self._stored_keys()
        named = {key.name for key in top}
        return {
            "name": self.name, "source": self.source, "calibration": self.calibration, "timed": self.timed,
            **{key.name: _json(key, self._stored_value(key, own)) for key in top},
            **{name: value for name, value in own.items() if name not in named},
            **({"axes": [a.to_dict() for a in self.axes], "variants": list(self.variant_patterns)}
               if self.axes else {}),
            **({"cluster": self.cluster.to_dict()} if self.cluster else {}),
            **({"detect_plan": self.detect_plan} if self.detect_plan else {}),
            "targets": [target_to_dict(t) for t in self.targets],
        }

    def _stored_keys(self) -> tuple[keys.Key, ...]:
        """The top-level keys to_dict stores as they are, in the rows' order; the tables have
        their own form, and variants is stored beside axes."""
        rows = self.top_keys or keys.top(self.workload_plan.keys)
        return tuple(k for k in rows if k.kind not in (keys.TABLE, keys.NAME) and k.name != "variants")

    def _stored_value(self, key: keys.Key, own: JsonObject) -> object:
        """A top-level key's value: its workload's Params' (`own`, as its plan stores them), the
        spec's field, or, neither (a key of another workload's Params, which this campaign
        refused), its default."""
        if key.name in own:
            return own[key.name]
        return getattr(self, key.field_name) if hasattr(self, key.field_name) else key.default


def top_keys(plans: Plans) -> tuple[keys.Key, ...]:
    """Every top-level row a campaign file may hold: the core's and the workloads' (sysbench's),
    as the plans handed to the reader carry them."""
    return keys.top(*(p.keys for p in plans.values()))


def _json(key: keys.Key, value: object) -> object:
    if key.kind == keys.CPUS and isinstance(value, tuple):
        return {"driver": value[0], "server": value[1]}
    return list(value) if isinstance(value, tuple) else value


def target_to_dict(t: TargetSpec) -> JsonObject:
    return {
        "name": t.name, "engine": t.engine, "version": t.version,
        "basedir": str(t.basedir) if t.basedir else None, "system": t.system,
        "config": str(t.config) if t.config else None, "settings": dict(t.settings),
        "data_checksums": t.data_checksums, "base": t.base, "port": t.port,
        **({"named_config": t.named_config} if t.named_config else {}),
        **({"variant": t.variant, "parent": t.parent, "levels": {lv.axis: lv.name for lv in t.levels}}
           if t.levels else {}),
        **({"twin": True} if t.twin else {}),
    }


# --- reading ----------------------------------------------------------------------------------
def load_campaign(path: Path, sets: list[str] | tuple[str, ...] = (), *, plans: Plans) -> CampaignSpec:
    """Read and validate a campaign file, with `--set key=value` overrides applied first;
    every problem is a UserError naming file and key."""
    data, text = read_campaign_data(path)
    data = apply_sets(data, sets)
    return parse_campaign(data, source=str(path), base_dir=path.parent, default_name=path.stem, text=text,
                          plans=plans)


def read_campaign_data(path: Path) -> tuple[TomlTable, str]:
    """The campaign file's TOML as read, and its text."""
    text = _read_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path} is not valid TOML: {exc}",
                         "fix the syntax at the position shown; strings need quotes") from None
    except ValueError as exc:  # tomllib lets int()'s limit of 4300 digits through
        if "digits" not in str(exc):
            raise InputError(f"{path} is not valid TOML: {exc}", "fix the value at fault") from None
        raise InputError(f"{path} holds an integer of more than 4300 digits",
                         f"TOML integers are 64-bit: at most {INT64_MAX}") from None
    except RecursionError:
        raise InputError(f"{path} nests arrays or tables too deeply to read",
                         "a campaign needs three levels at most: [[targets]] holding settings = { ... }") from None
    return data, text


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"campaign file {path} does not exist",
                         "check the path; `dbdrift demo --print-campaign` shows an example") from None
    except OSError as exc:
        raise InputError(f"cannot read campaign file {path}: {exc.strerror}", "check its permissions") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - raw.rfind(b"\n", 0, exc.start)
        raise InputError(f"{path} is not valid UTF-8: byte 0x{raw[exc.start]:02x} at line {line}, column {column} "
                         f"(byte offset {exc.start})",
                         "TOML files are UTF-8: save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)") from None


def parse_campaign(data: TomlTable, source: str, base_dir: Path, default_name: str, *,
                   plans: Plans, text: str | None = None) -> CampaignSpec:
    """Validate a campaign read from TOML. `text`, the file as written, lets messages quote
    numbers as the user wrote them (tomllib reads 17.10 as 17.1)."""
    where = source
    if not isinstance(data, dict):
        raise InputError(f"{where}: a campaign must be a table of keys, got {brief_repr(data)}",
                         "`dbdrift demo --print-campaign` shows a complete campaign file")
    fields.check_int64(data, where)
    rows = top_keys(plans)
    fields.check_keys(data, {k.name for k in rows}, where, retired=fields.retired_hints(rows))
    top = fields.Table(data, where, allow_large=fields.Table(data, where).flag("allow_large"), rows=rows)
    raw_targets = data.get("targets")
    if not isinstance(raw_targets, list) or not raw_targets:
        raise InputError(f"{where}: no [[targets]] defined",
                         "add at least one [[targets]] table with name and version, basedir or system")
    targets = tuple(_parse_target(t, i, where, base_dir, text) for i, t in enumerate(raw_targets))
    _check_targets(targets, where)
    plan = _workload_plan(data, top, plans)
    axes = parse_axes(data.get("axes"), where) + tuple(plan.axes(top))
    patterns = variant_patterns(data.get("variants"), where)
    targets = expand_targets(targets, axes, patterns, where)
    _check_targets(targets, where)
    spec = CampaignSpec(name=fields.name(data.get("name", default_name), f"{where}: name"), targets=targets,
                        workload_plan=plan, source=source,
                        allow_large=top.allow_large, axes=axes, variant_patterns=patterns, top_keys=rows)
    spec = _with_workload(_with_detect(_with_shared_keys(spec, top), top), top, plans)
    spec = with_twin(spec, top.flag("aa_twin"), where)
    if "cluster" in data:
        spec = replace(spec, cluster=parse_cluster(data["cluster"], f"{where}: [cluster]"))
    if spec.seed + spec.repeats > INT64_MAX:
        raise InputError(f"{where}: seed = {spec.seed} with repeats = {spec.repeats} goes beyond {INT64_MAX}",
                         "repeat n runs with seed + n, a 64-bit integer: use a smaller seed, e.g. seed = 1")
    return spec


def _workload_plan(data: TomlTable, top: fields.Table, plans: Plans) -> Plan:
    """The plan part of the campaign's `workload`, refused with the workloads there are when it
    names none of them."""
    name = top.choice("workload")
    if name not in plans:  # the key's choices and the registry's workloads are one list (tests/unit/test_workloads.py)
        raise InputError(f"{top.where}: workload {brief_repr(name)} has no plan part here",
                         f"workloads: {', '.join(plans)}")
    return plans[name]


def parse_cluster(raw: object, label: str) -> ClusterSettings:
    if not isinstance(raw, dict):
        raise InputError(f"{label} is not a table", 'write [cluster] followed by e.g. address = "tcp://sched:8786"')
    fields.check_keys(raw, keys.names("cluster"), label)
    table = fields.Table(raw, label, table="cluster")
    address = raw.get("address")
    if address is not None:
        address = cluster_address(address, f"{label}: address")
    hosts = fields.str_list(raw.get("hosts", list(keys.default_as("cluster", "hosts", tuple))), f"{label}: hosts", 'e.g. hosts = ["small", "large"]')
    for kind in hosts:
        fields.name(kind, f"{label}: hosts")
    if len(set(hosts)) != len(hosts):
        raise InputError(f"{label}: hosts names a host kind twice", "list each kind once")
    return ClusterSettings(address=address, hosts=tuple(hosts),
                           units=table.integer("units") if "units" in raw else None, wait_s=table.duration("wait_s"))


def cluster_address(value: object, what: str) -> str:
    """A Dask scheduler address: tcp://HOST:PORT (tls:// and inproc:// too), or HOST:PORT."""
    if not isinstance(value, str) or not value.strip() or " " in value.strip():
        raise InputError(f"{what}: {brief_repr(value)} is not a scheduler address",
                         "write the address `dask scheduler` prints, e.g. tcp://10.0.0.5:8786")
    value = value.strip()
    if "://" not in value:
        value = "tcp://" + value
    if not value.split("://", 1)[0] in ("tcp", "tls", "inproc", "ucx", "ws", "wss"):
        raise InputError(f"{what}: {value} has an unknown protocol",
                         "write the address `dask scheduler` prints, e.g. tcp://10.0.0.5:8786")
    return value


def _with_shared_keys(spec: CampaignSpec, top: fields.Table) -> CampaignSpec:
    """The keys every workload reads: settles, repeats, order, CPUs, flamegraphs (a workload
    that records none refuses the key before it is used)."""
    return replace(
        spec, settle_s=_settle(top), repeats=top.integer("repeats"),
        seed=top.integer("seed"), interval_s=top.duration("interval_s"),
        order=top.choice("order"), round_order=top.choice("round_order"),
        cpus=fields.cpu_placement(top.data.get("cpus", keys.default("top", "cpus")), top.where),
        flamegraphs=top.flag("flamegraphs"),
    )


def _with_detect(spec: CampaignSpec, top: fields.Table) -> CampaignSpec:
    """detect and budget (app/detect.py plans them): a budget needs detect (a workload whose
    targets take turns needs them in turns, each repeat on its own starts: its parse says so)."""
    detect, budget = top.percent("detect"), top.duration("budget") if "budget" in top.data else None
    if budget is not None and detect is None:
        raise InputError(f"{top.where}: budget is set without detect", 'add detect = "2%" (the change to plan for), '
                         "or remove budget")
    return replace(spec, detect=detect, budget=budget, sequential=top.flag("sequential"))


def _settle(top: fields.Table) -> float | None:
    """settle_s: "auto" (None: CampaignSpec.settle_total_s decides) or a duration, 0 included."""
    if top.data.get("settle_s", "auto") == "auto":
        return None
    try:
        return top.duration("settle_s", 0)
    except UserError as exc:
        raise InputError(exc.message, f'{exc.hint}; or settle_s = "auto" (the default)') from None


def _with_workload(spec: CampaignSpec, top: fields.Table, plans: Plans) -> CampaignSpec:
    """The campaign's workload reads its own keys, after the keys and tables of the other
    workloads are refused rather than silently ignored."""
    own = spec.workload_plan
    own.refuse(top)
    for other in plans.values():
        if other.table and other.table != own.table and other.table in top.data:
            raise InputError(f"{top.where}: [{other.table}] is set but workload is {own.name}",
                             f'add workload = "{other.name}" or remove the [{other.table}] table')
    parsed: CampaignSpec = own.parse(spec, top)  # the hook is typed loosely below this layer (dbdrift/workload.py)
    return parsed


def _parse_target(raw: object, index: int, where: str, base_dir: Path, text: str | None) -> TargetSpec:
    if not isinstance(raw, dict):
        raise InputError(f"{where}: targets[{index}] is not a table", "write each target as [[targets]]")
    name = raw.get("name", f"#{index + 1}")
    label = f"{where}: target {name if isinstance(name, str) and fields.NAME.match(name) else brief_repr(name)}"
    fields.check_keys(raw, keys.names("targets"), label)
    table = fields.Table(raw, label, table="targets")
    name = fields.name(raw.get("name"), f"{label}: name")
    engine = raw.get("engine", keys.default("targets", "engine"))
    if not isinstance(engine, str) or engine not in ENGINES:
        raise InputError(f"{label}: unknown engine {brief_repr(engine)}", f"supported engines: {', '.join(ENGINES)}")
    version, system = raw.get("version"), table.flag("system")
    sources = [s for s in (version is not None, raw.get("basedir") is not None, system) if s]
    if len(sources) != 1:
        raise InputError(f"{label}: give exactly one of version, basedir or system = true",
                         'e.g. version = "17.10" (fetched), basedir = "/opt/pg17" (your build), system = true')
    basedir = fields.path(raw, "basedir", label, base_dir)
    if basedir is not None and not fields.exists(basedir, directory=True):
        raise InputError(f"{label}: basedir {basedir} does not exist",
                         "point basedir at the install prefix that holds "
                         + ("bin/postgres" if engine == "postgres" else "bin/mysqld or bin/mariadbd"))
    named_config, config = _config(raw.get("config"), engine, version, label, base_dir)
    data_checksums = table.flag("data_checksums")
    if engine != "postgres" and data_checksums:
        raise InputError(f"{label}: data_checksums is a PostgreSQL option (initdb --data-checksums)",
                         f"remove it from this {engine} target; InnoDB checksums are a setting: "
                         "settings = { innodb_checksum_algorithm = \"crc32\" }")
    port, (low, high) = raw.get("port"), keys.key("targets", "port").bounds()
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not low <= port <= high):
        raise InputError(f"{label}: port {brief_repr(port)} is not a port number in {low:g}..{high:g}",
                         "remove port to let dbdrift pick a free one")
    return TargetSpec(
        name=name, engine=engine, version=None if version is None else fields.version(version, label, text),
        basedir=basedir, system=system, config=config, named_config=named_config, settings=fields.settings(raw.get("settings", dict(keys.default_as("targets", "settings", dict))), label),
        data_checksums=data_checksums, base=table.flag("base"), port=port,
    )


def _config(value: object, engine: str, version: object, label: str,
            base_dir: Path) -> tuple[str | None, Path | None]:
    """config: a named file shipped with dbdrift (catalog/configs.py), a path to the user's file, or
    a list of one of each (the named file first, then the user's)."""
    if value is None:
        return None, None
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not 1 <= len(items) <= 2 or not all(isinstance(i, str) for i in items):
        raise InputError(f"{label}: config must be a name, a path or a list of both, got {brief_repr(value)}",
                         f'write config = "z12a" (shipped: {", ".join(NAMED)}), config = "my.cnf", '
                         'or config = ["z12a", "my.cnf"]')
    named = [i for i in items if is_named(i)]
    paths = [i for i in items if not is_named(i)]
    if len(named) > 1 or len(paths) > 1:
        raise InputError(f"{label}: config lists {len(named)} named files and {len(paths)} paths, at most one named file and one path",
                         "write e.g. config = [\"z12a\", \"my.cnf\"]")
    if named:
        parsed = version_of(version) if isinstance(version, str) else None
        check_named(named[0], engine, parsed if parsed and len(parsed) >= 2 else None, label)
    config = fields.path({"config": paths[0]}, "config", label, base_dir) if paths else None
    if config is not None and not fields.exists(config, directory=False):
        close = difflib.get_close_matches(paths[0], list(NAMED), n=1)
        raise InputError(f"{label}: config file {config} does not exist",
                         f"did you mean the named file {close[0]!r}?" if close else
                         f"paths are relative to the campaign file; named files: {', '.join(NAMED)}")
    return (named[0] if named else None), config


def _check_targets(targets: tuple[TargetSpec, ...], where: str) -> None:
    names = [t.name for t in targets]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(f"{where}: target name {dupes[0]!r} is used twice", "give every target its own name")
    bases = [t.name for t in targets if t.base]
    if len(bases) > 1:
        raise InputError(f"{where}: more than one base target ({', '.join(bases)})",
                         "set base = true on one target only")
    ports = [t.port for t in targets if t.port is not None]
    if len(ports) != len(set(ports)):
        raise InputError(f"{where}: two targets use the same port", "remove port to let dbdrift pick free ports")


TWIN_SUFFIX = "-aa"  # the A/A twin of the base, and a calibration's copy: `<base>-aa`


def with_twin(spec: CampaignSpec, twin: bool, where: str) -> CampaignSpec:
    """The campaign with the A/A twin of its base after its targets when `twin` (aa_twin): the
    same build and configuration under another name, on a port of its own. Refused with axes."""
    if not twin:
        return spec
    if spec.axes:
        raise InputError(f"{where}: aa_twin with axes: the matrix report pairs variants by their levels, and a twin "
                         "would be a second variant of the base's levels", "remove aa_twin, or run the twin in a "
                         "campaign without axes (its base the variant to check)")
    base = spec.base
    name = f"{base.name}{TWIN_SUFFIX}"[:64]
    if any(t.name == name for t in spec.targets):
        raise InputError(f"{where}: aa_twin names the base's twin {name!r}, and a target has that name",
                         f"rename target {name}, or remove aa_twin")
    copy = replace(base, name=name, base=False, port=None, twin=True)
    return replace(spec, aa_twin=True, targets=(*spec.targets, copy))


def as_calibration(spec: CampaignSpec, target_name: str | None) -> CampaignSpec:
    """An A/A campaign: one target against an identical copy of itself, taking turns."""
    name = target_name or spec.base.name
    target = next((t for t in spec.targets if t.name == name), None)
    if target is None:
        raise InputError(f"--target {name}: no such target in {spec.source}",
                         f"targets: {', '.join(t.name for t in spec.targets)}")
    copy = replace(target, name=f"{name}{TWIN_SUFFIX}"[:64], base=False, port=None, twin=False)
    return replace(spec, name=f"calibrate-{name}"[:64], targets=(replace(target, base=True, twin=False), copy),
                   order="turns", calibration=True, detect=None, budget=None, aa_twin=False)


def with_base(spec: CampaignSpec, base_name: str | None) -> CampaignSpec:
    if base_name is None:
        return spec
    if base_name not in {t.name for t in spec.targets}:
        raise InputError(f"--base {base_name}: no such target", f"targets: {', '.join(t.name for t in spec.targets)}")
    return replace(spec, targets=tuple(replace(t, base=t.name == base_name) for t in spec.targets))


def durability_note(spec: CampaignSpec) -> str | None:
    """A warning for a matrix whose variants differ in durability and take turns: the fsync-on
    servers' flushes land in whoever's turn follows, a bias the intervals do not include."""
    axes = durability_axes(spec.axes)
    if not axes or spec.order != "turns" or len(spec.targets) < 2 or not spec.caps.takes_turns:
        return None
    return (f"axis {', '.join(axes)} changes durability (fsync at commit) and the variants take turns: the "
            "fsync-on servers' flushes slow whoever takes the next turn (5-12% measured on 2-CPU VMs), a bias "
            "the intervals do not include; run it with --set order=sequential, or one campaign per durability "
            "level (`dbdrift docs campaign`, 'Configuration matrices')")
