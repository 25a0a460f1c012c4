"""`dbdrift history`: every stored measurement of the chosen tests as series over versions (or
over time), with the change points Apache Otava finds in them; `--fail-on new-regression` for a
nightly job."""
from __future__ import annotations

import argparse
import sys

from dbdrift.app import history as use_case
from dbdrift.app.inputs import ENGINES, JUDGING, Judging
from dbdrift.cli import options
from dbdrift.report import history as render
from dbdrift.report import twins

FORMATS = ("text", "markdown", "csv", "json", "html")
EXAMPLES = """\
examples:
  dbdrift history --tests point-query,update-index     QPS per version, every campaign on this host
  dbdrift history --metric instructions                instructions per event per version
  dbdrift history --metric rate --tests l.i1,NOPM      an Insert Benchmark step, TPROC-C's NOPM
  dbdrift history --by time --format html > h.html     one point per campaign, charted
  dbdrift history --metric false-verdicts              the A/A twins' false verdicts per host over time
  dbdrift history --fail-on new-regression             nightly: exit 3 when the newest campaign
                                                       brought a regression change point

exit status: 0 printed (and, with --fail-on, nothing found), 1 error, 2 input refused, 3 --fail-on found
a new regression (listed on stderr)
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    options.add_store(parser)
    parser.add_argument("-t", "--tests", action="append", metavar="TEST[,TEST...]",
                        help="only these tests or groups, e.g. point-query,writes (default: all)")
    parser.add_argument("--metric", choices=use_case.METRICS, default="qps",
                        help="qps (default), instructions (per event, callgrind), cpu_us/o (host CPU per operation) "
                             "rate (the Insert Benchmark's steps, TPROC-C's and CH-benCHmark's NOPM and queries/h) "
                             "or false-verdicts (the false verdicts of campaigns' A/A twins, aa_twin, per host over "
                             "time)")
    parser.add_argument("--by", choices=use_case.BY, default="version",
                        help="version: one column per version, its campaigns aggregated (default); "
                             "time: one column per campaign and target, oldest first")
    parser.add_argument("--host", metavar="HOST|all",
                        help="only campaigns run on this host (default: the newest campaign's host; all: every "
                             "host, each its own series)")
    parser.add_argument("--engine", choices=ENGINES, action="append", help="only this engine (repeatable)")
    options.add_format(parser, FORMATS, "text (a table per test, versions as columns), markdown, csv or json "
                                        "(one row per point)")
    parser.add_argument("--absolute", action="store_true", help="text/markdown: every column absolute")
    options.add_percent(parser, "--min-effect", JUDGING.min_effect, "smallest step called a change point")
    parser.add_argument("--fail-on", choices=("new-regression",),
                        help="exit 3 when the newest point of a series brought a regression change point")


def main(args: argparse.Namespace) -> int:
    request = use_case.HistoryRequest(args.store, args.metric, args.by, args.host,
                                      tuple(args.engine) if args.engine else None,
                                      tuple(options.split_list(args.tests)) if args.tests else None,
                                      Judging(min_effect=args.min_effect), args.fail_on is not None)
    store = options.open_store(args.store)
    try:
        outcome = use_case.run(request, store)
    finally:
        store.close()
    if outcome.twins is not None:
        out = _twins(outcome, args.format)
    elif args.format == "json":
        out = render.render_json(outcome.series, outcome.notes, outcome.meta)
    elif args.format == "csv":
        out = render.render_csv(outcome.series)
    elif args.format == "html":
        out = render.render_html(outcome.series, outcome.notes, outcome.meta)
    else:
        out = render.render_text(outcome.series, outcome.notes, absolute=args.absolute,
                                 markdown=args.format == "markdown")
    sys.stdout.write(out)
    if args.fail_on:
        for line in outcome.new_regressions:
            sys.stderr.write(f"new regression: {line}\n")
        return 3 if outcome.new_regressions else 0
    return 0


def _twins(outcome: use_case.HistoryOutcome, fmt: str) -> str:
    """--metric false-verdicts in `fmt`."""
    hosts = outcome.twins or []
    if fmt == "json":
        return twins.render_json(hosts, outcome.notes, outcome.meta)
    if fmt == "csv":
        return twins.render_csv(hosts)
    if fmt == "html":
        return twins.render_html(hosts, outcome.notes, outcome.meta)
    return twins.render_text(hosts, outcome.notes, markdown=fmt == "markdown")
