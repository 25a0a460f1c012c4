"""Every bench/ script still imports against today's code: the scripts run rarely, by hand, and
a renamed function used to break them silently until the day a figure was wanted."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for p in (ROOT / "bench").glob("*.py") if p.name != "_common.py")


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_the_bench_script_imports(script, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    name = f"bench_{script.stem}"
    spec = importlib.util.spec_from_file_location(name, script)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)  # runs its imports; main() runs only as __main__
    entry = getattr(module, "main", None) or getattr(module, "parse_args", None)
    assert callable(entry), f"{script.name} has neither main() nor parse_args()"
