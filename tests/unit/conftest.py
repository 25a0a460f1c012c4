"""Fixtures the unit tests share: the lab of fake servers, an empty store, and the golden
reports' store (`golden`). A test module that defines its own `lab` or `store` uses its own."""
from __future__ import annotations

import pytest

from dbdrift.store.store import Store
from tests.fakes import Lab


@pytest.fixture
def lab(tmp_path, monkeypatch) -> Lab:
    return Lab(tmp_path).install(monkeypatch)


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "results.db", wait_s=1)
    yield s
    s.close()


@pytest.fixture
def golden(tmp_path):
    """The store the golden reports are made from (tests/unit/test_reports.py's make_store)."""
    from tests.unit.test_reports import make_store
    store = make_store(tmp_path / "g.db")
    yield store
    store.close()
