"""What the reports of the workloads judged over repeats (Insert Benchmark, TPROC-C) share: the
campaign, its targets with the base first, their labels, the host, the notes every format shows
and the verdicts on one measure. Each workload's model extends `WorkloadReport` with its own
tables (workloads/<name>/results.py); this module reads the store and writes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from collections.abc import Callable
from typing import ClassVar, Generic, TypeVar

from dbdrift.analysis import planning
from dbdrift.analysis.defaults import DriftTable
from dbdrift.analysis.noise import JUDGING, MIN_REPEATS, Judging, Verdict
from dbdrift.analysis.sequential import stops_note
from dbdrift.model import JsonObject
from dbdrift.results.meta import PINNED, flush_notes, followed, host_notes, report_meta
from dbdrift.results.findings import CAMPAIGN, Finding
from dbdrift.results.twins import twin_of, with_twin
from dbdrift.results.targets import (base_target, default_drift, io_method_notes, packager_change, target_labels,
                                    target_packagers)
from dbdrift.store.store import Store


@dataclass(frozen=True, kw_only=True)
class WorkloadReport:
    """One campaign's report fields every workload has; `judged` names the measure its verdicts
    are on ("NOPM"), as the legends say it."""

    judged: ClassVar[str] = ""
    workload: ClassVar[str] = ""  # the campaign file's `workload` value, as every JSON and CSV names it
    campaign: str
    targets: tuple[str, ...]  # the report order: the base first
    labels: dict[str, str]  # target -> "postgres 17.10" (what it is)
    ncpu: int  # the DB host's CPU count
    setup: str = ""  # the campaign's sizes in a line: "4 warehouse(s), 2 virtual user(s), ..."
    host: JsonObject = field(default_factory=dict)  # the stored host facts (hostname, cpu_model, warnings)
    run_on: str = ""  # when the campaign was created (ISO 8601)
    notes: tuple[str, ...] = ()  # host and run warnings, the no-interval note
    findings: tuple[Finding, ...] = ()  # per target but the base: its verdict against the base
    # (test, target) -> `head: what moved` for each regression and improvement (why_line)
    explanations: dict[tuple[str, str], str] = field(default_factory=dict)
    judging: Judging = JUDGING  # what the verdicts judged by (report --min-effect, --noisy)
    drift: tuple[DriftTable, ...] = ()  # per target but the base: defaults that differ from the base's
    packagers: dict[str, str] = field(default_factory=dict)  # target -> who built its server (results/targets.py)
    meta: JsonObject = field(default_factory=dict)  # report_meta's: who made the report from what (the JSON's `meta`)

    @property
    def base(self) -> str:
        return self.targets[0]

    def label(self, target: str) -> str:
        extra = self.labels.get(target)
        return f"{target} ({extra})" if extra else target

    def verdict(self, target: str, test: str | None = None) -> Finding | None:
        """The verdict of `target` (on `test`, a step, when the workload judges more than one)."""
        return next((f for f in self.findings if f.target == target and test in (None, f.test)), None)

    def packager_change(self, target: str) -> tuple[str, str] | None:
        """(the base's packager, the target's) when the two were built by different packagers."""
        return packager_change(self.packagers, target, self.base)

    def why(self, target: str, test: str) -> str | None:
        """The explanation line of a verdict, None when it has none."""
        return self.explanations.get((test, target))

    def why_lines(self) -> list[str]:
        return list(self.explanations.values())

    def problems(self) -> list[str]:
        """One line per failed run or repeat, naming its target and why (each workload's own)."""
        return []


@dataclass(frozen=True)
class StoredCampaign:
    """A stored campaign's facts a workload's report starts from: its spec, and the report fields
    it shares with every workload (`fields`, the keywords of `WorkloadReport`)."""

    spec: JsonObject
    fields: JsonObject  # keyword arguments of WorkloadReport


def stored_campaign(store: Store, campaign_id: int, base: str | None, judged: str) -> StoredCampaign:
    """The campaign's targets with the base (--base, else the campaign's) first, their labels, the
    host, and the notes on the host, on intervals over repeats of `judged` and, for a campaign
    planned to detect with the sequential rule, on where each test stopped."""
    row = store.campaign(campaign_id)
    targets = store.targets(campaign_id)
    base_name = base_target(targets, base, row.name)
    ordered = (base_name, *(t.name for t in targets if t.name != base_name))
    host, spec = row.host, row.spec
    return StoredCampaign(spec, {"campaign": row.name, "targets": ordered, "labels": target_labels(targets),
                                 "ncpu": host.get("cpus") or 1, "host": host, "run_on": row.created_at,
                                 "notes": host_notes(host, io_method_notes(targets)) + repeats_notes(spec, judged)
                                 + flush_notes(host, targets, {t: base_name for t in ordered[1:]})
                                 + stops_note(store.detect_stops(campaign_id),
                                              float((spec.get("detect_plan") or {}).get("detect", 0.0))),
                                 "drift": default_drift(targets, {t: base_name for t in ordered[1:]}),
                                 "packagers": target_packagers(targets), "meta": report_meta(store, campaign_id)})


def detect_notes(found: tuple[Finding, ...], plan: JsonObject | None, starts: int, unit: str) -> tuple[str, ...]:
    """The report's note on a campaign judged over repeats and planned to detect (as
    planning.detect_notes has it for sysbench): how many of its `unit` (steps, tests) reached the
    threshold after its `starts`, and each that did not with the change its verdicts could
    detect (the largest of its targets', never below the minimum effect)."""
    if not plan:
        return ()
    detect = float(plan["detect"])
    could: dict[str, list[float | None]] = {}
    for f in found:
        if f.measure != CAMPAIGN:
            could.setdefault(f.test, []).append(f.detectable)
    missed = [f"{test} ({'no interval' if None in ds else f'{max(d for d in ds if d is not None):.1%}'})"
              for test, ds in could.items() if None in ds or max(d for d in ds if d is not None) > detect + 1e-12]
    line = f"detect {detect:.1%}: {len(could) - len(missed)} of {len(could)} {unit} reached it after {starts} starts"
    return (line + (f"; not reached: {', '.join(missed)}" if missed else ""),) + planning.source_notes(plan)


Moved = tuple[str, float | None, float | None]
"""A figure stored for both sides of a finding: (what, new, reference)."""


def explanations(found: tuple[Finding, ...], moved: Callable[[Finding], list[Moved]]) -> dict[tuple[str, str], str]:
    """(test, target) -> why_line of every regression and improvement among `found`; `moved`
    gives, for a finding, the stored per-operation figures of both sides as (what, new, reference)."""
    return {(f.test, f.target): why_line(f, moved(f)) for f in found
            if f.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT)}


def why_line(f: Finding, moved: list[Moved]) -> str:
    """`l.i1 pg18 vs pg17: 0.80 [0.75, 0.85] -: host CPU µs/op +12.0%, KB written/insert +3.1%`:
    the verdict's ratio and interval, then how each figure stored for both sides changed (new ÷
    reference - 1), as the sysbench report explains a cell (analysis/explain.py). A figure
    either side lacks, or whose reference is 0, is left out."""
    interval = f" [{f.lower:.2f}, {f.upper:.2f}]" if f.lower is not None and f.upper is not None else ""
    head = f"{f.test} {f.target} vs {f.reference}: {f.ratio:.2f}{interval} {f.verdict.mark}"
    parts = [f"{what} {(new / ref - 1) * 100:+.1f}%" for what, new, ref in moved
             if new is not None and ref is not None and ref > 0]
    return f"{head}: {', '.join(parts) if parts else 'nothing else stored moved with it'}"


def repeats_notes(spec: JsonObject, measured: str) -> tuple[str, ...]:
    """Intervals over repeats: fewer than MIN_REPEATS give none (an interval over 2 values has 1
    degree of freedom, t = 12.7), so no verdict can be a regression or an improvement (each is
    "no interval")."""
    repeats = spec.get("repeats") or 1
    if repeats >= MIN_REPEATS:
        return ()
    what = "one repeat" if repeats == 1 else f"{repeats} repeats"
    return (f"no interval: {what} per target, so {measured} ÷ the base's has no 95% interval and no verdict "
            f"(each is \"no interval\"; `--fail-on noisy` names them): an interval over repeats needs "
            f"{MIN_REPEATS} or more (over 2 it would span about ×0.1 to ×10); set repeats = {MIN_REPEATS} or more "
            "(each on a fresh server) to tell a change from noise",)


def workload_of(store: Store, campaign_id: int) -> str:
    """The stored campaign's workload name (campaigns stored before workloads had one: sysbench)."""
    return store.campaign(campaign_id).workload


R = TypeVar("R", bound=WorkloadReport)


@dataclass(frozen=True)
class WithRecheck(Generic[R]):
    """A workload's report builder whose report ends each regression's why line with what
    `recheck --pin-defaults` found (the campaign `<name>-pinned`, when stored): the regression gone
    with the reference's defaults pinned (it followed them) or still there, as the sysbench report
    says it of a cell. A class, not a closure, so a workload still pickles whole for a cluster."""

    build: Callable[..., R]

    def __call__(self, store: Store, campaign_id: int, base: str | None, judging: Judging = JUDGING) -> R:
        report = self.build(store, campaign_id, base, judging)
        report = with_twin(report, report.findings, twin_of(store.targets(campaign_id)), report.base)
        pinned_id = None if report.campaign.endswith(PINNED) else store.latest_campaign_id(report.campaign + PINNED)
        if pinned_id is None:
            return report
        return replace(report, explanations=rechecked(report, self.build(store, pinned_id, None, judging)))


def with_recheck(build: Callable[..., R]) -> WithRecheck[R]:
    """`build` with the recheck's verdicts in its why lines (WithRecheck)."""
    return WithRecheck(build)


def rechecked(report: WorkloadReport, pinned: WorkloadReport) -> dict[tuple[str, str], str]:
    """The report's why lines, each regression's ending with its verdict in the recheck."""
    out = dict(report.explanations)
    for (test, target), line in report.explanations.items():
        before, after = report.verdict(target, test), pinned.verdict(target, test)
        if before is None or before.verdict is not Verdict.REGRESSION or after is None or after.ratio is None:
            continue
        interval = f" [{after.lower:.2f}, {after.upper:.2f}]" if after.lower is not None and after.upper is not None \
            else ""
        out[(test, target)] = (f"{line}; with {after.reference}'s defaults pinned: {after.ratio:.2f}{interval} "
                               f"{after.verdict.mark}, {followed(after.verdict)}")
    return out
