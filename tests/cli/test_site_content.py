"""What a published site says: change points "not computed" where Otava is missing, store names
not the publishing machine's paths, setups in words, each chart's caption its own workload's,
a y axis that does not blow a 0.2% wobble up to a cliff, and a bisect's probes by their values."""
from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path

import pytest

from dbdrift.model import IBENCH_STEPS
from dbdrift.report.charts import PLOT_H, Point, Series, columns_chart, fitted_axis
from dbdrift.store.store import Store
from dbdrift.workloads.ibench.catalog import IBenchParams
from tests.cli.test_publish import publish, stores
from tests.cli.test_workload_reports import two_target_store
from tests.unit.test_history import add_campaign
from tests.unit.test_ibench_report import step

FAULT = pytest.mark.fault("publish")


def ib_store_as_run_stores_it(path: Path) -> Path:
    """An Insert Benchmark campaign whose table is what `run` stores: every size, deletes on."""
    def add(store: Store, tid: int, target: str, rate: float, r: int) -> None:
        for s in IBENCH_STEPS[:4]:
            store.add_ibench_step(tid, step(target, s, rate))
    table = {**asdict(IBenchParams(clients=2)), "steps": list(IBENCH_STEPS[:4])}
    two_target_store(path, "ib-full", "insert-benchmark", table, (("pg17", 10_000.0), ("pg18", 9_000.0)), 1, add)
    store = Store(path)
    for c in store.campaigns():
        for t in store.targets(c["id"]):
            store.set_target_facts(t.id, server={"version": "17.10" if t.is_base else "18.4"})
    store.close()
    return path


def probes_store(path: Path) -> Path:
    """A bisect's probes: one campaign of one version each, and one whose run stored nothing."""
    store = Store(path)
    for i, (version, qps) in enumerate({"17.0": 10_000, "17.2": 10_010, "17.4": 9_990}.items()):
        add_campaign(store, f"bisect-postgres-point-query-{version}", {version: qps},
                     created=f"2026-11-0{i + 1}T10:00:00+00:00")
    target = {"name": "pg17.3", "engine": "postgres", "version": "17.3"}
    cid = store.add_campaign("bisect-postgres-point-query-17.3", {"name": "bisect-postgres-point-query-17.3",
                                                                  "rows": 100000, "tables": 1, "targets": [target]},
                             {"hostname": "h"}, "0.1.0")
    store.ensure_target(cid, "pg17.3", "postgres", 0, True, target)
    store.close()
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("content")
    given = [*stores(tmp), ib_store_as_run_stores_it(tmp / "ib-full.db"), probes_store(tmp / "probes.db")]
    result = publish(*given, "--out", tmp / "site")
    assert result.returncode == 0, result.stderr
    return tmp / "site", tmp


def no_otava(tmp: Path) -> dict:
    """An environment in which `import otava` fails, as where Apache Otava is not installed."""
    fake = tmp / "no-otava" / "otava"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('Apache Otava is not installed here')\n")
    return {"PYTHONPATH": str(tmp / "no-otava")}


def group_page(site: Path, text: str) -> Path:
    return next(p for p in site.glob("h/*/index.html") if text in p.read_text())


@FAULT
def test_without_otava_every_page_that_would_show_change_points_says_they_were_not_computed(tmp_path):
    from tests.helpers import dbdrift

    given = stores(tmp_path)
    result = dbdrift("publish", *given, "--out", tmp_path / "site", extra_env=no_otava(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "change points not computed" in result.stderr
    site = tmp_path / "site"
    index = (site / "index.html").read_text()
    history = index[index.index("<h2>History"):index.index("<h2>Campaigns")]
    assert history.count(">not computed</td>") == 5 and "<td>0</td><td>0</td>" not in history
    for page in [*site.glob("h/*/index.html"), *site.glob("h/*/*.x*.html")]:
        assert "not computed: Apache Otava" in page.read_text(), page
    again = publish(*given, "--out", site)  # with Otava: the groups are drawn again, their change points found
    assert again.returncode == 0, again.stderr
    assert "not computed" not in (site / "index.html").read_text()
    assert "between 17.4 and 17.5: point-query -5.0%" in group_page(site, "100000 rows x 1").read_text()


@FAULT
def test_the_site_names_its_stores_by_file_not_by_the_publishing_machine_s_paths(site):
    out, tmp = site
    index = (out / "index.html").read_text()
    assert "golden.db, series.db" in index and "probes.db" in index
    for page in [*out.rglob("*.html"), out / "site.json"]:
        assert str(tmp) not in page.read_text(), page


@FAULT
def test_a_setup_is_labelled_in_words_with_no_python_booleans_and_no_hash(site):
    out, _ = site
    index = (out / "index.html").read_text()
    label = re.search(r'<td class="l">(insert-benchmark clients=2, [^<]*)</td>', index)
    assert label, index
    assert "deletes on" in label[1] and "shared_table off" in label[1] and "query_s=1800," in label[1]
    assert not re.search(r"=True|=False|#[0-9a-f]{6}", label[1]), label[1]


@FAULT
def test_each_chart_of_a_history_page_has_the_caption_of_its_own_workload_and_measure(site):
    out, _ = site
    ib = group_page(out, 'id="l.x-x0"').read_text()
    captions = dict(re.findall(r'<h3 id="([^"]+)-x0">.*?<figcaption>([^<]*)</figcaption>', ib, re.S))
    assert captions == {"l.i0": "rows inserted per second (Insert Benchmark)",
                        "l.x": "rows indexed per second: the secondary indexes created (Insert Benchmark)",
                        "l.i1": "rows inserted per second (Insert Benchmark)",
                        "l.i2": "rows inserted per second (Insert Benchmark)"}
    tpcc = group_page(out, "tpcc clients=2").read_text()
    assert re.findall(r"<figcaption>([^<]*)</figcaption>", tpcc) == ["new orders per minute (TPROC-C)"]
    vector = group_page(out, "vector queries=100").read_text()
    assert "<figcaption>queries per second at recall 0.95" in vector
    for page in (ib, tpcc, vector):
        assert "Insert Benchmark step, NOPM and" not in page  # the caption about every workload at once


def chart_ys(svg: str) -> list[float]:
    """The y of each point of a chart's line, in px from the top."""
    return [float(y) for y in re.findall(r'<circle cx="[0-9.]+" cy="([0-9.]+)"', svg)]


def version_chart(columns: list[str], line: Series) -> str:
    """A line by version as the site draws it: on the y axis fitted to its values."""
    return columns_chart(columns, [line], "c", "QPS", True, fitted_axis([line]))


@FAULT
def test_a_0_2_percent_change_moves_a_line_by_a_sliver_of_the_plot_not_its_height():
    points = tuple(Point(i, v) for i, v in enumerate((10_000.0, 10_000.0, 10_020.0, 10_020.0)))
    svg = version_chart(["17.0", "17.1", "17.2", "17.3"], Series("point-query", "#000", points, dot=3))
    ys = chart_ys(svg)
    assert max(ys) - min(ys) < 0.06 * PLOT_H, ys  # 0.2% of ±2%: a twentieth of the plot at most


def test_a_20_percent_change_still_fills_most_of_the_plot():
    points = tuple(Point(i, v) for i, v in enumerate((10_000.0, 8_000.0)))
    ys = chart_ys(version_chart(["17.0", "18.0"], Series("point-query", "#000", points, dot=3)))
    assert max(ys) - min(ys) > 0.5 * PLOT_H, ys


@FAULT
def test_a_history_page_says_how_far_its_y_axes_reach_at_least(site):
    out, _ = site
    assert "The y axis spans at least ±2% around a chart's values" in group_page(out, "100000 rows x 1").read_text()


@FAULT
def test_a_bisect_probe_s_row_shows_what_it_measured_or_that_nothing_was(site):
    out, _ = site
    index = (out / "index.html").read_text()
    rows = {name: row for name, row in re.findall(r'<tr [^>]*>.*?scope="row"><a [^>]*>(bisect-[^<]*)</a>(.*?)</tr>',
                                                  index, re.S)}
    assert len(rows) == 4
    assert "one target, nothing compared; measured: point-query: 9,990 QPS" in rows["bisect-postgres-point-query-17.4"]
    assert "nothing was measured" in rows["bisect-postgres-point-query-17.3"]
    assert not any("<td>0</td>" in row for row in rows.values()), rows


@FAULT
def test_the_site_state_keeps_store_names_only(site):
    out, _ = site
    state = json.loads((out / "site.json").read_text())
    assert {c["entry"]["store"] for c in state["campaigns"].values()} >= {"golden.db", "probes.db", "ib-full.db"}
