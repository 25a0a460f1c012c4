"""`report --format post` of sysbench's comparison (a comparison, a chain, `--against`, a
matrix), in the shape of the posts (docs/posts.md): what was compared, then per compared pair and
group "This has (QPS for X) / (QPS for Y)", the largest, smallest and median change in basis
points, the table, and why (default drift, per statement against per row, plans, instructions).
The shared parts of a write-up are report/post.py's. Pure: Markdown from a ReportData."""
from __future__ import annotations

from dbdrift.analysis.relative import Cell
from dbdrift.report.drift import DRIFT_LEGEND
from dbdrift.report.numbers import fmt_abs
from dbdrift.report.post import POST_NOTE, change_bullets, compared_lines, drift_line, md_lines, tally
from dbdrift.workloads.sysbench.report.hardware import delta_lines, layer_legend, layer_table
from dbdrift.workloads.sysbench.report.table import AGAINST_TITLES, fmt_cell
from dbdrift.workloads.sysbench.results.data import ReportData


# --- what was compared --------------------------------------------------------------------------
_DURATIONS = (("read_s", "read-heavy tests"), ("write_s", "write-heavy tests"), ("insert_s", "insert"),
              ("warmup_s", "warm-up"))


def _seconds(value: object) -> str:
    return f"{value:g} s" if isinstance(value, (int, float)) else str(value)


def sysbench_setup(data: ReportData) -> list[str]:
    settings = data.meta.get("campaign", {}).get("settings", {})
    sizes = []
    if settings.get("tables") or settings.get("rows"):
        sizes.append(f"{settings.get('tables', 1)} table(s) of {settings.get('rows', '?'):,} rows"
                     if isinstance(settings.get("rows"), int) else f"{settings.get('tables', 1)} table(s)")
    threads = data.thread_counts()
    sizes.append(f"{', '.join(map(str, threads))} client thread(s)" if threads else "no timed runs")
    durations = [f"{what} {_seconds(settings[key])}" for key, what in _DURATIONS if key in settings]
    if settings.get("repeats"):
        durations.append(f"{settings['repeats']} repeat(s)")
    out = [f"- sizes: {'; '.join(sizes)}"]
    if durations:
        out.append(f"- durations: {', '.join(durations)}")
    return out


# --- sysbench -----------------------------------------------------------------------------------
def _pairs(data: ReportData) -> list[tuple[str, str]]:
    comp = data.comparison
    return [(t, comp.references.get(t, comp.base)) for t in comp.compared]


def render_post(data: ReportData) -> str:
    """The write-up of a comparison: one section per compared pair (a chain: per adjacent step)."""
    comp = data.comparison
    title = (AGAINST_TITLES[comp.against] if comp.against else " → ".join(comp.targets) if comp.chain
             else f"{', '.join(comp.compared)} vs {comp.base}")
    how = ("a chain: each version against the one before it" if comp.chain else
           "each column against its own reference" if comp.against else f"each target against {comp.base}")
    out = [f"# {data.campaign}: {title}", "", POST_NOTE, "", "## What was compared", "", f"- compared: {how}",
           *compared_lines(data.meta, data.target_labels, comp.base, comp.targets), *sysbench_setup(data),
           *(f"- note: {n}" for n in data.notes), ""]
    for target, reference in _pairs(data):
        out += _pair_section(data, target, reference)
    return "\n".join(out).rstrip() + "\n"


def _pair_section(data: ReportData, target: str, reference: str) -> list[str]:
    out = [f"## {target} vs {reference}", "",
           f"This has (QPS for {target}) / (QPS for {reference}); scan's QPS is thousand rows scanned per second.",
           ""]
    for threads in data.thread_counts():
        clients = f"{threads} client thread{'s' if threads != 1 else ''}"
        for section in data.sections(threads):
            cells: list[tuple[str, Cell]] = [(r.test, r.cells[target]) for r in section.rows if target in r.cells]
            changes = [(test, c.ratio, c.verdict) for test, c in cells if c.ratio is not None]
            summary = section.summaries.get(target)
            out += [f"### {section.title}, {clients}", ""]
            bullets = change_bullets(changes, summary.median if summary else None, "rQPS",
                                     tally([c.verdict for _, c in cells]))
            out += [*(f"- {b}" for b in bullets), ""]
            rows = [[fmt_cell(r, target), fmt_abs(r.cells[reference].absolute.value, r.cells[reference].absolute.status)
                     if reference in r.cells else "-",
                     fmt_abs(r.cells[target].absolute.value, r.cells[target].absolute.status), r.test]
                    for r in section.rows if target in r.cells]
            out += [*md_lines(["rQPS", f"QPS {reference}", f"QPS {target}", "test"], rows), ""]
    out += _why(data, target, reference)
    return out


def _why(data: ReportData, target: str, reference: str) -> list[str]:
    """The explanations of this pair's regressions and improvements, then what else the store holds
    on it: defaults that drifted, per statement against per row, plans, instructions."""
    lines = [data.why(r.test, r.threads, target) for r in data.comparison.rows]
    out = [f"- {line}" for line in lines if line]
    out += [f"- default drift: {drift_line(t)}" for t in data.drift
            if t.target == target and t.reference == reference and t.rows]
    header, table = layer_table(data)
    picked = [r for r in table if r[1] == f"{target} vs {reference}"]
    out += [f"- per statement vs per row, {r[0]} ({r[2]}): per statement {r[3]} ({r[4]}), per row {r[5]} ({r[6]})"
            for r in picked]
    out += [f"- plan of {c.test}: {st['sql']}: {st['reference_shape']} ({reference}) -> {st['shape']} ({target})"
            for c in data.plan_changes if c.target == target and c.reference == reference for st in c.statements]
    out += [f"- instructions: {line}" for line in delta_lines(data)
            if line.startswith(f"{target} vs {reference},")]
    if not out:
        return []
    legend = []
    if picked:
        legend.append(f"Per statement vs per row: {layer_legend()}.")
    if any(line.startswith("- default drift") for line in out):
        legend.append(f"Default drift: {DRIFT_LEGEND}.")
    return ["### Why", "", *out, "", *(legend and [*legend, ""])]
