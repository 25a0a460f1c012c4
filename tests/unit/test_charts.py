"""The one chart module (report/charts.py): scales, lines, dots and their hover text, legends,
and the page that carries the charts' script only when it holds a chart."""
from __future__ import annotations

import re

import pytest

from dbdrift.report.charts import (CHART_SCRIPT, Axis, Line, Point, Rule, Scale, Series, columns_chart, fitted_axis,
                                   time_chart, xy_chart)
from dbdrift.report.page import page


def test_a_log_scale_puts_each_decade_the_same_distance_apart():
    y = Scale(10.0, 10_000.0, 300.0, 0.0, log=True)
    assert [y(v) for v in (10.0, 100.0, 1000.0, 10_000.0)] == pytest.approx([300.0, 200.0, 100.0, 0.0])


def test_a_scale_clamps_a_value_past_its_range_to_its_edge():
    x = Scale(0.0, 10.0, 50.0, 150.0)
    assert (x(-5.0), x(5.0), x(20.0)) == (50.0, 100.0, 150.0)


def test_every_dot_names_its_value_on_hover_and_a_line_without_dots_carries_its_values():
    few = time_chart([Line("pg17", (1.0, 2.0), (1500.0, 1600.0), "#000")], "c", "NOPM")
    assert re.findall(r"<title>([^<]*)</title>", few)[1:] == ["pg17: 1,500 NOPM at 1 s", "pg17: 1,600 NOPM at 2 s"]
    xs = tuple(float(i) for i in range(100))
    many = time_chart([Line("pg17", xs, tuple(2.5 * i for i in range(100)), "#000")], "c", "NOPM")
    assert "<circle" not in many and 'data-name="pg17"' in many
    values = re.search(r'data-v="([^"]*)"', many).group(1).split()
    assert len(values) == 100 and values[3] == "3,7.5"


def test_a_time_line_breaks_at_a_gap_and_its_parts_keep_their_values():
    svg = time_chart([Line("a", tuple(float(i) for i in range(80)), tuple(None if i == 40 else 1.0 for i in range(80)),
                           "#000")], "c", "rows/s")
    assert [len(v.split()) for v in re.findall(r'data-v="([^"]*)"', svg)] == [40, 39]


def test_a_legend_too_long_for_one_row_wraps_and_the_chart_grows_to_hold_it():
    axis = Axis(0.0, 1.0, ((0.0, "0"), (1.0, "1")), "x")
    lines = [Series(f"target-with-a-long-name-{i}", "#000", (Point(0.0, 0.5), Point(1.0, 0.6))) for i in range(6)]
    one = xy_chart(lines[:1], "c", axis, axis, width=560, height=190)
    six = xy_chart(lines, "c", axis, axis, width=560, height=190)
    rows = sorted({float(y) for y in re.findall(r'<line class="legend" x1="[\d.]+" x2="[\d.]+" y1="([\d.]+)"', six)})
    assert len(rows) >= 3 and float(re.search(r'height="(\d+)"', six).group(1)) == 190 + 16 * (len(rows) - 1)
    assert re.search(r'height="(\d+)"', one).group(1) == "190"


def test_a_columns_chart_draws_a_change_rule_between_its_columns_with_what_changed_on_hover():
    line = Series("point-query", "#000", (Point(0, 100.0), Point(1, 100.0), Point(2, 90.0)), dot=3,
                  rules=(Rule(1.5, "#a33", "between 17.1 and 17.2: -10%"),))
    svg = columns_chart(["17.0", "17.1", "17.2"], [line], "c", "QPS", True, fitted_axis([line]))
    xs = [float(x) for x in re.findall(r'<circle cx="([\d.]+)"', svg)]
    rule = re.search(r'<line class="change" x1="([\d.]+)"[^>]*><title>([^<]*)</title>', svg)
    assert float(rule.group(1)) == pytest.approx((xs[1] + xs[2]) / 2, abs=0.1)
    assert rule.group(2) == "between 17.1 and 17.2: -10%"


def test_a_fitted_axis_holds_every_interval_end_and_never_goes_below_zero():
    line = Series("a", "#000", (Point(0, 5.0, lower=1.0, upper=12.0),))
    lo, hi, spacing = fitted_axis([line])
    assert lo == 0.0 and hi >= 12.0 and round(hi / spacing, 9).is_integer()


def test_only_a_page_with_a_chart_carries_the_charts_script():
    chart = time_chart([Line("a", (1.0,), (2.0,), "#000")], "c", "NOPM")
    assert CHART_SCRIPT in page("t", [chart]) and "chart-tip" in page("t", [chart])
    assert "<script" not in page("t", ["<p>no chart</p>"]) and "chart-tip" not in page("t", ["<p>no chart</p>"])
