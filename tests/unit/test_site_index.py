"""The index of a published site in pages (report/site.index_pages): the newest campaigns on
index.html, older pages cut from the oldest campaign on, every page linking to every other with
the same filters, and none growing with the number of campaigns."""
from __future__ import annotations

import re

import pytest

from dbdrift.report.site import CampaignEntry, GroupSummary, index_pages


def entry(n: int, workload: str = "sysbench") -> CampaignEntry:
    return CampaignEntry(n, f"night-{n}", f"2026-{1 + n // 28:02d}-{1 + n % 28:02d}T03:00:00+00:00", "h (x86)",
                         workload, (("a", "postgres", "17.10"), ("b", "postgres", "18.4")), (1, 0, 31, 0),
                         ("point-query: 0.91",), "s.db", f"c/{n}.html")


GROUP = GroupSummary("g1", "postgres", "1000000 rows x 1", "h", 2, 32, 1, 0)


def rows(page: str) -> list[str]:
    return re.findall(r'<th class="l" scope="row"><a href="c/\d+\.html">(night-\d+)</a>', page)


def test_up_to_twice_a_page_of_campaigns_is_one_page():
    pages = index_pages([entry(n) for n in range(5)], [GROUP], ["s.db"], "1.0", per_page=3)
    assert list(pages) == ["index.html"]
    assert rows(pages["index.html"]) == [f"night-{n}" for n in range(4, -1, -1)]  # newest first
    assert 'class="pages"' not in pages["index.html"] and "on this page" not in pages["index.html"]


def test_older_pages_are_cut_from_the_oldest_so_a_new_campaign_changes_only_the_newest():
    before = index_pages([entry(n) for n in range(9)], [GROUP], ["s.db"], "1.0", per_page=3)
    assert list(before) == ["index.html", "index-2.html", "index-1.html"]
    assert rows(before["index-1.html"]) == ["night-2", "night-1", "night-0"]
    assert rows(before["index-2.html"]) == ["night-5", "night-4", "night-3"]
    assert rows(before["index.html"]) == ["night-8", "night-7", "night-6"]
    after = index_pages([entry(n) for n in range(10)], [GROUP], ["s.db"], "1.0", per_page=3)
    assert rows(after["index.html"]) == ["night-9", "night-8", "night-7", "night-6"]
    assert {name for name in after if after[name] != before.get(name)} == {"index.html"}
    assert "2026-01-01 – 2026-01-03 (3)" in after["index-1.html"]


def test_every_page_links_to_the_others_and_offers_every_campaign_s_filters():
    campaigns = [entry(n, "tpcc" if n == 0 else "sysbench") for n in range(9)]
    pages = index_pages(campaigns, [GROUP], ["s.db"], "1.0", per_page=3)
    for name, page in pages.items():
        links = set(re.findall(r'<a href="(index[-0-9]*\.html)" data-page=', page))
        assert links >= set(pages) - {name}, (name, links)
        assert '<option value="tpcc">' in page, name  # night-0's workload, though only index-1 lists it
    assert "<th>campaigns</th><td>9</td>" in pages["index.html"]
    assert 'href="h/g1/index.html"' in pages["index.html"]
    assert 'href="h/g1/index.html"' not in pages["index-1.html"] and "on this page" in pages["index-1.html"]


def test_no_page_grows_with_the_campaigns():
    pages = index_pages([entry(n) for n in range(4999)], [GROUP], ["s.db"], "1.0")
    assert len(pages) == 9 and [len(rows(p)) for p in pages.values()] == [999] + [500] * 8
    assert max(len(p.encode()) for p in pages.values()) < 1_000_000


def test_a_page_of_no_campaigns_is_refused():
    with pytest.raises(ValueError, match="per_page"):
        index_pages([], [], [], "1.0", per_page=0)


def test_a_test_over_time_is_in_pages_each_with_its_campaigns_and_its_change_points():
    from datetime import datetime, timedelta

    from dbdrift.analysis.changepoints import Change
    from dbdrift.report.site import Group, test_over_time_pages
    from dbdrift.results.history import Point, Series, SeriesPoint

    start = datetime(2026, 1, 1)
    points = []
    for k in range(1050):
        when = start + timedelta(hours=6 * k)
        label = f"{when:%Y-%m-%d %H:%M} #{k:04d}"
        replicate = Point("postgres", "17.10", "s", "h", "point-query", 1, "qps", 1000.0 + (k >= 150) * 50, None, None,
                          k + 1, f"night-{k}", when.isoformat(), "a")
        points.append(SeriesPoint(label, replicate.value, None, None, (replicate,)))
    change = Change(150, 1000.0, 1050.0, 0.05, 0.04, 0.06, 1e-6)
    series = Series("postgres", "s", "h", "point-query", 1, "qps", tuple(points), "time", (change,), "17.10")
    group = Group("g1", "postgres", "s", "h", (), (series,))
    pages = test_over_time_pages(group, "point-query", 1, per_page=100)
    assert list(pages) == ["point-query.x1.html", *(f"point-query.x1-{i}.html" for i in range(9, 0, -1))]
    drawn = {name: len(re.findall(r'href="\.\./\.\./c/\d+\.html"', page)) for name, page in pages.items()}
    assert drawn["point-query.x1.html"] == 150 and all(drawn[f"point-query.x1-{i}.html"] == 100 for i in range(1, 10))
    with_change = [name for name, page in pages.items() if "between 2026-02-07 06:00 #0149 and" in page]
    assert with_change == ["point-query.x1-2.html"]  # campaign 150 is on the second-oldest page
    assert all(f'href="point-query.x1-{i}.html"' in pages["point-query.x1.html"] for i in range(1, 10))
    assert 'href="point-query.x1.html"' in pages["point-query.x1-1.html"]


def test_campaigns_of_one_minute_are_in_the_order_of_their_numbers():
    from dbdrift.results.history import time_order
    labels = ["2026-01-02 03:00 #1000", "2026-01-02 03:00 #999", "2026-01-01 23:59 #1001", "2026-01-02 03:01 #5"]
    assert sorted(labels, key=time_order) == ["2026-01-01 23:59 #1001", "2026-01-02 03:00 #999",
                                              "2026-01-02 03:00 #1000", "2026-01-02 03:01 #5"]


def test_a_site_without_history_keeps_its_newest_campaigns_and_its_count_on_index_html():
    pages = index_pages([entry(n) for n in range(9)], [], ["s.db"], "1.0", per_page=3)
    assert "<th>campaigns</th><td>9</td>" in pages["index.html"] and "campaigns on this page" not in pages["index.html"]
    assert "campaigns on this page" in pages["index-1.html"]
