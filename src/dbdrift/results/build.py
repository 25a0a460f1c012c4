"""Build the report of a stored campaign: read its runs, compare every target with its
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
from datetime import datetime, timezone

from dbdrift.analysis.defaults import flush_note
from dbdrift.analysis.explain import explanation
from dbdrift.analysis.floor import campaign_sd, noise_floor
from dbdrift.analysis.foreign import FOREIGN_KINDS, neighbours_note
from dbdrift.analysis.hardware import MetricsRow, metrics_rows
from dbdrift.analysis.instructions import EventCost, InstructionRow, instruction_rows, simulated_events
from dbdrift.analysis import layers
from dbdrift.analysis.noise import JUDGING, IntervalSample, Judging, Verdict
from dbdrift.analysis.planning import detect_notes
from dbdrift.analysis.sequential import stops_note
from dbdrift.analysis.position import Turn, order_notes
from dbdrift.analysis.relative import Comparison, Measurement, compare
from dbdrift.analysis.summary import summarize_groups
from dbdrift.cpus import Placement
from dbdrift.errors import InputError, UserError
from dbdrift.model import SLOW_FSYNC_US, HardwareWindow, JsonObject, is_warm_run
from dbdrift.results.data import FORMAT_VERSION, PlanChange, ReportData
from dbdrift.results.plans import plan_marks
from dbdrift.results.findings import nothing_measured
from dbdrift.results.hosts import host_key
from dbdrift.results.microbenchmarks import Microbenchmarks, regrouped
from dbdrift.results.targets import (base_target, default_drift, flush_settings_compared, io_method_notes,
                                    matrix_references,
                                    packager_change, target_labels, target_packagers)
from dbdrift.store.store import Store
from dbdrift.store.stored import TargetRecord
from dbdrift.version import __version__

# Below this many A/A calibrations the between-campaign sd is mostly luck (measured on the VMs
# dbdrift is developed on: docs/noise.md, E12: sd_b 0.14% from one calibration, 0.47-0.55% from several).
FEW_CALIBRATIONS = 3


def no_campaign(store: Store, campaign: str | None) -> UserError:
    """The error for a campaign the store does not hold, naming those it does."""
    known = [c["name"] for c in store.campaigns()]
    if not known:
        return UserError(f"store {store.path} holds no campaign",
                         "run `dbdrift compare 17.10 18.4`, `dbdrift run CAMPAIGN.toml` or `dbdrift demo` first")
    names = ", ".join(dict.fromkeys(reversed(known)))  # newest first, each name once
    return InputError(f"store {store.path} has no campaign {campaign!r}",
                      f"it holds {names}; `dbdrift campaigns --store {store.path}` lists them with ids")


def report_meta(store: Store, campaign_id: int, generated_at: str | None = None) -> JsonObject:
    """Who made this report from what: tool and format version, date, host, campaign settings."""
    row = store.campaign(campaign_id)
    host, spec = row.host, row.spec
    targets = []
    specs = {t["name"]: t for t in spec.get("targets", [])}
    for t in store.targets(campaign_id):
        server, install = t.server, t.install
        variant = {k: specs[t.name][k] for k in ("variant", "parent", "levels") if k in specs.get(t.name, {})}
        # how it was configured, where the campaign said (the post's "what was compared")
        variant.update({k: v for k in ("named_config", "config", "settings") if (v := specs.get(t.name, {}).get(k))})
        targets.append({"name": t.name, "engine": t.engine, "base": t.is_base,
                        "version": server.get("version", install.get("version")), "source": install.get("source"),
                        "binary": install.get("binary"), **variant})
    return {
        "dbdrift_version": __version__, "format_version": FORMAT_VERSION,
        "generated_at": generated_at or datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "host": {k: host.get(k) for k in ("hostname", "cpu_model", "cpus", "memory_bytes", "kernel", "os",
                                          "virtualized")},
        "campaign": {"id": campaign_id, "name": row.name, "created_at": row.created_at,
                     "dbdrift_version": row.dbdrift_version,
                     "settings": {k: v for k, v in spec.items() if k != "targets"}},
        "targets": targets,
        **({"units": units} if (units := _unit_meta(store, campaign_id)) else {}),
    }


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
              + host_notes(host, io_method_notes(targets)) + _unit_notes(store, campaign_id)
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
    from dbdrift.results.findings import all_findings  # findings reads the report this module builds
    from dbdrift.results.twins import twin_of, with_twin
    return with_twin(report, all_findings(report), twin_of(targets), base_name)


PINNED = "-pinned"  # app/recheck.py's campaign of a campaign's regressions with the defaults pinned


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


def followed(verdict: Verdict) -> str:
    """What a rechecked cell's verdict says of the regression it rechecks."""
    if verdict.unclear:
        return "too unclear to say whether it followed them"
    return "the regression followed the defaults" if verdict is not Verdict.REGRESSION else "it did not follow them"


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


def flush_notes(host: JsonObject, targets: list[TargetRecord], references: Mapping[str, str]) -> tuple[str, ...]:
    """Where targets differ in a setting that decides whether a commit waits for a flush: whether
    this host's device (its flush latency, stored with the host facts) or the server decides."""
    note = flush_note(flush_settings_compared(targets, dict(references)), host.get("fsync"), SLOW_FSYNC_US)
    return (note,) if note else ()


def foreign_notes(stored_runs: list[sqlite3.Row], spec: JsonObject) -> tuple[str, ...]:
    """A campaign of one repeat, its targets one after the other, whose runs saw foreign load
    (their `foreign_*` warnings, analysis/foreign.py): its ratios may be the neighbours'."""
    flagged = sum(1 for r in stored_runs if not is_warm_run(r["test"])
                  and any(w.get("kind") in FOREIGN_KINDS for w in json.loads(r["warnings_json"] or "[]")))
    return neighbours_note("this campaign", flagged, spec.get("repeats") or 1, spec.get("order") == "turns")


def host_notes(host: JsonObject, servers: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Where the servers ran (cpus), then `servers` (how they ran: the I/O method), and every
    warning the host raised when the campaign started."""
    placed = (f"cpus: {Placement.from_dict(host['placement']).describe()}",) if "placement" in host else ()
    return placed + servers + tuple(f"host warning: {w['message']} (hint: {w['hint']})" for w in host.get("warnings", []))


def _unit_notes(store: Store, campaign_id: int) -> tuple[str, ...]:
    """A campaign run on a cluster: which host measured which tests."""
    rows = [u for u in store.units(campaign_id) if u.status != "kept"]
    if not rows:
        return ()
    measured = store.unit_workers([u.id for u in rows])
    parts = []
    for u in rows:
        what = ", ".join(u.tests) if u.tests else "repeats " + ", ".join(str(r + 1) for r in u.repeats) \
            if u.repeats else "all"
        status = "" if u.status == "done" else f", {u.status}" + (f": {u.error}" if u.error else "")
        again = f", {u.attempts} attempts" if u.attempts > 1 else ""
        name = (u.worker or "?").split()[0]
        where = name if u.hostname in (None, name) else f"{name} ({u.hostname})"
        hosts = list(dict.fromkeys(w.split()[0] for w in measured.get(u.id, [])))
        elsewhere = f"; its results measured on {', '.join(hosts)}" if hosts and hosts != [name] else ""
        parts.append(f"unit {u.number} on {where}: {what}{again}{status}{elsewhere}")
    return ("cluster: " + "; ".join(parts),)


def _unit_meta(store: Store, campaign_id: int) -> list[JsonObject]:
    """Each unit with its last worker and `measured_on`, every worker whose results of it the
    report uses (a unit re-queued after its host was lost has more than one)."""
    rows = [u for u in store.units(campaign_id) if u.status != "kept"]
    measured = store.unit_workers([u.id for u in rows])
    return [{"unit": u.number, "status": u.status, "tests": u.tests, "repeats": u.repeats,
             "hostname": u.hostname, "worker": u.worker, "measured_on": measured.get(u.id, []),
             "attempts": u.attempts, "error": u.error,
             "host": {k: v for k, v in u.host.items() if k in ("hostname", "cpu_model", "cpus", "memory_bytes", "kernel")}}
            for u in rows]


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
