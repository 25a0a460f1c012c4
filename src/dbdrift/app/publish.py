"""`dbdrift publish`: one or more stores as a static site (report/site.py draws the pages).

Incremental: `site.json` in the site keeps, per campaign, the fingerprint it was published at
(Store.campaign_fingerprint, with those of the campaigns its report reads: the calibrations
that give its noise floors and its `-pinned` recheck), its index entry and its history points;
per history group the digest of its points, its pages and its series' change points; and per
page the hash of what was written. A campaign whose fingerprint is unchanged is not read again,
a group whose points are unchanged is not drawn again, and a page whose content is unchanged is
not written again; a campaign gone from every store takes its page with it. A new dbdrift
version reads and draws everything again.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from dbdrift.analysis.changepoints import Change, Unavailable, change_points, detector
from dbdrift.analysis.noise import JUDGING, Judging, Verdict
from dbdrift.app.process import open_read_only
from dbdrift.app.report import stored_workload
from dbdrift.app.site_folder import SAVE_EVERY_S, SiteFolder, entry_of, entry_row, point_of, point_row
from dbdrift.app.site_readers import held_interrupts, read_all
from dbdrift.errors import UserError
from dbdrift.report import site
from dbdrift.results.meta import FORMAT_VERSION, PINNED
from dbdrift.results.findings import Finding
from dbdrift.results.history import Point, Series, build_series, campaign_points
from dbdrift.results.hosts import host_key
from dbdrift.results.twins import rate_of, without_twin
from dbdrift.store.store import Store
from dbdrift.store.stored import TargetRecord
from dbdrift.version import __version__
from dbdrift.workloads.registry import SYSBENCH

WORST = 3  # regressions named per campaign in the index
SITE_FORMAT = 3  # what site.json keeps and the pages draw (setups, captions, axes): a change reads and draws all again
Progress = Callable[[int, int, str], None]  # (campaigns read, to read, the page just written)


@dataclass(frozen=True)
class PublishRequest:
    stores: tuple[Path, ...]
    out: Path
    judging: Judging = JUDGING  # its minimum effect: the smallest step a change point or a chain cell is called at
    per_page: int = site.CAMPAIGNS_PER_PAGE  # campaigns on each older page of the index


@dataclass(frozen=True)
class PublishOutcome:
    """What a publish did: campaigns in the site, read from their stores this time, pages
    written and removed, pages in the site, the largest page, and notes (campaigns not published)."""

    campaigns: int
    read: int
    written: int
    removed: int
    pages: int
    largest: tuple[str, int]
    notes: list[str] = field(default_factory=list)


def publish(request: PublishRequest, progress: Progress | None = None) -> PublishOutcome:
    folder = SiteFolder.read(request.out)
    stores = [open_read_only(path) for path in request.stores]  # every store checked before anything is written
    notes: list[str] = []
    try:
        folder.begin()
        entries, points, read = _campaigns(stores, folder, notes, progress)
        measures = {e.n: {m: (caption, unit) for m, caption, unit in e.measures} for e in entries}
        groups = _groups(points, measures, request.judging, folder, notes)
        for rel, text in site.index_pages(entries, groups, _store_names(request.stores), __version__,
                                          request.per_page).items():
            folder.write(rel, text)
        removed = folder.finish()
    except BaseException as exc:
        with held_interrupts(for_good=isinstance(exc, KeyboardInterrupt)):  # what was read is kept for the next publish
            for store in stores:
                store.close()
            folder.save_what_was_done()
        raise
    for store in stores:
        store.close()
    sizes = [(rel, (request.out / rel).stat().st_size) for rel in sorted(folder.produced)]
    largest = max(sizes, key=lambda s: s[1], default=("", 0))
    return PublishOutcome(len(entries), read, folder.written, removed, len(sizes), largest, notes)


def _store_names(paths: tuple[Path, ...]) -> list[str]:
    """The stores as the site names them: by file name, as a reader of the site knows them (the
    publishing machine's folders are no business of the site's); by path from the folder the
    file names share when two share a name."""
    names = [p.name for p in paths]
    if len(set(names)) == len(names):
        return names
    resolved = [p.resolve() for p in paths]
    common = Path(os.path.commonpath(resolved))
    return [p.relative_to(common).as_posix() for p in resolved]


def _campaigns(stores: list[Store], built: SiteFolder, notes: list[str], progress: Progress | None
               ) -> tuple[list[site.CampaignEntry], list[Point], int]:
    """Every campaign of every store: its entry and points from the state when its fingerprint is
    unchanged, else read and its page written (with progress). Campaigns gone are dropped."""
    known: dict[str, Any] = built.state["campaigns"]
    seen: dict[str, Any] = {}
    todo: list[tuple[Store, int, str, str]] = []
    source: dict[str, Path] = {}  # key -> the store it is published from
    for store in stores:
        depends = _calibration_fingerprint(store)
        for c in store.campaigns():
            key = f"{c['created_at']} {c['name']}"
            if key in source:
                notes.append(f"campaign {c['name']} of {c['created_at']} is in {source[key]} and {store.path}: "
                             f"published from {source[key]}")
                continue
            source[key] = store.path
            fingerprint = _fingerprint(store, c["id"], c["name"], depends)
            old = known.get(key)
            page = old["entry"]["page"] if old else ""
            if old and old["fingerprint"] == fingerprint and (not page or (built.out / page).exists()):
                seen[key] = old
                if page:
                    built.keep(page)
                if old["entry"]["note"]:
                    notes.append(old["entry"]["note"])
            else:
                todo.append((store, c["id"], key, fingerprint))
    next_n = max([v["n"] for v in known.values()] + [0]) + 1
    numbered = []
    for store, campaign_id, key, fingerprint in todo:
        n = known[key]["n"] if key in known else next_n
        next_n = max(next_n, n + 1)
        numbered.append((store.path, campaign_id, n))
    for i, ((entry, points, html), (_, _, key, fingerprint)) in enumerate(zip(read_all(_read_in_process, numbered), todo)):
        if html:
            built.write(entry.page, site.campaign_page(html, "../index.html"))
        if entry.note:
            notes.append(entry.note)
        # kept in the state as it is read: a publish interrupted here does not read it again
        seen[key] = known[key] = {"n": entry.n, "fingerprint": fingerprint, "entry": entry_row(entry),
                                  "points": [point_row(p) for p in points]}
        built.save(every_s=SAVE_EVERY_S)
        if progress:
            progress(i + 1, len(todo), entry.page or entry.name)
    built.state["campaigns"] = seen
    entries = [entry_of(v["entry"]) for v in seen.values()]
    points = [point_of(row) for v in seen.values() for row in v["points"]]
    return entries, points, len(todo)


def _fingerprint(store: Store, campaign_id: int, name: str, depends: str) -> str:
    pinned = store.latest_campaign_id(name + PINNED) if not name.endswith(PINNED) else None
    # the report format: a campaign read by an older estimator is read again (its page and points)
    parts = [store.campaign_fingerprint(campaign_id), depends, f"format {FORMAT_VERSION}",
             store.campaign_fingerprint(pinned) if pinned is not None else "", f"site {SITE_FORMAT}"]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def _calibration_fingerprint(store: Store) -> str:
    """What every report of the store reads besides its campaign: the calibrations' noise floors."""
    return ",".join(store.campaign_fingerprint(i) for i in store.calibration_ids())


Read = tuple[site.CampaignEntry, list[Point], str]  # a campaign's index entry, history points and page ("": none)
_OPEN: dict[Path, Store] = {}  # a reading process's stores, each opened once


def _read_in_process(path: Path, campaign_id: int, n: int) -> Read:
    if path not in _OPEN:
        _OPEN[path] = Store(path, read_only=True, checked=True)  # checked by the publishing process
    return _read(_OPEN[path], campaign_id, n)


def _read(store: Store, campaign_id: int, n: int) -> Read:
    """A campaign's report page, index entry and history points; a campaign this dbdrift cannot
    report (a newer workload's) gets an entry that says why, and no page."""
    row = store.campaign(campaign_id)
    targets = tuple((t.name, t.engine, _version(t)) for t in store.targets(campaign_id))
    common: dict[str, Any] = dict(n=n, name=row.name, created_at=row.created_at, host=host_key(row.host),
                  workload=row.workload, targets=targets, store=store.path.name)
    comparison = None
    try:
        workload = stored_workload(store, campaign_id)
        data = workload.build_report(store, campaign_id, None)
        html, meta = workload.render_report(data, "html"), data.meta
        findings = workload.views.findings(data)
        if not workload.caps.judged_over_repeats:  # the comparison of cells, whose points are its cells'
            comparison = data.comparison
    except UserError as exc:
        note = f"campaign {row.name} (#{campaign_id} of {store.path.name}) is not published: {exc.message}"
        return site.CampaignEntry(**common, counts=(0, 0, 0, 0), worst=(), page="", note=note), [], ""
    if workload.caps.judged_over_repeats:  # the workload's own measures, over repeats
        points = campaign_points(store, workload.catalog, campaign_id, "rate", repeats=workload.history_values)
    else:  # the catalog's tests: their runs and counts
        points = [p for metric in ("qps", "instructions")
                  for p in campaign_points(store, workload.catalog, campaign_id, metric, comparison=comparison)]
    points = [replace(p, campaign_id=n) for p in points]
    twin = rate_of(meta)  # the twin's verdicts are false by construction: counted apart, not as the campaign's
    findings = without_twin(findings, twin.twin if twin else None)
    counts = _counts(findings)
    words = workload.history_measure  # what the workload's rates are, for the site's captions
    rates = dict.fromkeys(p.test for p in points if p.metric == "rate")
    measures = tuple((t, *words(t)) for t in rates)
    said = {m: (caption, unit) for m, caption, unit in measures}
    measured = site.measured(points, said) if len(targets) < 2 or not any(counts) else ()
    entry = site.CampaignEntry(**common, counts=counts, worst=_worst(findings), page=f"c/{n}.html", measured=measured,
                               measures=measures, twin=twin.to_dict() if twin else None)
    return entry, points, html


def _version(target: TargetRecord) -> str:
    return str(target.server.get("version") or target.install.get("version") or "?")


def _counts(findings: list[Finding]) -> tuple[int, int, int, int]:
    verdicts = [f.verdict for f in findings]
    regressions, improvements = verdicts.count(Verdict.REGRESSION), verdicts.count(Verdict.IMPROVEMENT)
    same = verdicts.count(Verdict.NO_CHANGE)
    return regressions, improvements, same, len(verdicts) - regressions - improvements - same


def _worst(findings: list[Finding]) -> tuple[str, ...]:
    """The regressions that moved most (a timed ratio below 1, a count above), as finding lines."""
    bad = [f for f in findings if f.verdict is Verdict.REGRESSION and f.ratio is not None]
    bad.sort(key=lambda f: -abs((f.ratio or 1.0) - 1.0))
    return tuple(f.line() for f in bad[:WORST])


def _groups(points: list[Point], measures: dict[int, site.Measures], judging: Judging, built: SiteFolder, notes: list[str]
            ) -> list[site.GroupSummary]:
    """Per engine, setup and host: its pages drawn from its series by version and by time with
    their change points, unless its points are those it was drawn from last time (the state
    keeps each group's digest, pages and summary); the summaries for the index."""
    state = built.state
    grouped: dict[tuple[str, str, str], list[Point]] = {}
    for p in points:
        grouped.setdefault((p.engine, p.setup, p.host), []).append(p)
    known, kept = state.get("groups", {}), {}
    otava = importlib.util.find_spec("otava") is not None  # installed now: pages drawn without it are drawn again
    changed: dict[str, list[Point]] = {}
    for (engine, setup, host), members in sorted(grouped.items()):
        slug = f"{site.file_safe(engine)}-{hashlib.sha1(f'{setup}|{host}'.encode()).hexdigest()[:10]}"
        # the minimum effect alone of the judging: publish sets no other, and earlier sites' digests stay valid
        digest = hashlib.sha1(repr((sorted(map(point_row, members)), judging.min_effect, __version__,
                                    SITE_FORMAT)).encode()).hexdigest()
        old = known.get(slug)
        if (old and old["digest"] == digest and all((built.out / rel).exists() for rel in old["pages"])
                and not (otava and old["summary"]["regressions"] is None)):
            for rel in old["pages"]:
                built.keep(rel)
            kept[slug] = old
        else:
            changed[slug] = members
            kept[slug] = {"digest": digest, "changes": (old or {}).get("changes", {})}
    if changed:
        for g in _drawn(changed, measures, judging.min_effect, kept, notes):
            pages = site.group_pages(g, judging)
            for rel, text in pages.items():
                built.write(rel, text)
            kept[g.slug].update(pages=sorted(pages), summary=asdict(site.summarize(g)))
    state["groups"] = kept
    summaries = [site.GroupSummary(**kept[slug]["summary"]) for slug in kept]
    if not changed and any(g.regressions is None for g in summaries):
        notes.append(f"change points {site.NOT_SEARCHED}")
    return summaries


def _drawn(changed: dict[str, list[Point]], measures: dict[int, site.Measures], min_effect: float, groups: dict[str, Any],
           notes: list[str]) -> list[site.Group]:
    """The groups of `changed` (slug -> its points) with their series and change points: each
    group's entry in the state keeps the change points of the series it was drawn from, by the
    series' values, so a series that did not change is not searched again."""
    points = [p for members in changed.values() for p in members]
    by_version = build_series(points, SYSBENCH.catalog, "version")
    by_time = build_series(points, SYSBENCH.catalog, "time")
    try:
        detector()
        found = True
    except Unavailable:
        notes.append(f"change points {site.NOT_SEARCHED}")
        found = False
    slugs = {(p.engine, p.setup, p.host): slug for slug, members in changed.items() for p in members[:1]}
    earlier = {slug: groups[slug].pop("changes") for slug in changed}
    for slug in changed:
        groups[slug]["changes"] = {}

    def with_changes(s: Series) -> Series:
        slug = slugs[(s.engine, s.setup, s.host)]
        return _with_changes(s, min_effect, earlier[slug], groups[slug]["changes"]) if found else s
    by_version = [with_changes(s) for s in by_version]
    by_time = [with_changes(s) for s in by_time]
    grouped: dict[str, tuple[list[Series], list[Series]]] = {slug: ([], []) for slug in changed}
    for s in by_version:
        grouped[slugs[(s.engine, s.setup, s.host)]][0].append(s)
    for s in by_time:
        grouped[slugs[(s.engine, s.setup, s.host)]][1].append(s)
    out = []
    for slug, (versions, times) in grouped.items():
        first = versions[0] if versions else times[0]
        words = {m: w for n in {p.campaign_id for p in changed[slug]} for m, w in measures.get(n, {}).items()}
        out.append(site.Group(slug, first.engine, first.setup, first.host, tuple(versions), tuple(times), found,
                              words))
    return out


def _with_changes(s: Series, min_effect: float, earlier: dict[str, Any], now: dict[str, Any]) -> Series:
    """The series with its change points: those found last time for the same values, else searched."""
    values = [p.value for p in s.points]
    intervals = [(p.lower, p.upper) for p in s.points]
    key = hashlib.sha1(repr((values, intervals, min_effect)).encode()).hexdigest()
    found = earlier.get(key)
    if found is None:
        found = [list(asdict(c).values()) for c in change_points(values, intervals, min_effect)]
    now[key] = found
    return replace(s, changes=tuple(Change(*c) for c in found))
