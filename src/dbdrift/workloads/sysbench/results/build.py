"""Build sysbench's report of a stored campaign: read its runs, compare every target with its
reference (analysis/relative.py), summarize the groups, attach instruction counts, hardware
metrics, the notes that say what the intervals include, and the report's context (`meta`).

The one place renderers and verbs get a `ReportData` from; it reads the store and writes
nothing.
"""
from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any
from dataclasses import replace

from dbdrift.analysis import layers
from dbdrift.analysis.explain import explanation
from dbdrift.analysis.hardware import MetricsRow, metrics_rows
from dbdrift.analysis.instructions import EventCost, InstructionRow, instruction_rows, simulated_events
from dbdrift.analysis.noise import JUDGING, Judging, Verdict
from dbdrift.analysis.planning import detect_notes
from dbdrift.analysis.position import Turn, order_notes
from dbdrift.analysis.relative import Comparison, Measurement, compare
from dbdrift.analysis.sequential import stops_note
from dbdrift.analysis.summary import summarize_groups
from dbdrift.errors import InputError
from dbdrift.model import HardwareWindow, JsonObject, is_warm_run
from dbdrift.results.findings import nothing_measured
from dbdrift.results.measurements import measurements_of, noise_inputs
from dbdrift.results.meta import (PINNED, flush_notes, followed, foreign_notes, host_notes, no_campaign, report_meta,
                                  unit_notes)
from dbdrift.results.microbenchmarks import Microbenchmarks, regrouped
from dbdrift.results.targets import (base_target, default_drift, io_method_notes, matrix_references, packager_change,
                                    target_labels, target_packagers)
from dbdrift.results.twins import twin_of, with_twin
from dbdrift.store.store import Store
from dbdrift.workloads.sysbench.results.data import PlanChange, ReportData
from dbdrift.workloads.sysbench.results.findings import all_findings
from dbdrift.workloads.sysbench.results.plans import plan_marks

# Below this many A/A calibrations the between-campaign sd is mostly luck (measured on the VMs
# dbdrift is developed on: docs/noise.md, E12: sd_b 0.14% from one calibration, 0.47-0.55% from several).
FEW_CALIBRATIONS = 3


def build_report(store: Store, catalog: Microbenchmarks, campaign: str | None, base: str | None, chain: bool,
                 judging: Judging = JUDGING, noise_floor: str = "none",
                 metrics: bool = False, generated_at: str | None = None, against: str | None = None,
                 tests: frozenset[str] | None = None, groups: str | None = None) -> ReportData:
    """The report of a stored campaign of `catalog`'s tests; `tests` keeps only those tests
    (summaries included); `groups` names its grouping (catalog.grouping; None: its default)."""
    campaign_id = store.latest_campaign_id(campaign)
    if campaign_id is None:
        raise no_campaign(store, campaign)
    row = store.campaign(campaign_id)
    targets = store.targets(campaign_id)
    names = [t.name for t in targets]
    base_name = base_target(targets, base, row.name)
    floors, between, notes = noise_inputs(store, catalog, noise_floor, campaign_id, judging)
    measurements = measurements_of(store, catalog, campaign_id)
    counted = store.instructions(campaign_id)
    if tests is not None:
        measurements, counted = _only(catalog, tests, measurements, counted, row.name)
    pairs = matrix_references(row.spec, base_name, against) if against else None
    planned = planned_cells(row.spec, catalog, tests)
    comparison = compare(measurements, names, base_name,
                         catalog.report_order({m.test for m in measurements} | {t for t, _ in planned}), chain,
                         judging=judging, noise_floor=floors, campaign_sd=between,
                         references=pairs, against=against or "", planned=planned)
    chosen = catalog.grouping(groups, row.name, {r.test for r in comparison.rows} | {r["test"] for r in counted})
    comparison = regrouped(comparison, chosen)
    notes += _campaign_sd_note(comparison, between)
    labels = target_labels(targets)
    packagers = target_packagers(targets)
    comparison = _with_packagers(comparison, packagers)
    order = catalog.report_order({m.test for m in measurements} | {r["test"] for r in counted})
    host, spec = row.host, row.spec
    stops = store.detect_stops(campaign_id)
    notes += (_interval_notes(comparison, spec, between) + detect_notes(comparison, spec.get("detect_plan"))
              + stops_note(stops, float((spec.get("detect_plan") or {}).get("detect", 0.0)))
              + _order_notes(measurements)
              + host_notes(host, io_method_notes(targets)) + unit_notes(store, campaign_id)
              + _build_notes(labels, packagers) + nothing_measured_notes(row.name, measurements, counted))
    marks = plan_marks(comparison, store.plans(campaign_id), {t.name: t.engine for t in targets})
    comparison, plan_changes, notes = marks.comparison, marks.changes, notes + marks.notes
    references = comparison.references
    stored_runs = store.runs(campaign_id)  # read once: hardware per operation and the layer split both use it
    hardware = tuple(_metrics(stored_runs, names, references, order, host.get("cpus") or 1))
    pinned = _pinned(store, catalog, row.name, judging)
    counted_rows = _recounted(pinned, tuple(_instructions(counted, references, order, judging)))
    layer_rows = tuple(_layers(catalog, stored_runs, counted, references, judging))
    sequential = spec.get("order") == "sequential"
    notes += flush_notes(host, targets, references) + foreign_notes(stored_runs, spec)
    report = ReportData(row.name, comparison, tuple(summarize_groups(comparison, list(chosen.order))), labels,
                      chosen.order, chosen.titles, notes,
                      test_groups=_test_groups(catalog, chosen.moved, stored_runs, counted, planned),
                      metrics=hardware if metrics else (),
                      instructions=counted_rows, layers=layer_rows, drift=default_drift(targets, references),
                      show_metrics=metrics, meta=report_meta(store, campaign_id, generated_at),
                      plan_changes=plan_changes, packagers=packagers, stops=stops,
                      explanations=_rechecked(pinned, _explanations(
                          comparison, hardware, counted_rows, plan_changes, marks.compared, sequential, layer_rows)))
    return with_twin(report, all_findings(report), twin_of(targets), base_name)


def _pinned(store: Store, catalog: Microbenchmarks, campaign: str, judging: Judging) -> ReportData | None:
    """The report of `campaign`'s recheck, None when it has none (or is one)."""
    if campaign.endswith(PINNED) or store.latest_campaign_id(campaign + PINNED) is None:
        return None
    return build_report(store, catalog, campaign + PINNED, None, False, judging)


def _test_groups(catalog: Microbenchmarks, moved: dict[str, str], stored_runs: list[sqlite3.Row],
                 counted: list[sqlite3.Row], planned: dict[tuple[str, int], tuple[str, str]]) -> dict[str, str]:
    """test -> its group in the report, of every test the campaign ran, counted or planned that
    the catalogue holds: its group of the grouping chosen where that moved it, else its catalogue's."""
    names = {r["test"] for r in stored_runs} | {r["test"] for r in counted} | {t for t, _ in planned}
    return {t: moved.get(t) or entry.group for t in sorted(names) if (entry := catalog.entry(t)) is not None}


def _rechecked(pinned: ReportData | None, why: dict[tuple[str, int, str], tuple[str, str]]
               ) -> dict[tuple[str, int, str], tuple[str, str]]:
    """Each why line of a timed cell that `recheck --pin-defaults` ran again ends with what it
    found: the regression gone with the reference's defaults pinned (it followed them) or still there."""
    if pinned is None:
        return why
    out = dict(why)
    for row in pinned.comparison.rows:
        for target in pinned.comparison.compared:
            key = (row.test, row.threads, target)
            cell = row.cells[target]
            if key not in why or cell.ratio is None or cell.verdict is None:
                continue
            est = cell.estimate
            interval = f" [{est.lower:.2f}, {est.upper:.2f}]" if est and est.lower is not None else ""
            head, moved = why[key]
            tail = (f"with {cell.reference}'s defaults pinned: {cell.ratio:.2f}{interval} {cell.verdict.mark}, "
                    f"{followed(cell.verdict)}")
            out[key] = (head, f"{moved}; {tail}" if moved else tail)
    return out


def _recounted(pinned: ReportData | None, rows: tuple[InstructionRow, ...]) -> tuple[InstructionRow, ...]:
    """Each counted regression that `recheck --pin-defaults` counted again gets what the count
    with the reference's defaults pinned found (counts are exact: the plainest recheck there is)."""
    if pinned is None:
        return rows
    again = {(r.test, t): (r.relative.get(t), v, r.references[t]) for r in pinned.instructions
             for t, v in r.verdicts.items()}
    out = []
    for irow in rows:
        found = {}
        for target, verdict in irow.verdicts.items():
            ratio, after, reference = again.get((irow.test, target), (None, None, ""))
            if verdict is Verdict.REGRESSION and ratio is not None and after is not None:
                found[target] = (f"with {reference}'s defaults pinned: instr {ratio:.3f} {after.mark}, "
                                 f"{followed(after)}")
        out.append(replace(irow, rechecked=found) if found else irow)
    return tuple(out)


def planned_cells(spec: JsonObject, catalog: Microbenchmarks, only: frozenset[str] | None = None
                  ) -> dict[tuple[str, int], tuple[str, str]]:
    """(test, threads) -> (group, metric) of every timed cell a sysbench campaign set out to
    measure (its `tests` x `threads`; every target runs the same ones), so that a cell no target
    got to (interrupted, a server that never started) is reported as not measured instead of
    left out. Empty for instructions-only campaigns and old specs without `tests`. (Only sysbench
    campaigns come here: the others are reported by their workload's own report.)"""
    if not spec.get("timed", True) or not spec.get("tests"):
        return {}
    try:
        chosen = catalog.select(spec["tests"])
    except InputError:  # a name an older catalogue had: report what was stored
        return {}
    return {(t.name, n): (t.group, t.metric) for t in chosen for n in spec.get("threads") or (1,)
            if only is None or t.name in only}


def nothing_measured_notes(campaign: str, measurements: list[Measurement], counted: list[sqlite3.Row]) -> tuple[str, ...]:
    """The note of a campaign without one measured run or count (interrupted before its first
    run, or no server started): every cell of its report is empty, and the note says why."""
    if any(m.status == "ok" and m.value is not None for m in measurements) or \
            any(r["ir_per_event"] is not None for r in counted):
        return ()
    return (nothing_measured(campaign, f"{len(measurements)} run(s) and {len(counted)} count(s) stored, "
                                       "none succeeded").line(),)


def _only(catalog: Microbenchmarks, tests: frozenset[str], measurements: list[Measurement], counted: list[sqlite3.Row],
          campaign: str) -> tuple[list[Measurement], list[sqlite3.Row]]:
    """The measurements and counts of `tests`; none of them measured is an input error."""
    measured = {m.test for m in measurements} | {r["test"] for r in counted}
    if not tests & measured:
        raise InputError(f"--tests: campaign {campaign} measured none of {', '.join(sorted(tests))}",
                         f"measured: {', '.join(catalog.report_order(measured))}")
    return [m for m in measurements if m.test in tests], [r for r in counted if r["test"] in tests]


def _explanations(comparison: Comparison, hardware: tuple[MetricsRow, ...], counted: tuple[InstructionRow, ...],
                  plan_changes: tuple[PlanChange, ...], plans_compared: set[tuple[str, str]],
                  sequential: bool, layer_rows: tuple[layers.LayerRow, ...] = ()
                  ) -> dict[tuple[str, int, str], tuple[str, str]]:
    """(test, threads, target) -> why, for every regression and improvement; a test of a layer
    family also says which part of the family's cost moved (instructions where counted)."""
    out = {}
    for row in comparison.rows:
        metrics = next((m for m in hardware if m.test == row.test and m.threads == row.threads), None)
        instructions = next((r for r in counted if r.test == row.test), None)
        for target in comparison.compared:
            cell = row.cells[target]
            if cell.verdict not in (Verdict.REGRESSION, Verdict.IMPROVEMENT):
                continue
            change = next((c for c in plan_changes if c.test == row.test and c.target == target), None)
            plan = (change.statements[0]["reference_shape"], change.statements[0]["shape"]) if change else None
            both = (row.test, target) in plans_compared
            head, moved = explanation(row, cell, metrics, instructions, plan, both, per_target_host=sequential)
            split = sorted((r for r in layer_rows if row.test in r.tests and r.target == target),
                           key=lambda r: r.measure != "instructions")
            if split:
                moved = f"{moved}; {layers.brief(split[0])}" if moved else layers.brief(split[0])
            out[(row.test, row.threads, target)] = (head, moved)
    return out


def _metrics(runs: list[sqlite3.Row], targets: list[str], references: dict[str, str], order: list[str],
             ncpu: int) -> list[MetricsRow]:
    cells: dict[tuple[str, int], dict[str, list[tuple[HardwareWindow, float]]]] = {}
    for r in runs:
        if is_warm_run(r["test"]) or r["status"] != "ok" or not r["hardware_json"]:
            continue
        cells.setdefault((r["test"], r["threads"]), {}).setdefault(r["target"], []).append(
            (json.loads(r["hardware_json"]), r["value"]))
    return metrics_rows(cells, targets, references, order, ncpu)


def _instructions(counted: list[sqlite3.Row], references: dict[str, str], order: list[str], judging: Judging
                  ) -> list[InstructionRow]:
    counts = {(r["test"], r["target"]): (EventCost(r["ir_per_event"], json.loads(r["self_json"]),
                                                   json.loads(r["inclusive_json"])), r["spread_pct"])
              for r in counted}
    simulated = {(r["test"], r["target"]): simulated_events(r["ir_per_event"], json.loads(r["simulated_json"] or "{}"))
                 for r in counted if r["ir_per_event"] is not None}
    return instruction_rows(counts, references, order, simulated=simulated, judging=judging)


def _layers(catalog: Microbenchmarks, stored_runs: list[sqlite3.Row], counted: list[sqlite3.Row],
            references: dict[str, str], judging: Judging) -> list[layers.LayerRow]:
    """Per layer family of the catalogue the campaign measured whole (every test of it, on a target
    and its reference): the per-statement and per-row split of the instruction counts, and of the
    time per event at the fewest clients."""
    counts: dict[str, dict[str, tuple[float, float | None]]] = {}
    for r in counted:
        if r["ir_per_event"] is not None:
            counts.setdefault(r["target"], {})[r["test"]] = (r["ir_per_event"], r["spread_pct"])
    wanted = {t for tests in catalog.layer_families.values() for t in tests}
    runs = [r for r in stored_runs if r["test"] in wanted and r["status"] == "ok" and r["value"]]
    fewest = min((r["threads"] for r in runs), default=1)
    qps: dict[str, dict[int, dict[str, list[float]]]] = {}
    for r in runs:
        if r["threads"] == fewest:
            qps.setdefault(r["target"], {}).setdefault(r["repeat"], {}).setdefault(r["test"], []).append(r["value"])
    out = []
    for family in catalog.layer_families:
        members = [layers.Member(t, s, n) for t, s, n in catalog.layer_members(family)]
        per_statement = {m.test: m.statements for m in members}
        seconds = {t: {rep: {test: per_statement[test] / (sum(v) / len(v)) for test, v in tests.items()
                             if test in per_statement}
                       for rep, tests in reps.items()} for t, reps in qps.items()}
        for target, reference in references.items():
            for measure, have in (("instructions", counts), ("time", seconds)):
                if not all(_whole(have.get(t, {}), members, measure) for t in (target, reference)):
                    continue
                out.append(layers.counted(family, members, reference, target, counts, judging)
                           if measure == "instructions" else
                           layers.timed(family, members, reference, target, seconds, judging))
    return out


def _whole(have: Mapping[Any, Any], members: list[layers.Member], measure: str) -> bool:
    """Whether a target has every member of a family: counted, or timed in some repeat."""
    tests = {m.test for m in members}
    if measure == "instructions":
        return tests <= set(have)
    return any(tests <= set(by_test) for by_test in have.values())


def _interval_notes(comparison: Comparison, spec: JsonObject, between: dict[str, tuple[float, int]]) -> tuple[str, ...]:
    """Say when the rQPS intervals do not include what each server start draws, or what each
    campaign draws (docs/noise.md)."""
    # a calibration's between-campaign sd holds what a start draws as well
    methods = {c.estimate.method for row in comparison.rows for c in row.cells.values() if c.estimate} - set(between)
    if any(m.within_one_start for m in methods):
        return ("intervals: one start of each server per test; the offset a start draws (up to ~2% on small "
                'VMs) is not in them: repeats >= 3 with restart = "repeat" or "reload" put it in',)
    if spec.get("restart") == "never" and spec.get("repeats", 1) > 1 and methods:
        return ('intervals: restart = "never", so all repeats ran on one start of each server and the offset a '
                "start draws is not in them",)
    if any(m.over_starts for m in methods) and not spec.get("calibration"):
        return ("intervals: over this campaign's server starts only; the offset a whole campaign draws (an sd of "
                "about 0.5% on small VMs) is not in them: run `dbdrift calibrate` with this campaign's file three "
                "times or more, at different times, and reports put it in",)
    return ()


def _order_notes(measurements: list[Measurement]) -> tuple[str, ...]:
    """Targets whose result the place of their turns in the rounds moved (analysis/position.py)."""
    cells: dict[str, list[Turn]] = {}
    for m in measurements:
        if m.status != "ok":
            continue
        for iv in m.intervals:
            if iv.round is not None and iv.position is not None:
                cells.setdefault(f"{m.test} ({m.threads} thr)", []).append(
                    Turn(m.round, iv.round, iv.position, m.target, iv.value))
    return order_notes(cells)


def _build_notes(labels: dict[str, str], packagers: dict[str, str]) -> tuple[str, ...]:
    """Targets built by different sources (their labels then name the source): by different
    packagers (each ratio between two is marked B), or by one packager's different suites."""
    if not any(", " in label for label in labels.values()):
        return ()
    if len(set(packagers.values())) > 1:
        return ("builds: the targets come from different packagers (see each label; B marks each ratio between "
                "two): a difference can come from how each was compiled as well as from its code; "
                "`SOURCE:VERSION` targets (or `--source`) compare builds of one packager",)
    return (f"builds: one packager ({next(iter(packagers.values()), '?')}) but different suites (see each label): "
            "each suite's compiler built its own",)


def _with_packagers(comparison: Comparison, packagers: dict[str, str]) -> Comparison:
    """Each compared cell whose target and reference were built by different packagers says which."""
    if len(set(packagers.values())) < 2:
        return comparison
    rows = []
    for row in comparison.rows:
        cells = dict(row.cells)
        for target in comparison.compared:
            pair = packager_change(packagers, target, cells[target].reference)
            if pair:
                cells[target] = replace(cells[target], packagers=pair)
        rows.append(replace(row, cells=cells))
    return replace(comparison, rows=tuple(rows))


def _campaign_sd_note(comparison: Comparison, between: dict[str, tuple[float, int]]) -> tuple[str, ...]:
    """Say by how much the intervals were widened for what a whole campaign draws, or that
    the calibration could not say it for the way these intervals were estimated."""
    methods = {c.estimate.method for row in comparison.rows for c in row.cells.values()
               if c.estimate and c.estimate.lower is not None}
    used = sorted(m for m in methods if m in between)
    notes = tuple(f"intervals ({m}) include a between-campaign sd of {between[m][0]:.2%} measured on "
                  f"{between[m][1]} A/A calibration campaign(s)" for m in used)
    few = min((between[m][1] for m in used), default=FEW_CALIBRATIONS)
    if few < FEW_CALIBRATIONS:
        notes += (f"a between-campaign sd from {few} calibration(s) is uncertain (each campaign draws one offset; "
                  f"it settles after about {FEW_CALIBRATIONS}): run `dbdrift calibrate` with this campaign's file "
                  "again at other times",)
    if between and methods - set(used):
        notes += (f"intervals ({', '.join(sorted(methods - set(used)))}) have no between-campaign part: no A/A "
                  "calibration was estimated that way; calibrate with this campaign's repeats and restart",)
    return notes


