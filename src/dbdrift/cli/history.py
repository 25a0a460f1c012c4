"""`dbdrift history`: every stored measurement of the chosen tests as series over versions (or
over time), with the change points Apache Otava finds in them; `--fail-on new-regression` for a
nightly job."""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from dbdrift.analysis.changepoints import INSTALL_HINT, Unavailable, change_points, detector, new_changes
from dbdrift.workloads.sysbench.catalog import select_tests
from dbdrift.cli import options
from dbdrift.errors import UserError
from dbdrift.model import ENGINES
from dbdrift.report import history as render
from dbdrift.results import history
from dbdrift.results.build import no_campaign
from dbdrift.version import __version__

FORMATS = ("text", "markdown", "csv", "json", "html")
EXAMPLES = """\
examples:
  dbdrift history --tests point-query,update-index     QPS per version, every campaign on this host
  dbdrift history --metric instructions                instructions per event per version
  dbdrift history --by time --format html > h.html     one point per campaign, charted
  dbdrift history --fail-on new-regression             nightly: exit 3 when the newest campaign
                                                       brought a regression change point

exit status: 0 printed (and, with --fail-on, nothing found), 1 error, 2 input refused, 3 --fail-on found
a new regression (listed on stderr)
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("--store", type=Path, default=Path("dbdrift.db"), help="results store (default ./dbdrift.db)")
    parser.add_argument("-t", "--tests", action="append", metavar="TEST[,TEST...]",
                        help="only these tests or groups, e.g. point-query,writes (default: all)")
    parser.add_argument("--metric", choices=tuple(history.METRICS), default="qps",
                        help="qps (default), instructions (per event, callgrind) or cpu_us/o (host CPU per operation)")
    parser.add_argument("--by", choices=history.BY, default="version",
                        help="version: one column per version, its campaigns aggregated (default); "
                             "time: one column per campaign and target, oldest first")
    parser.add_argument("--host", metavar="HOST|all",
                        help="only campaigns run on this host (default: the newest campaign's host; all: every "
                             "host, each its own series)")
    parser.add_argument("--engine", choices=ENGINES, action="append", help="only this engine (repeatable)")
    options.add_format(parser, FORMATS, "text (a table per test, versions as columns), markdown, csv or json "
                                        "(one row per point)")
    parser.add_argument("--absolute", action="store_true", help="text/markdown: every column absolute")
    parser.add_argument("--min-effect", type=options.percent, default=0.02, metavar="PCT",
                        help="smallest step called a change point (default 2%%)")
    parser.add_argument("--fail-on", choices=("new-regression",),
                        help="exit 3 when the newest point of a series brought a regression change point")


def main(args: argparse.Namespace) -> int:
    store = options.open_store(args.store)
    try:
        if not store.campaigns():
            raise no_campaign(store, None)
        tests = [t.name for t in select_tests(options.split_list(args.tests))] if args.tests else None
        found = history.points(store, args.metric, tests)
        host = args.host or history.newest_host(store)
    finally:
        store.close()
    hosts = sorted({p.host for p in found})
    if host != "all":
        host = next((h for h in hosts if h == host or h.split(" ", 1)[0] == host), host)
        found = [p for p in found if p.host == host]
    if args.engine:
        found = [p for p in found if p.engine in args.engine]
    if not found:
        raise UserError(f"store {args.store} holds no {args.metric} measurement"
                        + (f" of {', '.join(tests)}" if tests else "") + (f" on {host}" if host != "all" else ""),
                        _empty_hint(args.metric, hosts, host))
    series = history.build_series(found, args.by)
    notes = _with_changes(series, args.min_effect, args.fail_on is not None)
    others = [h for h in hosts if h != host and host != "all"]
    if others:
        notes.append(f"campaigns of {len(others)} other host(s) left out: {'; '.join(others)} (--host all shows them)")
    meta = {"store": str(args.store), "metric": args.metric, "by": args.by, "host": host,
            "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "dbdrift_version": __version__}
    if args.format == "json":
        out = render.render_json(series, notes, meta)
    elif args.format == "csv":
        out = render.render_csv(series)
    elif args.format == "html":
        out = render.render_html(series, notes, meta)
    else:
        out = render.render_text(series, notes, absolute=args.absolute, markdown=args.format == "markdown")
    sys.stdout.write(out)
    if args.fail_on:
        found_new = _new_regressions(series, args.min_effect)
        for line in found_new:
            sys.stderr.write(f"new regression: {line}\n")
        return 3 if found_new else 0
    return 0


def _with_changes(series: list[history.Series], min_effect: float, required: bool) -> list[str]:
    """Fill each series' change points; without Otava, say how to get them (or fail when the
    caller needs them)."""
    try:
        detector()
    except Unavailable as exc:
        if required:
            raise UserError(str(exc), INSTALL_HINT) from None
        return [f"change points not computed: Apache Otava is not installed ({INSTALL_HINT})"]
    for i, s in enumerate(series):
        values = [p.value for p in s.points]
        series[i] = replace(s, changes=tuple(change_points(values, [(p.lower, p.upper) for p in s.points], min_effect)))
    return [f"change points: Apache Otava e-divisive, p < 0.001 and a step of at least {min_effect:.0%}; "
            "a change needs points on both sides (`dbdrift docs history`)"]


def _new_regressions(series: list[history.Series], min_effect: float) -> list[str]:
    found = []
    for s in series:
        values = [p.value for p in s.points]
        for c in new_changes(values, [(p.lower, p.upper) for p in s.points], min_effect, now=list(s.changes)):
            if (c.change > 0) != history.METRICS[s.metric][1]:
                found.append(f"{s.engine} {s.setup}, {s.threads} thread(s): {render.change_line(s, c)}")
    return found


def _empty_hint(metric: str, hosts: list[str], host: str) -> str:
    if hosts and host != "all" and host not in hosts:
        return f"measurements exist for {'; '.join(hosts)}: pass --host all or one of them"
    if metric == "instructions":
        return "count them with `dbdrift run FILE --count-instructions` or `dbdrift bisect`"
    return "run a campaign into this store first: `dbdrift compare 17.10 18.4 --store STORE`"
