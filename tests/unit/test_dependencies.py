"""A plain `pip install .` runs every workload (issue 65: vector search is a headline workload,
and `dbdrift demo --workload vector` failed without the `vector` extra): every third-party module
dbdrift imports is one of its dependencies in pyproject.toml, but those of the optional extras,
which it imports only when their feature is asked for and whose absence it says with a hint."""
from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

pytestmark = pytest.mark.fault("docs")
ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "dbdrift"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# modules only an optional feature imports, by the extra (or the package a hint names) that brings it
OPTIONAL = {"otava": "history", "distributed": "cluster", "dask": "cluster",
            "zstandard": "zstandard (.debs compressed with zstd: a hint names it)"}


def distribution_name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def third_party_modules() -> dict[str, str]:
    """Top-level module -> the first file importing it, for every import of a module that is
    neither the standard library's nor dbdrift's."""
    found: dict[str, str] = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else [])
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("dbdrift", "__future__"):
                    found.setdefault(top, str(path.relative_to(SRC)))
    return found


def test_numpy_is_a_dependency_so_vector_search_needs_no_extra():
    assert "numpy" in {distribution_name(r) for r in PROJECT["dependencies"]}
    assert "vector" not in PROJECT["optional-dependencies"]


def test_every_module_dbdrift_imports_comes_with_a_plain_install_or_is_an_optional_feature():
    base = {distribution_name(r) for r in PROJECT["dependencies"]}
    providers = metadata.packages_distributions()
    missing = {module: where for module, where in third_party_modules().items() if module not in OPTIONAL
               and not {d.lower().replace("_", "-") for d in providers.get(module, [module])} & base}
    assert missing == {}
    extras = PROJECT["optional-dependencies"]
    assert {e for e in OPTIONAL.values() if " " not in e} <= set(extras)
