"""Command-line habits: durations with units, short options, --quiet/--verbose, bare `dbdrift`,
a documented --format everywhere, --color wherever a report prints, one instruction switch on demo."""
from __future__ import annotations

import argparse
import io
import tomllib

import pytest

from dbdrift.cli import main as cli_main
from dbdrift.cli.progress import ConsoleProgress
from tests.helpers import dbdrift


def verb_parsers() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in cli_main.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def flags(verb: str) -> set[str]:
    return {s for action in verb_parsers()[verb]._actions for s in action.option_strings}


@pytest.mark.parametrize("value, seconds", [("90", 90.0), ("90s", 90.0), ("2m", 120.0), ("1.5h", 5400.0)])
def test_compare_takes_a_duration_with_its_unit(value, seconds):
    result = dbdrift("compare", "17.10", "18.4", "--duration", value, "--print-campaign")
    assert result.returncode == 0, result.stderr
    doc = tomllib.loads(result.stdout)
    assert doc["read_s"] == doc["write_s"] == seconds


def test_bisect_and_system_read_durations_as_compare_does():
    parsers = verb_parsers()
    bisect = parsers["bisect"].parse_args(["--engine", "postgres", "--good", "17.0", "--bad", "17.2",
                                           "--test", "point-query", "--duration", "2m"])
    assert bisect.duration == 120.0
    assert parsers["system"].parse_args(["check", "--steal-window", "500ms"]).steal_window == 0.5


def test_a_duration_without_a_number_or_of_zero_is_refused_with_status_2():
    result = dbdrift("compare", "17.10", "18.4", "--duration", "2x", "--print-campaign")
    assert result.returncode == 2 and "--duration: '2x' is not a duration" in result.stderr
    result = dbdrift("compare", "17.10", "18.4", "--duration", "0s", "--print-campaign")
    assert result.returncode == 2 and "duration must be more than 0" in result.stderr


def test_t_is_tests_on_every_verb_with_tests():
    for verb in ("run", "compare", "demo", "calibrate", "catalog", "history", "report"):
        assert {"-t", "--tests"} <= flags(verb), verb
    result = dbdrift("compare", "17.10", "18.4", "-t", "point", "-t", "writes", "--print-campaign")
    assert tomllib.loads(result.stdout)["tests"] == ["point", "writes"]


def test_quiet_and_verbose_exist_on_every_verb_that_measures_and_exclude_each_other():
    for verb in ("run", "compare", "demo", "calibrate", "bisect", "bloat"):
        assert {"-q", "--quiet", "-v", "--verbose"} <= flags(verb), verb
    result = dbdrift("compare", "17.10", "18.4", "-q", "-v", "--print-campaign")
    assert result.returncode == 2 and "not allowed with argument" in result.stderr


def test_quiet_progress_shows_failed_steps_only():
    stream = io.StringIO()
    progress = ConsoleProgress(stream, verbosity=-1)
    progress.campaign_start(10, 2)
    progress.step_start("pg17", "run point-query", 5)
    progress.step_end("pg17", "run point-query", "ok", "9000 qps")
    progress.step_start("pg18", "run point-query", 5)
    progress.step_end("pg18", "run point-query", "failed", "server died")
    assert stream.getvalue().splitlines() == [stream.getvalue().splitlines()[0]]
    assert "pg18: run point-query: FAILED server died" in stream.getvalue()


def test_verbose_progress_adds_a_line_as_each_step_starts():
    stream = io.StringIO()
    progress = ConsoleProgress(stream, verbosity=1)
    progress.campaign_start(10, 1)
    progress.step_start("pg17", "run point-query", 65)
    progress.step_end("pg17", "run point-query", "ok", "9000 qps")
    lines = stream.getvalue().splitlines()
    assert lines[1] == "pg17: run point-query (about 1m05s) ..." and "ok 9000 qps" in lines[2]


def test_bare_dbdrift_prints_the_help_and_its_verbs():
    result = dbdrift()
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: dbdrift") and "compare" in result.stdout and "exit status:" in result.stdout


def test_every_format_option_says_what_each_format_gives():
    for verb, parser in verb_parsers().items():
        for action in parser._actions:
            if "--format" in action.option_strings:
                assert action.help and "default text" in action.help, verb


def test_every_verb_that_prints_the_report_takes_color():
    for verb in ("run", "compare", "demo", "calibrate", "report"):
        assert "--color" in flags(verb), verb


def test_demo_has_one_instruction_switch_and_calibrate_no_base():
    demo = flags("demo")
    assert "--instructions" in demo
    assert not demo & {"--count-instructions", "--instructions-only", "--simulate-cache"}
    assert "--base" not in flags("calibrate") and "--target" in flags("calibrate")
    assert dbdrift("demo", "--count-instructions", "--print-campaign").returncode == 2


def test_an_unlike_test_name_gets_no_unrelated_suggestions():
    result = dbdrift("catalog", "--tests", "nosuch")
    assert result.returncode == 2 and "did you mean" not in result.stderr
    assert "no test is named like it" in result.stderr


def test_report_o_writes_the_report_to_a_file_and_keeps_the_exit_status(tmp_path):
    from tests.unit.test_reports import make_store

    make_store(tmp_path / "r.db").close()  # point-query pg18 is a regression
    printed = dbdrift("report", "--store", tmp_path / "r.db", "--format", "markdown").stdout
    result = dbdrift("report", "--store", tmp_path / "r.db", "--format", "markdown", "-o", tmp_path / "r.md",
                     "--fail-on", "regression")
    assert result.returncode == 3 and result.stdout == "" and "fail-on:" in result.stderr
    assert (tmp_path / "r.md").read_text() == printed


def test_report_o_writes_nothing_when_the_report_fails(tmp_path):
    result = dbdrift("report", "--store", tmp_path / "none.db", "-o", tmp_path / "r.txt")
    assert result.returncode == 2 and not (tmp_path / "r.txt").exists()


def test_cleanup_of_an_empty_work_dir_says_there_is_no_run_directory(tmp_path):
    result = dbdrift("cleanup", "--dry-run", work_dir=tmp_path / "work")
    assert result.returncode == 0 and result.stdout == f"nothing to clean up in {tmp_path / 'work'}: no run directories\n"


def test_report_tests_keeps_only_those_tests_outside_the_matrix(tmp_path):
    from tests.unit.test_reports import make_store

    make_store(tmp_path / "r.db").close()
    result = dbdrift("report", "--store", tmp_path / "r.db", "-t", "writes", "--format", "csv")
    assert result.returncode == 0, result.stderr
    tests = {line.split(",")[result.stdout.splitlines()[0].split(",").index("test")]
             for line in result.stdout.splitlines()[1:]}
    assert tests == {"update-index"}
    refused = dbdrift("report", "--store", tmp_path / "r.db", "--tests", "update-nonindex,insert")
    assert refused.returncode == 2 and "measured none of" in refused.stderr and "point-query" in refused.stderr


def test_a_measuring_verb_offers_the_report_formats_of_dbdrift_report():
    from dbdrift.cli import options
    from dbdrift.cli import report as report_cli

    assert options.REPORT_FORMATS == report_cli.FORMATS
    for verb in ("run", "compare", "calibrate", "demo"):
        fmt = next(a for a in verb_parsers()[verb]._actions if "--format" in a.option_strings)
        assert tuple(fmt.choices) == options.REPORT_FORMATS


def test_compare_builds_the_campaign_run_executes_and_none_when_it_only_prints_it(capsys):
    parsers = verb_parsers()
    compare = cli_main.VERBS["compare"][0]
    spec = compare.campaign(parsers["compare"].parse_args(["17.10", "18.4", "-t", "point"]))
    assert [t.name for t in spec.targets] == ["pg17.10", "pg18.4"] and spec.base.name == "pg17.10"
    assert compare.campaign(parsers["compare"].parse_args(["17.10", "18.4", "--print-campaign"])) is None
    assert tomllib.loads(capsys.readouterr().out)["name"] == "compare-pg17.10-vs-pg18.4"
