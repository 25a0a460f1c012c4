"""`dbdrift publish` when things go wrong: an --out it cannot write, a damaged site.json, one to
three Ctrl-Cs while its readers work, and a publish killed outright. Each ends with a clear
error or exit 130, no traceback, no reader left running, and a folder the next publish completes."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.test_publish import broken_links, publish, stores
from tests.helpers import cli_env, process_tree, wait_for

FAULT = pytest.mark.fault("publish")


def refused(given: list[Path], out: Path | str) -> str:
    """`dbdrift publish` of `given` into `out`, which must refuse with exit 2 and no traceback; its stderr."""
    result = publish(*given, "--out", out)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    return result.stderr


@pytest.mark.parametrize("out", ["/proc/dbdrift-site", "/sys/dbdrift-site", "/proc/self/dbdrift-site"])
@FAULT
def test_an_out_folder_that_cannot_be_made_is_refused_with_exit_2_and_no_traceback(tmp_path, out):
    err = refused(stores(tmp_path), out)
    assert f"--out {out} cannot be made" in err and "hint:" in err


def immutable(path: Path) -> bool:
    """chattr +i on `path` (which stops root too); False where the filesystem has no such flag."""
    made = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    return made.returncode == 0


@pytest.fixture
def frozen(tmp_path):
    """An empty folder made immutable; thawed after the test so it can be removed."""
    folder = tmp_path / "frozen"
    folder.mkdir()
    if shutil.which("chattr") is None or not immutable(folder):
        pytest.skip(f"chattr +i is not supported on the filesystem of {tmp_path}")
    yield folder
    subprocess.run(["chattr", "-i", str(folder)], check=True)


@FAULT
def test_an_immutable_out_folder_is_refused_with_exit_2_naming_it_and_left_as_it_was(tmp_path, frozen):
    err = refused(stores(tmp_path), frozen)
    assert f"--out {frozen}:" in err and "cannot be written" in err and "chattr -i" in err
    assert list(frozen.iterdir()) == []


@FAULT
def test_a_site_whose_campaign_folder_is_immutable_is_refused_with_exit_2_and_published_once_it_is_not(tmp_path):
    given = stores(tmp_path)
    out = tmp_path / "site"
    assert publish(*given[:2], "--out", out).returncode == 0
    if shutil.which("chattr") is None or not immutable(out / "c"):
        pytest.skip(f"chattr +i is not supported on the filesystem of {tmp_path}")
    try:
        result = publish(*given, "--out", out)
    finally:
        subprocess.run(["chattr", "-i", str(out / "c")], check=True)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert f"{out / 'c'}" in result.stderr and "cannot be written" in result.stderr
    again = publish(*given, "--out", out)
    assert again.returncode == 0, again.stderr
    assert broken_links(out) == [] and len(list((out / "c").glob("*.html"))) == 6


def first_campaign(state: dict) -> dict:
    return next(iter(state["campaigns"].values()))


WRONG_TYPES = {  # what is changed in site.json -> the field the error names
    "pages": (lambda s: s.update(pages=[]), "field pages is not an object"),
    "n": (lambda s: first_campaign(s).update(n="7"), ".n is not a whole number"),
    "counts": (lambda s: first_campaign(s)["entry"].update(counts=[1, 2, "x", 4]), ".entry.counts[2] is not a whole"),
    "point": (lambda s: first_campaign(s)["points"][0].__setitem__(7, "fast"), ".points[0][7] (value) is not a number"),
    "summary": (lambda s: next(iter(s["groups"].values()))["summary"].update(tests=None), ".summary.tests is not"),
    "version": (lambda s: s.update(dbdrift_version=3), "field dbdrift_version is not a string"),
    "campaigns": (lambda s: s.update(campaigns={"x": 1}), 'field campaigns["x"] is not an object'),
}


@pytest.fixture(scope="module")
def one_site(tmp_path_factory) -> tuple[Path, list[Path]]:
    tmp = tmp_path_factory.mktemp("one-site")
    given = stores(tmp)
    assert publish(*given, "--out", tmp / "site").returncode == 0
    return tmp / "site", given


@pytest.mark.parametrize("field", WRONG_TYPES)
@FAULT
def test_a_site_json_with_a_field_of_the_wrong_type_is_refused_naming_the_file_and_the_field(one_site, tmp_path, field):
    site, given = one_site
    out = tmp_path / "site"
    shutil.copytree(site, out)
    state = json.loads((out / "site.json").read_text())
    change, named = WRONG_TYPES[field]
    change(state)
    (out / "site.json").write_text(json.dumps(state))
    err = refused(given, out)
    assert f"{out / 'site.json'}: field " in err and named in err, err


@FAULT
def test_a_site_json_naming_a_page_outside_its_folder_is_refused_and_nothing_is_removed(one_site, tmp_path):
    site, given = one_site
    out = tmp_path / "site"
    shutil.copytree(site, out)
    victim = tmp_path / "victim.html"
    victim.write_text("not the site's")
    state = json.loads((out / "site.json").read_text())
    state["pages"]["../victim.html"] = "0" * 64
    (out / "site.json").write_text(json.dumps(state))
    assert 'pages["../victim.html"] is not a page of the site' in refused(given, out)
    assert victim.read_text() == "not the site's"


# --- stopped midway ------------------------------------------------------------------------


MANY = 64  # campaigns: enough that publish reads them in a process per CPU, for seconds


def campaigns_store(path: Path, n: int) -> Path:
    """A store of `n` two-version campaigns of the 32 default tests (bench/publish_scale.py's)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from bench.publish_scale import add_campaign
    from dbdrift.store.store import Store

    store = Store(path)
    for k in range(n):
        add_campaign(store, k)
    store.close()
    return path


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> Path:
    return campaigns_store(tmp_path_factory.mktemp("many") / "many.db", MANY)


def start_publish(store: Path, out: Path) -> subprocess.Popen:
    """`dbdrift publish` in a session of its own, as a terminal runs it in its own process group;
    faulthandler on, so a publish that does not end prints where each thread is (`ended`)."""
    return subprocess.Popen([sys.executable, "-X", "faulthandler", "-m", "dbdrift", "publish", str(store),
                             "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(),
                            start_new_session=True)


def ended(proc: subprocess.Popen, timeout_s: float = 30) -> str:
    """The publish's stderr once it has exited; if it has not within `timeout_s` (a hang, or a
    host so loaded that it cannot stop promptly), the test fails with every thread's stack."""
    try:
        return proc.communicate(timeout=timeout_s)[1]
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # faulthandler dumps each thread's traceback
        err = proc.communicate(timeout=30)[1]
        pytest.fail(f"publish did not end within {timeout_s:g} s of the signal; its threads:\n{err[-6000:]}")


def stop(proc: subprocess.Popen, readers: list[int]) -> None:
    """Whatever happened, nothing of the test's publish goes on running."""
    for pid in set(readers):
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    proc.kill()
    proc.communicate()


def readers_of(proc: subprocess.Popen) -> list[int]:
    return [pid for pid in process_tree(proc.pid) if pid != proc.pid]


def alive(pid: int) -> bool:
    """Running: neither gone nor a zombie left for its new parent to reap."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def gone_within(pids: list[int], seconds: float) -> list[int]:
    """Those of `pids` still running after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


@pytest.mark.parametrize("presses", [1, 2, 3])
@FAULT
def test_ctrl_c_pressed_once_twice_or_three_times_stops_publish_at_once_with_its_readers(many, tmp_path, presses):
    out = tmp_path / "site"
    proc = start_publish(many, out)
    readers: list[int] = []
    try:
        readers = wait_for(lambda: len(readers_of(proc)) >= 2 and readers_of(proc), 60, "the readers", proc)
        time.sleep(0.3)
        pressed = time.monotonic()
        for _ in range(presses):
            os.killpg(proc.pid, signal.SIGINT)  # as a terminal sends it: to the whole process group
            time.sleep(0.2)
        err = ended(proc)
        took = time.monotonic() - pressed
        left = gone_within(readers, 2)
    finally:
        stop(proc, readers + readers_of(proc))
    assert proc.returncode == 130, err[-3000:]
    assert "Traceback" not in err and "Exception" not in err, err[-3000:]
    assert took < 5, f"publish took {took:.1f}s to stop"
    assert left == [], f"readers {left} outlived the publish"
    again = publish(many, "--out", out)
    assert again.returncode == 0, again.stderr
    assert f"published {MANY} campaign(s)" in again.stdout and broken_links(out) == []


def test_ctrl_c_midway_leaves_the_previous_site_as_it_was_and_the_next_publish_completes_it(many, tmp_path):
    out = tmp_path / "site"
    store = campaigns_store(tmp_path / "s.db", MANY // 4)  # the first quarter of `many`'s campaigns
    assert publish(store, "--out", out).returncode == 0
    index = (out / "index.html").read_text()
    shutil.copy(many, store)  # three times as many campaigns now
    proc = start_publish(store, out)
    readers: list[int] = []
    try:
        readers = wait_for(lambda: len(readers_of(proc)) >= 2 and readers_of(proc), 60, "the readers", proc)
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGINT)
        err = ended(proc)
    finally:
        stop(proc, readers + readers_of(proc))
    assert proc.returncode == 130 and "Traceback" not in err, err[-3000:]
    assert (out / "index.html").read_text() == index
    assert broken_links(out) == []
    again = publish(store, "--out", out)
    assert again.returncode == 0, again.stderr
    assert f"published {MANY} campaign(s)" in again.stdout and broken_links(out) == []


@FAULT
def test_a_killed_publish_takes_its_readers_along_and_the_next_publish_completes_its_folder(many, tmp_path):
    out = tmp_path / "site"
    proc = start_publish(many, out)
    readers: list[int] = []
    try:
        readers = wait_for(lambda: len(readers_of(proc)) >= 2 and readers_of(proc), 60, "the readers", proc)
        wait_for(lambda: list(out.glob("c/*.html")), 60, "a first campaign page", proc)
        proc.kill()
        ended(proc)
        left = gone_within(readers, 3)
    finally:
        stop(proc, readers)
    assert left == [], f"readers {left} outlived the publish"
    again = publish(many, "--out", out)
    assert again.returncode == 0, again.stderr
    assert "not a site" not in again.stderr
    assert f"published {MANY} campaign(s)" in again.stdout and broken_links(out) == []
    assert not list(out.rglob("*.partial"))
