"""`dbdrift report`: a stored campaign read back, its report data built (by its workload's
builder, or with the comparison's views for the catalog's tests), its server configurations,
its flamegraphs written, and the findings `--fail-on` reads."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbdrift.errors import UserError
from dbdrift.model import JsonObject
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.report.flamegraph import folded_text, render_diff_svg, render_svg
from dbdrift.report.formats import FORMATS, render
from dbdrift.report.matrix import axis_names, measured_tests
from dbdrift.results.build import build_report, no_campaign
from dbdrift.results.data import ReportData
from dbdrift.results.findings import CAMPAIGN, FINDING_KINDS, MEASURES, Finding, all_findings, select
from dbdrift.results.groupings import GROUPINGS
from dbdrift.results.twins import without_twin
from dbdrift.results.targets import AGAINST, base_target, merged_stacks, server_configs
from dbdrift.results.workload import workload_of as stored_workload_name
from dbdrift.store.store import Store
from dbdrift.workloads.registry import WORKLOADS, Workload, workload_of
from dbdrift.workloads.sysbench.catalog import select_tests

__all__ = ["AGAINST", "CAMPAIGN", "FINDING_KINDS", "FORMATS", "GROUPINGS", "MEASURES", "Finding", "ReportData", "Store", "all_findings",
           "build_report", "gated", "campaign_report", "latest_comparison", "matrix_shape", "no_campaign", "render",
           "select", "selected_tests", "server_configs", "stored_workload", "workload_report", "write_flamegraphs",
           "write_workload_flamegraphs"]


def gated(findings: list[Finding], meta: JsonObject) -> list[Finding]:
    """The findings `--fail-on` reads: all but the A/A twin's (results/twins.py), false by construction."""
    return without_twin(findings, (meta.get("aa_twin") or {}).get("twin"))


def selected_tests(names: list[str]) -> frozenset[str]:
    """The names of the tests and groups `names` select (--tests)."""
    return frozenset(t.name for t in select_tests(names))


def write_flamegraphs(store: Store, campaign: str | None, data: ReportData, directory: Path) -> list[Path]:
    """Per (test, threads, target): the stacks of all its runs merged, as SVG and folded text;
    per compared target also a differential SVG against its reference."""
    campaign_id = store.latest_campaign_id(campaign)
    if campaign_id is None:
        raise no_campaign(store, campaign)
    merged = merged_stacks(store, campaign_id)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {directory}: {exc.strerror}", "pass --flamegraphs a writable directory") from None
    references = data.comparison.references
    written = []
    for (test, threads, target), stacks in sorted(merged.items()):
        stem = f"{_file_safe(test)}.x{threads}.{_file_safe(target)}"
        written += [_write(directory / f"{stem}.svg", render_svg(stacks, f"{test} x{threads}: {target}")),
                    _write(directory / f"{stem}.folded", folded_text(stacks))]
        ref = references.get(target)
        if ref is not None and (test, threads, ref) in merged:
            title = f"{test} x{threads}: {target} vs {ref} (red: more samples, blue: fewer)"
            written.append(_write(directory / f"{stem}-vs-{_file_safe(ref)}.diff.svg",
                                  render_diff_svg(merged[(test, threads, ref)], stacks, title)))
    return written


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
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {directory}: {exc.strerror}", "pass --flamegraphs a writable directory") from None
    written = []
    for (part, target), stacks in sorted(merged.items(), key=lambda kv: (kv[0][0], targets.index(kv[0][1])
                                                                           if kv[0][1] in targets else 0)):
        stem = f"{_file_safe(part)}.{_file_safe(target)}"
        written += [_write(directory / f"{stem}.svg", render_svg(stacks, f"{part}: {target}")),
                    _write(directory / f"{stem}.folded", folded_text(stacks))]
        if target != reference and (part, reference) in merged:
            title = f"{part}: {target} vs {reference} (red: more samples, blue: fewer)"
            written.append(_write(directory / f"{stem}-vs-{_file_safe(reference)}.diff.svg",
                                  render_diff_svg(merged[(part, reference)], stacks, title)))
    return written


def _file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


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
    if chain_view and fmt == "post":
        return render(build_report(store, str(campaign_id), None, True, noise_floor="auto"), fmt, color)
    text = render(build_report(store, str(campaign_id), None, False, noise_floor="auto"), fmt, color)
    if chain_view and fmt == "text":  # demo of a version chain
        text += "\n" + render(build_report(store, str(campaign_id), None, True, noise_floor="auto"), fmt, color)
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


def matrix_shape(data: ReportData, tests: str | None, group_by: str | None) -> tuple[list[str] | None, str | None]:
    """--tests and --group-by of --matrix, checked against what the campaign measured and its axes."""
    chosen = [t.strip() for t in tests.split(",")] if tests else None
    measured = measured_tests(data)
    unknown = [t for t in chosen or () if t not in measured]
    if unknown:
        raise UserError(f"--tests: {unknown[0]!r} was not measured in campaign {data.campaign}",
                        f"measured: {', '.join(measured)}", exit_code=2)
    axes = axis_names(data)
    if group_by is not None and group_by not in axes:
        raise UserError(f"--group-by {group_by}: campaign {data.campaign} has no such axis",
                        f"axes: {', '.join(axes)}" if axes else "the campaign has no [axes.NAME] tables", exit_code=2)
    return chosen, group_by
