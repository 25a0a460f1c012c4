"""Stores made by the release before this one (schema 21, tests/data/stores/schema21-*.db.gz: the
Insert Benchmark and TPROC-C golden campaigns as tests/cli/test_workload_goldens.py builds them,
written by that release's code) read back, through whatever migrations came since, as the same
reports the goldens hold."""
import gzip
import shutil
import sqlite3
from pathlib import Path

import pytest

from dbdrift.cli.main import main
from dbdrift.store.store import Store
from tests.cli.test_workload_goldens import FORMATS, GOLDEN, as_golden

STORES = Path(__file__).resolve().parents[1] / "data" / "stores"
CAMPAIGNS = {"ibench": "ib-golden", "tpcc": "tp-golden", "tpcc-sp": "sp-golden"}  # golden stem -> its campaign


def unpacked(stem: str, where: Path) -> Path:
    path = where / f"{stem}.db"
    with gzip.open(STORES / f"schema21-{stem}.db.gz") as packed, path.open("wb") as out:
        shutil.copyfileobj(packed, out)
    path.chmod(0o600)
    return path


def report(store: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["report", "--store", str(store), "--format", fmt]) == 0
    return as_golden(capsys.readouterr().out)


@pytest.mark.parametrize("stem", CAMPAIGNS)
def test_each_release_store_is_a_schema_21_store_of_its_golden_campaign(tmp_path, stem):
    db = sqlite3.connect(unpacked(stem, tmp_path))
    assert (db.execute("PRAGMA user_version").fetchone()[0], db.execute("SELECT name FROM campaigns").fetchall()) \
        == (21, [(CAMPAIGNS[stem],)])


@pytest.mark.parametrize("stem", CAMPAIGNS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_campaign_stored_by_the_release_before_reports_as_its_golden_file(tmp_path, capsys, stem, fmt):
    assert report(unpacked(stem, tmp_path), fmt, capsys) == (GOLDEN / f"{stem}.{FORMATS[fmt]}").read_text()


@pytest.mark.parametrize("stem", CAMPAIGNS)
def test_a_release_store_migrated_in_place_still_reports_as_its_golden_file(tmp_path, capsys, stem):
    store = unpacked(stem, tmp_path)
    Store(store).close()  # a writing open migrates the file itself, not a copy in memory
    assert report(store, "json", capsys) == (GOLDEN / f"{stem}.json").read_text()
