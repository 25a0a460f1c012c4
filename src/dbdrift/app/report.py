"""`dbdrift report` as one use case: a stored campaign read back, its report built (by its
workload's builder, or with the comparison's views for the catalog's tests) and rendered, its
server configurations, its flamegraphs written, and what `--fail-on` finds in it, returned as
the text to print, the lines for stderr and the exit status."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbdrift.analysis.noise import JUDGING, Judging
from dbdrift.app.inputs import split_list
from dbdrift.app.process import open_read_only
from dbdrift.errors import UserError
from dbdrift.model import JsonObject
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.report.flamegraph import file_safe, part_files
from dbdrift.results.findings import CAMPAIGN, FINDING_KINDS, MEASURES, Finding, select
from dbdrift.results.meta import no_campaign
from dbdrift.results.targets import AGAINST, base_target, server_configs
from dbdrift.results.twins import without_twin
from dbdrift.results.views import ViewOptions
from dbdrift.results.workload import workload_of as stored_workload_name
from dbdrift.store.store import Store
from dbdrift.workloads.registry import SYSBENCH, WORKLOADS, Workload, workload_of

# AGAINST, FINDING_KINDS, GROUPINGS and FORMATS are the words of the verb's options (their choices)
__all__ = ["AGAINST", "FINDING_EXIT", "FINDING_KINDS", "FORMATS", "GROUPINGS", "MEASURES", "ReportOutcome",
           "ReportRequest", "Say", "Store", "campaign_report", "render", "report", "selected_tests",
           "stored_workload", "write_workload_flamegraphs"]

GROUPINGS = SYSBENCH.catalog.groupings  # `report --groups`: the catalogue's groupings, its default first
FORMATS = SYSBENCH.views.formats  # `report --format`: every workload's report has these (sysbench's post is its own)
render = SYSBENCH.views.render  # the comparison in a format, in colour on a terminal
FINDING_EXIT = 3  # `--fail-on`: the report found what it was told to fail on


@dataclass(frozen=True)
class ReportRequest:
    """What `dbdrift report` was asked: the store and campaign (None: the newest comparing two or
    more targets), the view, the format, how verdicts judge, and what --fail-on fails on."""
    store: Path
    campaign: str | None = None
    base: str | None = None
    chain: bool = False
    format: str = "text"
    color: bool = False
    judging: Judging = JUDGING
    noise_floor: str = "auto"  # auto, none or a calibration campaign
    metrics: bool = False
    config: bool = False  # the servers' configurations instead of the report
    against: str | None = None
    matrix: bool = False
    tests: str | None = None  # comma-separated, as given
    groups: str | None = None
    group_by: str | None = None
    flamegraphs: Path | None = None  # the folder to write them into
    fail_on: tuple[str, ...] = ()
    fail_by: str = "both"  # a measure of MEASURES, or both


Say = Callable[[str], None]
"""Where a line for stderr goes the moment it arises, before the report is printed."""


@dataclass(frozen=True)
class ReportOutcome:
    """The report to print, the lines for stderr that follow it (an Insert Benchmark's or
    TPROC-C's flamegraphs written, a campaign that measured nothing, what --fail-on found), the
    flamegraph files written, and the exit status: 0, or FINDING_EXIT when --fail-on found
    what it names."""
    text: str
    notes: tuple[str, ...] = ()
    written: tuple[Path, ...] = ()
    status: int = 0


SYSBENCH_VIEWS = ("chain", "matrix", "metrics", "tests", "flamegraphs", "against", "groups", "group_by")
"""Options of views only the sysbench report has: refused on another workload's campaign rather
than ignored, so a script learns its report is not the view it asked for."""


def report(request: ReportRequest, say: Say) -> ReportOutcome:
    """The whole `report` verb on the store `request` names, opened read-only. What comes before
    the report (the store's notes, the campaign a bare `report` chose, a sysbench campaign's
    flamegraphs written) goes to `say` as it arises, so it is said even when the report then fails."""
    store = open_read_only(request.store)
    try:
        for note in store.notes:
            say(note)
        return _report(request, store, say)
    finally:
        store.close()


def _report(request: ReportRequest, store: Store, say: Say) -> ReportOutcome:
    campaign = request.campaign
    if campaign is None:
        latest = latest_comparison(store)
        _say_passed_over(latest, say)
        campaign = None if latest.campaign_id is None else str(latest.campaign_id)
    campaign_id = store.latest_campaign_id(campaign)
    if request.config:
        if campaign_id is None:
            raise no_campaign(store, campaign)
        return ReportOutcome(server_configs(store, campaign_id))
    workload = stored_workload(store, campaign_id) if campaign_id is not None else None
    if campaign_id is not None and workload is not None and workload.caps.judged_over_repeats:
        return _judged_over_repeats(request, store, campaign_id, workload)
    return _comparison(request, store, campaign, say)


def _judged_over_repeats(request: ReportRequest, store: Store, campaign_id: int, workload: Workload[Any]
                         ) -> ReportOutcome:
    """The report of a workload judged over repeats (Insert Benchmark, TPROC-C...), by its own
    builder and renderer; its flamegraphs are said after it."""
    _refuse_sysbench_views(request, workload.name, store.campaign(campaign_id).name,
                           workload.plan.caps.records_flamegraphs)
    data = workload.build_report(store, campaign_id, request.base, request.judging)
    text = workload.render_report(data, request.format)
    written: list[Path] = []
    after = []
    if request.flamegraphs:
        written = write_workload_flamegraphs(store, campaign_id, workload, request.base, request.flamegraphs)
        after.append(_flamegraphs_note(written, request.flamegraphs))
    status, lines = _fail_on(gated(list(data.findings), data.meta), request)
    return ReportOutcome(text, (*after, *lines), tuple(written), status)


def _comparison(request: ReportRequest, store: Store, campaign: str | None, say: Say) -> ReportOutcome:
    """The rQPS report of the catalog's tests, in the view asked for (chain, matrix, a matrix's
    relative view, metrics); its flamegraphs are said before it."""
    if request.group_by and not request.matrix:
        raise UserError("--group-by shapes the --matrix table", "add --matrix", exit_code=2)
    only = None
    if request.tests and not request.matrix:
        only = selected_tests(split_list([request.tests]))
    views = SYSBENCH.views
    data = views.build(store, campaign, ViewOptions(request.base, request.chain, request.judging, request.noise_floor,
                                                    request.metrics, request.against, only, request.groups))
    if request.matrix:
        return ReportOutcome(views.matrix(data, request.format, request.tests, request.group_by))
    written: list[Path] = []
    if request.flamegraphs:
        written = _write_files(request.flamegraphs, views.flamegraphs(store, data))
        say(_flamegraphs_note(written, request.flamegraphs))
    text = views.render(data, request.format, request.color)
    status, lines = _fail_on(gated(views.findings(data), data.meta), request)
    return ReportOutcome(text, tuple(lines), tuple(written), status)


def _refuse_sysbench_views(request: ReportRequest, workload: str, campaign: str, flames: bool = False) -> None:
    used = [name for name in SYSBENCH_VIEWS if getattr(request, name) and not (name == "flamegraphs" and flames)]
    if used:
        raise UserError(f"--{used[0].replace('_', '-')}: campaign {campaign} ran the {workload} workload, whose "
                        "report has no such view",
                        "drop it: that report shows every target with its verdicts and hardware figures; "
                        + ", ".join(f"--{n.replace('_', '-')}" for n in SYSBENCH_VIEWS) + " shape sysbench reports",
                        exit_code=2)


def _flamegraphs_note(written: list[Path], directory: Path) -> str:
    return (f"wrote {len(written)} flamegraph files to {directory}" if written else
            "no flamegraphs stored: run the campaign with `dbdrift run --flamegraph`")


def _say_passed_over(latest: LatestComparison, say: Say) -> None:
    """When a bare `report` passed over newer one-target campaigns, which ones it did."""
    skipped = latest.passed_over
    if latest.campaign_id is None or not skipped:
        return
    names = ", ".join(f"{name} (#{i})" for name, i in skipped[:3]) + (
        f" and {len(skipped) - 3} more" if len(skipped) > 3 else "")
    say(f"report: campaign {latest.name} (#{latest.campaign_id}), the newest comparing two or more targets; "
        f"passed over {len(skipped)} newer one-target campaign(s): {names} (--campaign NAME|ID chooses one)")


def _fail_on(every: list[Finding], request: ReportRequest) -> tuple[int, list[str]]:
    """Of every finding of the report, those --fail-on names, said, and FINDING_EXIT when there
    are any; 0 otherwise. Cells without a verdict that pass are counted, and a campaign that
    measured nothing is named with or without --fail-on."""
    said = [f"report: {f.line()}: its report has no value to show; `--fail-on not-measured` fails on it"
            for f in every if f.measure == CAMPAIGN]
    kinds = list(request.fail_on)
    measures = MEASURES if request.fail_by == "both" else (request.fail_by,)
    if not kinds:
        return 0, said
    found = select(every, kinds, measures)
    said += [f"fail-on: {f.line()}" for f in found]
    if "noisy" not in kinds and (unclear := select(every, ["noisy"], measures)):
        said.append(f"fail-on: {len(unclear)} cell(s) had no verdict (too noisy or no interval) and pass; "
                    "add `noisy` to --fail-on to fail on them")
    if not found:
        return 0, said
    said.append(f"fail-on: {len(found)} finding(s) of {','.join(kinds)}; exit {FINDING_EXIT}")
    return FINDING_EXIT, said


def gated(findings: list[Finding], meta: JsonObject) -> list[Finding]:
    """The findings `--fail-on` reads: all but the A/A twin's (results/twins.py), false by construction."""
    return without_twin(findings, (meta.get("aa_twin") or {}).get("twin"))


def selected_tests(names: list[str]) -> frozenset[str]:
    """The names of the tests and groups `names` select (--tests)."""
    return frozenset(t.name for t in SYSBENCH.catalog.select(names))


def write_workload_flamegraphs(store: Store, campaign_id: int, workload: Workload[Any], base: str | None,
                               directory: Path) -> list[Path]:
    """An Insert Benchmark's or TPROC-C's stored stacks: per (step, target), or per target of
    TPROC-C, the stacks of all its repeats merged, as SVG and folded text, and a differential
    SVG of each target against the base (the campaign's, or `base`)."""
    targets = [t.name for t in store.targets(campaign_id)]
    reference = base_target(store.targets(campaign_id), base, store.campaign(campaign_id).name)
    merged: dict[tuple[str, str], dict[str, int]] = {}
    for part, target, folded in workload.stacks(store, campaign_id):
        stacks = merged.setdefault((part, target), {})
        for stack, count in (folded or {}).items():
            stacks[stack] = stacks.get(stack, 0) + count
    merged = {k: v for k, v in merged.items() if v}
    files = []
    for (part, target), stacks in sorted(merged.items(), key=lambda kv: (kv[0][0], targets.index(kv[0][1])
                                                                           if kv[0][1] in targets else 0)):
        files += part_files(part, file_safe(part), target, stacks, reference if target != reference else None,
                            merged.get((part, reference)))
    return _write_files(directory, files)


def _write_files(directory: Path, files: list[tuple[str, str]]) -> list[Path]:
    """Each (file name, text) written into `directory`, made first."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {directory}: {exc.strerror}", "pass --flamegraphs a writable directory") from None
    written = []
    for name, text in files:
        (directory / name).write_text(text)
        written.append(directory / name)
    return written


def workload_report(store: Store, campaign_id: int, workload: Workload[Any], fmt: str) -> str:
    """The report of a stored campaign by its workload's builder and renderer, in `fmt`, at the
    default thresholds (sysbench's: the comparison without views or colours)."""
    return workload.render_report(workload.build_report(store, campaign_id, None), fmt)


def stored_workload(store: Store, campaign_id: int) -> Workload[Any]:
    """The workload a stored campaign ran, refused when this dbdrift does not know it (a newer one's)."""
    name = stored_workload_name(store, campaign_id)
    if name not in WORKLOADS:
        raise UserError(f"campaign {store.campaign(campaign_id).name} ran the workload {name!r}, which this "
                        "dbdrift does not know", "report it with the dbdrift that ran it (a newer version)",
                        exit_code=2)
    return WORKLOADS[name]


def campaign_report(spec: CampaignSpec, store: Store, campaign_id: int, fmt: str, color: bool, chain_view: bool = False) -> str:
    """The report `run` prints when a campaign of `spec` is stored: the workload's own, or the
    rQPS report at the default thresholds (with `chain_view`, in text, the chain view after it;
    as a post, the chain's write-up alone: one section per step)."""
    workload = workload_of(spec)
    if workload.caps.judged_over_repeats:  # its report has no chain view, nor colours
        return workload_report(store, campaign_id, workload, fmt)
    views = workload.views

    def shaped(chain: bool) -> str:
        return views.render(views.build(store, str(campaign_id), ViewOptions(chain=chain, noise_floor="auto")),
                            fmt, color)
    if chain_view and fmt == "post":
        return shaped(True)
    text = shaped(False)
    if chain_view and fmt == "text":  # demo of a version chain
        text += "\n" + shaped(True)
    return text


@dataclass(frozen=True)
class LatestComparison:
    """The campaign `report` without --campaign means (None: the store has none) and the newer
    one-target campaigns passed over, as (name, id)."""
    campaign_id: int | None
    name: str | None
    passed_over: tuple[tuple[str, int], ...]


def latest_comparison(store: Store) -> LatestComparison:
    """The newest campaign that compares two or more targets, and the newer ones passed over."""
    chosen, skipped = store.latest_comparison()
    if chosen is None:
        return LatestComparison(None, None, ())
    return LatestComparison(chosen, store.campaign(chosen).name,
                            tuple((store.campaign(i).name, i) for i in skipped))
