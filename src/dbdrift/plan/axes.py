"""Configuration matrices: named axes with named levels, expanded into one target per variant.

```toml
[axes.sync]
0 = { postgres = { synchronous_commit = "off" } }
1 = { postgres = { synchronous_commit = "on" } }
```

An axis applies to the engines its levels name; each level must then say something for each of
them (`{}` for that engine's default). Every target gets one variant per combination of the
levels of the axes that apply to its engine, named `<axis><level>_…` in axis order, the first
axis changing slowest (`bl0_sync0_dw0`, `bl0_sync0_dw1`, …), and runs as target
`<target>-<variant>` on its own fresh server. A target no axis applies to runs as written.
The base variant of a target is the first one (every axis at its first level); the campaign's
base is its base target's base variant. Pure: no I/O.
"""
from __future__ import annotations

import fnmatch
import itertools
import re
from dataclasses import dataclass, replace

from dbdrift.errors import InputError
from dbdrift.model import DURABILITY_SETTINGS, ENGINES, JsonObject, Level, TargetSpec
from dbdrift.plan import fields
from dbdrift.quantities import brief_repr

AXIS_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]{0,15}$")
LEVEL_NAME = re.compile(r"^[A-Za-z0-9]{1,16}$")
MAX_VARIANTS = 256  # per target: more is a typo far more often than a plan


@dataclass(frozen=True)
class Axis:
    name: str
    levels: tuple[str, ...]
    settings: dict[str, dict[str, dict[str, str]]]  # level -> engine -> settings
    engines: tuple[str, ...]  # the engines its levels name, in ENGINES order

    def to_dict(self) -> JsonObject:
        return {"name": self.name, "levels": list(self.levels), "engines": list(self.engines),
                "settings": self.settings}


def parse_axes(raw: object, where: str) -> tuple[Axis, ...]:
    """The `[axes.NAME]` tables, in the order the file writes them."""
    if raw is None:
        return ()
    if not isinstance(raw, dict) or not raw:
        raise InputError(f"{where}: axes must be tables [axes.NAME] of levels",
                         'e.g. [axes.sync] with 0 = { postgres = { synchronous_commit = "off" } } and '
                         '1 = { postgres = { synchronous_commit = "on" } }')
    return tuple(_axis(name, levels, f"{where}: axis {name}") for name, levels in raw.items())


def _axis(name: str, raw: object, label: str) -> Axis:
    if not AXIS_NAME.match(name):
        raise InputError(f"{label}: axis name {brief_repr(name)} is not a short word",
                         "axis names are a letter then letters or digits, at most 16 (e.g. sync, fpi, bl, dw): "
                         "variant names join them with _ as in bl1_sync0_dwDO")
    if not isinstance(raw, dict) or len(raw) < 2:
        raise InputError(f"{label}: an axis needs two levels or more, got {brief_repr(raw)}",
                         f'write e.g. [axes.{name}] with 0 = {{ postgres = {{ ... }} }} and 1 = {{ postgres = {{ ... }} }}')
    settings: dict[str, dict[str, dict[str, str]]] = {}
    for level, engines in raw.items():
        where = f"{label}, level {level}"
        if not LEVEL_NAME.match(level):
            raise InputError(f"{where}: level name {brief_repr(level)} is not letters and digits",
                             "level names are 1 to 16 letters or digits (e.g. 0, 1, DO, LZ4), as variant names use them")
        if not isinstance(engines, dict):
            raise InputError(f"{where} is {brief_repr(engines)}, not a table of engines",
                             f'write {level} = {{ postgres = {{ synchronous_commit = "on" }} }}; '
                             f"the engines are {', '.join(ENGINES)}")
        unknown = [e for e in engines if e not in ENGINES]
        if unknown:
            raise InputError(f"{where}: {brief_repr(unknown[0])} is not an engine",
                             f"a level maps each engine ({', '.join(ENGINES)}) to its settings")
        settings[level] = {engine: fields.settings(values, f"{where}, {engine}") for engine, values in engines.items()}
    named = tuple(e for e in ENGINES if any(e in by_engine for by_engine in settings.values()))
    if not named:
        raise InputError(f"{label}: no level names an engine, so the axis applies to none",
                         "write each level as 0 = { postgres = { ... } } (or mysql, mariadb)")
    for level, by_engine in settings.items():
        missing = [e for e in named if e not in by_engine]
        if missing:
            raise InputError(f"{label}, level {level} says nothing for {missing[0]}, which other levels set",
                             f"write {missing[0]} = {{}} in level {level} to keep {missing[0]}'s default there")
    return Axis(name, tuple(settings), settings, named)


def variants_of(target: TargetSpec, axes: tuple[Axis, ...]) -> list[TargetSpec]:
    """The target once per combination of the levels of the axes that apply to its engine."""
    mine = [a for a in axes if target.engine in a.engines]
    if not mine:
        return [target]
    combos = list(itertools.product(*[a.levels for a in mine]))
    if len(combos) > MAX_VARIANTS:
        raise InputError(f"target {target.name}: the axes make {len(combos)} variants, more than {MAX_VARIANTS}",
                         "use fewer axes or levels, or choose some with variants = [\"...\"] (--variants)")
    if target.port is not None and len(combos) > 1:
        raise InputError(f"target {target.name}: port = {target.port} cannot be shared by its {len(combos)} variants",
                         "remove port: every variant runs its own server on a free port")
    out = []
    for combo in combos:
        levels = tuple(Level(a.name, level, a.settings[level][target.engine]) for a, level in zip(mine, combo))
        variant = "_".join(level.label for level in levels)
        name = f"{target.name}-{variant}"
        if len(name) > 64:
            raise InputError(f"target {target.name}: variant target name {name!r} is longer than 64 characters",
                             "use a shorter target name, or shorter axis and level names")
        out.append(replace(target, name=name, levels=levels, parent=target.name, base=False))
    return out


def expand_targets(targets: tuple[TargetSpec, ...], axes: tuple[Axis, ...], patterns: tuple[str, ...],
                   where: str) -> tuple[TargetSpec, ...]:
    """Every target's variants, those `patterns` (shell globs on the variant name) select; the
    campaign's base is the base target's first variant that is kept."""
    if not axes:
        if patterns:
            raise InputError(f"{where}: variants = {list(patterns)} but the campaign has no [axes.NAME] tables",
                             "define axes to choose variants from, or remove variants (--variants)")
        return targets
    base = next((t for t in targets if t.base), targets[0]).name
    expanded = [v for t in targets for v in variants_of(t, axes)]
    kept = [v for v in expanded if v.variant is None or not patterns
            or any(fnmatch.fnmatchcase(v.variant, p) for p in patterns)]
    if not any(v.variant for v in kept):
        known = sorted({v.variant for v in expanded if v.variant})
        raise InputError(f"{where}: variants {', '.join(repr(p) for p in patterns)} select no variant",
                         f"variants are {', '.join(known[:12])}{' …' if len(known) > 12 else ''}; "
                         "patterns are shell globs, e.g. 'bl1_*'")
    root = next((v for v in kept if (v.parent or v.name) == base), kept[0])
    return tuple(replace(v, base=v.name == root.name) for v in kept)


def variant_patterns(value: object, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    patterns = fields.str_list([value] if isinstance(value, str) else value, f"{where}: variants",
                               'e.g. variants = ["bl1_*", "*_dw0"]')
    if not patterns or not all(p.strip() for p in patterns):
        raise InputError(f"{where}: variants = {patterns!r} selects nothing",
                         "list shell globs on variant names, e.g. variants = [\"bl1_*\"], or leave variants out")
    return tuple(patterns)




def durability_axes(axes: tuple[Axis, ...]) -> list[str]:
    """The axes whose levels set a durability option to different values on some engine."""
    found = []
    for axis in axes:
        for engine in axis.engines:
            values = [axis.settings[level].get(engine, {}) for level in axis.levels]
            keys = DURABILITY_SETTINGS.intersection(*[set().union(*[v.keys() for v in values])])
            if any(len({str(v.get(k)) for v in values}) > 1 for k in keys):  # absent: the default
                found.append(axis.name)
                break
    return found
