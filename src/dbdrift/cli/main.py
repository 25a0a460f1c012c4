"""Entry point: parse the verb, run it, turn UserError into `error:`/`hint:` and exit codes."""
from __future__ import annotations

import argparse
import sys

from dbdrift.cli import calibrate, catalog, cleanup, demo, report, run, system, versions
from dbdrift.errors import UserError
from dbdrift.server.base import exit_on_sigterm, stop_all

VERBS = {
    "run": (run, "run a campaign file against fresh servers and store the results"),
    "demo": (demo, "PostgreSQL 17.10 vs 18.4 on the default suite, then the report"),
    "calibrate": (calibrate, "run a target against a copy of itself to measure the noise floor (A/A)"),
    "report": (report, "rQPS report from the store (text, markdown, csv, json)"),
    "catalog": (catalog, "list the microbenchmarks"),
    "versions": (versions, "list the server versions dbdrift can fetch, per engine, and those cached"),
    "system": (system, "host facts and checks: governor, turbo, THP, swap, steal, perf counters"),
    "cleanup": (cleanup, "stop servers a killed dbdrift left running and remove its run directories"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dbdrift", description="Find performance regressions between DBMS versions.")
    parser.add_argument("--version", action="version", version="dbdrift 0.1.0")
    sub = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for name, (module, text) in VERBS.items():
        module.add_arguments(sub.add_parser(name, help=text, description=text))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    exit_on_sigterm()  # `kill` stops the servers as Ctrl-C does
    try:
        return VERBS[args.verb][0].main(args)
    except UserError as exc:
        sys.stderr.write(f"error: {exc.message}\n")
        if exc.hint:
            sys.stderr.write(f"hint: {exc.hint}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted: every run that finished is in the store; "
                         "rerun with --resume to run only what is missing\n")
        return 130
    finally:
        stop_all()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
