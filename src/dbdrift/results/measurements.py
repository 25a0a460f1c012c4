"""A campaign's stored runs of tests as the analysis takes them (analysis/relative.py's
Measurement: per-interval throughput, steal, status), and the A/A noise inputs read from the
store's calibrations of such runs: what the per-test comparison, its history, `detect`'s plan
and the host-noise check read. The catalogue of tests is handed in (Microbenchmarks)."""
from __future__ import annotations

import json
import sqlite3

from dbdrift.analysis.floor import campaign_sd, noise_floor
from dbdrift.analysis.noise import JUDGING, IntervalSample, Judging
from dbdrift.analysis.relative import Measurement, compare
from dbdrift.errors import InputError
from dbdrift.model import is_warm_run
from dbdrift.results.hosts import host_key
from dbdrift.results.microbenchmarks import Microbenchmarks
from dbdrift.store.store import Store


def measurements_of(store: Store, catalog: Microbenchmarks, campaign_id: int) -> list[Measurement]:
    """A campaign's stored timed runs (not its warm-up runs), as the analysis takes them (a
    `krps` test's rate as `catalog` gives it)."""
    table_rows = store.campaign(campaign_id).spec.get("rows", 0)
    return measurements(store, catalog, [r for r in store.runs(campaign_id) if not is_warm_run(r["test"])], table_rows)


def measurements(store: Store, catalog: Microbenchmarks, runs: list[sqlite3.Row], table_rows: int) -> list[Measurement]:
    """Stored `runs` as the analysis takes them, their intervals read together."""
    intervals = store.run_intervals([r["id"] for r in runs])
    return [measurement(catalog, r, intervals.get(r["id"], []), table_rows) for r in runs]


def noise_inputs(store: Store, catalog: Microbenchmarks, choice: str, campaign_id: int, judging: Judging = JUDGING
                 ) -> tuple[dict[str, float], dict[str, tuple[float, int]], tuple[str, ...]]:
    """Per-test A/A noise floors from the newest sysbench calibration campaign of the campaign's
    host (of any host when it has none; or the one named), the between-campaign sd per interval
    method from every such calibration campaign (or the one named), and a note saying which."""
    if choice == "none":
        return {}, {}, ()
    elsewhere = ""
    if choice == "auto":
        aa_ids, elsewhere = _calibrations_of_host(store, campaign_id)
    else:
        named = store.latest_campaign_id(choice)
        if named is None:
            raise InputError(f"--noise-floor {choice}: no such campaign in {store.path}",
                             "run `dbdrift calibrate CAMPAIGN.toml` first, or pass --noise-floor none")
        aa_ids = [named] if named != campaign_id else []
    if not aa_ids:
        return {}, {}, ()
    comparisons = []
    for aa_id in aa_ids:
        names = [t.name for t in store.targets(aa_id)]
        measurements = measurements_of(store, catalog, aa_id)
        comparisons.append(compare(measurements, names, names[0], sorted({m.test for m in measurements}),
                                   judging=judging))
    floors = noise_floor(comparisons[0])
    aa = store.campaign(aa_ids[0])
    return floors, campaign_sd(comparisons), (
        f"noise floor: A/A campaign {aa.name} (#{aa_ids[0]}, {aa.created_at}{elsewhere}) for {len(floors)} "
        "tests",)


def _calibrations_of_host(store: Store, campaign_id: int) -> tuple[list[int], str]:
    """The store's sysbench calibrations but the campaign itself, newest first: those of the
    campaign's host, as history tells hosts apart (another machine's noise says little of this
    one's); all of them when the host has none, with `, on another host: ...` for the note.
    Calibrations without sysbench runs (of the other workloads) are left out."""
    here = host_key(store.campaign(campaign_id).host)
    rows = [store.campaign(i) for i in store.calibration_ids() if i != campaign_id]
    rows = [r for r in rows if store.has_runs(r.id)]  # another workload's calibration has none
    same = [r for r in rows if host_key(r.host) == here]
    if same or not rows:
        return [r.id for r in same], ""
    return [r.id for r in rows], f", on another host: {host_key(rows[0].host)}"


def measurement(catalog: Microbenchmarks, run: sqlite3.Row, stored: list[sqlite3.Row], table_rows: int) -> Measurement:
    """A stored run with its per-interval throughput (QPS, or Krps for scan) and host steal,
    from its `stored` intervals."""
    intervals = []
    for iv in stored:
        seconds = iv["end_s"] - iv["start_s"]
        if seconds <= 0:
            continue
        value: float | None = (catalog.scan_krps(table_rows, iv["events"], seconds, run["threads"])
                               if run["metric"] == "krps" else iv["statements"] / seconds)
        if value is None:  # a scan rate of no client thread: nothing was measured
            continue
        intervals.append(IntervalSample(value, seconds, iv["steal_pct"], iv["round"], iv["position"]))
    warnings = tuple(w["message"] for w in json.loads(run["warnings_json"] or "[]"))
    note = ""
    if run["status"] == "skipped":
        note = run["error"] or "skipped"  # "skipped: server died"
    elif run["status"] != "ok":
        note = run["status"]
        if run["error"]:
            warnings += (f"{run['status']}: {run['error'][:160]}",)
    return Measurement(run["test"], run["test_group"], run["target"], run["threads"], run["value"], run["metric"],
                       run["status"], run["repeat"], tuple(intervals), warnings, note)
