"""Entry point: parse the verb, run it, turn UserError into `error:`/`hint:` and exit codes."""
from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from dbdrift.cli import (bisect, bloat, calibrate, campaigns, catalog, cleanup, cluster, compare, config, demo, docs,
                         history, options, output, publish, recheck, report, run, system, versions)
from dbdrift.cli.parser import Parser
from dbdrift.errors import UserError, interrupted_by
from dbdrift.app.process import __version__, sigterm_as_ctrl_c, stop_all, store_error

VERBS = {
    "compare": (compare, "compare two or more versions or builds on the default suite, without a campaign file"),
    "run": (run, "run a campaign file against fresh servers and store the results"),
    "demo": (demo, "PostgreSQL 17.10 vs 18.4 on the default suite, then the report"),
    "calibrate": (calibrate, "run a target against a copy of itself to measure the noise floor (A/A)"),
    "recheck": (recheck, "run a campaign's regressions again with the reference's defaults pinned (--pin-defaults)"),
    "report": (report, "rQPS report from the store (text, markdown, csv, json, html)"),
    "campaigns": (campaigns, "list the campaigns a store holds"),
    "publish": (publish, "one or more stores as a static site: every campaign's report, each test's history "
                         "by version and over time, the version chains"),
    "bisect": (bisect, "find the first released version whose metric on a test moved past a threshold"),
    "history": (history, "tests over versions or time across a store's campaigns, with change points"),
    "bloat": (bloat, "server binary sizes per target (as-is, stripped, text/data/bss, own libraries)"),
    "config": (config, "a campaign's targets: each server option, its value and where it came from; named configs"),
    "catalog": (catalog, "list the microbenchmarks"),
    "versions": (versions, "list the server versions dbdrift can fetch, per engine, and those cached"),
    "system": (system, "host facts and checks: governor, turbo, THP, swap, steal, perf counters"),
    "worker": (cluster, "serve a Dask cluster as a benchmark host for `run --cluster` (needs the extra cluster: `dbdrift docs cluster`)"),
    "cleanup": (cleanup, "stop servers a killed dbdrift left running and remove its run directories"),
    "docs": (docs, "print the documentation: the guide, the campaign keys, the methodology (`dbdrift docs` lists them)"),
}


EPILOG = """\
examples:
  dbdrift compare 17.10 18.4 --tests point     is PostgreSQL 18.4 slower than 17.10 on point queries?
  dbdrift run campaign.toml                    a campaign file (`dbdrift docs campaign`)
  dbdrift report --format html > report.html   the latest stored campaign as a page
  dbdrift report --fail-on regression          exit 3 when a regression was found (for CI)

exit status:
  0    done, nothing failed
  1    some run, target or check failed (what was measured is stored), or an error (registry, store)
  2    input refused before anything ran: an unknown option, test, campaign key, campaign, target,
       engine or version; a malformed value
  3    report --fail-on: a finding it names (a regression, a cell not measured)
  130  interrupted (Ctrl-C or SIGTERM): finished runs are stored, servers stopped; rerun with --resume

environment: NO_COLOR turns color off; DBDRIFT_NPM_REGISTRY, DBDRIFT_MAVEN_REPOSITORY point fetches
at a mirror; DBDRIFT_CACHE_DIR, DBDRIFT_WORK_DIR move the build cache and the server run directories;
DBDRIFT_STORE_WAIT_S is how long a write waits for a busy store.
docs: `dbdrift docs guide` (tasks), `dbdrift docs campaign` (campaign keys), `dbdrift docs faults` (what
happens when things fail); `dbdrift docs` lists every topic
"""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="dbdrift", description="Find performance regressions between DBMS versions.",
                    epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"dbdrift {__version__}")
    sub = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for name, (module, text) in VERBS.items():
        verb = sub.add_parser(name, help=text, description=text)
        module.add_arguments(verb)
        if name in output.VERBS:
            output.add_output(verb)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
        if not (sys.argv[1:] if argv is None else argv):  # bare `dbdrift`: what it does and its verbs
            parser.print_help()
            return 0
        args = parser.parse_args(argv)
    except KeyboardInterrupt:  # before any verb started: nothing to say (dbdrift/__main__.py)
        return 130
    sigterm_as_ctrl_c()  # `kill` stores, stops the servers and exits 130 as Ctrl-C does
    try:
        try:
            written = getattr(args, "output", None)
            if written is not None:  # checked before anything runs: a long run must not end unable to write it
                output.check(written, getattr(args, "no_report", False))
            with output.captured(written):
                return dispatch(args)
        except sqlite3.DatabaseError as exc:  # a store damaged or filled after it was opened
            store = getattr(args, "store", None)
            raise store_error(exc, None if store is None else Path(store), args.verb not in READ_ONLY) from None
    except UserError as exc:
        sys.stderr.write(f"error: {exc.message}\n")
        if exc.hint:
            sys.stderr.write(f"hint: {exc.hint}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        again = getattr(VERBS[args.verb][0], "RERUN_HINT", "rerun with --resume to run only what is missing")
        by = "" if interrupted_by() == "Ctrl-C" else f" by {interrupted_by()}"  # a `kill` is no Ctrl-C
        sys.stderr.write(f"\ninterrupted{by}: every run that finished is in the store; {again}\n")
        return 130
    finally:
        stop_all()


# Verbs that build a campaign from their arguments: `run` executes it as it executes a file's.
BUILDS_A_CAMPAIGN = ("compare", "calibrate", "recheck")


def dispatch(args: argparse.Namespace) -> int:
    module = VERBS[args.verb][0]
    if args.verb in BUILDS_A_CAMPAIGN:
        spec = module.campaign(args)
        return 0 if spec is None else options.execute(spec, args)
    exit_code: int = module.main(args)  # the verb is looked up by name: its module's main gives the exit code
    return exit_code


READ_ONLY = ("report", "campaigns", "history", "publish")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
