"""`dbdrift publish`: the static site of several stores, every link in it resolving, and a second
publish reading and writing only what changed."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from dbdrift.store.store import RunRecord, Store
from tests.cli.test_workload_reports import ib_store, tpcc_store, vector_store
from tests.helpers import dbdrift
from tests.unit.test_history import QPS, add_campaign
from tests.unit.test_reports import make_store


class Links(HTMLParser):
    """Every href and src of a page, and every id it defines."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src", "xlink:href") and value is not None:
                self.links.append(value)
            if name == "id" and value:
                self.ids.add(value)


def parsed(page: Path) -> Links:
    found = Links()
    found.feed(page.read_text(encoding="utf-8"))
    return found


def broken_links(site: Path) -> list[str]:
    """Each link of every page that leads nowhere: a missing file, an absent #anchor, or anything
    not relative (a static site must open from file:// and from any host)."""
    pages = {p: parsed(p) for p in site.rglob("*.html")}
    broken = []
    for page, found in pages.items():
        for link in found.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("/"):
                broken.append(f"{page.relative_to(site)}: {link} is not relative")
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page.resolve()
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: {link} -> no such file")
            elif parts.fragment and parts.fragment not in pages.get(target, parsed(target)).ids:
                broken.append(f"{page.relative_to(site)}: {link} -> no such anchor")
    return broken


def stores(tmp: Path) -> list[Path]:
    """A sysbench campaign with counts, a version series of two campaigns (with a change point),
    an Insert Benchmark, a TPROC-C and a vector search campaign, in five stores."""
    make_store(tmp / "golden.db").close()
    series = Store(tmp / "series.db")
    add_campaign(series, "minors", QPS, ir={v: 45_000 + 300 * i for i, v in enumerate(QPS)})
    add_campaign(series, "minors-again", QPS, jitter=0.01)
    series.close()
    workloads = tmp / "workloads.db"
    ib_store(workloads, 2, 9_000.0)
    tpcc_store(tmp / "tpcc.db", 2, 1_100.0)
    vector_store(tmp / "vector.db", 2, 1.25)
    for path in (workloads, tmp / "tpcc.db", tmp / "vector.db"):
        versioned(path)
    return [tmp / "golden.db", tmp / "series.db", workloads, tmp / "tpcc.db", tmp / "vector.db"]


def versioned(path: Path) -> None:
    """Give each target of the store the version its server reported: 17.10 the base, 18.4 the other."""
    store = Store(path)
    for c in store.campaigns():
        for t in store.targets(c["id"]):
            store.set_target_facts(t.id, server={"version": "17.10" if t.is_base else "18.4"})
    store.close()


def publish(*args) -> "object":
    return dbdrift("publish", *map(str, args))


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, list[Path]]:
    tmp = tmp_path_factory.mktemp("site")
    given = stores(tmp)
    result = publish(*given, "--out", tmp / "site")
    assert result.returncode == 0, result.stderr
    return tmp / "site", given


def test_every_campaign_of_every_store_has_its_page_and_a_row_in_the_index(site):
    out, _ = site
    index = (out / "index.html").read_text()
    for name in ("golden", "minors", "minors-again", "ib", "tp", "vec"):
        assert f">{name}</a>" in index
    assert len(list((out / "c").glob("*.html"))) == 6
    assert "insert-benchmark" in index and "tpcc" in index and "vector" in index


def test_every_link_of_every_page_resolves(site):
    out, _ = site
    assert len(list(out.rglob("*.html"))) > 10
    assert broken_links(out) == []


def test_the_link_check_finds_a_broken_link(tmp_path):
    """The check above can fail: a missing page, a missing anchor and an absolute link are found."""
    (tmp_path / "a.html").write_text('<a href="b.html">b</a><a href="a.html#nowhere">x</a><a href="/etc">y</a>'
                                     '<a href="a.html#here" id="here">ok</a>')
    assert len(broken_links(tmp_path)) == 3


def test_a_history_page_links_each_point_to_the_campaign_that_measured_it_and_marks_the_change(site):
    out, _ = site
    state = json.loads((out / "site.json").read_text())
    number = {v["entry"]["name"]: v["n"] for v in state["campaigns"].values()}
    group = next(p for p in out.glob("h/*/index.html") if "point-query" in p.read_text()
                 and "100000 rows" in p.read_text())
    page = group.read_text()
    assert f'href="../../c/{number["minors-again"]}.html"' in page  # each version's newest campaign
    assert "between 17.4 and 17.5: point-query -5.0%" in page  # the step QPS takes at 17.5
    assert "instructions / event" in page  # counts beside the timed results
    chain = (group.parent / "chain.html").read_text()
    assert "17.5 / 17.4" in chain


def test_a_second_publish_reads_nothing_and_writes_nothing(site):
    out, given = site
    result = publish(*given, "--out", out)
    assert result.returncode == 0, result.stderr
    assert " 0 read, 0 page(s) written, 0 removed" in result.stdout


def test_a_new_run_rewrites_its_campaigns_page_and_keeps_every_number(tmp_path):
    given = stores(tmp_path)
    out = tmp_path / "site"
    assert publish(*given, "--out", out).returncode == 0
    before = json.loads((out / "site.json").read_text())
    pages = {p: p.stat().st_mtime_ns for p in out.rglob("*.html")}
    store = Store(given[1])
    cid = store.latest_campaign_id("minors")
    tid = store.targets(cid)[0].id
    store.add_run(tid, RunRecord(test="point-query", test_group="point", threads=1, repeat=1, status="ok",
                                 warmup_s=1, duration_s=6, metric="qps", driver_spec={}, value=9_000.0))
    store.close()
    result = publish(*given, "--out", out)
    assert result.returncode == 0, result.stderr
    assert " 1 read," in result.stdout
    after = json.loads((out / "site.json").read_text())
    assert {k: v["n"] for k, v in after["campaigns"].items()} == {k: v["n"] for k, v in before["campaigns"].items()}
    changed = {p.relative_to(out).as_posix() for p, t in pages.items() if p.stat().st_mtime_ns != t}
    minors = next(v["n"] for v in after["campaigns"].values() if v["entry"]["name"] == "minors")
    assert f"c/{minors}.html" in changed
    assert not any(c.startswith("c/") and c != f"c/{minors}.html" for c in changed)


def test_a_store_left_out_takes_its_campaigns_pages_with_it(tmp_path):
    given = stores(tmp_path)
    out = tmp_path / "site"
    assert publish(*given, "--out", out).returncode == 0
    result = publish(*given[:2], "--out", out)
    assert result.returncode == 0, result.stderr
    assert len(list((out / "c").glob("*.html"))) == 3
    assert ">tp</a>" not in (out / "index.html").read_text()
    assert broken_links(out) == []


def test_a_missing_store_is_refused_before_anything_is_written(tmp_path):
    result = publish(tmp_path / "none.db", "--out", tmp_path / "site")
    assert result.returncode == 2
    assert "none.db does not exist" in result.stderr
    assert not (tmp_path / "site").exists()


def test_a_folder_that_is_not_a_site_is_refused(tmp_path):
    make_store(tmp_path / "g.db").close()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.html").write_text("mine")
    result = publish(tmp_path / "g.db", "--out", tmp_path / "docs")
    assert result.returncode == 2
    assert "not a site dbdrift published" in result.stderr
    assert (tmp_path / "docs" / "index.html").read_text() == "mine"


def test_a_campaign_this_dbdrift_cannot_report_is_named_and_the_others_are_published(tmp_path):
    make_store(tmp_path / "g.db").close()
    store = Store(tmp_path / "g.db")
    store.add_campaign("future", {"name": "future", "workload": "quantum-search"}, {"cpus": 2}, "9.9.9")
    store.close()
    result = publish(tmp_path / "g.db", "--out", tmp_path / "site")
    assert result.returncode == 0, result.stderr
    assert "campaign future" in result.stderr and "quantum-search" in result.stderr
    index = (tmp_path / "site" / "index.html").read_text()
    assert ">golden</a>" in index and "future" in index and ">future</a>" not in index


def test_the_insert_benchmark_tproc_c_and_vector_search_have_history_pages_of_their_own_measures(site):
    out, _ = site
    groups = [p.read_text() for p in out.glob("h/*/index.html")]
    assert len(groups) == 5  # golden's, the series', the Insert Benchmark's, TPROC-C's and vector search's
    ib = next(t for t in groups if "insert-benchmark clients=2" in t)
    steps = [s for s in ("l.i0", "l.x", "l.i1", "l.i2") if f'id="{s}-x0"' in ib]
    assert steps == ["l.i0", "l.x", "l.i1", "l.i2"] and ib.index('id="l.x-x0"') < ib.index('id="l.i1-x0"')
    assert ">rows/s</text>" in ib and "17.10" in ib and "18.4" in ib  # the y axis: its own unit
    tp = next(t for t in groups if "tpcc " in t)
    assert 'id="NOPM-x0"' in tp
    vec = next(t for t in groups if "vector queries=100" in t)
    assert all(f"vector QPS @ recall {r}" in vec for r in ("0.90", "0.95", "0.99")), vec[:2000]


def test_the_index_in_pages_lists_every_campaign_once_and_every_link_resolves(tmp_path):
    given = stores(tmp_path)
    result = publish(*given, "--out", tmp_path / "site", "--campaigns-per-page", "2")
    assert result.returncode == 0, result.stderr
    out = tmp_path / "site"
    pages = sorted(p.name for p in out.glob("index*.html"))
    assert pages == ["index-1.html", "index-2.html", "index.html"]  # 6 campaigns: the newest 2, then 2 and 2
    listed = [name for page in pages for name in re.findall(r'scope="row"><a href="c/\d+\.html">([^<]+)</a>',
                                                              (out / page).read_text())]
    assert sorted(listed) == sorted(["golden", "minors", "minors-again", "ib", "tp", "vec"])
    assert broken_links(out) == []
    again = publish(*given, "--out", out)  # back to one page: the older pages are removed
    assert again.returncode == 0 and sorted(p.name for p in out.glob("index*.html")) == ["index.html"]
    for bad in ("0", "many"):
        refused = publish(*given, "--out", out, "--campaigns-per-page", bad)
        assert refused.returncode == 2 and "--campaigns-per-page" in refused.stderr and "e.g. 500" in refused.stderr


def chain_store(path: Path) -> Path:
    """One campaign of three versions in turns (200 rounds of 10 ms, a little noise per turn),
    17.5 5% slower than 17.4 on point-query, 17.6 as fast as 17.5."""
    versions = {"17.4": 10_000.0, "17.5": 9_500.0, "17.6": 9_500.0}
    store = Store(path)
    targets = [{"name": f"pg{v}", "engine": "postgres", "version": v, "settings": {}} for v in versions]
    cid = store.add_campaign("chain", {"name": "chain", "rows": 100000, "tables": 1, "targets": targets},
                             {"hostname": "h", "cpus": 2}, "0.1.0")
    for pos, (version, qps) in enumerate(versions.items()):
        tid = store.ensure_target(cid, f"pg{version}", "postgres", pos, pos == 0, targets[pos])
        store.set_target_facts(tid, server={"version": version}, install=None)
        intervals = [{"index": i, "round": i, "start_s": i * 0.03, "end_s": i * 0.03 + 0.01,
                      "events": qps * 0.01 * (1 + 0.01 * ((i * 7 + pos * 3) % 5 - 2)), "statements": 0, "rows": 0,
                      "errors": {}, "latency_us": {}, "steal_pct": 0.0} for i in range(200)]
        for iv in intervals:
            iv["statements"] = iv["events"]
        store.add_run(tid, RunRecord(test="point-query", test_group="point", threads=1, repeat=0, status="ok",
                                     warmup_s=1, duration_s=2, metric="qps", driver_spec={}, value=qps,
                                     intervals=intervals))
    store.close()
    return path


def test_a_chain_step_measured_in_one_campaign_is_judged_as_report_chain_judges_it(tmp_path):
    path = chain_store(tmp_path / "chain.db")
    result = publish(path, "--out", tmp_path / "site")
    assert result.returncode == 0, result.stderr
    page = next((tmp_path / "site").glob("h/*/chain.html")).read_text()
    report = json.loads(dbdrift("report", "--store", str(path), "--chain", "--format", "json").stdout)
    cells = {r["target"]: r for r in report["rows"] if r["measure"] == "timed" and r["reference"]}
    step = re.search(r'<td class="red\d" title="regression: ([0-9.]+) \[([0-9.]+), ([0-9.]+)\], paired in campaign '
                     r'chain">', page)
    assert step, page
    assert float(step[1]) == pytest.approx(cells["pg17.5"]["rqps"], abs=5e-4)
    assert float(step[2]) == pytest.approx(cells["pg17.5"]["rqps_lower"], abs=5e-4)
    assert cells["pg17.5"]["verdict"] == "regression" and cells["pg17.6"]["verdict"] == "no significant change"
    assert len(re.findall('class="red\\d"', page)) == 1 and 'class="green' not in page  # 17.6 / 17.5: no change
