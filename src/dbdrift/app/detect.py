"""A campaign planned to a detectable change (the campaign key `detect`, `run --detect`): the plan
(analysis/planning.py) from this host's history in the store (app/host_noise.py: its calibrations
and the starts of its other campaigns), or from its newest A/A calibration while that history is
thin; the campaign it turns into, and what `run --check` says of it.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable

from dataclasses import dataclass

from dbdrift.analysis import planning
from dbdrift.analysis.floor import noise_floor
from dbdrift.analysis.instructions import instruction_verdict
from dbdrift.analysis.noise import JUDGING, Estimate, Judging, Verdict
from dbdrift.analysis.relative import compare
from dbdrift.app.host_noise import HISTORY_STARTS, Cell, host_history, run_lengths
from dbdrift.errors import UserError
from dbdrift.model import JsonObject
from dbdrift.plan.campaign import CampaignSpec
from dbdrift.quantities import format_duration
from dbdrift.results.measurements import measurements, measurements_of
from dbdrift.results.hosts import host_key
from dbdrift.results.microbenchmarks import duration_kind, writes
from dbdrift.runner.campaign import machine_facts
from dbdrift.store.store import Store
from dbdrift.workloads.registry import SYSBENCH, Workload, workload_of


CALIBRATE_MORE = "--set repeats=8"  # the starts a calibration needs for 2% on a host like these (docs/noise.md E21)


@dataclass(frozen=True)
class PlanNoise:
    """What a plan rests on: each cell's noise and which evidence it comes from, the tests' noise
    floors and where they come from, the line naming it all, and notes on it."""

    noise: dict[Cell, planning.TestNoise]
    sources: dict[Cell, str]  # cell -> "[1, 2], 13 starts" (history); empty for one calibration
    floors: dict[str, float]
    named: str  # the plan's `calibration`: "the history of this host: ..." or "calibration c (#1, ...)"
    evidence: tuple[str, ...] = ()  # the history's campaigns, numbered; empty for one calibration
    floors_from: str = ""
    notes: tuple[str, ...] = ()

    def of(self, cell: Cell) -> tuple[planning.TestNoise | None, str]:
        """A cell's noise and its source, else its test's at any client count."""
        if cell in self.noise:
            return self.noise[cell], self.sources.get(cell, "")
        same = [c for c in self.noise if c[0] == cell[0]]
        if not same:
            return None, ""
        best = max(same, key=lambda c: self.noise[c].starts)
        return self.noise[best], self.sources.get(best, "")


def plan_noise(store: Store | None, cells: list[Cell], workload: Workload[Any] = SYSBENCH) -> PlanNoise:
    """The noise to plan `cells` from: the history of this host in the store (host_noise.py) when
    half or more of the cells have HISTORY_STARTS starts in it, else the newest calibration of
    this host, as before there was a history, saying why; a UserError when it has neither."""
    if store is None:
        raise UserError("detect plans from a calibration of this host, and the store does not exist yet", _HINT,
                        exit_code=2)
    here = host_key(machine_facts(steal_window_s=0))
    history = host_history(store, workload, here)
    enough = history.enough(cells)
    floors, floors_from = ({}, "") if workload.caps.judged_over_repeats else newest_floors(store, here)
    if history.evidence and 2 * len(enough) >= len(cells):
        thin = len(cells) - len(enough)
        notes = ((f"{thin} of {len(cells)} tests have fewer than {HISTORY_STARTS} starts in the history: their "
                  "plan rests on what it has (or on the noisiest test, when it has none), and the replan after "
                  f"{planning.MIN_STARTS} starts weighs their own starts the more",) if thin else ())
        return PlanNoise(history.noise, history.sources, floors, history.summary(), history.labels, floors_from,
                         notes)
    why = (f"the history of this host is too thin to plan from: {len(enough)} of {len(cells)} tests have "
           f"{HISTORY_STARTS} or more starts in its {len(history.evidence)} campaign(s) with starts, and half need to")
    noise, cal_floors, named = calibration_noise(store, workload, why)
    return PlanNoise(noise, {}, cal_floors, named, notes=(why + "; planned from the newest calibration",))


_HINT = (f"calibrate this host first with starts: `dbdrift calibrate CAMPAIGN.toml {CALIBRATE_MORE}` with the "
         "same --store (it runs the base against a copy of itself; docs/noise.md); once the store holds "
         f"{HISTORY_STARTS} starts of most tests on this host (calibrations and campaigns with repeats), detect "
         "plans from them")


def calibration_noise(store: Store, workload: Workload[Any] = SYSBENCH, thin: str = ""
                      ) -> tuple[dict[Cell, planning.TestNoise], dict[str, float], str]:
    """The noise of each (test, threads) from the newest calibration of this host and workload in
    the store that has 2 or more starts of a test (3 for a workload judged over repeats), each
    test's noise floor from it (what sysbench reports raise the verdicts' minimum effect to while
    it is the newest; none for the others, whose reports do not), and a line naming it; a
    UserError when the store has none (`thin`: why the history did not serve either)."""
    here, elsewhere = host_key(machine_facts(steal_window_s=0)), []
    for campaign_id in store.calibration_ids():
        row = store.campaign(campaign_id)
        spec = row.spec
        if spec.get("workload", SYSBENCH.name) != workload.name:
            continue
        there = host_key(row.host)
        if there != here:  # another machine's noise says nothing of this one's
            elsewhere.append(f"{row.name} (#{campaign_id}) on {there}")
            continue
        found = _noise_of(store, campaign_id, spec, workload)
        if found is not None:
            noise, floors = found
            starts = max(n.starts for n in noise.values())
            return noise, floors, f"calibration {row.name} (#{campaign_id}, {row.created_at}, {starts} starts)"
    others = f"; it has calibrations of other hosts only: {', '.join(elsewhere)}" if elsewhere else ""
    least = planning.MIN_STARTS if workload.caps.judged_over_repeats else 2
    raise UserError(f"detect plans from a calibration of this host ({here}) with {least} or more server starts of "
                    f"{workload.caps.title}, and {store.path} has none{others}" + (f"; {thin}" if thin else ""),
                    _HINT, exit_code=2)


def newest_floors(store: Store, here: str) -> tuple[dict[str, float], str]:
    """The noise floors of the newest sysbench calibration of host `here` (what its reports raise
    the verdicts' minimum effect to) and a line naming it; none without one."""
    for campaign_id in store.calibration_ids():
        row = store.campaign(campaign_id)
        spec = row.spec
        if spec.get("workload", SYSBENCH.name) != SYSBENCH.name or not store.has_runs(campaign_id):
            continue
        if host_key(row.host) != here:
            continue
        targets = [t.name for t in store.targets(campaign_id)]
        measurements = measurements_of(store, SYSBENCH.catalog, campaign_id)
        floors = noise_floor(compare(measurements, targets, targets[0], sorted({m.test for m in measurements})))
        return floors, (f"calibration {row.name} (#{campaign_id}, {row.created_at[:16].replace('T', ' ')}), "
                        "the newest of this host, as reports apply it")
    return {}, "none: no calibration of this host, and reports raise no verdict to a floor without one"


def _noise_of(store: Store, campaign_id: int, spec: JsonObject, workload: Workload[Any]
              ) -> tuple[dict[Cell, planning.TestNoise], dict[str, float]] | None:
    """One calibration's noise per (test, threads) and noise floors, None when it has too few starts."""
    if workload.caps.judged_over_repeats:  # the tests' threads are the campaign's
        repeats = planning.repeat_noise(workload.estimates(store, campaign_id))
        return ({(test, 0): n for test, n in repeats.items()}, {}) if repeats else None
    targets = [t.name for t in store.targets(campaign_id)]
    if len(targets) < 2 or spec.get("order") != "turns":
        return None
    seconds = run_lengths(spec)
    measurements = measurements_of(store, workload.catalog, campaign_id)
    noise = planning.noise_of(measurements, targets[0],
                              {m.test: seconds.get(duration_kind(workload.catalog, m.test), 0.0)
                               for m in measurements})
    if not noise:
        return None
    return noise, noise_floor(compare(measurements, targets, targets[0], sorted({m.test for m in measurements})))


def refuse_cluster(address: str | None) -> None:
    """detect plans from this host's calibration: a campaign on a cluster (whose hosts differ) is refused."""
    if address is not None:
        raise UserError("detect plans a campaign from this host's calibration; it does not run on a cluster",
                        "run the planned campaign on one host (without --cluster and [cluster]), or remove detect",
                        exit_code=2)


def planned(spec: CampaignSpec, store: Store | None) -> CampaignSpec:
    """The campaign with its detect plan applied: the run lengths it chose, repeats as the most
    starts any test may get, and the plan itself (stored with the campaign; the runner follows
    it). A campaign without detect is returned as it is."""
    if spec.detect is None:
        return spec
    if len(spec.targets) < 2:
        raise UserError(f"{spec.name}: detect needs two or more targets to compare", "add a target, or remove detect",
                        exit_code=2)
    workload = workload_of(spec)
    if workload.caps.judged_over_repeats:
        return _planned_repeats(spec, store, workload)
    if spec.order != "turns":
        raise UserError(f"{spec.name}: detect needs the targets' servers up together, taking turns, and this campaign "
                        "runs them one after the other (order = \"sequential\", or the servers do not fit in memory "
                        "together)", "make the servers smaller (shared_buffers, innodb_buffer_pool_size), or remove "
                        "detect", exit_code=2)
    thread_counts = spec.workload_plan.threads(spec)
    wanted = [(t.name, threads) for threads in thread_counts for t in spec.tests]
    rests = plan_noise(store, wanted)
    noise, floors, named = rests.noise, rests.floors, rests.named
    cells = []
    for threads in thread_counts:
        for t in spec.tests:
            found_noise, source = rests.of((t.name, threads))
            cells.append(planning.Cell(t.name, threads, t.duration_kind, found_noise, floors.get(t.name, 0.0), source))
    fixed, overhead = workload.detect_costs(spec)
    lengths = spec.workload_plan.measured_lengths(spec)
    lengths_tried = tuple(sorted(set(planning.LENGTHS) | set(lengths.values())))
    found = planning.plan(cells, spec.detect, fixed, spec.budget, named, len(spec.targets), overhead, lengths_tried,
                          tuple(noise.values()))
    shaped = spec.workload_plan.with_measured_lengths(spec, found.lengths)
    # the warm-up runs last read_s: plan again with the fixed part the chosen lengths give
    found = planning.plan(cells, spec.detect, workload.detect_costs(shaped)[0], spec.budget, named, len(spec.targets), overhead,
                          tuple(found.lengths.values()), tuple(noise.values()), spec.sequential)
    found = _told(found, rests)
    stored = found.to_dict()
    if spec.sequential and spec.workload_plan.counts_instructions(spec):  # the budget's first priority (runner/sequential.py)
        # blind: instruction counts cannot see the test's cost, since it writes and so waits on I/O and locks
        stored["tests"] = [{**p.to_dict(), "blind": writes(workload.catalog, p.test)} for p in found.tests]
    return replace(shaped, repeats=max(p.most for p in found.tests), detect_plan=stored)


def _told(found: planning.DetectPlan, rests: PlanNoise) -> planning.DetectPlan:
    """The plan with what it rests on: the evidence, where the floors come from, and its notes."""
    return replace(found, notes=rests.notes + found.notes, evidence=rests.evidence, floors_from=rests.floors_from)


def _planned_repeats(spec: CampaignSpec, store: Store | None, workload: Workload[Any]) -> CampaignSpec:
    """A workload whose every start runs all its tests (the Insert Benchmark, TPROC-C): repeats
    from its calibration's spread per judged test (planning.plan_repeats)."""
    tests = list(workload.judged(spec))
    rests = plan_noise(store, [(test, 0) for test in tests], workload)
    by_test = {test: n for (test, _), n in rests.noise.items()}
    sources = {test: source for (test, _), source in rests.sources.items()}
    once = replace(spec, repeats=1)
    repeat_s = workload.estimate(once)[0]
    found = _told(planning.plan_repeats(tests, by_test, spec.detect or 0.0, repeat_s, spec.budget, rests.named,
                                        sources), rests)
    # the sequential rule (runner/sequential.py follows whole repeats: another runs while a test is
    # undecided, below its most and within the budget); `sequential = false`: the fixed plan
    found = replace(found, sequential=spec.sequential)
    return replace(spec, repeats=max(p.most for p in found.tests), detect_plan=found.to_dict())


def check_lines(spec: CampaignSpec) -> list[str]:
    """What `run --check` says of a planned campaign: the plan, its cost, and each test's starts."""
    if spec.detect_plan is None:
        return []
    found = spec.detect_plan
    tests = found["tests"]
    lengths = (", ".join(f"{kind}_s {seconds:g}s" for kind, seconds in found["lengths"].items())
               or f"{spec.repeats} repeats at most, each a start of every target running every test, "
                  "at the campaign's own lengths")
    lines = [f"detect {found['detect']:.1%}: planned from {found['calibration']}; {lengths}",
             f"  expected {format_duration(found['expected_s'])}, at most {format_duration(found['most_s'])}"
             + (f" (budget {format_duration(found['budget_s'])})" if found.get("budget_s") else "")]
    lines += evidence_lines(found)
    lines += [f"  note: {n}" for n in found.get("notes", [])]
    if found["detect"] < JUDGING.min_effect:  # what `run`'s report judges by (report --min-effect's default)
        lines.append(f"  note: reports call no change below their minimum effect, {JUDGING.min_effect:.0%} unless "
                     f"`dbdrift report --min-effect {found['detect']:.1%}`: the report after `run` says no test "
                     f"reached {found['detect']:.1%}; that report does")
    floored = sum(p.get("floor", 0.0) > found["detect"] for p in tests)
    if floored:
        # the starts of the calibration the floors come from: the one the plan names, or the A/A
        # campaigns of the history it rests on
        had = [int(n) for n in re.findall(r"(\d+) starts\)", found["calibration"])
               + [n for e in found.get("evidence", []) for n in re.findall(r"A/A, (\d+) starts\)", e)]]
        more = f"--set repeats={2 * max(had)}" if had and max(had) >= 8 else CALIBRATE_MORE
        lines.append(f"  note: {floored} of {len(tests)} tests have a noise floor above {found['detect']:.1%} in the "
                     "calibration (the larger of its A/A offset and its interval's half width), and no verdict goes "
                     "below a test's floor however many starts run: calibrate again with more starts "
                     f"({more}) to narrow the intervals; a floor its A/A offset sets does not move")
    sequential = bool(found.get("sequential"))
    if sequential:
        lines += sequential_lines(spec, found)
    for p in tests:
        reach = "" if p["expected"] <= found["detect"] else f"; cannot reach {found['detect']:.1%}"
        if p.get("floor", 0.0) > found["detect"]:
            reach += f" (noise floor {p['floor']:.1%})"
        guess = "" if p["calibrated"] else " (not calibrated: planned from the noisiest calibrated test)"
        first = "; budget first" if p.get("blind") else ""
        starts = (f"{planning.MIN_STARTS} to {p['most']} starts, stopping once decided (the fixed plan's "
                  f"{p['starts']})" if sequential and p["most"] > planning.MIN_STARTS else
                  f"{p['starts']} starts, then stops" if sequential else f"{p['starts']} starts (at most {p['most']})")
        source = f"; noise from {p['source']}" if p.get("source") else ""
        lines.append(f"  {cell_name(p['test'], p['threads'])}: {starts}, expected {p['expected']:.1%}{reach}{guess}"
                     f"{source}{first}")
    return lines


def sequential_lines(spec: CampaignSpec, found: JsonObject) -> list[str]:
    """What `run --check` says of the sequential rule: how each test stops, and the budget's order."""
    detect = float(found["detect"])
    lines = [f"  sequential: after {planning.MIN_STARTS} starts each test is looked at before every further start "
             f"and stops once its interval excludes 1 (different) or lies inside ±{detect:.1%} (same), at a level "
             "that spends part of the 5% error per look (O'Brien-Fleming alpha spending), or at its most; "
             "`sequential = false`: the fixed plan"]
    if spec.caps.judged_over_repeats:  # every start runs all its tests
        lines.append("  repeats: each start runs every test; another runs while a test is undecided and below its "
                     "most" + (", and while a start as long as the mean of those run so far fits what is left of "
                               "the budget" if spec.budget is not None else ""))
        return lines
    if spec.budget is None:
        return lines
    if spec.workload_plan.counts_instructions(spec) and spec.tests:
        blind = [t for t in found["tests"] if t.get("blind")]
        lines.append(f"  budget order: instruction counts run first; the timed budget goes first to the {len(blind)} "
                     "tests they cannot see (writes, I/O and locks: rw not \"R\", marked below) and to those whose "
                     "counts move, then to the rest; the tests run in their order (writes change the tables), each "
                     "further start within its share of what is left")
    else:
        lines.append("  budget order: the tests run in their order (writes change the tables); each further start "
                     "within its share of what is left, every test still to come keeping its first "
                     f"{planning.MIN_STARTS} and its share of its planned starts")
    return lines


def evidence_lines(found: JsonObject) -> list[str]:
    """The campaigns a plan from the store's history rests on, numbered as its tests cite them,
    and where its noise floors come from; none for a plan from one calibration (its first line
    names it)."""
    if not found.get("evidence"):
        return []
    return (["  evidence (noise of ln rQPS over server starts, pooled per test):"]
            + [f"    {e}" for e in found["evidence"]]
            + ([f"  noise floors: {found['floors_from']}"] if found.get("floors_from") else []))


def cell_name(test: str, threads: int) -> str:
    """`point-query x4`; a test of a workload planned over whole repeats (threads 0) by its name."""
    return f"{test} x{threads}" if threads else test


def cell_estimates(store: Store, workload: Workload[Any] = SYSBENCH) -> Callable[[int, str, int], list[Estimate]]:
    """What the runner asks of a campaign planned to detect (runner/detect.py): the rQPS estimates
    of one stored (test, threads), one per compared target, as the report computes them (a
    workload judged over repeats: of the test, its threads 0)."""
    if workload.caps.judged_over_repeats:
        judged = workload.estimates
        return lambda campaign_id, test, threads: list(judged(store, campaign_id).get(test, []))
    known: dict[int, tuple[int, list[str], str]] = {}  # campaign -> rows, targets, base: fixed once it runs

    def estimates(campaign_id: int, test: str, threads: int) -> list[Estimate]:
        if campaign_id not in known:
            targets = store.targets(campaign_id)
            names = [t.name for t in targets]
            known[campaign_id] = (store.campaign(campaign_id).spec.get("rows", 0), names,
                                  next((t.name for t in targets if t.is_base), names[0]))
        rows, names, base = known[campaign_id]
        found = measurements(store, workload.catalog,
                             [r for r in store.runs(campaign_id) if r["test"] == test and r["threads"] == threads], rows)
        comparison = compare(found, names, base, [test])
        return [c.estimate for row in comparison.rows for c in row.cells.values()
                if c.estimate is not None and c.reference is not None]
    return estimates


def counts_moved(store: Store, detect: float) -> Callable[[int], set[str]]:
    """What the sequential rule asks of a campaign that counts instructions before its timed runs
    (runner/sequential.py: the budget's first priority): the tests whose instruction verdict
    against the base, at the threshold, is anything but no significant change (a count missing
    on a side included)."""
    def moved(campaign_id: int) -> set[str]:
        targets = store.targets(campaign_id)
        base = next((t.name for t in targets if t.is_base), targets[0].name if targets else "")
        counted = {(r["test"], r["target"]): (r["ir_per_event"], r["spread_pct"]) for r in store.instructions(campaign_id)}
        found = set()
        for test in {t for t, _ in counted}:
            ref = counted.get((test, base))
            for target in (t.name for t in targets if t.name != base):
                new = counted.get((test, target))
                ratio = new[0] / ref[0] if new and ref and ref[0] else None
                spreads = [new[1] if new else None, ref[1] if ref else None]
                if instruction_verdict(ratio, spreads, Judging(min_effect=detect)) is not Verdict.NO_CHANGE:
                    found.add(test)
        return found
    return moved
