"""The bisect search (pure) and the bisect verb's choice of versions."""
import math

import pytest

from dbdrift.analysis.bisect import bisect
from dbdrift.app import bisect as bisect_app
from dbdrift.cli import bisect as bisect_cli
from dbdrift.cli import main as cli_main
from dbdrift.errors import UserError
from dbdrift.server import versions

VERSIONS = ["17.0", "17.1", "17.2", "17.4", "17.5", "17.6", "17.7", "17.8", "17.9", "17.10"]


def stepped(at: int, before: float = 41000.0, after: float = 42000.0, failing=()):
    calls = []

    def measure(i):
        calls.append(i)
        return None if i in failing else (after if i >= at else before)
    return measure, calls


@pytest.mark.parametrize("at", range(1, len(VERSIONS)))
def test_the_first_bad_version_is_found_with_a_logarithmic_number_of_measurements(at):
    measure, calls = stepped(at)
    out = bisect(VERSIONS, measure, 0.02)
    assert out.verdict == "found" and out.first_bad == at and out.last_good == at - 1
    assert len(calls) == len(set(calls)) <= 2 + math.ceil(math.log2(len(VERSIONS) - 1))


def test_an_improvement_is_bisected_as_well_as_a_regression():
    measure, _ = stepped(6, before=100.0, after=90.0)
    out = bisect(VERSIONS, measure, 0.05)
    assert out.first_bad == 6 and out.direction == -1


def test_a_move_in_the_other_direction_does_not_count_as_bad():
    values = [100, 100, 100, 80, 80, 80, 80, 110, 110, 110]  # down at 17.4, then up past the start at 17.8
    out = bisect(VERSIONS, lambda i: values[i], 0.05)
    assert out.verdict == "found" and VERSIONS[out.first_bad] == "17.8"


def test_no_move_past_the_threshold_between_the_ends_is_an_answer():
    out = bisect(VERSIONS, lambda i: 41000.0 + i, 0.02)
    assert out.verdict == "no-move" and out.first_bad is None and len(out.probes) == 2


def test_a_version_that_cannot_be_measured_is_skipped_and_stays_in_the_answer_when_it_matters():
    measure, calls = stepped(5, failing={4})
    out = bisect(VERSIONS, measure, 0.02)
    assert out.verdict == "found" and out.first_bad == 5
    assert out.skipped_between == [4] and out.last_good == 3  # 17.5 could be the first bad one too
    measure, _ = stepped(7, failing={4})
    out = bisect(VERSIONS, measure, 0.02)
    assert out.first_bad == 7 and out.skipped_between == []


def test_failed_ends_give_no_answer():
    assert bisect(VERSIONS, stepped(3, failing={0})[0], 0.02).verdict == "good-failed"
    assert bisect(VERSIONS, stepped(3, failing={9})[0], 0.02).verdict == "bad-failed"


CATALOGUE = {"npm": ["16.14", *VERSIONS, "18.0", "18.4"], "maven": ["17.10", "17.11"], "debian": ["17.12"]}


@pytest.fixture
def published(monkeypatch):
    """A catalogue of three sources: npm up to 17.10, Maven's 17.10 and 17.11, Debian's 17.12."""
    def builds(self, source):
        return [versions.Build("postgres", v, source, v, f"{source} {v}", "trixie" if source == "debian" else None)
                for v in CATALOGUE.get(source, [])]
    monkeypatch.setattr(versions.Catalogue, "builds", builds)


def test_candidates_are_the_fetchable_versions_between_the_ends_in_version_order(published):
    labels, source, notes = bisect_app.candidates("postgres", "17.2", "17.10")
    assert labels == VERSIONS[2:] and source is None and notes == []


def test_candidates_take_each_version_from_its_first_source_and_note_where_the_source_changes(published):
    labels, _source, notes = bisect_app.candidates("postgres", "17.9", "17.12")
    assert labels == ["17.9", "17.10", "17.11", "17.12"]
    assert len(notes) == 2 and notes[0].startswith("17.10 (npm) -> 17.11 (maven): another source's build")
    assert "no one source has both ends" in notes[0]
    _labels, _source, notes = bisect_app.candidates("postgres", "17.10", "17.11")
    assert notes == ["17.10 (npm) -> 17.11 (maven): another source's build, so a move there may be the build, not "
                     "the code; --good maven:17.10 --bad maven:17.11 keeps one source"]


def test_candidates_of_ends_naming_a_source_come_from_that_source_only(published):
    assert bisect_app.candidates("postgres", "maven:17.10", "maven:17.11") == (["17.10", "17.11"], "maven", [])
    with pytest.raises(UserError, match="name different sources"):
        bisect_app.candidates("postgres", "maven:17.10", "17.11")


def test_an_end_that_cannot_be_fetched_or_ends_in_the_wrong_order_are_refused(published, capsys):
    assert cli_main.main(["bisect", "--good", "17.0", "--bad", "17.13", "--test", "point-query"]) == 2
    err = capsys.readouterr().err
    assert "17.13 is not fetchable" in err and "17.12" in err and "18.4" not in err
    assert cli_main.main(["bisect", "--good", "17.4", "--bad", "17.2", "--test", "point-query"]) == 2
    assert "swap them" in capsys.readouterr().err
    assert cli_main.main(["bisect", "--good", "17.0", "--bad", "17.4", "--test", "no-such-test"]) != 0
    assert "unknown microbenchmark" in capsys.readouterr().err


@pytest.mark.parametrize("metric", ["instructions", "qps"])
def test_each_measurement_is_a_valid_one_target_campaign_named_for_its_version(metric):
    from pathlib import Path

    from dbdrift.workloads.registry import parse_campaign
    from dbdrift.workloads.sysbench.plan import params
    args = cli_main.build_parser().parse_args(["bisect", "--good", "17.0", "--bad", "17.4", "--test", "point-query",
                                               "--metric", metric, "--set", "settle_s=1"])
    data = bisect_app.campaign_data(bisect_cli.request_of(args), "17.2")
    spec = parse_campaign(data, "dbdrift bisect", Path("."), data["name"])
    assert spec.name == "bisect-postgres-point-query-17.2" and [t.version for t in spec.targets] == ["17.2"]
    assert spec.settle_s == 1 and [t.name for t in spec.tests] == ["point-query"]
    assert (spec.repeats, params(spec).read_s) == ((3, 30.0) if metric == "qps" else (1, params(spec).read_s))


def test_a_test_whose_name_has_an_equals_sign_gives_a_valid_campaign_name():
    from pathlib import Path

    from dbdrift.workloads.registry import parse_campaign
    args = cli_main.build_parser().parse_args(["bisect", "--good", "17.0", "--bad", "17.4", "--test",
                                               "read-only_range=100"])
    data = bisect_app.campaign_data(bisect_cli.request_of(args), "17.2")
    spec = parse_campaign(data, "dbdrift bisect", Path("."), data["name"])
    assert spec.name == "bisect-postgres-read-only_range_100-17.2"
    assert [t.name for t in spec.tests] == ["read-only_range=100"]


def test_the_text_of_a_found_bisect_names_the_first_bad_version_and_its_step_from_the_last_good():
    from dbdrift.report import bisect as render_bisect

    search = bisect(VERSIONS, stepped(4)[0], 0.02)
    outcome = bisect_app.BisectOutcome(bisect_app.BisectRequest("postgres", "17.0", "17.10", "point-query"), search)
    text = render_bisect.render_text(outcome)
    assert "first bad version: 17.5 (+2.44% from 17.0; 17.4 -> 17.5: +2.44%)" in text
    assert render_bisect.as_dict(outcome)["first_bad"] == "17.5" and not outcome.failed


def test_a_threshold_of_half_a_percent_is_written_as_given_in_the_text():
    from dbdrift.report import bisect as render_bisect

    args = cli_main.build_parser().parse_args(["bisect", "--good", "17.0", "--bad", "17.10", "--test", "point-query",
                                               "--threshold", "0.5"])
    request = bisect_cli.request_of(args)
    assert request.threshold == 0.005
    flat = bisect_app.BisectOutcome(request, bisect(VERSIONS, lambda i: 41000.0 + i, request.threshold))
    text = render_bisect.render_text(flat)
    assert "threshold 0.5%," in text and "no version moved past 0.5%: 17.10 is +0.02% from 17.0" in text
