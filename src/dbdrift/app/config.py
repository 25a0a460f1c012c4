"""The configuration a campaign's targets get: every option a target's server is given, its final
value and where that came from (default, named file, user file, matrix level, settings, dbdrift),
from the same layers the server's configuration is written from (server/layers.py); and the
named configuration files dbdrift ships."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dbdrift import env
from dbdrift.catalog.configs import NAMED, describe, named_text, resolve
from dbdrift.errors import UserError
from dbdrift.model import TargetSpec
from dbdrift.workloads.registry import load_campaign
from dbdrift.server import engines, mycnf, pgconf
from dbdrift.server.layers import Effective, Layer, effective

__all__ = ["NAMED", "describe", "named_file", "resolve", "show", "show_named"]

_COMPLETE = {"postgres": re.compile(r"^\d+\.\d+$|^9\.\d+\.\d+$"), "mysql": re.compile(r"^\d+\.\d+\.\d+$"),
             "mariadb": re.compile(r"^\d+\.\d+\.\d+$")}


@dataclass(frozen=True)
class TargetConfig:
    """One target's server configuration: its layers as written and each option's final value."""
    target: TargetSpec
    version: str
    layers: list[Layer]
    options: list[Effective]


def named_file(name: str) -> str:
    """The text of a named configuration file, with its comments."""
    named = resolve(name)
    if named is None:
        raise UserError(f"no named config {name!r}", f"named configs: {', '.join(NAMED)}", exit_code=2)
    return named.config.text()


def show_named(name: str, version: str | None) -> list[TargetConfig]:
    """A named config as a target of it would get it: per engine it is written for, at the lowest
    version it covers, or at `version` (`[ENGINE:]VERSION`); refused where it does not fit."""
    named = resolve(name)
    if named is None:
        raise UserError(f"no named config {name!r}", f"named configs: {', '.join(NAMED)}", exit_code=2)
    engines_for = list(named.config.versions)
    if version is None:
        chosen = [(e, ".".join(map(str, named.config.versions[e][0])) + ".0") for e in engines_for]
    else:
        engine, _, number = version.rpartition(":")
        if engine and engine not in engines_for:
            raise UserError(f"config {name!r} is written for {', '.join(engines_for)}, not {engine}",
                            f"--version {engines_for[0]}:VERSION", exit_code=2)
        if not number or not re.fullmatch(r"\d+\.\d+(\.\d+)?", number):
            raise UserError(f"--version {version!r} is not a version", "write e.g. --version mariadb:10.11.5",
                            exit_code=2)
        chosen = [(engine or engines_for[0], number if number.count(".") == 2 else number + ".0")]
    out = []
    for engine, number in chosen:
        target = TargetSpec(name, engine=engine, version=number, named_config=name)
        layers = config_layers(target, number)
        normalize = (lambda k: k.lower()) if engine == "postgres" else mycnf.normalize
        out.append(TargetConfig(target, number, layers, effective(layers, normalize)))
    return out


def show(campaign: Path, sets: list[str], names: list[str]) -> list[TargetConfig]:
    """The configuration of the campaign's targets named (all when none), in file order."""
    spec = load_campaign(campaign, sets)
    known = [t.name for t in spec.targets]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UserError(f"{campaign}: no target {unknown[0]!r}", f"targets: {', '.join(known)}", exit_code=2)
    out = []
    for target in (t for t in spec.targets if not names or t.name in names):
        version = target_version(target)
        layers = config_layers(target, version)
        normalize = (lambda k: k.lower()) if target.engine == "postgres" else mycnf.normalize
        out.append(TargetConfig(target, version, layers, effective(layers, normalize)))
    return out


def target_version(target: TargetSpec) -> str:
    """The version the target's server will report: as written when complete, else from its build
    (a version prefix is resolved, and fetched if it is not cached)."""
    if target.version and _COMPLETE[target.engine].match(target.version):
        return target.version
    return engines.resolve_install(target, env.cache_dir()).version


def config_layers(target: TargetSpec, version: str) -> list[Layer]:
    """The target's layers as its server would get them; files and port as placeholders."""
    file_text = pgconf.read_config_file(target)
    named = named_text(target, version)
    if target.engine == "postgres":
        return pgconf.config_layers(target, pgconf.major_version(version), ram_bytes=pgconf.ram_bytes(),
                                    socket_dir="<run dir>", port=target.port or "<free port>",
                                    config_file_text=file_text, named_text=named)
    return mycnf.config_layers(target, version, ram=pgconf.ram_bytes(), basedir="<build>", data_dir="<run dir>/data",
                               socket_path="<run dir>/mysqld.sock", port=target.port or "<free port>",
                               log_path="<run dir>/server.log", pid_path="<run dir>/mysqld.pid",
                               config_file_text=file_text, named_text=named)
