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
import json
import os
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dbdrift.analysis.changepoints import EXTRA, Change, Unavailable, change_points, detector
from dbdrift.analysis.noise import Verdict
from dbdrift.app.process import open_read_only
from dbdrift.app.report import all_findings, build_report, render, stored_workload
from dbdrift.errors import UserError
from dbdrift.origin import extra_hint
from dbdrift.report import site
from dbdrift.results.build import PINNED
from dbdrift.results.data import FORMAT_VERSION
from dbdrift.results.findings import Finding
from dbdrift.results.history import Point, Series, build_series, campaign_points, host_key
from dbdrift.store.store import Store
from dbdrift.version import __version__

STATE = "site.json"
STATE_FORMAT = 1
WORST = 3  # regressions named per campaign in the index
Progress = Callable[[int, int, str], None]  # (campaigns read, to read, the page just written)


@dataclass(frozen=True)
class PublishRequest:
    stores: tuple[Path, ...]
    out: Path
    min_effect: float = 0.02  # the smallest step a change point or a chain cell is called at
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


@dataclass
class _Site:
    """The site being written: its folder, the state read from it, and what this publish made."""

    out: Path
    state: dict[str, Any]
    produced: set[str] = field(default_factory=set)
    written: int = 0

    def write(self, rel: str, text: str) -> None:
        """Write the page `rel` unless it holds `text` already (by the hash kept in the state)."""
        self.produced.add(rel)
        digest = hashlib.sha256(text.encode()).hexdigest()
        pages = self.state["pages"]
        path = self.out / rel
        if pages.get(rel) == digest and path.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)  # a reader never sees half a page
        pages[rel] = digest
        self.written += 1

    def keep(self, rel: str) -> None:
        """The page `rel` stays as it is (its campaign did not change)."""
        self.produced.add(rel)

    def remove_stale(self) -> int:
        """Remove the pages an earlier publish wrote that this one did not produce."""
        stale = [rel for rel in self.state["pages"] if rel not in self.produced]
        for rel in stale:
            (self.out / rel).unlink(missing_ok=True)
            del self.state["pages"][rel]
        return len(stale)


def publish(request: PublishRequest, progress: Progress | None = None) -> PublishOutcome:
    state = _load_state(request.out)
    stores = [open_read_only(path) for path in request.stores]  # every store checked before anything is written
    built = _Site(request.out, state)
    notes: list[str] = []
    try:
        entries, points, read = _campaigns(stores, built, notes, progress)
        groups = _groups(points, request.min_effect, built, notes)
        for rel, text in site.index_pages(entries, groups, [str(p) for p in request.stores], __version__,
                                          request.per_page).items():
            built.write(rel, text)
        removed = built.remove_stale()
    finally:
        for store in stores:
            store.close()
        _save_state(request.out, state)
    sizes = [(rel, (request.out / rel).stat().st_size) for rel in sorted(built.produced)]
    largest = max(sizes, key=lambda s: s[1], default=("", 0))
    return PublishOutcome(len(entries), read, built.written, removed, len(sizes), largest, notes)


def _campaigns(stores: list[Store], built: _Site, notes: list[str], progress: Progress | None
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
    for i, ((entry, points, html), (_, _, key, fingerprint)) in enumerate(zip(_read_all(numbered), todo)):
        if html:
            built.write(entry.page, site.campaign_page(html, "../index.html"))
        if entry.note:
            notes.append(entry.note)
        # kept in the state as it is read: a publish interrupted here does not read it again
        seen[key] = known[key] = {"n": entry.n, "fingerprint": fingerprint, "entry": asdict(entry),
                                  "points": [_point_row(p) for p in points]}
        if progress:
            progress(i + 1, len(todo), entry.page or entry.name)
    built.state["campaigns"] = seen
    entries = [_entry(v["entry"]) for v in seen.values()]
    points = [_point(row) for v in seen.values() for row in v["points"]]
    return entries, points, len(todo)


def _fingerprint(store: Store, campaign_id: int, name: str, depends: str) -> str:
    pinned = store.latest_campaign_id(name + PINNED) if not name.endswith(PINNED) else None
    # the report format: a campaign read by an older estimator is read again (its page and points)
    parts = [store.campaign_fingerprint(campaign_id), depends, f"format {FORMAT_VERSION}",
             store.campaign_fingerprint(pinned) if pinned is not None else ""]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def _calibration_fingerprint(store: Store) -> str:
    """What every report of the store reads besides its campaign: the calibrations' noise floors."""
    return ",".join(store.campaign_fingerprint(i) for i in store.calibration_ids())


Read = tuple[site.CampaignEntry, list[Point], str]  # a campaign's index entry, history points and page ("": none)
PARALLEL_FROM = 8  # campaigns to read: from this many on, one process per CPU reads them


def _read_all(numbered: list[tuple[Path, int, int]]) -> Iterator[Read]:
    """What `_read` gives of each (store, campaign id, site number), in order: in this process
    for a few, else in a process per CPU (a campaign's report is CPU-bound analysis)."""
    workers = min(os.cpu_count() or 1, len(numbered) // PARALLEL_FROM)
    if workers < 2:
        yield from (_read_in_process(*job) for job in numbered)
        return
    pool = ProcessPoolExecutor(workers, initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN))
    try:  # Ctrl-C reaches this process alone, which drops the campaigns not yet read
        yield from pool.map(_read_in_process, *zip(*numbered), chunksize=4)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


_OPEN: dict[Path, Store] = {}  # a reading process's stores, each opened once


def _read_in_process(path: Path, campaign_id: int, n: int) -> Read:
    if path not in _OPEN:
        _OPEN[path] = Store(path, read_only=True, checked=True)  # checked by the publishing process
    return _read(_OPEN[path], campaign_id, n)


def _read(store: Store, campaign_id: int, n: int) -> Read:
    """A campaign's report page, index entry and history points; a campaign this dbdrift cannot
    report (a newer workload's) gets an entry that says why, and no page."""
    row = store.campaign(campaign_id)
    host = host_key(json.loads(row["host_json"]))
    spec = json.loads(row["spec_json"])
    targets = tuple((t["name"], t["engine"], _version(t)) for t in store.targets(campaign_id))
    common = dict(n=n, name=row["name"], created_at=row["created_at"], host=host,
                  workload=spec.get("workload", "sysbench"), targets=targets, store=str(store.path))
    comparison = None
    try:
        workload = stored_workload(store, campaign_id)
        if workload.build_report is not None and workload.render_report is not None:
            data = workload.build_report(store, campaign_id, None)
            html, findings = workload.render_report(data, "html"), list(data.findings)
        else:
            made = datetime.now(timezone.utc).isoformat(timespec="seconds")
            report = build_report(store, str(campaign_id), None, False, noise_floor="auto", generated_at=made)
            html, findings, comparison = render(report, "html", False), list(all_findings(report)), report.comparison
    except UserError as exc:
        note = f"campaign {row['name']} (#{campaign_id} of {store.path}) is not published: {exc.message}"
        return site.CampaignEntry(**common, counts=(0, 0, 0, 0), worst=(), page="", note=note), [], ""
    if workload.history_values is not None:  # the workload's own measures, over repeats
        points = campaign_points(store, campaign_id, "rate", repeats=workload.history_values)
    else:  # the catalog's tests: their runs and counts
        points = [p for metric in ("qps", "instructions")
                  for p in campaign_points(store, campaign_id, metric, comparison=comparison)]
    points = [replace(p, campaign_id=n) for p in points]
    entry = site.CampaignEntry(**common, counts=_counts(findings), worst=_worst(findings), page=f"c/{n}.html")
    return entry, points, html


def _version(target: Any) -> str:
    server, install = json.loads(target["server_json"] or "{}"), json.loads(target["install_json"] or "{}")
    return str(server.get("version") or install.get("version") or "?")


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


def _groups(points: list[Point], min_effect: float, built: _Site, notes: list[str]) -> list[site.GroupSummary]:
    """Per engine, setup and host: its pages drawn from its series by version and by time with
    their change points, unless its points are those it was drawn from last time (the state
    keeps each group's digest, pages and summary); the summaries for the index."""
    state = built.state
    grouped: dict[tuple[str, str, str], list[Point]] = {}
    for p in points:
        grouped.setdefault((p.engine, p.setup, p.host), []).append(p)
    known, kept = state.get("groups", {}), {}
    changed: dict[str, list[Point]] = {}
    for (engine, setup, host), members in sorted(grouped.items()):
        slug = f"{site.file_safe(engine)}-{hashlib.sha1(f'{setup}|{host}'.encode()).hexdigest()[:10]}"
        digest = hashlib.sha1(repr((sorted(map(_point_row, members)), min_effect, __version__)).encode()).hexdigest()
        old = known.get(slug)
        if old and old["digest"] == digest and all((built.out / rel).exists() for rel in old["pages"]):
            for rel in old["pages"]:
                built.keep(rel)
            kept[slug] = old
        else:
            changed[slug] = members
            kept[slug] = {"digest": digest, "changes": (old or {}).get("changes", {})}
    if changed:
        for g in _drawn(changed, min_effect, kept, notes):
            pages = site.group_pages(g, min_effect)
            for rel, text in pages.items():
                built.write(rel, text)
            kept[g.slug].update(pages=sorted(pages), summary=asdict(site.summarize(g)))
    state["groups"] = kept
    return [site.GroupSummary(**kept[slug]["summary"]) for slug in kept]


def _drawn(changed: dict[str, list[Point]], min_effect: float, groups: dict[str, Any], notes: list[str]
           ) -> list[site.Group]:
    """The groups of `changed` (slug -> its points) with their series and change points: each
    group's entry in the state keeps the change points of the series it was drawn from, by the
    series' values, so a series that did not change is not searched again."""
    points = [p for members in changed.values() for p in members]
    by_version, by_time = build_series(points, "version"), build_series(points, "time")
    try:
        detector()
        found = True
    except Unavailable:
        notes.append(f"change points not computed: Apache Otava is not installed ({extra_hint(*EXTRA)})")
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
        out.append(site.Group(slug, first.engine, first.setup, first.host, tuple(versions), tuple(times)))
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


POINT_FIELDS = [f for f in Point.__dataclass_fields__]


def _point_row(p: Point) -> list[Any]:
    return [getattr(p, f) for f in POINT_FIELDS]


def _point(row: list[Any]) -> Point:
    values = dict(zip(POINT_FIELDS, row))
    values["commit_order"] = tuple(values["commit_order"])
    if values.get("paired") is not None:
        values["paired"] = tuple(values["paired"])
    return Point(**values)


def _entry(d: dict[str, Any]) -> site.CampaignEntry:
    return site.CampaignEntry(**{**d, "targets": tuple(tuple(t) for t in d["targets"]), "counts": tuple(d["counts"]),
                                 "worst": tuple(d["worst"])})


def _load_state(out: Path) -> dict[str, Any]:
    """The state of the site in `out`: empty for a new or empty folder; a folder with other
    files and no state is refused, so a publish never overwrites what it did not write."""
    fresh: dict[str, Any] = {"format": STATE_FORMAT, "dbdrift_version": __version__, "campaigns": {}, "pages": {}}
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file", "pass a folder for the site (it is made if missing)", exit_code=2)
    path = out / STATE
    if not path.exists():
        if out.exists() and any(out.iterdir()):
            raise UserError(f"--out {out} holds files and no {STATE}: it is not a site dbdrift published",
                            "pass an empty or new folder, or the folder of an earlier `dbdrift publish`", exit_code=2)
        return fresh
    try:
        state: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{path} cannot be read as a published site's state ({exc})",
                        f"remove {path} to publish the whole site again", exit_code=2) from None
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        raise UserError(f"{path} is not the state of a site this dbdrift publishes",
                        f"remove {path} to publish the whole site again", exit_code=2)
    if state.get("dbdrift_version") != __version__:  # its pages may differ: read every campaign again
        for campaign in state.get("campaigns", {}).values():
            campaign["fingerprint"] = ""  # each keeps its number, so links into the site stay
        state["dbdrift_version"] = __version__
    return state


def _save_state(out: Path, state: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    partial = out / (STATE + ".partial")
    partial.write_text(json.dumps(state, separators=(",", ":")), encoding="utf-8")
    os.replace(partial, out / STATE)
