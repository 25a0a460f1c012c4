"""What the workload reports' formats share about a `WorkloadReport`: aligned text and
Markdown tables, the whole text and Markdown page of a report made of titled tables, the verdict
legend, the verdicts as JSON, and the page facts naming the targets and the host. Pure
functions of the report; no I/O.
"""
from __future__ import annotations

from html import escape
from typing import IO, Any

from dbdrift.report.caveats import (packager_line, packager_step, packagers_json, verdict_counts, verdict_legend,
                                   verdict_lines)
from dbdrift.report.drift import DRIFT_LEGEND, DRIFT_TITLE, drift_blocks
from dbdrift.report.envelope import CampaignCsv, envelope
from dbdrift.report.page import data_table, swatch, target_color
from dbdrift.results.workload import WorkloadReport


def verdicts_legend(data: WorkloadReport) -> str:
    """What the report's verdict marks say about its measure, at its thresholds (and B, when a
    target and the base were built by different packagers)."""
    return verdict_legend(data.judged, data.judging.min_effect, data.judging.noisy_width,
                          any(f.packagers for f in data.findings))


def packagers_line(data: WorkloadReport) -> str:
    """`B packagers differ: pg18 debian / pg17 npm: ...` naming both packagers of every target
    built by another packager than the base; empty when there is none."""
    return packager_line(packager_step(t, data.base, pair) for t in data.targets[1:]
                         if (pair := data.packager_change(t)))


def aligned(header: list[str], rows: list[list[str]]) -> list[str]:
    """Name column left-aligned, value columns right-aligned."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return ["  ".join([r[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(r[1:], widths[1:]))]).rstrip()
            for r in [header, *rows]]


def md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table: name column left, values right; cells without their padding."""
    return ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1),
            *("| " + " | ".join(c.strip() for c in r) + " |" for r in rows)]


def findings_json(data: WorkloadReport) -> list[dict[str, Any]]:
    """One object per verdict: where (step or NOPM), target, reference, verdict, its detectable
    change (a fraction, null without an interval), ratio, interval and the explanation of a
    regression or improvement (null for the others)."""
    return [{"measure": f.measure, "test": f.test, "target": f.target, "reference": f.reference,
             "verdict": str(f.verdict), "detectable_change": rounded(f.detectable, 4),
             "ratio": rounded(f.ratio, 4), "lower": rounded(f.lower, 4),
             "upper": rounded(f.upper, 4), **({"status": f.status} if f.status else {}),
             **packagers_json(f.packagers), "foreign_load": f.warned or None,
             "explanation": data.why(f.target, f.test)} for f in data.findings]


VERDICT_COLUMNS = ("verdict", "detectable_change", "packager", "reference_packager", "foreign_load", "why")
"""The CSV columns verdict_cells fills (the packagers: only when the target's and the base's differ;
foreign_load: the figures of the measurements that saw foreign load, analysis/foreign.cell_flags)."""


def verdict_cells(data: WorkloadReport, target: str, test: str | None = None) -> list[str]:
    """The CSV `verdict`, `detectable_change` (a fraction) and `why` of a target's line (empty for
    the base and without a verdict)."""
    found = data.verdict(target, test)
    if not found:
        return ["" for _ in VERDICT_COLUMNS]
    detectable = "" if found.detectable is None else str(round(found.detectable, 4))
    packagers = (found.packagers[1], found.packagers[0]) if found.packagers else ("", "")
    return [str(found.verdict), detectable, *packagers, found.warned, data.why(target, found.test) or ""]


WHY_TITLE = "what moved with each regression (-) and improvement (+)"


def why_lines(data: WorkloadReport, markdown: str = "") -> list[str]:
    """The explanations under a title, as the sysbench report shows them; `markdown`: the
    heading's hashes for a Markdown block."""
    if not data.explanations:
        return []
    if markdown:
        return [f"{markdown} Why: {WHY_TITLE}", "", *(f"- {line}" for line in data.why_lines()), ""]
    return [f"why: {WHY_TITLE}", *data.why_lines(), ""]


def why_html(data: WorkloadReport) -> str:
    if not data.explanations:
        return ""
    return (f'<section id="why"><h2>Why: {escape(WHY_TITLE)}</h2><ul class="why">'
            + "".join(f"<li>{escape(line)}</li>" for line in data.why_lines()) + "</ul></section>")


Table = tuple[str, str, list[str], list[list[str]]]
"""(title, legend, header, rows) of one table of a report."""


def text_page(data: WorkloadReport, title: str, label: str, tables: list[Table], markdown: bool = False,
              facts: tuple[tuple[str, str], ...] = (), failed: str = "runs") -> str:
    """A report as text or Markdown: `title` (Markdown's heading) or `label` (text's) with the
    setup, `facts` (name, value) under it, the notes, the verdicts, the why, each table with its
    legend, then what failed ("Failed runs" or "Failed repeats", as `failed` says)."""
    out = []
    if markdown:
        out += [f"# {title}: {data.campaign}" if data.campaign else f"# {title}", "", data.setup, ""]
        out += [*(f"{name.capitalize()}: {value}" for name, value in facts), ""] if facts else []
        out += [*(f"- {note}" for note in data.notes), ""] if data.notes else []
    else:
        out += [f"campaign: {data.campaign}"] if data.campaign else []
        out += [f"{label}: {data.setup}", *(f"{name}: {value}" for name, value in facts), *data.notes, ""]
    packaged = packagers_line(data)
    if packaged:
        out += [f"*{packaged}*" if markdown else packaged, ""]
    if data.findings:
        lines = verdict_lines(data.findings)
        out += ([f"## Verdicts: {verdict_counts(data.findings)}", "", *(f"- `{line}`" for line in lines), ""]
                if markdown else [f"-- verdicts: {verdict_counts(data.findings)}", *(f"  {line}" for line in lines),
                                  ""])
    out += why_lines(data, markdown="##" if markdown else "")
    for name, legend, header, rows in tables:
        if markdown:
            out += [f"## {name}", ""] + ([f"*{legend}*", ""] if legend else []) + [*md_table(header, rows), ""]
        else:
            out += [f"-- {name}"] + ([legend] if legend else []) + [*aligned(header, rows), ""]
    out += drift_lines(data, markdown)
    if data.problems():
        out += [f"## Failed {failed}" if markdown else f"failed {failed}:", "",
                *(f"- {p}" if markdown else f"  {p}" for p in data.problems()), ""]
    return "\n".join(out).rstrip() + "\n"


def drift_lines(data: WorkloadReport, markdown: bool = False) -> list[str]:
    """The defaults that differ from the base's (report/drift.py), as text or Markdown."""
    blocks = drift_blocks(data.drift)
    if not blocks:
        return []
    if markdown:
        out = [f"## {DRIFT_TITLE[0].upper()}{DRIFT_TITLE[1:]}", "", f"*{DRIFT_LEGEND}*", ""]
        for title, header, rows, tail in blocks:
            out += [f"### {title}", "", *(md_table(header, rows) if rows else []), "", *([tail, ""] if tail else [])]
        return out
    out = [f"-- {DRIFT_TITLE}", DRIFT_LEGEND]
    for title, header, rows, tail in blocks:
        out += [title, *(aligned(header, rows) if rows else []), *([tail] if tail else []), ""]
    return out


def drift_html(data: WorkloadReport) -> str:
    blocks = drift_blocks(data.drift)
    if not blocks:
        return ""
    return (f"<h2>{escape(DRIFT_TITLE[0].upper() + DRIFT_TITLE[1:])}</h2><p class=\"sub\">{escape(DRIFT_LEGEND)}</p>"
            + "".join(f"<h3>{escape(title)}</h3>" + (data_table(header, rows, scroll=True) if rows else "")
                      + (f"<p>{escape(tail)}</p>" if tail else "") for title, header, rows, tail in blocks))


def json_envelope(data: WorkloadReport) -> dict[str, Any]:
    """The fields the report's JSON opens with, as every workload's does (report/envelope.py)."""
    return envelope(data.workload, data.campaign, data.meta, data.base, data.judging.min_effect,
                    data.judging.noisy_width, data.notes)


def campaign_csv(out: IO[str], data: WorkloadReport) -> CampaignCsv:
    """A CSV writer for the report whose every line ends with the campaign columns."""
    return CampaignCsv(out, data.workload, data.campaign, data.meta)


def rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def color_of(data: WorkloadReport, target: str) -> str:
    return target_color(data.targets, target)


def target_facts(data: WorkloadReport) -> list[tuple[str, str]]:
    """The page facts naming each target, the base first, with its chart colour."""
    return [("base" if t == data.base else "target", f"{swatch(color_of(data, t))}{escape(data.label(t))}")
            for t in data.targets]


def host_fact(data: WorkloadReport) -> tuple[str, str]:
    host = data.host
    return "host", escape(f"{host.get('hostname') or '?'}: {host.get('cpu_model') or 'CPU ?'}, {data.ncpu} CPUs")


def run_on_facts(data: WorkloadReport) -> list[tuple[str, str]]:
    return [("run on", escape(data.run_on.replace("T", " ")))] if data.run_on else []
