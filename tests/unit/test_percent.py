"""quantities.parse_percent, the one reading of every percentage dbdrift takes (command-line
options and campaign keys): a number is a percent with or without `%`, a bare number below 0.1
needs its `%`, and nonsense is refused naming the option and the fix. On literal inputs."""
from __future__ import annotations

import pytest

from dbdrift.errors import InputError
from dbdrift.quantities import LEAST_BARE_PERCENT, PercentRange, format_percent, parse_percent

pytestmark = pytest.mark.fault("input")
DETECT = PercentRange(0.001, 0.5, high_allowed=True)  # the campaign key detect's range (plan/keys.py)


def refused(value: object, span: PercentRange = PercentRange(), example: str = "2%") -> InputError:
    with pytest.raises(InputError) as err:
        parse_percent(value, "--min-effect", span, example)
    assert err.value.exit_code == 2 and err.value.hint
    return err.value


@pytest.mark.parametrize("written, share", [
    ("0.5", 0.005), ("0.5%", 0.005), ("2", 0.02), ("2%", 0.02), (" 2 % ", 0.02), ("12.5", 0.125),
    (".5", 0.005), ("5.", 0.05), ("99.9", 0.999), ("0.1", 0.001), ("0", 0.0), ("0%", 0.0),
])
def test_a_number_is_a_percent_with_or_without_its_sign(written, share):
    assert parse_percent(written, "--min-effect") == share


@pytest.mark.parametrize("number, share", [(2, 0.02), (2.0, 0.02), (0.5, 0.005), (12.5, 0.125), (0, 0.0)])
def test_a_toml_number_is_a_percent_as_a_bare_string_is(number, share):
    assert parse_percent(number, "detect") == share == parse_percent(str(number), "detect")


def test_the_fraction_is_the_one_written_not_a_division_off_by_a_rounding():
    assert parse_percent("0.7", "--noisy") == 0.007 and parse_percent(0.7, "--noisy") == 0.007
    assert parse_percent("1.1%", "--noisy") == 0.011


def test_the_percent_sign_lets_a_percentage_below_a_tenth_through():
    assert parse_percent("0.05%", "--threshold") == 0.0005
    assert parse_percent("0.01%", "--threshold") == 0.0001


@pytest.mark.parametrize("bare, meant", [("0.02", "2%"), ("0.05", "5%"), ("0.035", "3.5%"), ("0.09", "9%"),
                                         (0.02, "2%"), ("1e-3", None)])
def test_a_bare_number_below_a_tenth_is_refused_with_the_percent_it_used_to_mean(bare, meant):
    err = refused(bare)
    if meant is None:  # not a number dbdrift writes: refused as such
        assert "is not a percentage" in err.message
        return
    assert err.message.startswith(f"--min-effect: {bare!r} would be {float(bare):g}%: a bare number is a percent")
    assert err.hint == f'did you mean {meant}? to mean {float(bare):g}%, write "{float(bare):g}%"'


def test_the_least_bare_percent_is_a_tenth_and_itself_accepted():
    assert LEAST_BARE_PERCENT == 0.1
    assert parse_percent("0.1", "--noisy") == 0.001


@pytest.mark.parametrize("value", ["2x", "two", "%", "", "nan", "inf", "inf%", "1e3", "2%%", "2 %x", "--2"])
def test_what_is_not_a_number_is_refused_with_how_to_write_one(value):
    err = refused(value)
    assert err.message == f"--min-effect: {value!r} is not a percentage"
    assert err.hint == 'bare numbers are percents: write e.g. 2 or "2%"'


@pytest.mark.parametrize("value", [True, None, [2], {"pct": 2}])
def test_a_toml_value_that_is_no_number_nor_string_is_refused(value):
    assert refused(value).message.startswith("--min-effect: expected a percentage, got ")


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_toml_nan_or_infinity_is_refused(value):
    assert "is not a finite percentage" in refused(value).message


@pytest.mark.parametrize("value", ["-1", "-0.5%", -2, -0.5])
def test_a_negative_percentage_is_refused_with_the_range(value):
    err = refused(value)
    assert err.message == f"--min-effect: {value!r} is negative"
    assert err.hint == "use 0% or more and less than 100%, e.g. 2%"


@pytest.mark.parametrize("value", ["100", "100%", 150, "1" * 400])
def test_a_hundred_percent_or_more_is_refused_where_the_range_ends_below_it(value):
    assert refused(value).message.endswith(" is out of range")


def test_zero_is_refused_where_the_range_starts_above_it():
    err = refused("0", PercentRange(low_allowed=False), "5%")
    assert err.message == "--min-effect: '0' is out of range"
    assert err.hint == "use more than 0% and less than 100%, e.g. 5%"


@pytest.mark.parametrize("value, share", [("0.1", 0.001), ("0.1%", 0.001), ("50", 0.5), (50, 0.5), ("2%", 0.02)])
def test_a_range_with_both_ends_allowed_takes_its_ends(value, share):
    assert parse_percent(value, "detect", DETECT) == share


@pytest.mark.parametrize("value", ["0.05%", "50.1", 80])
def test_a_range_with_both_ends_allowed_refuses_beyond_them(value):
    assert refused(value, DETECT).hint == "use 0.1% to 50%, e.g. 2%"


@pytest.mark.parametrize("span, text", [
    (PercentRange(), "0% or more and less than 100%"),
    (PercentRange(low_allowed=False), "more than 0% and less than 100%"),
    (DETECT, "0.1% to 50%"),
    (PercentRange(0.01, 0.5, low_allowed=False, high_allowed=True), "more than 1% and 50% or less"),
])
def test_a_range_describes_itself_in_percent(span, text):
    assert span.describe() == text


@pytest.mark.parametrize("share, text", [(0.02, "2%"), (0.05, "5%"), (0.005, "0.5%"), (0.125, "12.5%"),
                                         (0.0005, "0.05%"), (0.07, "7%"), (0.0, "0%"), (0.999, "99.9%")])
def test_a_percentage_is_written_as_it_is_read_back(share, text):
    assert format_percent(share) == text
    assert parse_percent(text, "--min-effect") == share
