"""The closed registry of workloads: one Workload per slice, assembled from the slice's role files.

The one place that maps a campaign's `workload` value to its object, and that defines the object:
it sits above every layer a slice's parts belong to (catalog, plan, runner, cluster, results,
report), so every hook of a Workload is typed here with the real types, and mypy checks each
slice's functions against them where the slice's Workload is built. Only the verbs import it:
they look the campaign's workload up here and hand the object down (Runner(..., workload=w)),
where a lower layer's Protocol says what it asks of it (dbdrift/workload.py); the campaign
readers are handed every workload's plan part here (PLANS, load_campaign, parse_campaign). A new
workload is a new sub-package beside these and one entry in WORKLOADS; outside its folder it still
needs its `workload` choice and table row in plan/keys.py, and its `demo --workload` help line
(docs/contributing.md, "A workload added now").
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, NoReturn, Protocol, TypeVar

from dbdrift.analysis.noise import JUDGING, Estimate, Judging
from dbdrift.errors import InputError
from dbdrift.cluster import units
from dbdrift.model import InstallInfo
from dbdrift.plan import campaign
from dbdrift.plan.campaign import CampaignSpec, Plan, Plans
from dbdrift.plan.fields import TomlTable
from dbdrift.results.findings import Finding
from dbdrift.results.history import RepeatValues
from dbdrift.results.microbenchmarks import NO_MICROBENCHMARKS, Microbenchmarks
from dbdrift.results.views import ViewOptions
from dbdrift.results.workload import WorkloadReport, with_recheck
from dbdrift.runner.campaign import CampaignOutcome, Runner
from dbdrift.store.store import Store
from dbdrift.workload import Capabilities
from dbdrift.workloads.htap import plan as htap_plan
from dbdrift.workloads.htap import report as htap_report
from dbdrift.workloads.htap import results as htap_results
from dbdrift.workloads.htap import run as htap_run
from dbdrift.workloads.ibench import cluster as ibench_cluster
from dbdrift.workloads.ibench import plan as ibench_plan
from dbdrift.workloads.ibench import report as ibench_report
from dbdrift.workloads.ibench import results as ibench_results
from dbdrift.workloads.ibench import run as ibench_run
from dbdrift.workloads.sysbench import cluster as sysbench_cluster
from dbdrift.workloads.sysbench import plan as sysbench_plan
from dbdrift.workloads.sysbench import report as sysbench_report
from dbdrift.workloads.sysbench import results as sysbench_results
from dbdrift.workloads.sysbench import run as sysbench_run
from dbdrift.workloads.sysbench.views import VIEWS as SYSBENCH_VIEWS
from dbdrift.workloads.tpcc import plan as tpcc_plan
from dbdrift.workloads.tpcc import report as tpcc_report
from dbdrift.workloads.tpcc import results as tpcc_results
from dbdrift.workloads.tpcc import run as tpcc_run
from dbdrift.workloads.vector import plan as vector_plan
from dbdrift.workloads.vector import report as vector_report
from dbdrift.workloads.vector import results as vector_results
from dbdrift.workloads.vector import run as vector_run


R = TypeVar("R")  # a workload's report model: ReportData (sysbench), IBenchReport, TpccReport, ...
R_co = TypeVar("R_co", covariant=True)
W = TypeVar("W", bound=WorkloadReport)  # the report model of a workload after sysbench (results/workload.py)
Units = tuple[tuple[str, ...], tuple[int, ...]]  # a cluster unit's (tests, repeats)


class BuildsReport(Protocol[R_co]):
    """(store, campaign_id, base, judging) -> a campaign's report, its verdicts judged as `judging`
    says (the default: `report`'s)."""

    def __call__(self, store: Store, campaign_id: int, base: str | None, judging: Judging = JUDGING) -> R_co: ...


class Views(Protocol[R]):
    """The views of a report of cells (sysbench's comparison, a verdict per test x client count x
    target): built with the options `report` was given (ViewOptions: chain, metrics, --against,
    --tests, --groups, the noise floor), rendered in one of its formats (in colour on a terminal)
    or as a matrix of the campaign's axes, its findings for --fail-on, its flamegraph files per
    cell, and the tests each target regressed on for `recheck`. A workload judged over repeats
    has none (NoViews): its report is its own, and `report` refuses these views' options."""

    @property
    def formats(self) -> tuple[str, ...]: ...
    def build(self, store: Store, campaign: str | None, options: ViewOptions) -> R: ...
    def render(self, data: R, fmt: str, color: bool = False) -> str: ...
    def matrix(self, data: R, fmt: str, tests: str | None, group_by: str | None) -> str: ...
    def findings(self, data: R) -> list[Finding]: ...
    def flamegraphs(self, store: Store, data: R) -> list[tuple[str, str]]: ...  # (file name, text)
    def regressed(self, data: R) -> dict[str, set[str]]: ...


@dataclass(frozen=True)
class NoViews(Generic[W]):
    """A workload judged over repeats has no report of cells to shape: `report` refuses the
    views' options on its campaigns before it gets here (app/report.py), so each view refuses;
    its findings are its own report's."""

    title: str

    @property
    def formats(self) -> tuple[str, ...]:
        return ()

    def build(self, store: Store, campaign: str | None, options: ViewOptions) -> W:
        self._refuse(campaign)

    def render(self, data: W, fmt: str, color: bool = False) -> str:
        self._refuse(data.campaign)

    def matrix(self, data: W, fmt: str, tests: str | None, group_by: str | None) -> str:
        self._refuse(data.campaign)

    def findings(self, data: W) -> list[Finding]:
        return list(data.findings)

    def flamegraphs(self, store: Store, data: W) -> list[tuple[str, str]]:
        self._refuse(data.campaign)

    def regressed(self, data: W) -> dict[str, set[str]]:
        self._refuse(data.campaign)

    def _refuse(self, campaign: str | None) -> NoReturn:
        raise InputError(f"campaign {campaign} ran {self.title}, whose report has no comparison of cells",
                         "report it without --chain, --matrix, --metrics, --against, --tests or --groups")


@dataclass(frozen=True)
class Workload(Generic[R]):
    """One workload as the core sees it: its plan part and the hooks of the layers above plan,
    every one required (a workload that needs nothing of a hook says so in a function of its
    slice). Generic in its report model R, which its report builder makes and its renderer
    takes. Every hook is a module-level function or a picklable object, so a Workload pickles
    (a cluster unit carries it)."""

    plan: Plan
    estimate: Callable[[CampaignSpec], tuple[float, int]]  # expected seconds and progress steps
    run: Callable[[Runner, dict[str, InstallInfo], CampaignOutcome], None]  # (runner, installs, outcome): its sequence
    clients: Callable[[CampaignSpec], int]  # the most client threads a server sees at once
    check_lines: Callable[[CampaignSpec], list[str]]  # `run --check`'s lines on what each target runs
    time_lines: Callable[[CampaignSpec], list[str]]  # where the expected time goes, by part ([] for none)
    narrow: Callable[[CampaignSpec, tuple[str, ...], tuple[int, ...]], CampaignSpec]  # (spec, tests, repeats) -> a unit's
    split: Callable[[CampaignSpec, int], list[Units]]  # (spec, units) -> (tests, repeats) of each unit
    # (store, campaign_id, spec, tests, repeats) -> what a unit lacks, None when nothing
    remaining: Callable[[Store, int, CampaignSpec, tuple[str, ...], tuple[int, ...]], Units | None]
    # (store, campaign_id, spec, tests, reason, unit_id) -> how many planned runs it stored as failed
    store_failed: Callable[[Store, int, CampaignSpec, tuple[str, ...], str, int], int]
    # its report: built from the store (what publish, history and run read, and `report` without
    # the comparison's views), and rendered in a format
    build_report: BuildsReport[R]
    render_report: Callable[[R, str], str]
    # (store, campaign_id) -> each test judged over repeats, its estimates against the base, as its
    # verdicts have them: what `detect` plans from and follows over repeats (caps.judged_over_repeats)
    estimates: Callable[[Store, int], dict[str, list[Estimate]]]
    judged: Callable[[CampaignSpec], tuple[str, ...]]  # the tests `estimates` gives, in order
    # (spec, installs by target name): refuse a target the workload cannot run (an engine or build without
    # what it needs), once every build is found and before the campaign is stored or any server starts
    check_installs: Callable[[CampaignSpec, dict[str, InstallInfo]], None]
    # (spec): refuse what needs no build (a Python package the workload needs, an engine without what the
    # campaign asks for), in `run --check` and in `run` before the store is opened or anything fetched
    preflight: Callable[[CampaignSpec], None]
    # (spec, cache dir): check_installs on each target's build as far as it is known before it is fetched
    # (a cached build, else what the catalogue would fetch), in `run --check` and in `run` before fetching
    check_builds: Callable[[CampaignSpec, Path], None]
    # (store, campaign_id) -> (part, target, folded stacks or None) of every stored step or run, for
    # `report --flamegraphs`
    stacks: Callable[[Store, int], list[tuple[str, str, dict[str, int] | None]]]
    # (store, campaign_id) -> (target, measure) -> its value in each ok repeat: the points `history
    # --metric rate` and `publish` follow over versions (a step's rate, NOPM); {} for none
    history_values: RepeatValues
    # (a measure of history_values) -> what its chart on the published site shows (its caption) and
    # its y axis' unit: `rows inserted per second (Insert Benchmark)`, `rows/s`
    history_measure: Callable[[str], tuple[str, str]]
    # the views of its report of cells, as `report` shapes it (chain, matrix, metrics...), `recheck`
    # reads its regressions and `publish` its findings; NoViews for a workload judged over repeats
    views: Views[R]
    # the catalogue of the tests its report, history and calibrations order, select, group and rate
    # per cell (sysbench's microbenchmarks), handed down to results/; NO_MICROBENCHMARKS for a
    # workload judged over repeats, whose report is its own
    catalog: Microbenchmarks
    # (store, campaign_id, spec) -> what `run --resume` would still run of it: a line saying so, its expected seconds
    resume_left: Callable[[Store, int, CampaignSpec], tuple[str, float]]
    # (spec) -> what detect's plan adds to the measured runs it chooses the lengths of: the seconds
    # besides them, and the seconds each adds beyond its length
    detect_costs: Callable[[CampaignSpec], tuple[float, float]]

    @property
    def name(self) -> str:
        return self.plan.name

    @property
    def table(self) -> str | None:
        return self.plan.table

    @property
    def caps(self) -> Capabilities:
        return self.plan.caps


def no_lines(spec: CampaignSpec) -> list[str]:
    """A workload whose expected time is one part (its repeats) has no lines on where it goes."""
    return []


def no_detect_costs(spec: CampaignSpec) -> tuple[float, float]:
    """A workload whose expected time is one part (its repeats) spends none of it besides them
    (detect plans it by repeats, not by the lengths of its runs)."""
    return 0.0, 0.0


SYSBENCH = Workload(plan=sysbench_plan.PLAN, estimate=sysbench_run.estimate_campaign, run=sysbench_run.run,
                    clients=sysbench_run.clients, check_lines=sysbench_run.check_lines,
                    time_lines=sysbench_run.time_lines, narrow=sysbench_cluster.narrow,
                    split=sysbench_cluster.split, remaining=sysbench_cluster.remaining,
                    store_failed=sysbench_cluster.store_failed, build_report=sysbench_results.build,
                    render_report=sysbench_report.render, estimates=sysbench_results.estimates,
                    judged=sysbench_plan.judged, check_installs=sysbench_run.check_installs,
                    preflight=sysbench_run.preflight, check_builds=sysbench_run.check_builds,
                    stacks=sysbench_results.stacks, history_values=sysbench_results.history_values,
                    history_measure=sysbench_results.history_measure, views=SYSBENCH_VIEWS,
                    catalog=sysbench_results.MICROBENCHMARKS,
                    resume_left=sysbench_run.resume_left, detect_costs=sysbench_run.detect_costs)


class SlicePlan(Protocol):
    """A slice's plan.py as a repeats workload's hooks take it."""

    @property
    def PLAN(self) -> Plan: ...
    def check_lines(self, spec: CampaignSpec) -> list[str]: ...
    def judged(self, spec: CampaignSpec) -> tuple[str, ...]: ...


class SliceRun(Protocol):
    """A slice's run.py as a repeats workload's hooks take it."""

    def estimate(self, spec: CampaignSpec) -> tuple[float, int]: ...
    def run(self, runner: Runner, installs: dict[str, InstallInfo], outcome: CampaignOutcome) -> None: ...
    def clients(self, spec: CampaignSpec) -> int: ...
    def check_installs(self, spec: CampaignSpec, installs: dict[str, InstallInfo]) -> None: ...
    def preflight(self, spec: CampaignSpec) -> None: ...
    def check_builds(self, spec: CampaignSpec, cache_dir: Path) -> None: ...


class SliceResults(Protocol[R_co]):
    """A slice's results.py as a repeats workload's hooks take it (its estimates go by their own name)."""

    def build(self, store: Store, campaign_id: int, base: str | None, judging: Judging = JUDGING) -> R_co: ...
    def stacks(self, store: Store, campaign_id: int) -> list[tuple[str, str, dict[str, int] | None]]: ...
    def history_values(self, store: Store, campaign_id: int) -> dict[tuple[str, str], list[float]]: ...
    def history_measure(self, measure: str) -> tuple[str, str]: ...


def repeats_workload(plan: SlicePlan, run: SliceRun, results: SliceResults[W], render_report: Callable[[W, str], str],
                     estimates: Callable[[Store, int], dict[str, list[Estimate]]],
                     remaining: units.RemainingRepeats = units.RemainingRepeats(units.run_stored)) -> Workload[W]:
    """A workload of whole repeats (every one but sysbench): its cluster units deal out repeats,
    its expected time is one part, a lost unit stores no planned runs as failed (the report names
    the missing repeats), and its report carries the recheck's verdicts (`with_recheck`); it has no
    catalogue of tests (NO_MICROBENCHMARKS), and --resume runs the (target, repeat) pairs not stored
    whole, as its cluster units ask it (`remaining.done`; by default a repeat kept as one run). The slice's modules are checked against the Protocols above where its entry is built."""
    return Workload(plan=plan.PLAN, estimate=run.estimate, run=run.run, clients=run.clients,
                    check_lines=plan.check_lines, time_lines=no_lines, narrow=units.narrow_repeats,
                    split=units.split_repeats, remaining=remaining, store_failed=units.no_failed_runs,
                    build_report=with_recheck(results.build), render_report=render_report, estimates=estimates,
                    judged=plan.judged, check_installs=run.check_installs, preflight=run.preflight,
                    check_builds=run.check_builds, stacks=results.stacks, history_values=results.history_values,
                    history_measure=results.history_measure, views=NoViews(plan.PLAN.caps.title),
                    catalog=NO_MICROBENCHMARKS,
                    resume_left=units.RepeatsLeft(remaining.done, run.estimate), detect_costs=no_detect_costs)


INSERT_BENCHMARK = repeats_workload(ibench_plan, ibench_run, ibench_results, ibench_report.render,
                                   ibench_results.step_estimates, ibench_cluster.remaining)
TPCC = repeats_workload(tpcc_plan, tpcc_run, tpcc_results, tpcc_report.render, tpcc_results.nopm_estimates)
VECTOR = repeats_workload(vector_plan, vector_run, vector_results, vector_report.render, vector_results.qps_estimates)
HTAP = repeats_workload(htap_plan, htap_run, htap_results, htap_report.render, htap_results.estimates)

# Each entry is checked where it is built above, its report builder and renderer agreeing on its
# report model; the map holds workloads of different report models, which Python's types cannot
# name as one ("a Workload of some model"), so it holds them as Workload[Any].
WORKLOADS: dict[str, Workload[Any]] = {w.name: w for w in (SYSBENCH, INSERT_BENCHMARK, TPCC, VECTOR, HTAP)}


# The plan parts the campaign readers are handed: plan/campaign.py sits below the slices and
# imports none of them.
PLANS: Plans = {name: w.plan for name, w in WORKLOADS.items()}
TOP_KEYS = campaign.top_keys(PLANS)  # every top-level row of a campaign file: the core's and sysbench's


def load_campaign(path: Path, sets: list[str] | tuple[str, ...] = ()) -> CampaignSpec:
    """plan/campaign.py's load_campaign with every workload's plan part handed in."""
    return campaign.load_campaign(path, sets, plans=PLANS)


def parse_campaign(data: TomlTable, source: str, base_dir: Path, default_name: str, *,
                   text: str | None = None) -> CampaignSpec:
    """plan/campaign.py's parse_campaign with every workload's plan part handed in."""
    return campaign.parse_campaign(data, source, base_dir, default_name, plans=PLANS, text=text)


def workload_of(spec: CampaignSpec) -> Workload[Any]:
    """The campaign's workload (its `workload` value was checked when the file was parsed)."""
    return WORKLOADS[spec.workload]
