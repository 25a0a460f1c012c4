"""`dbdrift config`: the configuration a campaign's targets get, and the named files dbdrift ships.

`config show FILE [TARGET ...]` prints every option a target's server is given, its final value
and where that came from (default, named file, user file, matrix level, settings, dbdrift), from
the same layers the server's configuration is written from (server/layers.py).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from dbdrift import env
from dbdrift.errors import UserError
from dbdrift.model import TargetSpec
from dbdrift.plan.campaign import load_campaign
from dbdrift.server import engines, mycnf, pgconf
from dbdrift.server.layers import Layer, effective
from dbdrift.catalog.configs import NAMED, describe, named_text

EXAMPLES = """\
examples:
  dbdrift config show matrix.toml                  every target's options and where each came from
  dbdrift config show matrix.toml my8-bl1_sync1_dw0 --written    one target, as its my.cnf is written
  dbdrift config list                              the named files: z12a, z13a, cx10a, cx10b
  dbdrift config cat z12a                          one named file, with its comments
"""
_COMPLETE = {"postgres": re.compile(r"^\d+\.\d+$|^9\.\d+\.\d+$"), "mysql": re.compile(r"^\d+\.\d+\.\d+$"),
             "mariadb": re.compile(r"^\d+\.\d+\.\d+$")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    show = sub.add_parser("show", help="a campaign's targets: each option, its value and where it came from")
    show.add_argument("campaign", type=Path, help="campaign file (TOML)")
    show.add_argument("targets", nargs="*", metavar="TARGET", help="target names (default: all)")
    show.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="as for `dbdrift run`")
    show.add_argument("--variants", metavar="GLOBS", help="as for `dbdrift run`")
    show.add_argument("--written", action="store_true",
                      help="print the configuration as written to the server, layer by layer, instead")
    sub.add_parser("list", help="the named configuration files shipped with dbdrift")
    cat = sub.add_parser("cat", help="print a named configuration file")
    cat.add_argument("name", help=f"one of {', '.join(NAMED)}")


def main(args: argparse.Namespace) -> int:
    if args.action == "list":
        for name, span, about in describe():
            sys.stdout.write(f"{name:<6}  {span:<40}  {about}\n")
        return 0
    if args.action == "cat":
        if args.name not in NAMED:
            raise UserError(f"no named config {args.name!r}", f"named configs: {', '.join(NAMED)}", exit_code=2)
        sys.stdout.write(NAMED[args.name].text())
        return 0
    from dbdrift.cli.run import campaign_sets

    spec = load_campaign(args.campaign, campaign_sets(args))
    names = [t.name for t in spec.targets]
    unknown = [n for n in args.targets if n not in names]
    if unknown:
        raise UserError(f"{args.campaign}: no target {unknown[0]!r}", f"targets: {', '.join(names)}", exit_code=2)
    chosen = [t for t in spec.targets if not args.targets or t.name in args.targets]
    out = []
    for target in chosen:
        version = target_version(target)
        layers = config_layers(target, version)
        out.append(_heading(target, version))
        out += _written(layers) if args.written else _table(layers, target.engine)
        out.append("")
    sys.stdout.write("\n".join(out))
    return 0


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


def _heading(target: TargetSpec, version: str) -> str:
    what = f"target {target.name}: {target.engine} {version} ({target.source})"
    if target.variant:
        what += f", variant {target.variant} of {target.parent}"
    return what


def _table(layers: list[Layer], engine: str) -> list[str]:
    normalize = (lambda k: k.lower()) if engine == "postgres" else mycnf.normalize
    empty = "''" if engine == "postgres" else "(set)"  # PostgreSQL's empty string; a bare my.cnf flag
    rows = [(e.key, e.value or empty, e.source, ", ".join(f"{v or empty} from {s}" for s, v in reversed(e.overrode)))
            for e in effective(layers, normalize)]
    widths = [max(len(r[i]) for r in rows + [("option", "value", "from", "")]) for i in range(3)]
    out = ["  " + "  ".join(h.ljust(w) for h, w in zip(("option", "value", "from"), widths)) + "  replaces"]
    out += ["  " + "  ".join(c.ljust(w) for c, w in zip(r[:3], widths)) + (f"  {r[3]}" if r[3] else "")
            for r in rows]
    return [line.rstrip() for line in out]


def _written(layers: list[Layer]) -> list[str]:
    return [f"# --- {layer.title} ---\n{layer.text}\n" for layer in layers]
