"""The engine's own counters under the per-second charts, and the dips they explain, as every
format of the Insert Benchmark and TPROC-C reports shows them (analysis/events.py). Pure."""
from __future__ import annotations

from html import escape
from typing import Any

from dbdrift.analysis.events import Dips
from dbdrift.model import EngineEvents
from dbdrift.report.charts import Line, all_zero, time_chart

SERIES_TITLES = {
    "wal_mb": "WAL written (MB/s)", "dead_tuples": "dead tuples", "checkpoint_buffers": "checkpoint writes (buffers/s)",
    "history_length": "history list length (purge lag)", "dirty_pages": "dirty pages",
    "checkpoint_age_mb": "checkpoint age (MB)", "redo_mb": "redo written (MB/s)", "pages_flushed": "pages flushed/s",
}
"""runner/events.SERIES as the charts title them."""

DIPS_TITLE = "dips and spikes, and the engine's events that coincide"
DIPS_HEADER = ["target", "what", "what coincides (engine events)", "in the peak before"]
EPISODES_TITLE = "each dip and spike: its span, and the engine's events in it and in the peak before it"
EPISODES_HEADER = ["target", "series", "seconds", "low/high", "events in it", "peak before", "events in the peak"]
EPISODES_SHOWN = 12
"""Episodes listed per series in the text formats (JSON keeps them all): enough to see a wave."""


def dip_cells(d: Dips) -> list[str]:
    """[what dipped, what coincides, what the peaks before held] of one series, as Dips.line words them."""
    return [d.what(), d.told(), d.told_before()]


def episode_rows(label: str, d: Dips) -> list[list[str]]:
    """One row per dip (or spike) of one series, the first EPISODES_SHOWN, then how many more."""
    rows = []
    for i, e in enumerate(d.spans[:EPISODES_SHOWN]):
        during = d.during[i] if i < len(d.during) else ()
        before = d.before[i] if i < len(d.before) else ()
        rows.append([label, f"{d.series} {d.kind}", _span((e.start, e.end)), f"{e.extreme:,.0f}",
                     ", ".join(during) or "-", _span(e.peak) if e.peak else "-", ", ".join(before) or "-"])
    if len(d.spans) > EPISODES_SHOWN:
        rows.append([label, f"{d.series} {d.kind}", f"{len(d.spans) - EPISODES_SHOWN} more (JSON lists all)",
                     "", "", "", ""])
    return rows


def _span(span: tuple[float, float]) -> str:
    return f"{span[0]:g}" if span[0] == span[1] else f"{span[0]:g}-{span[1]:g}"


def dip_text(dips: tuple[Dips, ...]) -> str:
    """Every dip line of one step or run, for a CSV cell."""
    return " | ".join(d.line("").removeprefix(": ") for d in dips)


def dips_json(d: Dips) -> dict[str, Any]:
    return {"series": d.series, "kind": d.kind, "starts": list(d.starts), "median": round(d.median, 3),
            "episodes": [{"start": e.start, "end": e.end, "extreme": round(e.extreme, 3),
                          "peak": list(e.peak) if e.peak else None,
                          "during": list(d.during[i]) if i < len(d.during) else [],
                          "in_peak": list(d.before[i]) if i < len(d.before) else []} for i, e in enumerate(d.spans)],
            "coincidences": [{"kind": c.kind, "hits": c.hits, "dips": c.dips, "by_chance": round(c.by_chance, 3),
                              "peak_hits": c.peak_hits, "peaks": c.peaks,
                              "peak_by_chance": round(c.peak_by_chance, 3)} for c in d.ranked]}


def engine_charts(events: dict[str, EngineEvents | None], colors: dict[str, str], prefix: str) -> list[str]:
    """One time chart per engine counter that any target has, a line per target; the events
    (a vacuum of a table, a checkpoint) are named in the caption's count."""
    charts, flat = [], []
    for name, title in SERIES_TITLES.items():
        lines = []
        for target, e in events.items():
            values = (e or {}).get("series", {}).get(name) if e else None
            if e and values and any(v is not None for v in values):
                lines.append(Line(target, tuple(e["t"]), tuple(values), colors.get(target, "#444")))
        if lines and all_zero(lines):
            flat.append(title)
        elif lines:
            charts.append(time_chart(lines, f"{prefix}: {title}", title))
    if flat:
        charts.append(flat_note(flat))
    marks = [f"{t}: " + ", ".join(_event_name(x) for x in e["events"][:12]) for t, e in events.items()
             if e and e.get("events")]
    if charts and marks:
        charts.append("<p class=\"sub\">engine events (second: what): " + "; ".join(marks) + "</p>")
    return charts


def flat_note(titles: list[str], why: str = "the engine did none of this in the window") -> str:
    """What a page says instead of drawing charts whose every value is 0 (charts.all_zero)."""
    return (f'<p class="sub flat">not drawn, every value 0 on every target: {escape(", ".join(titles))} '
            f"({escape(why)})</p>")


def _event_name(event: dict[str, Any]) -> str:
    what = f" of {event['what']}" if event.get("what") else ""
    return f"{event['t']:g} s {event['kind']}{what}"
