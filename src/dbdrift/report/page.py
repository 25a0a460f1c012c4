"""The shell every HTML page goes through: doctype, head and the one stylesheet, the target
colours, the header with its context table, and the escaping and table helpers the pages share.
Pages decide what to show; this module decides how a dbdrift page is put together. No analysis."""
from __future__ import annotations

import math
from html import escape

from dbdrift.report.charts import CHART_CSS, CHART_SCRIPT

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#222;max-width:80rem;margin:1.5rem auto;
padding:0 1rem;line-height:1.4}
h1{font-size:1.6rem}h2{border-bottom:2px solid #ddd;margin-top:2.5rem}h3{margin:1.5rem 0 .4rem}
pre,td,.num,tbody th,tfoot th{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem}
pre.legend{background:#f6f6f6;padding:.6rem .8rem;border-left:3px solid #bbb}
table{border-collapse:collapse;margin:.4rem 0 1rem}
th,td{border:1px solid #ccc;padding:.2rem .6rem}
thead th{background:#f0f0f0;text-align:center;vertical-align:bottom}
tbody th,tfoot th{text-align:left;font-weight:normal}
td{text-align:right;white-space:nowrap}
tfoot td,tfoot th{background:#fafafa;color:#444}
tr.grp th{background:#f6f6f6;font-family:inherit;font-style:italic}
td.red1{background:#ffdede}td.red2{background:#ffb0b0}td.red3{background:#ff7c7c}
td.green1{background:#dcf8e3}td.green2{background:#a8f0bd}td.green3{background:#6ee290}
td.noisy{color:#666;background:#e4e4e4 repeating-linear-gradient(45deg,#f2f2f2,#f2f2f2 5px,#d7d7d7 5px,#d7d7d7 10px)}
.sub{font-weight:normal;color:#666;font-size:.85em}
.mark{color:#555;margin-left:.3em}
.warn{color:#b45309;font-weight:bold;cursor:help;margin-left:.2em}
ul.notes li.host{color:#b45309}
figure{margin:.3rem 0 1.2rem}figcaption{color:#555;font-size:.9rem}
nav{margin:1rem 0}nav a{margin-right:1.2rem}
header table.context th{text-align:left;background:#f6f6f6;font-family:inherit;font-weight:600}
header table.context td{text-align:left;white-space:normal;font-family:inherit}
.swatch{display:inline-block;width:.8em;height:.8em;margin-right:.35em;border:1px solid #555;vertical-align:-.05em}
table.findings td.mark{font-weight:bold}table.findings td.why{text-align:left;white-space:normal;font-family:inherit;max-width:40rem}
.plan{color:#6b21a8;font-weight:bold;margin-left:.2em;cursor:help}span.packagers{color:#0f766e;font-weight:bold;margin-left:.2em;cursor:help}details.plan{margin:.2rem 0 .6rem}
details.plan pre{max-height:20rem;overflow:auto;background:#f6f6f6;padding:.4rem}
table.findings tr.regression td.mark{color:#a33}table.findings tr.improvement td.mark{color:#276}
svg.chart{max-width:100%;height:auto}
.scroll{overflow-x:auto;max-width:100%}
"""


TARGET_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f",
                 "#e15759", "#bab0ac")  # one per compared target, in column order (Tableau 10)
UNLISTED_COLOR = "#888"  # a target outside the coloured list (a reference that is not compared)


def page(title: str, parts: list[str], css: str = "") -> str:
    """The whole document: the head with `title` and the stylesheet (CSS, then the page's own
    `css`), then the non-empty `parts` one a line. Every page of the report goes through here,
    so they share one head, one stylesheet and one palette; a page with a chart also gets the
    charts' hover and zoom (charts.CHART_SCRIPT, inline: the page stays self-contained)."""
    shown = [p for p in parts if p]
    charted = any('<svg xmlns="http://www.w3.org/2000/svg" class="chart"' in p for p in shown)
    head = ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{escape(title)}</title>\n<style>{CSS}{CHART_CSS if charted else ''}{css}</style>\n</head>\n<body>")
    return "\n".join([head, *shown, *([CHART_SCRIPT] if charted else [])]) + "\n</body>\n</html>\n"


SHADE_AT = (0.05, 0.10)  # a change of 5% or more is drawn darker, 10% or more darkest (the posts' 0.95/1.05 lines)


def verdict_class(verdict: str | None, ratio: float | None) -> str:
    """The CSS class of a judged cell: red for a regression and green for an improvement whatever
    its size (the colour follows the verdict, never a threshold of its own), darker with the size of
    the change (SHADE_AT, judged on the printed two decimals); empty for every other verdict."""
    kind = {"regression": "red", "improvement": "green"}.get(str(verdict) if verdict else "")
    if kind is None or ratio is None:
        return ""
    size = abs(round(ratio, 2) - 1)
    return f"{kind}{1 + sum(size >= at - 1e-9 for at in SHADE_AT)}"


def target_color(targets: tuple[str, ...] | list[str], target: str) -> str:
    """The colour of `target`: its place in `targets` (the report's column order), cycled."""
    return TARGET_COLORS[targets.index(target) % len(TARGET_COLORS)] if target in targets else UNLISTED_COLOR


def swatch(color: str) -> str:
    """The small colour square put before a target's name, linking it to its chart colour."""
    return f'<span class="swatch" style="background:{color}"></span>'


def attr(text: str) -> str:
    """`text` for a title attribute: escaped, line breaks kept as breaks in the tooltip."""
    return escape(text).replace("\n", "&#10;")


def page_header(title: str, facts: list[tuple[str, str]], after: str = "") -> str:
    """The page header: the title, then a table of (name, HTML value) facts (what ran where);
    `after` (the notes) follows the table inside the header. Values are HTML: escape them."""
    rows = "".join(f"<tr><th>{escape(name)}</th><td>{value}</td></tr>" for name, value in facts)
    return f'<header><h1>{escape(title)}</h1>\n<table class="context"><tbody>{rows}</tbody></table>{after}</header>'


COLUMNS_PER_TABLE = 14  # value columns that fit beside a (wrapped) target label in the page's 80rem


def split_table(header: list[str], rows: list[list[str]], per: int = COLUMNS_PER_TABLE) -> list[tuple[list[str], list[list[str]]]]:
    """A wide table as tables of at most `per` value columns each, every one with the label column
    first: read down the page instead of scrolled sideways (a metrics table of 27 columns ran
    700 px past the page at 1,400 px)."""
    width = len(header) - 1
    size = math.ceil(width / math.ceil(width / per)) if width else 1  # tables of even widths: 27 as 14 and 13
    return [([header[0], *header[1 + i:1 + i + size]], [[r[0], *r[1 + i:1 + i + size]] for r in rows])
            for i in range(0, max(width, 1), size)]


def data_table(header: list[str], rows: list[list[str]], css: str = "", scroll: bool = False) -> str:
    """A table of text cells, the first column of each row as its row header; `scroll` wraps it
    so a wide table scrolls instead of widening the page."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(f'<tr><th scope="row">{escape(r[0])}</th>' + "".join(f"<td>{escape(c)}</td>" for c in r[1:])
                   + "</tr>" for r in rows)
    cls = f' class="{css}"' if css else ""
    out = f"<table{cls}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    return f'<div class="scroll">{out}</div>' if scroll else out
