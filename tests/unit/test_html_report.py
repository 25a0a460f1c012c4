"""The HTML report: one self-contained page, checked against a golden file and walked with html.parser."""
import dataclasses
import os
import re
from html.parser import HTMLParser

import pytest

from dbdrift.cli.report import render
from dbdrift.analysis.noise import Judging
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.workloads.sysbench.report.html import page_axis
from dbdrift.report.charts import CHART_CSS, CHART_SCRIPT, scale
from dbdrift.report.page import CSS
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS
from tests.cli.test_workload_goldens import as_golden
from tests.unit.test_reports import GENERATED_AT, GOLDEN, QPS, make_store

VOID = {"meta", "br", "hr", "img", "input", "link", "wbr", "col", "source"}


class Page(HTMLParser):
    """Checks that every element closes in order, and keeps table rows as (table class, cells)."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.rows, self.tables = [], [], [], []
        self.counts: dict[str, int] = {}
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.counts[tag] = self.counts.get(tag, 0) + 1
        attrs = dict(attrs)
        if tag == "table":
            self.tables.append(attrs.get("class", ""))
        elif tag == "tr":
            self.rows.append((self.tables[-1] if self.tables else None, []))
        elif tag in ("td", "th") and self.rows:
            self.rows[-1][1].append({"attrs": attrs, "text": "", "warn": None})
        elif tag == "span" and attrs.get("class") == "warn" and self.rows and self.rows[-1][1]:
            self.rows[-1][1][-1]["warn"] = attrs.get("title")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()
        if tag == "table":
            self.tables.pop()

    def handle_data(self, data):
        if self.rows and self.rows[-1][1] and ("td" in self.stack or "th" in self.stack):
            self.rows[-1][1][-1]["text"] += data

    def cell(self, table: str, test: str, column: int) -> dict:
        """The `column`-th value cell (0 = first target) of the row named `test` in a table of class `table`."""
        row = next(cells for cls, cells in self.rows if cls == table and cells[0]["text"] == test)
        return row[column + 1]


@pytest.fixture
def store(tmp_path):
    s = make_store(tmp_path / "g.db")
    yield s
    s.close()


@pytest.fixture
def page(store) -> str:
    return render(build_report(store, MICROBENCHMARKS, None, None, False, generated_at=GENERATED_AT), "html")


def test_html_report_matches_its_golden_file(page):
    golden = GOLDEN / "report.html"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.write_text(as_golden(page))
    assert as_golden(page) == golden.read_text()


def test_the_page_holds_the_shared_stylesheet_and_the_charts_styles_whole(page):
    assert f"<style>{CSS}{CHART_CSS}" in page  # the golden file holds them as placeholders


def test_every_element_closes_in_order_tables_charts_and_rows_included(page):
    walked = Page(page)
    assert walked.errors == [] and walked.stack == []
    assert page.count("<table") == page.count("</table>") == walked.counts["table"]
    assert page.count("<svg") == page.count("</svg>") == walked.counts["svg"]
    assert page.count("<tr") == page.count("</tr>") == walked.counts["tr"]


def test_every_test_name_appears_in_its_table_and_its_chart(page):
    walked = Page(page)
    for test in QPS:
        assert walked.cell("rel", test, 0) and walked.cell("abs", test, 0)
        assert f">{test}</text>" in page


def test_a_regression_of_5_percent_is_red_in_the_darker_shade(page):
    cell = Page(page).cell("rel", "point-query", 0)
    assert cell["attrs"]["class"] == "red2" and cell["text"].startswith("0.95 [0.94, 0.96]")
    assert cell["attrs"]["title"].startswith("regression: rQPS 0.950, 95% interval [0.941, 0.959]")


def test_an_improvement_of_5_percent_or_more_is_green_in_the_darker_shade(page):
    assert Page(page).cell("rel", "point-query", 1)["attrs"]["class"] == "green2"


def test_a_change_within_the_thresholds_is_not_colored(page):
    assert "class" not in Page(page).cell("rel", "hot-points", 0)["attrs"]


def test_a_too_noisy_cell_is_hatched_and_its_title_says_why(store):
    walked = Page(render(build_report(store, MICROBENCHMARKS, None, None, False, Judging(noisy_width=0.003)), "html"))
    cell = walked.cell("rel", "read-only_range=100", 0)
    assert cell["attrs"]["class"] == "noisy"
    assert cell["attrs"]["title"].startswith("too noisy: the 95% interval [0.978, 0.997]")


def test_a_cell_whose_server_died_is_greyed_says_so_and_warns_with_the_failure(page):
    cell = Page(page).cell("rel", "hot-points", 1)
    assert cell["attrs"]["class"] == "noisy"
    assert cell["attrs"]["title"].startswith("not measured (skipped: server died)")
    assert cell["text"].startswith("skipped: server died")
    assert cell["warn"] == "pg19: failed: server died"


def test_the_warning_mark_lists_the_warnings_of_the_cell(page):
    warn = Page(page).cell("rel", "update-index", 0)["warn"]
    assert warn.splitlines() == ["pg18: host CPU steal up to 30% (mean 10.3%)",
                                 "pg18: 1 interval(s) with host CPU steal > 10% left out of the estimates"]


def test_each_group_has_its_summary_rows(page):
    rows = [cells for cls, cells in Page(page).rows if cls == "rel" and cells[0]["text"] == "median"]
    assert [[c["text"] for c in r[1:]] for r in rows] == [["0.98", "1.07"], ["1.02", "1.03"], ["0.99", "0.94"],
                                                          ["0.92", "1.01"]]


def test_one_chart_per_group_and_one_of_instruction_ratios(page):
    assert page.count("<svg") == 5
    instructions = page[page.index('<section id="instructions">'):]
    assert "<svg" in instructions and "heap_update +4,066" in instructions
    assert Page(page).cell("instr", "point-query", 3)["text"] == "1.036 -"  # 3.6% more instructions: a regression


def test_metrics_section_only_when_asked(store, page):
    assert 'id="metrics"' not in page
    with_metrics = render(build_report(store, MICROBENCHMARKS, None, None, False, metrics=True), "html")
    walked = Page(with_metrics)
    assert 'id="metrics"' in with_metrics and walked.errors == []
    assert "<h3>point-query x1</h3>" in with_metrics
    assert walked.cell("metrics", "pg18 (relative)", 5)["text"] == "1.02"  # o/s, in the first block: hot-points


def test_the_page_fetches_nothing(page):
    urls = re.findall(r"https?://[^\s\"'<>]*", page)
    assert set(urls) == {"http://www.w3.org/2000/svg"}
    assert not re.search(r"<link|<img|<iframe|\bsrc=|@import|url\((?!#)|fetch\(|XMLHttpRequest", page)


def test_the_page_s_one_script_is_the_charts_inline_hover_and_zoom(page):
    assert re.findall(r"<script[^>]*>", page) == ["<script>"]
    assert CHART_SCRIPT in page


def test_strings_from_the_store_are_escaped(store):
    data = build_report(store, MICROBENCHMARKS, None, None, False)
    page = render(dataclasses.replace(data, campaign='<script>"x"</script>', notes=("a < b & c",)), "html")
    assert '<script>"x"' not in page and "&lt;script&gt;&quot;x&quot;&lt;/script&gt;" in page
    assert "a &lt; b &amp; c" in page and Page(page).errors == []


def test_chart_scale_holds_one_and_every_value_on_multiples_of_its_tick_spacing():
    lo, hi, spacing = scale([0.91, 1.02])
    assert lo <= 0.91 and hi >= 1.02 and round((1.0 - lo) / spacing, 9).is_integer()
    assert scale([]) == pytest.approx((0.995, 1.005, 0.005), abs=1e-9)
    lo, hi, spacing = scale([250.0])
    assert hi >= 250 and (hi - lo) / spacing <= 8


def test_chain_columns_name_the_previous_target_as_reference(store):
    walked = Page(render(build_report(store, MICROBENCHMARKS, None, None, True), "html"))
    headers = [c["text"] for cls, cells in walked.rows if cls == "rel" for c in cells[1:3]][:2]
    assert headers == ["pg18/ pg17", "pg19/ pg18"]


def test_findings_come_first_the_regression_before_the_improvements_with_intervals(page):
    findings = page[page.index('<section id="findings">'):page.index("</section>", page.index('id="findings"'))]
    assert page.index('id="findings"') < page.index('id="threads-1"')
    tables = [cells for cls, cells in Page(findings).rows if cls == "findings"]
    split = next(i for i, r in enumerate(tables) if i and r[1]["text"] == "test")  # the counts' table
    rows, counted = tables[1:split], tables[split + 1:]
    assert [(r[0]["text"], r[1]["text"], r[3]["text"], r[4]["text"]) for r in rows] == [
        ("-", "update-index", "pg18 / pg17", "0.915"), ("-", "read-only_range=100", "pg19 / pg17", "0.937"),
        ("-", "scan", "pg18 / pg17", "0.947"), ("-", "point-query", "pg18 / pg17", "0.950"),
        ("+", "range-covered-pk", "pg18 / pg17", "1.100"), ("+", "point-query", "pg19 / pg17", "1.075"),
        ("+", "scan", "pg19 / pg17", "1.053")]  # regressions first, each kind largest change first
    assert rows[3][5]["text"] == "[0.941, 0.959]" and rows[3][6]["text"] == "1.036"  # instructions moved too
    assert "regression(s) and" in findings and "not measured" in findings
    # instruction counts are findings too, the larger increase first (more instructions is worse)
    assert [(r[0]["text"], r[1]["text"], r[2]["text"], r[3]["text"]) for r in counted] == [
        ("-", "update-index", "pg18 / pg17", "1.040"), ("-", "point-query", "pg18 / pg17", "1.036")]
    assert "Instructions per event: 2 regression(s) and 0 improvement(s)" in findings


def test_the_header_says_what_ran_where(page):
    header = page[page.index("<header>"):page.index("</header>")]
    for text in ("pg18, pg19 against pg17", "campaign", "golden (#1)", "2026-01-02 03:04:05", "pg17: postgres 17.10",
                 "pg19: postgres 19.0", "dbdrift "):
        assert text in header, text


def test_every_chart_of_the_page_has_the_same_axis_from_0_8(page):
    sections = page[page.index('id="threads-1"'):page.index('id="instructions"')]
    charts = sections.split("<svg")[1:]
    assert len(charts) == 4
    ticks = [re.findall(r">([01]\.\d\d)</text>", chart) for chart in charts]
    assert ticks[0] == ["0.80", "0.85", "0.90", "0.95", "1.00", "1.05", "1.10", "1.15", "1.20"]
    assert all(tk == ticks[0] for tk in ticks)


def test_the_axis_widens_to_hold_a_value_outside_it(store):
    data = build_report(store, MICROBENCHMARKS, None, None, False)
    assert page_axis(data) == (0.8, 1.2)
    far = dataclasses.replace(data.comparison.rows[0].cells["pg18"], ratio=0.62)
    row = dataclasses.replace(data.comparison.rows[0], cells={**data.comparison.rows[0].cells, "pg18": far})
    wide = dataclasses.replace(data, comparison=dataclasses.replace(data.comparison,
                                                                    rows=(row, *data.comparison.rows[1:])))
    assert page_axis(wide) == (0.6, 1.2)


def test_bars_take_their_target_colour_and_columns_are_named_by_target(page):
    assert 'fill="#4e79a7"' in page and 'fill="#f28e2b"' in page  # pg18, pg19
    assert "col-1" not in page and "col-2" not in page


def test_a_single_target_gets_absolute_values_and_no_charts(store):
    data = build_report(store, MICROBENCHMARKS, None, None, False)
    alone = dataclasses.replace(data, comparison=dataclasses.replace(data.comparison, compared=(), targets=("pg17",)),
                                instructions=())
    page = render(alone, "html")
    assert "nothing to compare" in page and "<svg" not in page and Page(page).cell("abs", "scan", 0)["text"] == "950"


def test_the_server_binary_section_gives_sizes_relative_to_the_base(page):
    rows = {cells[0]["text"]: [c["text"] for c in cells[1:]] for cls, cells in Page(page).rows if cls == "binary"}
    assert rows["pg17"] == ["17.10", "9.5", "8.5", "8.0", "0.2", "0.2", "37.9", "1.00", "1.00"]
    assert rows["pg18"][-2:] == ["1.03", "1.04"] and "pg19" not in rows


def test_a_widened_axis_keeps_the_1_00_tick_and_its_label():
    from dbdrift.report.charts import Bar, BarGroup, axis_spacing, grid_ticks, ratio_chart
    lo, hi = 0.25, 1.2  # 0.25 to 1.2 by 0.2 from lo would tick 0.25, 0.45, ... 1.05 and skip 1.00
    assert 1.0 in grid_ticks(lo, hi, axis_spacing(lo, hi))
    chart = ratio_chart([BarGroup("t", (Bar("a", 0.29),))], "c", "cap", axis=(lo, hi))
    assert ">1.00</text>" in chart and 'class="one"' in chart


def test_every_chart_of_the_page_puts_its_plot_at_one_x_whatever_its_labels(page):
    ones = re.findall(r'<line class="one" x1="([\d.]+)"', page)
    assert len(ones) == 5 and len(set(ones)) == 1, ones  # four groups and the instruction ratios


def test_the_warnings_section_lists_the_host_warnings_the_header_shows(store):
    data = build_report(store, MICROBENCHMARKS, None, None, False)
    warned = dataclasses.replace(data, notes=(*data.notes, "host warning: host 99% busy (hint: wait)"))
    section = render(warned, "html").split('id="warnings"')[1]
    assert "host 99% busy" in section and "No host or run warnings" not in section
    assert "No host warnings" in render(data, "html").split('id="warnings"')[1]


def test_a_change_without_a_verdict_of_regression_is_never_red(store):
    from tests.unit.test_report_clarity import _with_cell
    data = _with_cell(build_report(store, MICROBENCHMARKS, None, None, False), "read-only_range=100", "pg18", 0.94, 0.88, 1.01)
    cell = Page(render(data, "html")).cell("rel", "read-only_range=100", 0)
    assert "red" not in cell["attrs"].get("class", "")
