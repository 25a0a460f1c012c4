"""`dbdrift run --cluster ADDRESS` and `dbdrift worker ADDRESS`: a campaign over many hosts.

Dask is imported here only when one of them is used (the optional extra dbdrift[cluster]).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dbdrift.errors import UserError
from dbdrift.plan.campaign import CampaignSpec, cluster_address
from dbdrift.store.store import Store
from dbdrift.workloads.registry import workload_of

EXTRA_HINT = "pip install 'dbdrift[cluster]' on this host and on every worker host (`dbdrift docs cluster`)"


def require():
    """The cluster client module, or a UserError naming the missing extra."""
    try:
        from dbdrift.cluster import client
    except ImportError as exc:
        if (exc.name or "").split(".")[0] in ("distributed", "dask"):
            raise UserError(f"running on a cluster needs Dask distributed, which is not installed ({exc})",
                            EXTRA_HINT) from None
        raise
    return client


def run(spec: CampaignSpec, args: argparse.Namespace, store: Store, progress, address: str) -> int:
    from dbdrift.cli.run import print_report

    client = require()
    job = client.ClusterRun(spec, store, address, progress, resume=args.resume, workload=workload_of(spec))
    outcome = job.run()
    units = [u for u in outcome.units if u.status != "kept"]  # kept: complete in the store before (--resume)
    ran = {u.unit_id for u in units}
    hosts = sorted({row["hostname"] for cid in outcome.campaigns.values() for row in store.units(cid)
                    if row["hostname"] and row["id"] in ran})
    counts = store.unit_result_counts([u.unit_id for u in units])
    done = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "nothing new"
    progress.message(f"stored {done} from {len(units)} units on {len(hosts)} hosts ({', '.join(hosts)}) "
                     f"in {args.store}")
    for unit in units:
        if unit.status == "failed":
            progress.message(f"{unit.label}: failed: {unit.error}")
    if not args.no_report:
        for kind, campaign_id in outcome.campaigns.items():
            if kind is not None and args.format in ("text", "markdown"):
                sys.stdout.write(f"\n## host kind {kind} (campaign {spec.name}@{kind})\n\n")
            print_report(spec, store, campaign_id, args)
    return 1 if outcome.failed else 0


# -- dbdrift worker ---------------------------------------------------------------------------------
EXAMPLES = """\
examples:
  dask scheduler                                     on one host (it prints tcp://HOST:8786)
  dbdrift worker tcp://sched:8786                    on each benchmark host: one unit at a time
  dbdrift worker tcp://sched:8786 --kind large       a host of kind large (campaign: [cluster] hosts)
  dbdrift run pg18.toml --cluster tcp://sched:8786   on the client: tests split over the workers

The same with Dask's own command: dask worker tcp://sched:8786 --nthreads 1 --resources dbdrift=1
(and dbdrift-large=1 for --kind large), with dbdrift installed in the worker's Python.
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
    from dbdrift.plan import fields

    address = cluster_address(args.address, "worker address")
    if args.kind is not None:
        fields.name(args.kind, "--kind")
    require()
    from dbdrift.cluster import worker

    return worker.serve(address, args.kind, args.name, args.work_dir)
