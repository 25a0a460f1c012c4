"""Whether a campaign's servers fit in memory together, as `order = "turns"` needs them to.

In turns every target's server stays up for the whole campaign. A server holds about the
smaller of its cache (shared_buffers, innodb_buffer_pool_size) and the data it caches, plus
its own processes; when the sum does not fit in the memory the host has available, the
campaign runs its targets one after the other instead (a configuration matrix easily has 12
variants). Pure, apart from reading the user's config files.
"""
from __future__ import annotations

import re
from dataclasses import replace

from dbdrift.model import TargetSpec
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.server.layers import parse_my_cnf, parse_postgresql_conf

ROW_BYTES = 300  # an sbtest row with its share of the primary key and k index, either engine
SERVER_BYTES = 400 * 2**20  # a server's own memory beside its cache: processes, buffers, dictionaries
USABLE = 0.8  # of the available memory: leave the driver and the page cache room
_UNITS = {"": 1, "k": 2**10, "kb": 2**10, "m": 2**20, "mb": 2**20, "g": 2**30, "gb": 2**30, "t": 2**40, "tb": 2**40}
_CACHE = {"postgres": "shared_buffers", "mysql": "innodb_buffer_pool_size", "mariadb": "innodb_buffer_pool_size"}


def size_bytes(value: str, engine: str) -> int | None:
    """A cache size as the engine reads it ("4GB", "512M", PostgreSQL's bare 8 kB pages); None if unreadable."""
    match = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", str(value))
    if not match or match.group(2).lower() not in _UNITS:
        return None
    unit = match.group(2).lower()
    if engine == "postgres" and unit == "":
        return int(match.group(1)) * 8192
    return int(match.group(1)) * _UNITS[unit]


def cache_bytes(target: TargetSpec, ram: int) -> int:
    """The cache size the target's configuration sets, else dbdrift's default (25% of RAM, at most 16 GiB)."""
    key = _CACHE[target.engine]
    found = None
    if target.config is not None:
        parse = parse_postgresql_conf if target.engine == "postgres" else parse_my_cnf
        try:
            pairs = parse(target.config.read_text())
        except OSError:
            pairs = []
        found = next((v for k, v in reversed(pairs) if k.replace("-", "_").lower() == key), None)
    for settings in [*(level.settings for level in target.levels), target.settings]:
        found = next((v for k, v in settings.items() if k.replace("-", "_").lower() == key), found)
    configured = size_bytes(found, target.engine) if found is not None else None
    return configured if configured is not None else max(128 * 2**20, min(ram // 4, 16 * 2**30))


def resident_bytes(target: TargetSpec, spec: CampaignSpec, ram: int) -> int:
    data = spec.workload_plan.loaded_rows(spec) * ROW_BYTES
    return min(cache_bytes(target, ram), data) + SERVER_BYTES


def fit_order(spec: CampaignSpec, ram: int, available: int) -> tuple[CampaignSpec, str | None]:
    """The campaign, sequential when its servers would not fit in memory together in turns,
    with a line saying so (None when nothing changed)."""
    if spec.order != "turns" or not spec.caps.takes_turns or len(spec.targets) < 2 or not spec.timed:
        return spec, None
    need = sum(resident_bytes(t, spec, ram) for t in spec.targets)
    if need <= USABLE * available:
        return spec, None
    gib = 2**30
    return replace(spec, order="sequential"), (
        f"order: sequential: the {len(spec.targets)} servers need about {need / gib:.1f} GiB together and "
        f"{available / gib:.1f} GiB is available, so they run one after the other (hint: a smaller cache, "
        f"e.g. --set targets.*.settings.{_CACHE[spec.targets[0].engine]}=..., or fewer variants with "
        "--variants, lets them take turns)")
