"""Every percentage option reads its value by one rule (quantities.parse_percent): a number is a
percent with or without `%` (`0.5` is half a percent), a bare number below 0.1 needs its `%`, and
nonsense is refused with status 2, naming the option. Its --help says so; the campaign key detect
reads alike; JSON keeps fractions."""
from __future__ import annotations

import argparse
import json

import pytest

from dbdrift.cli import main as cli_main
from dbdrift.cli.options import PERCENT_RULE
from dbdrift.store.store import Store
from tests.cli.test_cli_errors import assert_user_error
from tests.cli.test_workload_goldens import tpcc_store
from tests.helpers import dbdrift, shared_work_dir
from tests.unit.test_history import QPS, add_campaign
from tests.unit.test_reports import make_store

# (verb, the arguments it needs besides the option, option): every option that takes a percentage
REQUIRED = {"report": [], "history": [], "publish": ["s.db", "--out", "site"],
            "bisect": ["--good", "17.0", "--bad", "17.2", "--test", "point-query"]}
OPTIONS = [("report", "--min-effect", 0.02), ("report", "--noisy", 0.05), ("history", "--min-effect", 0.02),
           ("publish", "--min-effect", 0.02), ("bisect", "--threshold", 0.02)]
ZERO_REFUSED = {("report", "--noisy"), ("bisect", "--threshold")}  # an interval of ±0%, a move of 0%: meaningless


def verb_parsers() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in cli_main.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def parsed(verb: str, option: str, value: str) -> float:
    args = verb_parsers()[verb].parse_args([*REQUIRED[verb], f"{option}={value}"])
    share: float = getattr(args, option.removeprefix("--").replace("-", "_"))
    return share


def refusal(capsys, verb: str, option: str, value: str) -> str:
    """What argparse says of `value` given to `option`; it exits with status 2."""
    with pytest.raises(SystemExit) as exited:
        cli_main.main([verb, *REQUIRED[verb], f"{option}={value}"])
    assert exited.value.code == 2
    err: str = capsys.readouterr().err
    assert f"argument {option}: " in err
    return err


def test_every_option_with_a_percentage_says_the_rule_in_its_help():
    found = set()
    for verb, parser in verb_parsers().items():
        for action in parser._actions:
            if action.metavar == "PCT" or getattr(action.type, "__name__", "") == "percent":
                assert action.metavar == "PCT" and action.help and PERCENT_RULE in action.help, (verb, action.dest)
                found.add((verb, action.option_strings[-1]))
    assert found == {(verb, option) for verb, option, _ in OPTIONS} | {("run", "--detect")}
    shown = " ".join(verb_parsers()["report"].format_help().split())  # as printed, lines joined
    assert "(default 2%); PCT in percent: 0.5 or 0.5% is half a percent (below 0.1, write the %)" in shown


@pytest.mark.parametrize("verb, option, default", OPTIONS)
def test_each_option_reads_a_bare_number_as_a_percent_and_keeps_its_default(verb, option, default):
    assert parsed(verb, option, "0.5") == parsed(verb, option, "0.5%") == 0.005
    assert parsed(verb, option, "2") == parsed(verb, option, "2%") == 0.02
    assert parsed(verb, option, "0.05%") == 0.0005
    args = verb_parsers()[verb].parse_args(REQUIRED[verb])
    assert getattr(args, option.removeprefix("--").replace("-", "_")) == default


@pytest.mark.parametrize("verb, option, default", OPTIONS)
@pytest.mark.parametrize("value, said", [
    ("2x", "'2x' is not a percentage (bare numbers are percents: write e.g. "),
    ("-1", "'-1' is negative (use "),
    ("100", "'100' is out of range (use "),
    ("0.02", "'0.02' would be 0.02%: a bare number is a percent, and one below 0.1 needs its % (did you mean 2%? "
             'to mean 0.02%, write "0.02%")'),
])
def test_each_option_refuses_nonsense_with_status_2_naming_itself_and_the_fix(capsys, verb, option, default, value,
                                                                                said):
    assert said in refusal(capsys, verb, option, value)


@pytest.mark.parametrize("verb, option, default", OPTIONS)
def test_zero_is_refused_only_where_it_is_meaningless(capsys, verb, option, default):
    if (verb, option) in ZERO_REFUSED:
        assert "'0' is out of range (use more than 0% and less than 100%" in refusal(capsys, verb, option, "0")
    else:
        assert parsed(verb, option, "0") == 0.0


def test_a_bad_percentage_exits_2_from_the_command_line():
    result = dbdrift("report", "--store", "none.db", "--min-effect", "0.05")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "argument --min-effect: '0.05' would be 0.05%" in result.stderr and "did you mean 5%?" in result.stderr


@pytest.fixture
def store(tmp_path):
    make_store(tmp_path / "r.db").close()
    return tmp_path / "r.db"


def report(capsys, store, *args: str) -> str:
    assert cli_main.main(["report", "--store", str(store), *args]) == 0
    out: str = capsys.readouterr().out
    return out


def test_half_a_percent_of_minimum_effect_is_in_the_reports_legend_and_a_fraction_in_its_json(capsys, store):
    text = report(capsys, store, "--min-effect", "0.5")
    assert "verdicts (95% interval, minimum effect 0.5%):" in text
    assert "minimum effect 0.5%" in report(capsys, store, "--min-effect", "0.5", "--format", "markdown")
    assert "of at least 0.5% whose 95% interval excludes 1" in report(capsys, store, "--min-effect", "0.5",
                                                                       "--format", "html")
    doc = json.loads(report(capsys, store, "--min-effect", "0.5", "--format", "json"))
    assert doc["min_effect"] == 0.005


def test_a_percentage_with_and_without_its_sign_gives_the_same_report(capsys, store):
    assert report(capsys, store, "--min-effect", "3", "--noisy", "4") == \
        report(capsys, store, "--min-effect", "3%", "--noisy", "4%")


def test_noisy_in_percent_is_the_legends_width_and_a_fraction_in_the_json(capsys, store):
    assert "~ too noisy (holds 1 and wider than ±3%)" in report(capsys, store, "--noisy", "3")
    doc = json.loads(report(capsys, store, "--noisy", "3", "--format", "json"))
    assert doc["noisy_half_width"] == 0.03 and doc["min_effect"] == 0.02


def test_a_workload_report_judges_by_the_minimum_effect_and_noisy_width_given(tmp_path, capsys):
    store = tpcc_store(tmp_path / "t.db")  # b's NOPM: an improvement of 10%, its interval ±1.4%

    def judged(*args: str) -> tuple[str, float, float]:
        doc = json.loads(report(capsys, store, "--format", "json", *args))
        return doc["verdicts"][0]["verdict"], doc["min_effect"], doc["noisy_half_width"]
    assert judged() == ("improvement", 0.02, 0.05)
    assert judged("--min-effect", "20") == ("no significant change", 0.2, 0.05)
    assert judged("--min-effect", "20", "--noisy", "1") == ("too noisy", 0.2, 0.01)


def test_history_reads_its_minimum_step_as_a_percent(tmp_path, capsys):
    path = tmp_path / "h.db"  # point-query steps down 5% at 17.5
    with_store = Store(path)
    add_campaign(with_store, "minors", QPS)
    with_store.close()
    base = ["history", "--store", str(path), "--tests", "point-query"]
    assert cli_main.main([*base, "--min-effect", "4"]) == 0
    found = capsys.readouterr().out
    assert "between 17.4 and 17.5: point-query -5." in found and "a step of at least 4%" in found
    assert cli_main.main([*base, "--min-effect", "6"]) == 0
    assert "between 17.4 and 17.5" not in capsys.readouterr().out


def test_the_campaign_key_and_run_detect_read_a_bare_number_as_the_options_do(tmp_path):
    from dbdrift.app import run as run_case
    from dbdrift.cli import options

    path = tmp_path / "c.toml"
    for written in ("detect = 0.5", 'detect = "0.5%"', 'detect = "0.5"'):
        path.write_text(f'name = "c"\n{written}\n[[targets]]\nname = "a"\nversion = "17.10"\n'
                        '[[targets]]\nname = "b"\nversion = "18.4"\n')
        assert run_case.load(path, []).detect == 0.005, written
    path.write_text('name = "c"\n[[targets]]\nname = "a"\nversion = "17.10"\n[[targets]]\nname = "b"\nversion = "18.4"\n')
    for given in (["--detect", "0.5"], ["--detect", "0.5%"], ["--set", "detect=0.5"]):
        args = verb_parsers()["run"].parse_args([str(path), *given])
        assert run_case.load(path, options.campaign_sets(args)).detect == 0.005, given


def test_a_campaign_file_whose_detect_is_a_bare_fraction_is_refused_before_anything_runs(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('name = "c"\ndetect = 0.02\n[[targets]]\nname = "a"\nversion = "17.10"\n'
                    '[[targets]]\nname = "b"\nversion = "18.4"\n')
    result = dbdrift("run", "--check", path, "--store", tmp_path / "s.db", work_dir=shared_work_dir("percent"))
    assert_user_error(result, "c.toml: detect: 0.02 would be 0.02%: a bare number is a percent",
                      'hint: did you mean 2%? to mean 0.02%, write "0.02%"')
    assert result.returncode == 2
