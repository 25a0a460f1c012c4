"""Fixtures the runner's unit tests share: the lab of fake servers and an empty store. A test
module that defines its own `lab` or `store` uses its own."""
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
