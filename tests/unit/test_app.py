"""Use cases in app/ called without a command line, their outcomes rendered by report/."""
from dbdrift.app import catalog, cleanup, compare
from dbdrift.report import catalog as catalog_report
from dbdrift.report.campaign_file import to_toml


def test_a_catalog_listing_of_one_test_renders_under_its_group_title():
    listing = catalog.listing(["point-query"], "postgres")
    assert [e["name"] for e in listing.entries] == ["point-query"]
    text = catalog_report.render_text(listing)
    assert text.startswith(f"\n== {listing.group_titles[listing.entries[0]['group']]}\n")
    assert "point-query" in text and "SELECT" in text.upper()


def test_cleanup_finds_nothing_to_clean_in_a_fresh_work_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DBDRIFT_WORK_DIR", str(tmp_path / "work"))
    found = cleanup.find()
    assert found.orphans == [] and found.present == 0 and found.work_dir == tmp_path / "work"


def test_a_comparison_is_the_campaign_a_file_would_hold():
    data = compare.campaign_data(compare.CompareRequest(("17.10", "mysql:8.0.31"), threads="1,4",
                                                        sets=("rows=1000",)))
    assert data["rows"] == 1000 and data["threads"] == [1, 4]
    assert [(t["name"], t["engine"]) for t in data["targets"]] == [("pg17.10", "postgres"), ("my8.0.31", "mysql")]
    assert compare.campaign(data).name == "compare-pg17.10-vs-my8.0.31"
    assert 'version = "8.0.31"' in to_toml(data)


def test_cleanup_says_how_many_run_directories_it_left_alone():
    from pathlib import Path

    from dbdrift.report import cleanup as cleanup_report

    one = cleanup.Leftovers(Path("/w"), [], 1)
    assert cleanup_report.nothing_to_clean(one) == ("nothing to clean up in /w: 1 run directory, none left by a "
                                                    "dbdrift that is gone\n")
    assert cleanup_report.nothing_to_clean(cleanup.Leftovers(Path("/w"), [], 0)).endswith(": no run directories\n")
