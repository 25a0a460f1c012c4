"""Flamegraphs: perf record/script commands, the stack collapse, the recorder's failure paths,
and the SVG renderers (plain, differential) plus the folded text format."""
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dbdrift.metrics.flame import (FlameRecorder, collapse_file, collapse_perf_script,
                                   record_command, script_command)
from dbdrift.report.flamegraph import folded_text, render_diff_svg, render_svg

SVG = "{http://www.w3.org/2000/svg}"
needs_perf = pytest.mark.skipif(shutil.which("perf") is None, reason="perf is not installed")


def frames_of(svg: str) -> dict[str, dict]:
    """{frame name: rect attributes + tooltip} for every frame group of a rendered SVG."""
    frames = {}
    for group in ET.fromstring(svg).iter(f"{SVG}g"):
        tooltip = group.find(f"{SVG}title").text
        rect = group.find(f"{SVG}rect")
        frames[tooltip.split(" (")[0]] = dict(rect.attrib, tooltip=tooltip)
    return frames


def rgb(fill: str) -> tuple[int, ...]:
    return tuple(int(v) for v in re.findall(r"\d+", fill))


# --- commands


def test_record_command_samples_call_chains_of_all_pids_for_the_duration():
    assert record_command([11, 12], 5, Path("/tmp/p.data")) == [
        "perf", "record", "-e", "cpu-clock", "-F", "333", "-g", "-o", "/tmp/p.data",
        "-p", "11,12", "--", "sleep", "5"]


def test_record_command_rejects_an_empty_pid_list():
    with pytest.raises(ValueError):
        record_command([], 5, Path("p.data"))


def test_script_command_asks_for_symbols_offsets_and_dsos():
    cmd = script_command(Path("p.data"))
    assert cmd[:4] == ["perf", "script", "-i", "p.data"]
    assert cmd[-1] == "comm,pid,tid,time,event,ip,sym,symoff,dso"


# --- collapse


def test_collapse_of_a_real_capture_gives_the_known_call_structure(data_dir):
    text = (data_dir / "flame" / "callchain.perf-script.txt").read_text()
    folded = collapse_perf_script(text)
    assert folded == {"callchain;__libc_start_call_main;main;a;b": 141,
                      "callchain;__libc_start_call_main;main;c": 79}


def test_collapse_counts_every_sample_of_a_real_capture_once(data_dir):
    text = (data_dir / "flame" / "callchain.perf-script.txt").read_text()
    assert sum(collapse_perf_script(text).values()) == text.count("cpu-clock:")


def test_collapse_of_the_hand_written_sample_strips_offsets_and_dsos(data_dir):
    text = (data_dir / "flame" / "tiny.perf-script.txt").read_text()
    assert collapse_perf_script(text) == {
        "postgres;PostgresMain;ExecProcNode;ExecScan": 3,
        "postgres;PostgresMain;[unknown];__x64_sys_pread64": 1,
        "Web_Content;odd:name;std::vector<int>::push_back(int const&)": 1,
        "idle;[unknown]": 1,
    }


def test_collapse_without_comm_starts_stacks_at_the_outermost_frame(data_dir):
    text = (data_dir / "flame" / "tiny.perf-script.txt").read_text()
    folded = collapse_perf_script(text, include_comm=False)
    assert folded["PostgresMain;ExecProcNode;ExecScan"] == 3


def test_collapse_names_the_samples_of_a_given_process_as_asked(data_dir):
    text = (data_dir / "flame" / "callchain.perf-script.txt").read_text()
    pid = int(text.split()[1].split("/")[0])
    assert collapse_perf_script(text, names={pid: "dbdrift-driver"}) == {
        "dbdrift-driver;__libc_start_call_main;main;a;b": 141, "dbdrift-driver;__libc_start_call_main;main;c": 79}
    assert collapse_perf_script(text, names={pid + 1: "x"}) == collapse_perf_script(text)


def test_collapse_of_empty_text_is_empty():
    assert collapse_perf_script("") == {}


# --- recorder failure paths (never raise)


def test_recorder_with_a_missing_perf_binary_returns_none_and_a_reason(tmp_path):
    recorder = FlameRecorder(perf=str(tmp_path / "no-such-perf"))
    assert recorder.start([1], 1, tmp_path / "perf.data") is False
    path, reason = recorder.stop()
    assert path is None and "could not run" in reason


def test_recorder_without_perf_on_path_returns_none_and_a_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    recorder = FlameRecorder()
    recorder.start([1], 1, tmp_path / "perf.data")
    assert recorder.stop()[0] is None


def test_recorder_reports_perf_stderr_when_perf_fails(tmp_path):
    fake = tmp_path / "perf"
    fake.write_text("#!/bin/sh\necho 'event syntax error' >&2\nexit 129\n")
    fake.chmod(0o755)
    recorder = FlameRecorder(perf=str(fake))
    assert recorder.start([1], 1, tmp_path / "perf.data") is True
    path, reason = recorder.stop()
    assert path is None and "exited 129" in reason and "event syntax error" in reason


def test_stop_before_start_returns_none_and_a_reason():
    assert FlameRecorder().stop() == (None, "not started")


def test_collapse_file_without_perf_is_empty_and_says_why(tmp_path):
    folded, why = collapse_file(tmp_path / "perf.data", perf=str(tmp_path / "no-such-perf"))
    assert folded == {} and "could not run" in why and "no-such-perf" in why


def test_collapse_file_names_perf_scripts_exit_code_and_last_words(tmp_path):
    fake = tmp_path / "perf"
    fake.write_text("#!/bin/sh\necho 'file has no samples!' >&2\nexit 3\n")
    fake.chmod(0o755)
    folded, why = collapse_file(tmp_path / "perf.data", perf=str(fake))
    assert folded == {} and "exited 3" in why and "file has no samples!" in why


def test_collapse_file_stops_a_perf_script_that_outlives_its_timeout(tmp_path):
    fake = tmp_path / "perf"
    fake.write_text("#!/bin/sh\nexec sleep 30\n")
    fake.chmod(0o755)
    folded, why = collapse_file(tmp_path / "perf.data", perf=str(fake), timeout_s=0.3)
    assert folded == {} and "longer than 0.3 s" in why


# --- real perf on this machine


@pytest.fixture
def busy_pid():
    proc = subprocess.Popen([sys.executable, "-c", "while 1: pass"])
    yield proc.pid
    proc.kill()
    proc.wait()


@needs_perf
def test_a_real_recording_of_a_busy_process_collapses_to_stacks(tmp_path, busy_pid):
    recorder = FlameRecorder()
    assert recorder.start([busy_pid], 1, tmp_path / "perf.data")
    path, reason = recorder.stop()
    assert path == tmp_path / "perf.data", reason
    folded, why = collapse_file(path)
    assert folded and not why and all(count > 0 for count in folded.values())


@needs_perf
def test_stop_interrupts_a_recording_that_outlives_its_timeout_and_keeps_the_file(tmp_path, busy_pid):
    recorder = FlameRecorder()
    recorder.start([busy_pid], 300, tmp_path / "perf.data")
    path, reason = recorder.stop(timeout_s=1)
    assert path == tmp_path / "perf.data", reason


@needs_perf
def test_a_stop_right_after_the_start_waits_until_perf_can_write_its_file(tmp_path, busy_pid):
    """SIGINT before perf has opened its file kills it without one (a short run on a loaded host)."""
    for _ in range(3):
        recorder = FlameRecorder()
        recorder.start([busy_pid], 300, tmp_path / "perf.data")
        path, reason = recorder.stop(timeout_s=0)
        assert path == tmp_path / "perf.data", reason


# --- SVG


FOLDED = {"main;a;b": 6000, "main;a;c": 3999, "main;tiny": 1}


def test_svg_is_well_formed_xml():
    ET.fromstring(render_svg(FOLDED, "t"))


def test_svg_has_one_rect_per_frame_and_drops_frames_under_a_tenth_of_a_percent():
    root = ET.fromstring(render_svg(FOLDED, "t"))
    assert len(root.findall(f".//{SVG}rect")) == 5  # all, main, a, b, c; not tiny
    assert "tiny" not in frames_of(render_svg(FOLDED, "t"))


def test_svg_frame_widths_are_proportional_to_samples():
    frames = frames_of(render_svg(FOLDED, "t"))
    width = {name: float(f["width"]) for name, f in frames.items()}
    assert width["b"] / width["all"] == pytest.approx(0.6, abs=1e-3)
    assert width["c"] / width["a"] == pytest.approx(3999 / 9999, abs=1e-3)


def test_svg_stacks_callees_above_callers():
    frames = frames_of(render_svg(FOLDED, "t"))
    assert float(frames["all"]["y"]) > float(frames["main"]["y"]) > float(frames["a"]["y"]) > float(frames["b"]["y"])


def test_svg_tooltip_names_samples_and_share():
    assert frames_of(render_svg(FOLDED, "t"))["b"]["tooltip"] == "b (6000 samples, 60.00%)"


def test_svg_colours_are_warm_and_the_same_for_the_same_name():
    one = frames_of(render_svg(FOLDED, "t"))
    two = frames_of(render_svg({"x;b": 5, "y": 5}, "other"))
    assert one["b"]["fill"] == two["b"]["fill"]
    red, green, blue = rgb(one["b"]["fill"])
    assert red >= 205 and blue <= 55


def test_svg_truncates_names_that_do_not_fit_their_frame():
    svg = render_svg({"main;" + "x" * 200: 1, "main;y": 1}, "t")
    labels = [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")]
    assert any(label.startswith("xxx") and label.endswith("..") for label in labels)


def test_svg_escapes_markup_in_names_and_title():
    ET.fromstring(render_svg({"a<b>&c;d": 1}, "<title & more>"))


def test_svg_of_an_empty_profile_is_still_valid():
    assert ET.fromstring(render_svg({}, "nothing")).findall(f".//{SVG}rect") == []


def test_diff_colours_a_frame_that_grew_red_and_one_that_shrank_blue():
    base = {"main;grow": 20, "main;shrink": 80}
    new = {"main;grow": 80, "main;shrink": 20}
    frames = frames_of(render_diff_svg(base, new, "diff"))
    red, green, blue = rgb(frames["grow"]["fill"])
    assert red == 255 and green < 128 and blue < 128
    red, green, blue = rgb(frames["shrink"]["fill"])
    assert blue == 255 and red < 128 and green < 128
    assert rgb(frames["main"]["fill"]) == (255, 255, 255)


def test_diff_normalizes_totals_so_equal_shares_are_white():
    frames = frames_of(render_diff_svg({"m;a": 10, "m;b": 30}, {"m;a": 100, "m;b": 300}, "diff"))
    assert {f["fill"] for f in frames.values()} == {"rgb(255,255,255)"}


def test_diff_tooltip_shows_base_new_and_delta():
    frames = frames_of(render_diff_svg({"m;a": 1, "m;b": 3}, {"m;a": 1, "m;b": 1}, "diff"))
    assert frames["a"]["tooltip"] == "a (base 25.00%, new 50.00%, delta +25.00 pp)"


def test_diff_is_drawn_on_the_shape_of_the_new_profile():
    frames = frames_of(render_diff_svg({"m;gone": 5, "m;a": 5}, {"m;a": 5, "m;new": 5}, "diff"))
    assert "gone" not in frames and "new" in frames


def test_folded_text_is_sorted_stack_count_lines():
    assert folded_text({"b;c": 2, "a": 5}) == "a 5\nb;c 2\n"


def test_a_run_of_unknown_frames_is_one_frame():
    text = ("postgres 123/123 1.0: cpu-clock:\n\t1 b+0x1 (x)\n\t2 [unknown] (x)\n\t3 [unknown] (x)\n"
            "\t4 [unknown] (x)\n\t5 main+0x1 (x)\n\n")
    assert collapse_perf_script(text) == {"postgres;main;[unknown];b": 1}
