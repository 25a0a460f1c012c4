"""How big each target's server binary is, as-is and stripped, with its text, data and bss and the
libraries it loads from its own install; with source build trees, the object files that grew most."""
from __future__ import annotations

from pathlib import Path

from dbdrift import env
from dbdrift.app.targets import parse_target
from dbdrift.errors import UserError
from dbdrift.metrics.binary import binary_facts, object_sizes, server_binary
from dbdrift.model import JsonObject
from dbdrift.workloads.registry import parse_campaign
from dbdrift.results.outcomes import BloatOutcome as BloatOutcome  # the record report/ renders
from dbdrift.runner.progress import ProgressSink
from dbdrift.server import engines


def run(targets: list[str], build_dir_values: list[str], top: int, progress: ProgressSink) -> BloatOutcome:
    rows = measure(targets, progress)
    return BloatOutcome(rows, object_growth(build_dirs(build_dir_values, [r["target"] for r in rows]), top))


def measure(targets: list[str], progress: ProgressSink) -> list[JsonObject]:
    """Per target (named as for compare; fetched when not cached): its server binary's facts."""
    used: set[str] = set()
    data = {"name": "bloat", "targets": [parse_target(t, used) for t in targets]}
    spec = parse_campaign(data, "dbdrift bloat", Path.cwd(), "bloat")
    rows = []
    for target in spec.targets:
        install = engines.resolve_install(target, env.cache_dir(), progress.message)
        try:
            facts = binary_facts(server_binary(install.bindir, install.engine))
        except UserError as exc:  # a binary that runs but cannot be read: a cached one is damaged
            raise engines.damaged(install.bindir, env.cache_dir(), exc) from None
        rows.append({"target": target.name, "engine": install.engine, "version": install.version,
                     "source": install.source, **facts})
    return rows


def build_dirs(values: list[str], names: list[str]) -> dict[str, Path]:
    dirs = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or name not in names:
            raise UserError(f"--build-dir {value!r}: name one of the targets, as NAME=DIR",
                            f"targets: {', '.join(names)}", exit_code=2)
        directory = Path(path).expanduser()
        if not directory.is_dir():
            raise UserError(f"--build-dir {value!r}: {directory} is not a directory",
                            "give the build tree that holds the object files (*.o)", exit_code=2)
        dirs[name] = directory
    return dirs


def object_growth(dirs: dict[str, Path], top: int) -> list[JsonObject]:
    """Per target after the first with a build dir: the object files whose text + data grew most."""
    if len(dirs) < 2:
        return []
    (base_name, base_dir), *others = dirs.items()
    base = object_sizes(base_dir)
    out = []
    for name, directory in others:
        sizes = object_sizes(directory)
        grown = sorted(((sizes[k] - base[k], k) for k in sizes.keys() & base.keys()), reverse=True)[:top]
        out.append({"target": name, "reference": base_name, "objects": [
            {"object": k, "reference_bytes": base[k], "bytes": sizes[k],
             "ratio": sizes[k] / base[k] if base[k] else None} for _, k in grown]})
    return out
