"""The pages of a published site (`dbdrift publish`): the index of every campaign, filterable in
the page; per engine, setup and host the history of each test by version and over time, and the
version chain; each campaign's report page with a way back. Pure functions of what the app layer
read: series with their change points, and one entry per campaign. Every link is relative, so the
site opens from file:// and from any static host."""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any
from html import escape

from dbdrift.analysis.changepoints import EXTRA, Change
from dbdrift.analysis.noise import Z975, Estimate, Judging, Method, verdict
from dbdrift.origin import extra_hint
from dbdrift.quantities import format_percent
from dbdrift.report.caveats import PACKAGER_MARK, packager_html, packager_line, packager_step
from dbdrift.report.history import change_line, clients
from dbdrift.report.numbers import fmt_abs
from dbdrift.report.page import SHADE_AT, TARGET_COLORS, data_table, page, page_header, verdict_class
from dbdrift.report import charts
from dbdrift.report.charts import MIN_SPAN, columns_chart, fitted_axis
from dbdrift.report import twins
from dbdrift.results.twins import HostTwins, TwinPoint, by_host, rate_of
from dbdrift.results.history import METRICS, Point, Series, SeriesPoint, packagers_crossed, time_order, version_order

SHOWN_METRICS = ("qps", "instructions", "rate")  # side by side where both were measured
SITE_CSS = """
.pair{display:flex;flex-wrap:wrap;gap:1rem}.pair figure{margin:0}
table.site td.l,table.site th.l{text-align:left;white-space:normal;font-family:inherit}
.filters label{margin-right:1.2rem}table.site td.date{white-space:nowrap}.pages a,.pages strong{white-space:nowrap}
"""
BACK = "all campaigns"
Y_AXIS = (f"The y axis spans at least ±{format_percent(MIN_SPAN)} around a chart's values, so a line that moves "
          "less than that stays nearly flat.")
NOT_SEARCHED = f"not computed: Apache Otava, which finds them, is not installed ({extra_hint(*EXTRA)})"


Measures = dict[str, tuple[str, str]]  # a workload's rate measure -> its chart's caption and y axis unit


@dataclass(frozen=True)
class CampaignEntry:
    """One campaign as the index lists it."""

    n: int  # its number in the site: c/<n>.html
    name: str
    created_at: str
    host: str  # results.hosts.host_key of its host facts
    workload: str
    targets: tuple[tuple[str, str, str], ...]  # (name, engine, version), the base first
    counts: tuple[int, int, int, int]  # regressions, improvements, no significant change, no verdict
    worst: tuple[str, ...]  # the worst regressions, as finding lines
    store: str
    page: str  # "c/<n>.html"; "" when it could not be reported
    note: str = ""  # why it has no page
    measured: tuple[str, ...] = ()  # a campaign that compared nothing (one target: a bisect's probe): what it measured
    measures: tuple[tuple[str, str, str], ...] = ()  # its workload's rate measures: (measure, caption, y axis unit)
    twin: dict[str, Any] | None = None  # its A/A twin's rate (results/twins.TwinRate.to_dict), None without a twin


@dataclass(frozen=True)
class Group:
    """One engine, setup and host: the series of its history pages."""

    slug: str  # its folder: h/<slug>/
    engine: str
    setup: str
    host: str
    by_version: tuple[Series, ...]  # change points filled
    by_time: tuple[Series, ...]  # one per version, change points filled
    searched: bool = True  # change points searched (Apache Otava installed); else NOT_SEARCHED
    measures: Measures = field(default_factory=dict)  # its workload's rate measures in words (CampaignEntry.measures)

    def tests(self) -> list[tuple[str, int]]:
        """(test, client threads) in report order, each once."""
        return list(dict.fromkeys((s.test, s.threads) for s in self.by_version))


@dataclass(frozen=True)
class GroupSummary:
    """A group as the index lists it (kept in the site's state, so an unchanged group is not
    drawn again): its counts of versions, tests and change points (None: not searched)."""

    slug: str
    engine: str
    setup: str
    host: str
    versions: int
    tests: int
    regressions: int | None
    improvements: int | None


def summarize(g: Group) -> GroupSummary:
    changes = [(s, c) for s in g.by_version for c in s.changes]
    bad = sum(1 for s, c in changes if _regression(s, c))
    counts = (bad, len(changes) - bad) if g.searched else (None, None)
    return GroupSummary(g.slug, g.engine, g.setup, g.host, len({p.label for s in g.by_version for p in s.points}),
                        len(g.tests()), *counts)


def group_pages(g: Group, judging: Judging) -> dict[str, str]:
    """Every page of a group, by its path in the site."""
    pages = {f"h/{g.slug}/index.html": render_group(g), f"h/{g.slug}/chain.html": render_chain(g, judging)}
    for test, threads in g.tests():
        for name, text in test_over_time_pages(g, test, threads).items():
            pages[f"h/{g.slug}/{name}"] = text
    return pages


def file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def test_page(test: str, threads: int, older: int = 0) -> str:
    """The file, inside its group's folder, of a test's history over time: its newest campaigns,
    or its `older`-th page of older ones (1: the oldest)."""
    return f"{file_safe(test)}.x{threads}" + (f"-{older}" if older else "") + ".html"


def campaign_href(n: int, depth: int) -> str:
    return "../" * depth + f"c/{n}.html"


# --- the index -----------------------------------------------------------------------------


FILTER_SCRIPT = """<script>
(function () {
  var selects = document.querySelectorAll("select[data-filter]");
  function key(s) { return s.getAttribute("data-filter"); }
  function apply() {
    var shown = 0;
    document.querySelectorAll("#campaigns tbody tr").forEach(function (row) {
      var keep = true;
      selects.forEach(function (s) {
        if (s.value && (row.getAttribute("data-" + key(s)) || "").indexOf("|" + s.value + "|") < 0) { keep = false; }
      });
      row.hidden = !keep;
      if (keep) { shown += 1; }
    });
    document.getElementById("shown").textContent = String(shown);
  }
  function carry(hash) {
    document.querySelectorAll("a[data-page]").forEach(function (a) {
      a.setAttribute("href", a.getAttribute("data-page") + (hash ? "#" + hash : ""));
    });
  }
  function remember() {
    var chosen = new URLSearchParams();
    selects.forEach(function (s) { if (s.value) { chosen.set(key(s), s.value); } });
    var hash = chosen.toString();
    try { history.replaceState(null, "", hash ? "#" + hash : location.pathname); } catch (e) { location.hash = hash; }
    carry(hash);
  }
  var asked = new URLSearchParams(location.hash.slice(1));
  selects.forEach(function (s) {
    if (asked.get(key(s))) { s.value = asked.get(key(s)); }
    s.addEventListener("change", function () { apply(); remember(); });
  });
  apply();
  carry(location.hash.slice(1));
})();
</script>"""
"""Filters the campaign rows by the selects' values (each row lists its values as |a|b|), and keeps
the choice in the address (index.html#engine=mysql&workload=tpcc), so a filtered view can be
linked; the links to the other pages of campaigns carry it, so it holds on every page."""

CAMPAIGNS_PER_PAGE = 500
"""Campaigns on a page of the index: index.html lists the newest (between this and twice this
once there are more), each older page this many. About 0.55 kB a row keeps every page well
under 1 MB however many campaigns the site holds."""


def index_pages(entries: list[CampaignEntry], groups: list[GroupSummary], stores: list[str], version: str,
                per_page: int = CAMPAIGNS_PER_PAGE) -> dict[str, str]:
    """The index's pages by file: index.html (the history table and the newest campaigns) and,
    beyond 2 × `per_page` campaigns, index-1.html (the oldest `per_page`), index-2.html, … . The
    older pages are cut from the oldest campaign on, so a new campaign changes only index.html
    until the newest page fills and a new older page is cut from it."""
    oldest_first = sorted(entries, key=lambda e: (e.created_at, e.n))
    windows = _windows(oldest_first, per_page)
    files = ["index.html", *(f"index-{i}.html" for i in range(len(windows) - 1, 0, -1))]
    navs = _page_navs(files, [[e.created_at for e in rows] for rows in windows])
    return {name: render_index(rows, groups if n == 0 else [], stores, version, every=oldest_first, nav=nav,
                               older_page=n > 0) for n, (name, rows, nav) in enumerate(zip(files, windows, navs))}


def _windows(oldest_first: list, per_page: int) -> list[list]:
    """Campaigns (or their labels) oldest first, in the pages index_pages and test_over_time_pages
    make: the newest window (all of them up to 2 × `per_page` - 1; from there `per_page` to
    2 × `per_page` - 1), then the older windows of `per_page` from the newest of them to the
    oldest, which starts at the first campaign."""
    if per_page < 1:
        raise ValueError(f"pages of campaigns: per_page ({per_page}) must be at least 1")
    older = max(0, len(oldest_first) // per_page - 1)
    return [oldest_first[older * per_page:],
            *(oldest_first[(i - 1) * per_page:i * per_page] for i in range(older, 0, -1))]


def _span(dates: list[str]) -> str:
    """The dates of a page's campaigns from their times or labels (each starting YYYY-MM-DD):
    `2026-01-01 – 2026-02-10`."""
    days = sorted(d[:10] for d in dates)
    if not days:
        return "-"
    return days[0] if days[0] == days[-1] else f"{days[0]} – {days[-1]}"


def _page_navs(files: list[str], dates: list[list[str]]) -> list[str]:
    """Each page's links to every page of campaigns (the newest first, then each older one by its
    dates and count); "" with one page. `data-page` lets FILTER_SCRIPT carry its filter along."""
    if len(files) == 1:
        return [""]
    out = []
    for current in files:
        links = []
        for n, (name, days) in enumerate(zip(files, dates)):  # the newest page's would change every night
            text = "newest" if n == 0 else f"{_span(days)} ({len(days)})"
            links.append(f"<strong>{escape(text)}</strong>" if name == current else
                         f'<a href="{name}" data-page="{name}">{escape(text)}</a>')
        out.append('<p class="pages">campaigns: ' + " · ".join(links) + "</p>")
    return out


def render_index(entries: list[CampaignEntry], groups: list[GroupSummary], stores: list[str], version: str,
                 every: list[CampaignEntry] | None = None, nav: str = "", older_page: bool = False) -> str:
    """Campaigns newest first, filterable by engine, workload and host in the page; above them
    the history pages of every engine, setup and host. `every`, `nav` and `older_page` when
    these `entries` are one page of several (index_pages): the whole site's campaigns (its
    count, newest date and the filters' choices, the same on every page), the links to the
    other pages, and whether this is an older page (nothing on it changes with a new campaign;
    the history table stays on index.html)."""
    entries = sorted(entries, key=lambda e: (e.created_at, e.n), reverse=True)
    every = entries if every is None else every
    hosts = sorted({e.host for e in every})
    newest = max((e.created_at for e in every), default="")
    facts = [("stores", escape(", ".join(stores))),
             *([("campaigns on this page", escape(f"{len(entries):,}, {_span([e.created_at for e in entries])}"))]
               if older_page else
               [("campaigns", f"{len(every):,}"), ("newest", escape(newest.replace("T", " ")) if newest else "-")]),
             ("made by", escape(f"dbdrift {version}"))]
    parts = [page_header("dbdrift: published results", facts)]
    if not older_page:
        parts.append(_history_table(groups))
        parts.append(twins.section_html(twin_hosts(every)))
    else:
        parts.append('<p class="sub">The history pages of every engine, setup and host are on '
                     '<a href="index.html" data-page="index.html">the first page</a>.</p>')
    parts += ["<h2>Campaigns</h2>", nav, _filters(entries, every, hosts, paged=bool(nav)), _campaign_table(entries), nav,
              FILTER_SCRIPT]
    return page("dbdrift: published results", [p for p in parts if p], SITE_CSS)


def twin_hosts(entries: Iterable[CampaignEntry]) -> list[HostTwins]:
    """The campaigns with an A/A twin, per host over time: the index's table of false verdicts."""
    found = []
    for e in entries:
        rate = rate_of({"aa_twin": e.twin}) if e.twin else None
        if rate is not None:
            found.append(TwinPoint(e.host, e.n, e.name, e.created_at, e.workload, rate))
    return by_host(found)


def _filters(entries: list[CampaignEntry], every: list[CampaignEntry], hosts: list[str], paged: bool = False) -> str:
    engines = sorted({engine for e in every for _, engine, _ in e.targets})
    workloads = sorted({e.workload for e in every})

    def select(key: str, label: str, options: Iterable[tuple[str, str]]) -> str:
        items = "".join(f'<option value="{escape(v)}">{escape(text)}</option>' for v, text in options)
        return (f'<label>{escape(label)} <select data-filter="{key}"><option value="">all</option>{items}'
                "</select></label>")

    return ('<p class="filters">' + select("engine", "engine", ((e, e) for e in engines))
            + select("workload", "workload", ((w, w) for w in workloads))
            + select("host", "host", ((h, h) for h in hosts))
            + f'<span class="sub"><span id="shown">{len(entries)}</span> of {len(entries)} shown'
            + (" on this page" if paged else "") + "</span></p>")


def _campaign_table(entries: list[CampaignEntry]) -> str:
    rows = []
    for e in entries:
        name = f'<a href="{e.page}">{escape(e.name)}</a>' if e.page else escape(e.name)
        engines = sorted({engine for _, engine, _ in e.targets})
        names = "; ".join(f"{t}: {engine} {version}" for t, engine, version in e.targets)
        rows.append(f'<tr data-engine="{_listed(engines)}" data-workload="{_listed([e.workload])}" '
                    f'data-host="{_listed([e.host])}"><td class="l date">{escape(e.created_at[:16].replace("T", " "))}'
                    f'</td><th class="l" scope="row">{name}</th><td class="l">{escape(e.workload)}</td>'
                    f'<td class="l" title="{escape(names)}">{escape(_versions(e.targets))}</td>'
                    + _verdict_cells(e) + f'<td class="l">{escape(e.host)}</td></tr>')
    head = "".join(f'<th>{escape(h)}</th>' for h in ("date (UTC)", "campaign", "workload", "targets", "−", "+", "=",
                                                     "no verdict", "worst regressions", "host"))
    return (f'<div class="scroll"><table id="campaigns" class="site"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div><p class="sub">−: regressions, +: improvements, =: no '
            "significant change, timed cells and instruction counts alike; no verdict: too noisy, no interval or "
            "not measured</p>")


def _verdict_cells(e: CampaignEntry) -> str:
    """Its counts of verdicts and worst regressions; for a campaign that judged nothing (one
    target, as a bisect's probe: nothing to compare), what it measured, or that nothing was."""
    if not e.page:
        return '<td colspan="4"></td>' + f'<td class="l">{escape(e.note)}</td>'
    if any(e.counts) and len(e.targets) > 1:
        return "".join(f"<td>{c}</td>" for c in e.counts) + f'<td class="l">{escape("; ".join(e.worst))}</td>'
    why = "one target, nothing compared" if len(e.targets) < 2 else "nothing judged"
    said = f"{why}; measured: {'; '.join(e.measured)}" if e.measured else f"{why}: nothing was measured (see its page)"
    return f'<td colspan="5" class="l">{escape(said)}</td>'


MEASURED_SHOWN = 4  # a one-target campaign's values named in the index


def measured(points: Iterable[Point], measures: Measures) -> tuple[str, ...]:
    """What a campaign that judged nothing measured, for its row in the index: `point-query: 9,927
    QPS`, a value per test and measure (the first few, then how many more)."""
    seen: dict[tuple[str, str], str] = {}
    for p in points:
        unit = measure(measures, p.test, p.metric)[1]
        who = p.test + (f" x{p.threads}" if p.threads > 1 else "")
        seen.setdefault((who, unit), f"{who}: {fmt_abs(p.value, thousands=True)} {unit}")
    lines = list(seen.values())
    more = len(lines) - MEASURED_SHOWN
    return tuple(lines[:MEASURED_SHOWN] + ([f"{more} more on its page"] if more > 0 else []))


def _listed(values: Iterable[str]) -> str:
    """A row's values of one filter as the script matches them: `|mysql|postgres|`."""
    return escape("|" + "|".join(values) + "|")


def _versions(targets: tuple[tuple[str, str, str], ...]) -> str:
    """`postgres 17.10 → 18.4`: each engine's versions in the campaign's order, the base first."""
    by_engine: dict[str, list[str]] = {}
    for _, engine, version in targets:
        by_engine.setdefault(engine, []).append(version)
    return "; ".join(f"{engine} {' → '.join(dict.fromkeys(versions))}" for engine, versions in by_engine.items())


def _history_table(groups: list[GroupSummary]) -> str:
    """Each engine, setup and host with its counts of change points, or "not computed"."""
    if not groups:
        return "<h2>History</h2><p>No test was measured in more than one campaign yet.</p>"
    rows = []
    for g in groups:
        counts = (f"<td>{g.regressions}</td><td>{g.improvements}</td>" if g.regressions is not None else
                  f'<td colspan="2" class="l" title="{escape(NOT_SEARCHED)}">not computed</td>')
        rows.append(f'<tr><th class="l" scope="row"><a href="h/{g.slug}/index.html">{escape(g.engine)}</a></th>'
                    f'<td class="l">{escape(g.setup)}</td><td class="l">{escape(g.host)}</td>'
                    f"<td>{g.versions}</td><td>{g.tests}</td>{counts}"
                    f'<td class="l"><a href="h/{g.slug}/index.html">by version</a> · '
                    f'<a href="h/{g.slug}/chain.html">version chain</a></td></tr>')
    head = "".join(f"<th>{h}</th>" for h in ("engine", "setup", "host", "versions", "tests",
                                              "regression change points", "improvement change points", "pages"))
    missing = any(g.regressions is None for g in groups)
    return (f'<h2>History</h2><div class="scroll"><table class="site"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>'
            + (f'<p class="sub">Change points: {escape(NOT_SEARCHED)}.</p>' if missing else ""))


# --- a group's pages ---------------------------------------------------------------------


def _regression(s: Series, c: Change) -> bool:
    return (c.change > 0) != METRICS[s.metric][1]


def _point_tip(s: Series, p: SeriesPoint) -> str:
    """`13.1: 9927 [9893, 9961], 6 campaigns, the newest chain-48`: what a click opens last."""
    interval = f" [{fmt_abs(p.lower)}, {fmt_abs(p.upper)}]" if p.lower is not None and p.upper is not None else ""
    newest = max(p.replicates, key=lambda r: r.campaign_id)
    many = f"{len(p.replicates)} campaigns, the newest " if len(p.replicates) > 1 else ""
    built = f", built by {p.packagers}" if p.packagers else ""
    return f"{p.label}: {fmt_abs(p.value)}{interval}, {many}{newest.campaign} ({newest.target}){built}"


def _line(s: Series, columns: list[str], color: str, depth: int, name: str = "") -> charts.Series:
    """A series as a chart line: each point linked to its newest campaign's page, each change
    point a rule between its columns, red a regression and green an improvement. Only the points
    (and change points) whose label is one of `columns` are drawn."""
    at = {c: i for i, c in enumerate(columns)}
    points = tuple(charts.Point(at[p.label], p.value, _point_tip(s, p), p.lower, p.upper,
                              campaign_href(max(r.campaign_id for r in p.replicates), depth))
                   for p in s.points if p.label in at)
    changes = tuple(charts.Rule(at[s.points[c.index].label] - 0.5, "#a33" if _regression(s, c) else "#276", change_line(s, c))
                    for c in s.changes if s.points[c.index].label in at)
    return charts.Series(name or s.name, color, points, dot=3, rules=changes)


def measure(measures: Measures, test: str, metric: str) -> tuple[str, str]:
    """What the chart of `test` shows: its caption and its y axis' title; a workload's rate in the
    words of the workload (`measures`, from its slice's history_measure)."""
    if metric == "qps":
        return ("thousands of rows scanned per second", "Krps") if test == "scan" else ("queries per second", "QPS")
    if metric == "rate":
        return measures.get(test, (METRICS[metric][0], "rate"))
    return METRICS[metric][0], {"instructions": "instructions / event", "cpu_us/o": "CPU µs / operation"}.get(
        metric, metric)


def _heading(g: Group, metric: str) -> str:
    """A chain table's heading: the metric, for a workload's rate the units of its measures."""
    if metric != "rate" or not g.measures:
        return METRICS[metric][0]
    return "rates: " + ", ".join(dict.fromkeys(unit for _, unit in g.measures.values()))


HTAP_MEASURES = {  # CH-benCHmark's measures (its history names) -> caption and y axis
    "NOPM with analytics": ("new orders per minute while the analytic queries run (CH-benCHmark)", "NOPM"),
    "NOPM alone": ("new orders per minute with no analytic queries (CH-benCHmark)", "NOPM"),
    "queries/h with transactions": ("analytic queries per hour while TPROC-C runs (CH-benCHmark)", "queries/h"),
    "queries/h alone": ("analytic queries per hour with no transactions (CH-benCHmark)", "queries/h"),
}


def _ibench_measure(step: str) -> tuple[str, str]:
    """An Insert Benchmark step's rate: rows/s of a load step, queries/s of a query step."""
    if step == "l.x":
        return "rows indexed per second: the secondary indexes created (Insert Benchmark)", "rows/s"
    if step.startswith("l.i"):
        return "rows inserted per second (Insert Benchmark)", "rows/s"
    kind = {"qr": "range", "qp": "point"}.get(step[:2])
    if kind and step[2:].isdigit():
        return f"{kind} queries per second, {step[2:]} inserts/s per client beside them (Insert Benchmark)", "queries/s"
    return f"{step}: its rate (Insert Benchmark)", "rows/s or queries/s"


def _nav(*links: tuple[str, str]) -> str:
    return "<nav>" + "".join(f'<a href="{href}">{escape(text)}</a>' for href, text in links) + "</nav>"


def _group_facts(g: Group) -> list[tuple[str, str]]:
    return [("engine", escape(g.engine)), ("setup", escape(g.setup)), ("host", escape(g.host))]


def render_group(g: Group) -> str:
    """Per test: its chart over versions for each metric measured, side by side, every point a link
    to the campaign that measured it, change points dashed; the change points listed above."""
    columns = _version_columns(g.by_version)
    changes = [(s, c) for s in g.by_version for c in s.changes]
    parts = [page_header(f"{g.engine} by version", _group_facts(g)),
             _nav(("../../index.html", BACK), ("chain.html", "version chain"))]
    crossed = _packager_steps(g)
    if crossed:
        parts.append(f'<p class="packagers">{escape(crossed)}</p>')
    if not g.searched:
        parts.append(f"<h2>Change points</h2><p>{escape(NOT_SEARCHED)}.</p>")
    elif changes:
        parts.append("<h2>Change points</h2><ul>" + "".join(
            f'<li><a href="#{file_safe(s.test)}-x{s.threads}">{escape(s.metric)}</a>: {escape(change_line(s, c))}</li>'
            for s, c in changes) + "</ul>")
    by_test: dict[tuple[str, int], dict[str, Series]] = {}
    for s in g.by_version:
        by_test.setdefault((s.test, s.threads), {})[s.metric] = s
    for (test, threads), metrics in by_test.items():
        title = test if threads <= 1 else f"{test}, {threads} client threads"
        figures = []
        for metric in SHOWN_METRICS:
            member = metrics.get(metric)
            if member is None:
                continue
            what, unit = measure(g.measures, test, metric)
            caption = f"{test} x{threads}: {metric} by version"
            line = _line(member, columns[metric], TARGET_COLORS[0], 2)
            chart = columns_chart(columns[metric], [line], caption, unit, METRICS[metric][1], fitted_axis([line]))
            figures.append(f"<figure>{chart}<figcaption>{escape(what)}</figcaption></figure>")
        parts.append(f'<h3 id="{file_safe(test)}-x{threads}">{escape(title)} <span class="sub">'
                     f'<a href="{test_page(test, threads)}">over time</a></span></h3><div class="pair">'
                     + "".join(figures) + "</div>")
    parts.append('<p class="sub">Each point is a version: its campaigns aggregated (geometric mean, with its 95% '
                 "interval); a click opens the newest campaign that measured it. "
                 + ("Dashed lines: change points (Apache Otava), red a regression, green an improvement. "
                    if g.searched else "No dashed lines: change points were not computed. ") + Y_AXIS + "</p>")
    return page(f"dbdrift history: {g.engine}, {g.setup}", parts, SITE_CSS)


def _version_columns(series: Iterable[Series]) -> dict[str, list[str]]:
    """Per metric the versions measured, in version order (every series is ordered already)."""
    out: dict[str, dict[str, None]] = {}
    for s in sorted(series, key=lambda s: len(s.points), reverse=True):
        known = out.setdefault(s.metric, {})
        for p in s.points:
            known.setdefault(p.label, None)
    when = {p.label: p.replicates[0].commit_order for s in series for p in s.points}
    return {m: sorted(labels, key=lambda v: version_order(v, when[v])) for m, labels in out.items()}


TIME_CAMPAIGNS_PER_PAGE = 500
"""Campaigns on a page of a test over time, as CAMPAIGNS_PER_PAGE for the index: the test's
page shows the newest 500 to 999, each older page 500, so no chart grows with the site."""


def test_over_time_pages(g: Group, test: str, threads: int, per_page: int = TIME_CAMPAIGNS_PER_PAGE) -> dict[str, str]:
    """A test over time by file in its group's folder: test_page(test, threads) charts its newest
    campaigns; beyond 2 × `per_page` of them, older pages of `per_page` cut from the oldest on
    (as index_pages), so a new campaign redraws only the newest page. Change points are found
    over the whole series and drawn on the page that holds their campaign."""
    members = [s for s in g.by_time if s.test == test and s.threads == threads]
    windows = _windows(sorted({p.label for s in members for p in s.points}, key=time_order), per_page)
    files = [test_page(test, threads), *(test_page(test, threads, i) for i in range(len(windows) - 1, 0, -1))]
    if len(files) == 1:
        return {files[0]: render_test_over_time(g, test, threads)}
    return {name: render_test_over_time(g, test, threads, window, nav)
            for name, window, nav in zip(files, windows, _page_navs(files, windows))}


def render_test_over_time(g: Group, test: str, threads: int, window: list[str] | None = None, nav: str = "") -> str:
    """One test over time: per metric a chart with a line per version on one axis of campaigns
    in time order, so both a step between versions and a drift within one show. `window`: the
    campaigns (point labels) this page charts, `nav` its links to the others (test_over_time_pages)."""
    facts = _group_facts(g) + ([("clients", escape(clients(threads)))] if clients(threads) else [])
    shown = None if window is None else set(window)
    parts = [page_header(f"{test} over time", facts),
             _nav(("../../index.html", BACK), ("index.html", f"{g.engine} by version"), ("chain.html", "version chain")),
             nav, "" if g.searched else f"<p>Change points {escape(NOT_SEARCHED)}.</p>"]
    for metric in SHOWN_METRICS:
        members = [s for s in g.by_time if s.test == test and s.threads == threads and s.metric == metric]
        columns = sorted({p.label for s in members for p in s.points if shown is None or p.label in shown},
                         key=time_order)
        if not columns:
            continue
        lines = [_line(s, columns, TARGET_COLORS[n % len(TARGET_COLORS)], 2, s.version) for n, s in enumerate(members)]
        lines = [line for line in lines if line.points]
        caption = f"{test} x{threads}: {metric} over time, a line per version"
        what, unit = measure(g.measures, test, metric)
        parts.append(f"<h2>{escape(what)}</h2><figure>"
                     + columns_chart(columns, lines, caption, unit, METRICS[metric][1], fitted_axis(lines), width=1100,
                                     legend="above") + "</figure>")
        changes = [f"{s.version}: {change_line(s, c)}" for s in members for c in s.changes
                   if shown is None or s.points[c.index].label in shown]
        if changes:
            parts.append("<ul>" + "".join(f"<li>{escape(c)}</li>" for c in changes) + "</ul>")
    parts.append('<p class="sub">x: campaigns, oldest first (date, time, #number in this site); a click on a point '
                 f"opens its campaign. {Y_AXIS}</p>")
    return page(f"dbdrift history: {test} over time", [p for p in parts if p], SITE_CSS)


def render_chain(g: Group, judging: Judging) -> str:
    """The posts' adjacent-version table per metric and client count: each version over the one
    before it. A timed cell is judged as a report's cell is (noise.verdict, chain_step); a count
    (deterministic) is coloured when it moved by the minimum effect."""
    min_effect = judging.min_effect
    columns = _version_columns(g.by_version)
    parts = [page_header(f"{g.engine}: each version over the one before", _group_facts(g)),
             _nav(("../../index.html", BACK), ("index.html", f"{g.engine} by version"))]
    for metric in SHOWN_METRICS:
        labels = columns.get(metric, [])
        if len(labels) < 2:
            continue
        for threads in sorted({s.threads for s in g.by_version if s.metric == metric}):
            members = [s for s in g.by_version if s.metric == metric and s.threads == threads]
            header = ["test"] + [f"{b} / {a}" for a, b in zip(labels, labels[1:])]
            body = "".join(_chain_row(s, labels, judging) for s in members)
            heading = ", ".join(x for x in (_heading(g, metric), clients(threads)) if x)
            parts.append(f"<h2>{escape(heading)}</h2>"
                         '<div class="scroll"><table><thead><tr>' + "".join(f"<th>{escape(h)}</th>" for h in header)
                         + f"</tr></thead><tbody>{body}</tbody></table></div>")
    if len(parts) == 2:
        parts.append(data_table(["note"], [["fewer than two versions measured: no chain yet"]]))
    crossed = _packager_steps(g)
    parts.append(f'<p class="sub">red: a regression, green: an improvement, as a report judges and colours a cell (the 95% '
                 f"interval excludes 1 and the change is at least {format_percent(min_effect)}, or the test's noise "
                 f"floor; darker from a change of {SHADE_AT[0]:.0%}, darkest from {SHADE_AT[1]:.0%}): "
                 "where both versions come from one campaign, its own paired interval, as `dbdrift report --chain` "
                 "gives it; otherwise the two versions' intervals combined. Counts (deterministic): moved by "
                 f"{format_percent(min_effect)} or more. A hover gives the interval and how it was made; blank: a "
                 "version not measured"
                 + (f"; {escape(PACKAGER_MARK)}: the two versions' builds come from different packagers (hover it "
                    "for which)" if crossed else "") + ".</p>")
    if crossed:
        parts.append(f'<p class="packagers">{escape(crossed)}</p>')
    return page(f"dbdrift version chain: {g.engine}, {g.setup}", parts, SITE_CSS)


def _chain_row(s: Series, labels: list[str], judging: Judging) -> str:
    at = {p.label: p for p in s.points}
    cells = []
    for a, b in zip(labels, labels[1:]):
        pa, pb = at.get(a), at.get(b)
        if pa is None or pb is None or not pa.value:
            cells.append("<td></td>")
            continue
        crossed = packagers_crossed(pa, pb)
        told = packager_html(b, a, (crossed[0], crossed[1])) if crossed else ""
        if s.metric == "instructions":
            ratio = pb.value / pa.value
            moved = abs(ratio - 1) >= judging.min_effect
            better = (ratio > 1) == METRICS[s.metric][1]
            shade = verdict_class("improvement" if better else "regression", ratio) if moved else ""
            css = f' class="{shade}"' if shade else ""
            cells.append(f"<td{css}>{ratio:.3f}{told}</td>")
            continue
        est, effect, how = chain_step(pa, pb, judging.min_effect)
        found = verdict(est, replace(judging, min_effect=effect))
        shade = verdict_class(found, est.value)
        css = f' class="{shade}"' if shade else ""
        interval = f" [{est.lower:.3f}, {est.upper:.3f}]" if est.lower is not None and est.upper is not None else ""
        title = f"{found}: {est.value:.3f}{interval}, {how}"
        cells.append(f'<td{css} title="{escape(title)}">{est.value:.2f}{told}</td>')
    return f'<tr><th scope="row">{escape(s.name)}</th>{"".join(cells)}</tr>'


def _packager_steps(g: Group) -> str:
    """The legend line naming each step between two versions whose builds come from different
    packagers (report/caveats.packager_line); empty when every step stays with one."""
    steps = [packager_step(b.label, a.label, (crossed[0], crossed[1]))
             for s in g.by_version for a, b in zip(s.points, s.points[1:]) if (crossed := packagers_crossed(a, b))]
    return packager_line(steps)


def chain_step(a: SeriesPoint, b: SeriesPoint, min_effect: float) -> tuple[Estimate, float, str]:
    """b over a as a report judges it: the estimate, the minimum effect its verdict needs and how
    the interval was made. Where both versions come from one campaign alone and b's point was
    paired with a's target there (results/history.py Point.paired), that campaign's own chain
    cell: its paired interval and the test's noise floor. Otherwise the ratio of the two values
    with their log standard errors added (the unpaired delta of noise.relative; a point's
    interval is read as a normal one, se = ln(upper/lower) / 2 / 1.96, which is wider than its t
    would give, never narrower)."""
    pa, pb = a.replicates[0], b.replicates[0]
    if (len(a.replicates) == len(b.replicates) == 1 and pa.campaign_id == pb.campaign_id
            and pb.reference == pa.target and pb.paired is not None):
        ratio, lower, upper, floor = pb.paired
        return (Estimate(ratio, lower, upper, 0, Method.PAIRED_TURNS), max(min_effect, floor),
                f"paired in campaign {pb.campaign}")
    ratio = b.value / a.value
    if None in (a.lower, a.upper, b.lower, b.upper) or not (a.lower and b.lower):
        return Estimate(ratio, None, None, 0, Method.NO_INTERVAL), min_effect, "no interval on one side"
    se = math.hypot(*(math.log(p.upper / p.lower) / 2 / Z975 for p in (a, b)))  # type: ignore[operator]
    half = Z975 * se
    return (Estimate(ratio, ratio * math.exp(-half), ratio * math.exp(half), 2, Method.UNPAIRED_DELTA), min_effect,
            "the two versions' intervals combined (measured apart)")


def campaign_page(report_html: str, back: str) -> str:
    """A campaign's HTML report with a link back to the index at the top of its body."""
    return report_html.replace("<body>", f'<body>\n<nav><a href="{back}">← {BACK}</a></nav>', 1)
