"""`dbdrift publish`: one or more stores as a static site, with progress while campaigns are read."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from dbdrift.app import publish as use_case
from dbdrift.app.inputs import JUDGING, Judging, format_duration
from dbdrift.cli import options
from dbdrift.report.site import CAMPAIGNS_PER_PAGE

EXAMPLES = """\
examples:
  dbdrift publish dbdrift.db --out site                 the store as a site: open site/index.html
  dbdrift publish nightly.db small.db large.db --out /srv/www/perf
                                                        several stores (hosts) in one site
  dbdrift publish dbdrift.db --out site                 again after a campaign: only what changed is
                                                        read and written

The site is static (relative links only): it opens from file:// and from any static host
(GitHub Pages). site.json in it is what the next publish compares against; keep it.

exit status: 0 published (a campaign that cannot be reported is named on stderr and left out), 1 error,
2 input refused (a missing store; an --out folder that is not a site, cannot be made or written; a damaged
site.json), 130 interrupted by Ctrl-C or SIGTERM (the campaigns read so far are kept: publish again)
"""
RERUN_HINT = "publish again: the campaigns read so far are kept in site.json and not read again"
REPORT_EVERY_S = 2.0  # progress lines while campaigns are read, at most this often off a terminal


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("stores", nargs="+", type=Path, metavar="STORE", help="results stores to publish")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="the site's folder: new, empty, or an earlier publish's (made if missing)")
    options.add_percent(parser, "--min-effect", JUDGING.min_effect,
                        "smallest step called a change point, and coloured in the version chains")
    parser.add_argument("--campaigns-per-page", type=_at_least_one, default=CAMPAIGNS_PER_PAGE, metavar="N",
                        help="campaigns on each older page of the index; index.html lists the newest N to 2N-1 "
                             f"(default {CAMPAIGNS_PER_PAGE})")


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number (e.g. 500)") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} campaigns a page: give 1 or more (e.g. 500)")
    return value


class _Progress:
    """`read 120/1000 campaigns, about 40s left`: on a terminal in place, else every few seconds."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.last = 0.0
        self.tty = sys.stderr.isatty()

    def __call__(self, done: int, total: int, what: str) -> None:
        now = time.monotonic()
        if done < total and not self.tty and now - self.last < REPORT_EVERY_S:
            return
        self.last = now
        left = (now - self.started) / done * (total - done) if done else 0.0
        settled = done >= max(2, total // 20)  # the pace of the first few holds the readers' start-up
        line = f"publish: read {done}/{total} campaigns ({what})" + (
            f", about {format_duration(left)} left" if done < total and settled else "")
        if self.tty:
            sys.stderr.write("\r\x1b[K" + line + ("\n" if done == total else ""))
        else:
            sys.stderr.write(line + "\n")


def main(args: argparse.Namespace) -> int:
    outcome = use_case.publish(use_case.PublishRequest(tuple(args.stores), args.out, Judging(min_effect=args.min_effect),
                                                           args.campaigns_per_page), _Progress())
    for note in outcome.notes:
        sys.stderr.write(f"note: {note}\n")
    largest, size = outcome.largest
    sys.stdout.write(f"published {outcome.campaigns} campaign(s) from {len(args.stores)} store(s) into {args.out}: "
                     f"{outcome.read} read, {outcome.written} page(s) written, {outcome.removed} removed; "
                     f"{outcome.pages} page(s), the largest {largest} ({size / 1e3:,.0f} kB)\n"
                     f"open {args.out / 'index.html'}\n")
    return 0
