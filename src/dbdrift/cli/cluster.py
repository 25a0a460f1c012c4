"""`dbdrift worker ADDRESS`: serve a Dask cluster as a benchmark host for `run --cluster`
(app/cluster.py runs both sides; Dask is imported only then)."""
from __future__ import annotations

import argparse
from pathlib import Path

from dbdrift.app import cluster


EXAMPLES = """\
examples:
  dask scheduler                                     on one host (it prints tcp://HOST:8786)
  dbdrift worker tcp://sched:8786                    on each benchmark host: one unit at a time
  dbdrift worker tcp://sched:8786 --kind large       a host of kind large (campaign: [cluster] hosts)
  dbdrift run pg18.toml --cluster tcp://sched:8786   on the client: tests split over the workers

The same with Dask's own command: dask worker tcp://sched:8786 --nthreads 1 --resources dbdrift=1
(and dbdrift-large=1 for --kind large), with dbdrift installed in the worker's Python.

exit status: 0 the worker stopped, 1 an error (Dask not installed, a scheduler out of reach), 130
interrupted by Ctrl-C or SIGTERM
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("address", help="the Dask scheduler's address, e.g. tcp://sched:8786")
    parser.add_argument("--kind", help="this host's kind, for campaigns with [cluster] hosts = [...]")
    parser.add_argument("--name", help="the worker's name (default: the host name; one worker per host)")
    parser.add_argument("--work-dir", type=Path, help="where servers run (default $DBDRIFT_WORK_DIR or "
                                                      "/var/tmp/dbdrift-UID)")


def main(args: argparse.Namespace) -> int:
    return cluster.serve(args.address, args.kind, args.name, args.work_dir)
