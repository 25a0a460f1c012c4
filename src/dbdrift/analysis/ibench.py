"""Insert Benchmark analysis as its scripts compute it (np.sh, rth.sh, etl.sh, chart_all.sh;
docs/methodology.md): per-second percentiles and slices, the insert-rate SLA, response-time
histograms, per-step metrics and the three summary tables.

Pure functions of `InsertStepResult` values: no I/O and no formatting (workloads/ibench/report.py renders).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from statistics import fmean

from dbdrift.analysis import events
from dbdrift.analysis.hardware import insert_benchmark_metrics
from dbdrift.analysis.noise import Estimate, relative_over_repeats
from dbdrift.model import IBENCH_QUERY_STEPS, IBENCH_STEPS, InsertStepResult, JsonObject

Indexed = dict[tuple[str, str], InsertStepResult]  # (target, step) -> the result shown (index_results)
Repeats = dict[tuple[str, str], list[InsertStepResult]]  # (target, step) -> its ok repeats (ok_repeats)

COLORS = {"red": "#FF9A9A", "gray": "#D7D7D7", "green": "#81FFA6", "blue": "#81FFF9", "yellow": "#FFDD81"}
"""Color name -> the cell background chart_all.sh gives it in the HTML summary tables."""

BUCKET_LABELS = ("≤256µs", "≤1ms", "≤4ms", "≤16ms", "≤64ms", "≤256ms", "≤1s", "≤4s", "≤16s", ">16s")
"""One label per histogram count: the bounds of model.IBENCH_BUCKETS_US, then the overflow."""

OPS = ("insert", "delete", "query")
RATE_KEYS = ("i_ips", "i_dps", "i_qps")
SERIES_KEYS = ("t_sec", "i_ips", "max_i_us", "i_dps", "max_d_us", "i_qps", "max_q_us")
METRICS = ("ips", "qps", "rps", "rmbps", "wps", "wmbps", "rpq", "rkbpq", "wpi", "wkbpi", "csps", "cpups",
           "cspq", "cpupq", "dbgb1", "dbgb2", "rss", "maxop", "p50", "p99", "bgpq", "bg%", "flps", "flpi", "rawait",
           "wawait", "aqu", "us", "sy", "r", "uspq", "sypq")
"""`etl.sh`'s line without its tag, then the server's background CPU, the disk as iostat shows it,
and vmstat's us, sy and r with the user and system parts of cpupq (analysis/hardware.insert_benchmark_metrics)."""
GB = 2 ** 30  # dbgb1/dbgb2: `du -bs` bytes in GiB, as etl.sh divides them


def is_query_step(step: str) -> bool:
    return step in IBENCH_QUERY_STEPS


def main_rate(result: InsertStepResult) -> float:
    """The step's throughput: queries/s for qr/qp steps, inserts/s (l.x: indexed rows/s) otherwise."""
    return result.qps if is_query_step(result.step) else result.ips


def percentile_rate(values: list[float], n: float) -> float | None:
    """The rate percentile as np.sh computes it: the rates sorted descending, "Nth" is
    the value at 1-based position round(N/100 · lines).

    Read literally, so p50 is the median and p99 a near-worst interval (99% of intervals were
    at least this fast) — not the usual ascending percentile. round() halves to even like
    np.sh's `printf %.0f` (148.5 → 148). The position is clamped to 1..lines, so few lines
    still give a value (np.sh prints NA below 10 lines). No values → None.
    """
    if not values:
        return None
    ordered = sorted(values, reverse=True)
    position = min(max(round(n * len(ordered) / 100), 1), len(ordered))
    return ordered[position - 1]


def step_percentiles(result: InsertStepResult) -> tuple[float | None, float | None]:
    """(p50, p99) of client 1's per-second main rate (i_qps for qr/qp steps, else i_ips).

    Every report line counts, a trailing partial interval included: its rate is still rows or
    queries over the interval's own length, so it is a real if noisy observation.
    """
    key = "i_qps" if is_query_step(result.step) else "i_ips"
    values = [line[key] for line in result.per_second if line.get(key) is not None]
    return percentile_rate(values, 50), percentile_rate(values, 99)


def slice_averages(per_second: list[JsonObject], key: str, slices: int = 10) -> list[float | None]:
    """The average rate in each of `slices` equal slices of the run (np.sh's 10), cut by time.

    The run spans 0..T, T the last line's t_sec (seconds since the step started, at the end of
    the line's interval). Slice k is the time (k·T/slices, (k+1)·T/slices]; a line belongs to
    the slice holding its end, so with 1 s lines the first second is in slice 0 and the last
    in slice 9. A slice's value is the mean of its lines' `key`, weighted by their i_sec: for a
    rate that is events ÷ time covered, and the plain mean np.sh takes when all lines are 1 s.
    A slice no line ends in (fewer lines than slices, or one long stalled interval) is None.
    np.sh cuts by line count instead; the two agree for regular 1 s lines, and time does not
    shift when an interval is late.
    """
    lines = [line for line in per_second if line.get(key) is not None and line.get("t_sec") is not None]
    end = max((line["t_sec"] for line in lines), default=0)
    if end <= 0:
        return [None] * slices
    sums, weights = [0.0] * slices, [0.0] * slices
    for line in lines:
        k = min(max(math.ceil(line["t_sec"] * slices / end) - 1, 0), slices - 1)
        weight = line.get("i_sec") or 1.0
        sums[k] += line[key] * weight
        weights[k] += weight
    return [s / w if w else None for s, w in zip(sums, weights)]


def sla_met(result: InsertStepResult) -> bool | None:
    """The SLA: a qr/qp step sustained its background writes iff ips ≥ 0.95 × target_ips.

    Compared as 100·ips ≥ 95·target, products of the stored values, so exactly 95% passes.
    None for load steps and when no target was recorded.
    """
    if not is_query_step(result.step) or result.target_ips is None:
        return None
    return 100 * result.ips >= 95 * result.target_ips


@dataclass(frozen=True)
class ResponseHistogram:
    """One operation type's response times in one step (`rth.sh`): counts per BUCKET_LABELS,
    each as a percentage of that operation's responses, and the largest response time."""

    op: str
    counts: tuple[int, ...]
    percents: tuple[float, ...]
    max_s: float | None

    @property
    def responses(self) -> int:
        return sum(self.counts)


def histogram_table(result: InsertStepResult) -> list[ResponseHistogram]:
    """Histograms of the step's operation types in OPS order; types with no response are left out."""
    out = []
    for op in OPS:
        counts = tuple((result.histograms.get(op) or {}).get("counts") or ())
        total = sum(counts)
        if total:
            percents = tuple(100 * c / total for c in counts)
            out.append(ResponseHistogram(op, counts, percents, max_response_s(result, op)))
    return out


def max_response_s(result: InsertStepResult, op: str) -> float | None:
    """Largest response time of `op` over all clients, in seconds (the summary's field, else the histogram's)."""
    field_us = {"insert": result.max_insert_us, "delete": result.max_delete_us, "query": result.max_query_us}[op]
    if field_us is None:
        field_us = (result.histograms.get(op) or {}).get("max_us")
    return None if field_us is None else field_us / 1e6


def step_metrics(result: InsertStepResult, ncpu: int) -> dict[str, float | None]:
    """`etl.sh`'s metrics of one step, keyed by METRICS.

    Sampler figures come from `insert_benchmark_metrics` on result.hardware (None when the step
    has no window); maxop is the largest insert response time for load steps and query response
    time for qr/qp steps, in seconds as `etl.sh` stores it; p50/p99 from `step_percentiles`;
    dbgb1/dbgb2 from the database sizes measured after the step (None for steps stored before).
    """
    out: dict[str, float | None] = dict.fromkeys(METRICS)
    if result.hardware and result.hardware.get("elapsed_s"):
        out.update(insert_benchmark_metrics(result.hardware, result.ips, result.qps, ncpu))
    out["ips"], out["qps"] = result.ips, result.qps
    out["dbgb1"] = result.db_bytes / GB if result.db_bytes is not None else None
    out["dbgb2"] = result.datadir_bytes / GB if result.datadir_bytes is not None else None
    out["maxop"] = max_response_s(result, "query" if is_query_step(result.step) else "insert")
    out["p50"], out["p99"] = step_percentiles(result)
    return out


def per_second_series(result: InsertStepResult) -> dict[str, list[float | None]]:
    """Client 1's per-second report as columns (SERIES_KEYS), ready for charts; gaps are None."""
    return {key: [line.get(key) for line in result.per_second] for key in SERIES_KEYS}


@dataclass(frozen=True)
class StepDetail:
    """What a report shows for one target in one step beside the summary tables."""

    status: str
    histograms: tuple[ResponseHistogram, ...]
    metrics: dict[str, float | None]
    slices: dict[str, list[float | None]]  # RATE_KEYS -> 10 slice averages of client 1
    dips: tuple[events.Dips, ...] = ()  # the step's rate dips and response spikes, with the engine's events


def step_detail(result: InsertStepResult, ncpu: int) -> StepDetail:
    return StepDetail(result.status, tuple(histogram_table(result)), step_metrics(result, ncpu),
                      {key: slice_averages(result.per_second, key) for key in RATE_KEYS}, step_dips(result))


DIP_SERIES = (("i_ips", "inserts/s", "dip"), ("i_dps", "deletes/s", "dip"), ("i_qps", "queries/s", "dip"),
              ("max_i_us", "max insert response", "spike"), ("max_d_us", "max delete response", "spike"),
              ("max_q_us", "max query response", "spike"))
"""Every series of client 1's per-second report (np.sh's six graphs) whose dips or spikes are laid
beside the engine's events: a step's rate of inserts, of deletes (the delete series, whose
PostgreSQL vacuum waves the posts hunt) and of queries, and the max response time of each."""


def step_dips(result: InsertStepResult) -> tuple[events.Dips, ...]:
    """The dips of each rate and the spikes of each max response time of client 1 (DIP_SERIES),
    each with the engine events that coincide across each dip and in the peak before it
    (analysis/events.py); a series the step does not run (all 0 or absent: deletes in l.i0,
    queries in the load steps) has none, nor any series without engine counters."""
    if not result.per_second or not result.events or not result.events["t"]:
        return ()
    series = per_second_series(result)
    t = [float(v) if v is not None else -1.0 for v in series["t_sec"]]
    engine = result.events
    out = []
    for key, what, kind in DIP_SERIES:
        values = series[key]
        if not any(v for v in values):
            continue
        found = events.explain(what, kind, t, values, engine["t"], engine["series"], engine["events"])
        if found.spans and found.median > 0:
            out.append(found)
    return tuple(out)


# --- summary tables (chart_all.sh; docs/methodology.md) ----------------------------------------


@dataclass(frozen=True)
class SummaryCell:
    """One colored value of a SummaryTable (chart_all.sh's tables): a rate, a ratio or a size."""

    value: float | None
    color: str | None = None  # a COLORS key
    lower: float | None = None  # the relative table's 95% interval, with repeats (relative_estimate)
    upper: float | None = None
    repeats: int = 1  # ok repeats the value is the mean of


@dataclass(frozen=True)
class SummaryTable:
    columns: tuple[str, ...]
    rows: dict[str, tuple[SummaryCell, ...]]  # row name (a target, or "target") -> one cell per column


@dataclass(frozen=True)
class IBenchSummary:
    """The three summary tables, the write and size table; `missing` says per target why a step has no value."""

    base: str
    throughput: SummaryTable  # targets x IBENCH_STEPS, main rate
    relative: SummaryTable  # throughput ÷ the base's, unrounded (render with 2 decimals)
    background: SummaryTable  # targets + "target" x IBENCH_QUERY_STEPS, achieved ips
    missing: dict[str, tuple[tuple[str, str], ...]]  # target -> ((step, why), ...), see _missing
    writes: SummaryTable | None = None  # targets, then "<target> ÷ <base>" rows x WRITE_COLUMNS (writes_table)


def index_results(results: list[InsertStepResult], targets: list[str]) -> Indexed:
    """(target, step) -> the one result the per-step details show: of repeated steps the last
    "ok" one given (results come in the order they were stored), else the last given."""
    out: dict[tuple[str, str], InsertStepResult] = {}
    for r in results:
        key = (r.target, r.step)
        if r.target in targets and (key not in out or r.status == "ok" or out[key].status != "ok"):
            out[key] = r
    return out


def ok_repeats(results: list[InsertStepResult], targets: list[str]) -> Repeats:
    """(target, step) -> its "ok" results, one per repeat (the last given of a repeat), in repeat order."""
    last = {(r.target, r.step, r.repeat): r for r in results if r.target in targets and r.status == "ok"}
    out: dict[tuple[str, str], list[InsertStepResult]] = {}
    for (target, step, _repeat), r in sorted(last.items(), key=lambda kv: kv[0][2]):
        out.setdefault((target, step), []).append(r)
    return out


def summary_tables(results: list[InsertStepResult], targets: list[str], ncpu: int = 1) -> IBenchSummary:
    """The three summary tables for `targets` in order, the first being the base of the relative table.

    Only steps with status "ok" give values; failed, interrupted or absent steps are None
    cells, uncolored, and are listed in `missing`. With repeats, a throughput cell is the mean
    over the target's ok repeats of the step, and a relative cell carries the interval of
    `relative_estimate`.
    """
    indexed = index_results(results, targets)
    repeats = ok_repeats(results, targets)
    throughput = _throughput_table(repeats, targets)
    return IBenchSummary(targets[0], throughput, _relative_table(throughput, repeats, targets[0]),
                         _background_table(repeats, indexed, targets), _missing(indexed, targets),
                         writes_table(repeats, targets, ncpu))


WRITE_STEPS = ("l.i0", "l.i1", "l.i2")
"""The steps whose KB written per insert (wkbpi) the write table shows: the inserts of l.x are
index entries, not rows, and the qr/qp steps' few inserts are dwarfed by their queries' I/O."""


def write_columns(steps_run: list[str]) -> tuple[tuple[str, str, str], ...]:
    """(header, metric, step) of the write and size table: wkbpi per load step, dbgb1 after l.i0
    and l.x and after the last step run (the end), dbgb2 at the end; steps not run are left out."""
    cols = [(f"wkbpi {st}", "wkbpi", st) for st in WRITE_STEPS if st in steps_run]
    cols += [(f"dbgb1 {st}", "dbgb1", st) for st in ("l.i0", "l.x") if st in steps_run]
    last = steps_run[-1] if steps_run else None
    if last is not None and last not in ("l.i0", "l.x"):
        cols.append((f"dbgb1 {last}", "dbgb1", last))
    if last is not None:
        cols.append((f"dbgb2 {last}", "dbgb2", last))
    return tuple(cols)


def writes_table(repeats: Repeats, targets: list[str], ncpu: int) -> SummaryTable:
    """KB written per insert and database sizes per target (means over ok repeats), then one row
    per other target relative to the base (the first), named "<target> ÷ <base>"; colored as the
    relative table, where more is worse (blue: above 105% of the base)."""
    steps_run = [st for st in IBENCH_STEPS if any((t, st) in repeats for t in targets)]
    columns = write_columns(steps_run)

    def value(target: str, metric: str, step: str) -> float | None:
        values = [step_metrics(r, ncpu)[metric] for r in repeats.get((target, step)) or ()]
        known = [v for v in values if v is not None]
        return fmean(known) if known else None

    absolute = {t: tuple(SummaryCell(value(t, m, st)) for _h, m, st in columns) for t in targets}
    rows = dict(absolute)
    base = targets[0]
    for t in targets[1:]:
        ratios = [_ratio(c.value, b.value) for c, b in zip(absolute[t], absolute[base])]
        rows[f"{t} ÷ {base}"] = tuple(SummaryCell(r, relative_color(r)) for r in ratios)
    return SummaryTable(tuple(h for h, _m, _st in columns), rows)


def _throughput_table(repeats: Repeats, targets: list[str]) -> SummaryTable:
    columns = []
    for step in IBENCH_STEPS:
        found = [repeats.get((t, step)) or [] for t in targets]
        values = [None if not rs else fmean(main_rate(r) for r in rs) for rs in found]
        missed = [bool(rs) and mean_sla_met(rs) is False for rs in found]
        columns.append([SummaryCell(v, c, repeats=len(rs)) for v, c, rs in zip(values, range_colors(values, missed),
                                                                            found)])
    return SummaryTable(IBENCH_STEPS, {t: tuple(col[i] for col in columns) for i, t in enumerate(targets)})


def mean_sla_met(results: list[InsertStepResult]) -> bool | None:
    """The SLA over repeats: the mean achieved insert rate against the (shared) target rate."""
    target_ips = results[0].target_ips if results else None
    if not results or target_ips is None or sla_met(results[0]) is None:
        return None
    return 100 * fmean(r.ips for r in results) >= 95 * target_ips


def relative_estimate(new: list[InsertStepResult], base: list[InsertStepResult]) -> Estimate:
    """new ÷ base for one step with a 95% interval: noise.relative_over_repeats of each
    repeat's main rate over its elapsed time."""
    def values(results: list[InsertStepResult]) -> list[tuple[int, float, float]]:
        return [(r.repeat, main_rate(r), r.elapsed_s) for r in results]
    return relative_over_repeats(values(new), values(base))


def range_colors(values: list[float | None], missed: list[bool]) -> list[str | None]:
    """Colors of one column of table 1, absolute throughput (`chart_all.sh`).

    min over every value, max over values whose row met the SLA (`missed` False; load columns
    never miss), gap = ⌊(max − min)/4⌋, bottom = min + gap, top = max − gap. A cell is red if
    ≤ bottom, else gray if its SLA was missed, else green if ≥ top. No red when
    min ≥ 0.8·max (compared as 10·min ≥ 8·max). When every row missed the SLA there is no max:
    no red or green, the misses stay gray. A single value is its own max: green.
    """
    present = [v for v in values if v is not None]
    eligible = [v for v, m in zip(values, missed) if v is not None and not m]
    bottom = top = None
    if eligible:
        low, high = min(present), max(eligible)
        gap = math.floor((high - low) / 4)
        top = high - gap
        bottom = None if 10 * low >= 8 * high else low + gap
    return [_range_color(v, m, bottom, top) for v, m in zip(values, missed)]


def _range_color(value: float | None, missed: bool, bottom: float | None, top: float | None) -> str | None:
    if value is None:
        return None
    if bottom is not None and value <= bottom:
        return "red"
    if missed:
        return "gray"
    if top is not None and value >= top:
        return "green"
    return None


def _relative_table(throughput: SummaryTable, repeats: Repeats, base: str) -> SummaryTable:
    base_cells = throughput.rows[base]
    rows = {}
    for target, cells in throughput.rows.items():
        row = []
        for step, c, b in zip(throughput.columns, cells, base_cells):
            r = _ratio(c.value, b.value)
            new, old = repeats.get((target, step)) or [], repeats.get((base, step)) or []
            lower = upper = None
            if r is not None and target != base and (len(new) > 1 or len(old) > 1):
                est = relative_estimate(new, old)
                lower, upper = est.lower, est.upper
                r = est.value if est.value is not None else r
            row.append(SummaryCell(r, relative_color(r), lower, upper, min(len(new), len(old))))
        rows[target] = tuple(row)
    return SummaryTable(throughput.columns, rows)


def _ratio(value: float | None, base: float | None) -> float | None:
    """value ÷ base; None when either is missing or the base is 0 (chart_all.sh would divide by zero)."""
    return None if value is None or not base else value / base


def relative_color(ratio: float | None) -> str | None:
    """Table 2, relative throughput: round(100·ratio) > 105 blue, < 95 yellow (halves round to even, like awk's %.0f)."""
    if ratio is None:
        return None
    percent = round(100 * ratio)
    return "blue" if percent > 105 else "yellow" if percent < 95 else None


def _background_table(repeats: Repeats, indexed: Indexed, targets: list[str]) -> SummaryTable:
    """Table 3, background inserts: achieved ips per qr/qp step (the mean over ok repeats), red below
    95% of the target; then the gray `target` row, taken from any result of the step (failed ones
    too: it is planned, not measured)."""
    rows = {}
    for t in targets:
        found = [repeats.get((t, step)) for step in IBENCH_QUERY_STEPS]
        rows[t] = tuple(SummaryCell(None) if not rs else
                        SummaryCell(fmean(r.ips for r in rs), "red" if mean_sla_met(rs) is False else None, repeats=len(rs))
                        for rs in found)
    planned = [_planned_ips(indexed, targets, step) for step in IBENCH_QUERY_STEPS]
    rows["target"] = tuple(SummaryCell(p, None if p is None else "gray") for p in planned)
    return SummaryTable(IBENCH_QUERY_STEPS, rows)


def _planned_ips(indexed: Indexed, targets: list[str], step: str) -> float | None:
    """The step's target_ips from the first target that recorded one (all share dop and rate)."""
    found = (indexed.get((t, step)) for t in targets)
    return next((r.target_ips for r in found if r is not None and r.target_ips is not None), None)


def _missing(indexed: Indexed, targets: list[str]) -> dict[str, tuple[tuple[str, str], ...]]:
    """target -> (step, why) for each step without a value: "not run", or the status and the
    first line of the stored error ("failed: server closed the connection")."""
    out = {}
    for t in targets:
        gaps = tuple((step, _why(indexed.get((t, step)))) for step in IBENCH_STEPS
                     if (t, step) not in indexed or indexed[(t, step)].status != "ok")
        if gaps:
            out[t] = gaps
    return out


def _why(result: InsertStepResult | None) -> str:
    if result is None:
        return "not run"
    first_line = (result.error or "").strip().splitlines()[:1]
    return f"{result.status}: {first_line[0]}" if first_line else result.status
