"""One Judging record (analysis/noise.py) holds what every verdict judges by: the minimum effect,
the noisy width and the intervals' confidence level, each default written once and passed down."""
from __future__ import annotations

import ast
import math
from pathlib import Path
from statistics import NormalDist

import pytest

from dbdrift.analysis.noise import JUDGING, Z975, Estimate, Judging, Method, Verdict, t975, verdict

PKG = Path(__file__).resolve().parents[2] / "src" / "dbdrift"
JUDGED = {"min_effect", "noisy", "noisy_width", "noisy_half_width", "min_magnitude"}  # names a judging value goes by
FLAGS = {"--min-effect", "--noisy"}


def _is_fraction(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is float


def _written_defaults(path: Path) -> list[str]:
    """`file:line name` of each number written in `path` as the default of a judging value: a
    parameter's or a field's default, a constant named after one, or an option's default."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        pairs: list[tuple[str, ast.AST | None]] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            positional = args.posonlyargs + args.args
            pairs += [(a.arg, d) for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults)]
            pairs += [(a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
        elif isinstance(node, ast.ClassDef) and node.name != "Judging":
            pairs += [(s.target.id, s.value) for s in node.body
                      if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
        elif isinstance(node, ast.Assign):
            pairs += [(t.id, node.value) for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.Call) and any(isinstance(a, ast.Constant) and a.value in FLAGS for a in node.args):
            pairs += [("option default", a) for a in node.args]
        found += [f"{path.relative_to(PKG)}:{getattr(value, 'lineno', 0)} {name}" for name, value in pairs
                  if _is_fraction(value) and (name == "option default" or name.lower() in JUDGED
                                            or "min_effect" in name.lower())]
    return found


def test_no_module_but_the_judging_record_writes_a_default_minimum_effect_or_noisy_width():
    assert [hit for path in sorted(PKG.rglob("*.py")) for hit in _written_defaults(path)] == []


def test_a_verdict_judges_by_the_minimum_effect_it_is_given():
    est = Estimate(0.97, 0.96, 0.98, 8, Method.T_OVER_RUNS)
    assert verdict(est) is Verdict.REGRESSION
    assert verdict(est, Judging(min_effect=0.05)) is Verdict.NO_CHANGE


def test_a_verdict_judges_by_the_noisy_width_it_is_given():
    est = Estimate(1.0, 0.93, 1.07, 8, Method.T_OVER_RUNS)
    assert verdict(est) is Verdict.TOO_NOISY
    assert verdict(est, Judging(noisy_width=0.1)) is Verdict.NO_CHANGE


def test_a_judging_at_a_level_no_interval_is_formed_at_is_refused():
    with pytest.raises(ValueError, match="95% confidence only"):
        Judging(level=0.9)


def test_the_intervals_are_formed_at_the_judging_s_level():
    p = (1 + JUDGING.level) / 2  # a two-sided interval's upper quantile
    assert t975(1) == pytest.approx(math.tan(math.pi * (p - 0.5)), abs=5e-4)  # Student t, 1 df: Cauchy
    assert t975(2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), abs=5e-4)
    assert Z975 == pytest.approx(NormalDist().inv_cdf(p), abs=1e-6)
