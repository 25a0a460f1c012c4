"""`recheck --pin-defaults`: the regressions of a stored campaign run again, each regressed
target beside its reference, with the target's server given its reference's values of the
defaults that differ (analysis/defaults.py) where the setting exists on both. Whether the
regression is still there then says whether it followed the defaults; the original campaign's
report reads the recheck and says so in each regression's why line. In a sysbench campaign a
regressed cell is a timed one or an instruction count (a campaign that only counted is rechecked
by counting only), and only the regressed tests run again; the other workloads (Insert Benchmark,
TPROC-C, vector, HTAP) judge whole runs, so their recheck runs the workload again, with the
regressed targets and their references only.

The recheck is a campaign of its own, `<name>-pinned`, built from the stored campaign as a file
would hold it, so `run` executes it as it executes any other.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from dbdrift.analysis.defaults import DriftTable
from dbdrift.analysis.noise import Verdict
from dbdrift.errors import UserError
from dbdrift.model import JsonObject
from dbdrift.plan import keys
from dbdrift.plan.campaign import CampaignSpec as CampaignSpec  # what the verb hands to `run`
from dbdrift.plan.overrides import apply_sets
from dbdrift.results.findings import CAMPAIGN, Finding
from dbdrift.results.meta import PINNED
from dbdrift.results.views import ViewOptions
from dbdrift.results.workload import workload_of
from dbdrift.store import guard
from dbdrift.store.store import Store
from dbdrift.workloads.registry import SYSBENCH, TOP_KEYS, WORKLOADS, parse_campaign


def pinned_name(campaign: str) -> str:
    """The recheck campaign of `campaign`."""
    return campaign + PINNED


@dataclass(frozen=True)
class RecheckRequest:
    store: Path
    campaign: str | None = None  # the latest when None
    tests: tuple[str, ...] = ()  # the regressed ones when empty
    sets: tuple[str, ...] = ()  # --set KEY=VALUE, applied to the recheck as to a campaign file
    writing: bool = True  # the recheck will run into the store (not only --print-campaign)


def pins(drift: tuple[DriftTable, ...], target: str) -> dict[str, str]:
    """The reference's values of the defaults that differ for `target`, each setting both
    servers have (a ranked one: an `other` setting seldom moves a benchmark and may not be
    settable, such as a TLS file)."""
    table = next((t for t in drift if t.target == target), None)
    if table is None:
        return {}
    return {d.name: d.reference for d in table.ranked() if d.reference is not None and d.target is not None}


def regressed_runs(findings: tuple[Finding, ...]) -> dict[str, set[str]]:
    """target -> the steps or measures on which a workload judged over whole runs regressed."""
    out: dict[str, set[str]] = {}
    for f in findings:
        if f.measure != CAMPAIGN and f.verdict is Verdict.REGRESSION:
            out.setdefault(f.target, set()).add(f.test)
    return out


@dataclass(frozen=True)
class Found:
    """What a stored campaign's report says to recheck: per regressed target its tests (steps),
    its reference, the defaults that differ, and the stored spec."""

    campaign: str
    spec: JsonObject
    regressed: dict[str, set[str]]
    references: dict[str, str]
    drift: tuple[DriftTable, ...]
    per_test: bool  # sysbench: only the regressed tests run again


def _found(store: Store, request: RecheckRequest) -> Found:
    campaign_id = store.latest_campaign_id(request.campaign)
    workload = WORKLOADS.get(workload_of(store, campaign_id)) if campaign_id is not None else None
    if campaign_id is None or workload is None or not workload.caps.judged_over_repeats:
        data = SYSBENCH.views.build(store, request.campaign, ViewOptions())
        campaign_id = store.latest_campaign_id(data.campaign)
        assert campaign_id is not None  # the views' build found it
        spec = store.campaign(campaign_id).spec
        found = SYSBENCH.views.regressed(data)
        if request.tests:
            found = {t: set(request.tests) for t in data.comparison.compared}
        return Found(data.campaign, spec, found, dict(data.comparison.references), data.drift, True)
    report = workload.build_report(store, campaign_id, None)
    spec = store.campaign(campaign_id).spec
    if request.tests:
        raise UserError(f"campaign {report.campaign} is {workload.plan.caps.title} campaign: its recheck runs the "
                        "workload again, not chosen tests", "leave out --tests", exit_code=2)
    return Found(report.campaign, spec, regressed_runs(report.findings),
                 {t: report.base for t in report.targets[1:]}, report.drift, False)


def stored_keys(spec: JsonObject, per_test: bool) -> JsonObject:
    """The stored campaign's top-level keys a recheck keeps, as a campaign file writes them: its
    workload's own (not another's, nor the tests of a workload that runs whole), without the
    targets, the plan to detect and the cluster, which the recheck sets or does without."""
    foreign = keys.only_for(spec.get("workload") or keys.default_as("top", "workload", str), TOP_KEYS)
    known = {row.name for row in TOP_KEYS}
    return {k: _as_written(k, v) for k, v in spec.items() if k in known and v is not None
            and k not in foreign and k not in ("targets", "detect", "budget", "cluster", "axes", "variants")
            and (per_test or k != "tests")}


def _as_written(key: str, value: object) -> object:
    """A stored value as a campaign file writes it: a workload's table without the 0 its spec
    stores for a key left to dbdrift (load_clients: one per host CPU), which a file may not say."""
    if not isinstance(value, dict):
        return value
    rows = next((w.plan.keys for w in WORKLOADS.values() if w.table == key), ())  # its slice's keys.py
    unset = {k.name for k in rows if k.default is None}
    return {k: v for k, v in value.items() if not (k in unset and v == 0)}


@dataclass(frozen=True)
class Recheck:
    """The recheck as a campaign file's table, and whether the stored campaign was timed (a
    campaign that only counted instructions is rechecked by counting only)."""

    data: JsonObject
    timed: bool


def campaign_data(request: RecheckRequest) -> Recheck:
    """The recheck as a campaign file's table: the stored campaign's keys, its regressed targets
    (with pinned settings) beside their references, and the regressed tests."""
    if not request.store.exists():
        raise UserError(f"store {request.store} does not exist", "give the store the campaign ran into: --store",
                        exit_code=2)
    if request.writing:
        copy = f"~/{request.store.name}"
        guard.require_writable(request.store, f"recheck stores its runs in the campaign's store: copy it to a folder "
                                              f"you can write (cp {request.store} {copy}) and pass --store {copy}; "
                                              "--print-campaign shows the recheck without running it")
    store = Store(request.store, read_only=True)
    try:
        found = _found(store, request)
    finally:
        store.close()
    spec = found.spec
    if not found.regressed:
        raise UserError(f"campaign {found.campaign} has no regression to recheck",
                        "name the tests to run again with --tests" if found.per_test else
                        "a regression needs repeats enough for an interval (see the report's notes)", exit_code=2)
    by_name = {t["name"]: t for t in spec["targets"]}
    targets: list[JsonObject] = []
    for target in found.regressed:
        reference = found.references[target]
        pinned = pins(found.drift, target)
        if not pinned:
            raise UserError(f"{target}: no default differs from {reference}'s, so there is nothing to pin",
                            "the report's default drift section lists none for it")
        for name, settings in ((reference, None), (target, pinned)):
            if any(t["name"] == name for t in targets):
                continue
            entry = {k: v for k, v in by_name[name].items() if k in keys.names("targets") and v is not None}
            if settings is not None:
                entry["settings"] = {**settings, **(entry.get("settings") or {})}  # the campaign's own win
            entry["base"] = name == reference
            targets.append(entry)
    top = stored_keys(spec, found.per_test)
    table = {**top, "name": pinned_name(found.campaign), "targets": targets}
    if found.per_test:
        table["tests"] = sorted({t for tests in found.regressed.values() for t in tests})
    return Recheck(apply_sets(table, list(request.sets)), bool(spec.get("timed", True)))


def campaign(recheck: Recheck) -> CampaignSpec:
    """The recheck checked whole (--set included), as a file's would be; counting only where the
    campaign was."""
    if recheck.timed:
        return parse_campaign(recheck.data, "dbdrift recheck", Path.cwd(), recheck.data["name"])
    counting = {**recheck.data, "count_instructions": True}  # counts only, whatever --set said
    return replace(parse_campaign(counting, "dbdrift recheck", Path.cwd(), recheck.data["name"]), timed=False)
