"""The false verdicts of A/A twins per host over time (results/twins.py), as `history --metric
false-verdicts` prints them: text, Markdown, CSV, JSON and HTML; and the table the published
site's index shows. Pure functions of the rates."""
from __future__ import annotations

import csv
import io
import json
from html import escape
from typing import Any

from dbdrift.report.page import data_table, page
from dbdrift.results.twins import HostTwins, TwinPoint, TwinRate

TITLE = "False verdicts of A/A twins"
LEGEND = ("A campaign with aa_twin runs a twin of its base (the same build and configuration under another name); "
          "each regression or improvement of the twin against the base is false. cells: the twin's cells with a "
          "verdict; rate: false ÷ cells, with its 95% Wilson interval (cells taken as independent).")
HEADER = ["date (UTC)", "campaign", "workload", "twin", "cells", "false", "rate", "95% interval"]
CSV_COLUMNS = ("host", "campaign_id", "campaign", "created_at", "workload", "twin", "base", "cells", "false_verdicts",
               "rate", "rate_lower", "rate_upper")


def rate_text(rate: TwinRate) -> tuple[str, str]:
    """(`3.1%`, `0.6–15.7%`), or `-` twice without a cell."""
    interval = rate.interval()
    if rate.rate is None or interval is None:
        return "-", "-"
    return f"{rate.rate:.1%}", f"{interval[0]:.1%}–{interval[1]:.1%}"


def host_line(h: HostTwins) -> str:
    """`bench1 (...): 3 false verdicts in 96 cells (3.1%, 95% 1.1–8.8%) over 3 campaigns`."""
    total = h.total
    rate, interval = rate_text(total)
    return (f"{h.host}: {total.false} false verdict{'s' if total.false != 1 else ''} in {total.cells} cells "
            f"({rate}, 95% {interval}) over {len(h.points)} campaign{'s' if len(h.points) != 1 else ''}")


def rows(h: HostTwins) -> list[list[str]]:
    out = []
    for p in h.points:
        rate, interval = rate_text(p.rate)
        out.append([p.created_at[:16].replace("T", " "), f"{p.campaign} (#{p.campaign_id})", p.workload, p.rate.twin,
                    str(p.rate.cells), str(p.rate.false), rate, interval])
    return out


def render_text(hosts: list[HostTwins], notes: list[str], markdown: bool = False) -> str:
    out = [f"# {TITLE}" if markdown else f"f{TITLE[1:]}, per host over time", "", LEGEND, ""]
    for h in hosts:
        table = rows(h)
        if markdown:
            out += [f"## {host_line(h)}", "", "| " + " | ".join(HEADER) + " |", "|---" * len(HEADER) + "|",
                    *("| " + " | ".join(r) + " |" for r in table), ""]
        else:
            widths = [max(len(r[i]) for r in [HEADER, *table]) for i in range(len(HEADER))]
            out += [host_line(h), *("  " + "  ".join(c.ljust(w) if i < 4 else c.rjust(w)
                                                      for i, (c, w) in enumerate(zip(r, widths))).rstrip()
                                    for r in [HEADER, *table]), ""]
            out += [f"    {p.created_at[:16].replace('T', ' ')} {line}" for p in h.points for line in p.rate.named]
    out += [("- " if markdown else "note: ") + n for n in notes]
    return "\n".join(out).rstrip() + "\n"


def render_csv(hosts: list[HostTwins]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for h in hosts:
        for p in h.points:
            d = p.rate.to_dict()
            w.writerow([h.host, p.campaign_id, p.campaign, p.created_at, p.workload, d["twin"], d["base"], d["cells"],
                        d["false_verdicts"], _blank(d["rate"]), _blank(d["rate_lower"]), _blank(d["rate_upper"])])
    return buf.getvalue()


def _blank(v: object) -> object:
    return "" if v is None else v


def point_dict(p: TwinPoint) -> dict[str, Any]:
    return {"campaign_id": p.campaign_id, "campaign": p.campaign, "created_at": p.created_at, "workload": p.workload,
            **p.rate.to_dict()}


def render_json(hosts: list[HostTwins], notes: list[str], meta: dict[str, Any]) -> str:
    return json.dumps({"meta": meta, "notes": notes, "hosts": [
        {"host": h.host, **{k: v for k, v in h.total.to_dict().items() if k not in ("twin", "base", "false")},
         "campaigns": [point_dict(p) for p in h.points]} for h in hosts]}, indent=2) + "\n"


def section_html(hosts: list[HostTwins]) -> str:
    """Per host its pooled rate and a table of its campaigns, oldest first: the history page's
    body and the published index's section ("" without a twin anywhere)."""
    if not hosts:
        return ""
    parts = [f"<h2>{escape(TITLE)}</h2>", f'<p class="sub">{escape(LEGEND)}</p>']
    for h in hosts:
        parts.append(f"<h3>{escape(host_line(h))}</h3>" + data_table(HEADER, rows(h), scroll=True))
    return "".join(parts)


def render_html(hosts: list[HostTwins], notes: list[str], meta: dict[str, Any]) -> str:
    parts = [f"<h1>{escape(TITLE)}</h1>",
             f"<p>Store {escape(str(meta.get('store', '')))}, generated {escape(str(meta.get('generated_at', '')))} "
             f"by dbdrift {escape(str(meta.get('dbdrift_version', '')))}.</p>", section_html(hosts)]
    if notes:
        parts.append("<h2>Notes</h2><ul class=\"notes\">" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>")
    return page(f"dbdrift history: {meta.get('store', '')}", parts)
