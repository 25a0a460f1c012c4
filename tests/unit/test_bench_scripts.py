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


def _common(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import _common
    return _common


def test_abba_rounds_alternate_which_tool_goes_first_and_show_each_run_at_once(monkeypatch):
    c = _common(monkeypatch)
    shown = []
    runs = c.abba_rounds(3, "a", "b", "x", lambda tool, round_no: (round_no, tool), shown.append)
    assert runs == [(1, "a"), (1, "b"), (2, "b"), (2, "a"), (3, "a"), (3, "b")]
    assert shown == runs


def test_the_steal_share_is_a_percentage_of_all_ticks_and_zero_without_ticks(monkeypatch):
    from dataclasses import dataclass
    c = _common(monkeypatch)

    @dataclass
    class Run(c.StealShare):
        steal_ticks: int
        all_ticks: int

    assert Run(5, 200).steal_pct == 2.5
    assert Run(0, 0).steal_pct == 0.0
