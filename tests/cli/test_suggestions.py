"""A misspelt verb, option or choice is refused (exit 2) with the closest one suggested, under
the usage of the verb it was given to."""
from __future__ import annotations

import pytest

from tests.helpers import dbdrift


@pytest.mark.fault("cli")
@pytest.mark.parametrize("argv, suggested", [
    (("report", "--fromat", "json"), "--fromat: did you mean --format?"),
    (("compare", "17.10", "18.4", "--duraton", "60", "--print-campaign"), "--duraton: did you mean --duration?"),
    (("history", "--metirc=instructions"), "--metirc: did you mean --metric?"),
    (("config", "show", "c.toml", "--writen"), "--writen: did you mean --written?"),
])
def test_a_misspelt_option_gets_the_closest_option_of_its_verb(argv, suggested):
    result = dbdrift(*argv)
    assert result.returncode == 2
    assert suggested in result.stderr and "Traceback" not in result.stderr
    verb = " ".join(argv[:2]) if argv[0] == "config" else argv[0]
    assert f"usage: dbdrift {verb}" in result.stderr  # the verb's usage, where the option belongs


@pytest.mark.fault("cli")
@pytest.mark.parametrize("argv, suggested", [
    (("reprot",), "invalid choice: 'reprot'; did you mean 'report'?"),
    (("report", "--format", "htm"), "invalid choice: 'htm'; did you mean 'html'?"),
    (("catalog", "--engine", "mairadb"), "invalid choice: 'mairadb'; did you mean 'mariadb'?"),
])
def test_a_misspelt_verb_or_choice_gets_the_closest_one(argv, suggested):
    result = dbdrift(*argv)
    assert result.returncode == 2 and suggested in result.stderr


def test_an_option_like_nothing_points_to_the_verbs_help():
    result = dbdrift("report", "--zzzzzz")
    assert result.returncode == 2 and "did you mean" not in result.stderr
    assert "unrecognized arguments: --zzzzzz (`dbdrift report --help` lists the options)" in result.stderr
