"""docs/contributing.md stays true of the code: every file or folder it names exists, and its
layer table lists every package of src/dbdrift/ in an order the import rule
(tests/unit/test_architecture.py) allows: each layer may import only the base modules and the
layers above it."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

from tests.unit.test_architecture import ALLOWED, BASE

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "contributing.md"
PKG = ROOT / "src" / "dbdrift"
CRATE = ROOT / "crates" / "dbdrift-driver"
# where a short name in the text is looked up: the root, the package and each of its layers, the
# crate and its src/, the test folders
BASES = [ROOT, PKG, *sorted(p for p in PKG.iterdir() if p.is_dir()), CRATE, CRATE / "src",
         *sorted(p for p in (ROOT / "tests").iterdir() if p.is_dir())]
BASE_MODULES = BASE | {"env"}


def prose() -> str:
    """The text outside fenced code blocks (an example there is not a claim about the tree)."""
    out, fence = [], False
    for line in DOC.read_text().splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence:
            out.append(line)
    return "\n".join(out)


def cited_paths() -> list[str]:
    tokens = re.findall(r"`([^`\s]+)`", prose())
    return sorted({t for t in tokens if not t.startswith(("/", "-", "$")) and "*" not in t
                   and ("/" in t or re.search(r"\.(py|rs|md|toml)$", t))})


def test_the_guide_names_paths():
    assert len(cited_paths()) > 40


def test_every_path_the_contributor_guide_names_exists():
    missing = [p for p in cited_paths() if not any((base / p).exists() for base in BASES)]
    assert not missing, f"docs/contributing.md names files that do not exist: {missing}"


def layer_rows() -> list[str]:
    """The layers of the guide's first table, in order (the base row left out)."""
    table = prose().split("| layer | role |", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^\| `src/dbdrift/(\w+)/` \|", table, re.M)


def test_the_layer_table_lists_every_package():
    packages = set(ALLOWED) - BASE_MODULES - {"__main__", "__init__"}
    assert sorted(layer_rows()) == sorted(packages)


def test_each_layer_imports_only_the_base_and_layers_listed_above_it():
    rows = layer_rows()
    for index, layer in enumerate(rows):
        later = (ALLOWED[layer] - BASE_MODULES) - set(rows[:index])
        assert not later, f"{layer} may import {sorted(later)}, listed after it in docs/contributing.md"


def test_the_readme_lists_the_layers_in_the_guides_order():
    text = " ".join((ROOT / "README.md").read_text().split())
    listed = text.split("one package per step of a run,", 1)[1].split(", each importing", 1)[0]
    assert [name.strip() for name in listed.split(",")] == layer_rows()


def names_rows() -> list[tuple[str, str]]:
    """(word, symbol) for each row of the guide's "Names" table."""
    table = prose().split("| word | means | in code |", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^\| (\w+) \|.*\| `([\w.]+)` \|$", table, re.M)


def resolve(symbol: str) -> object:
    """Import the longest module prefix of a dotted name and look the rest up as attributes."""
    parts = symbol.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ModuleNotFoundError(symbol)


def test_each_word_of_the_names_table_points_at_a_symbol_that_exists():
    rows = names_rows()
    assert {"unit", "step", "phase", "cell"} <= {word for word, _ in rows}
    missing = []
    for word, symbol in rows:
        try:
            resolve(symbol)
        except (ImportError, AttributeError) as e:
            missing.append(f"{word}: {symbol} ({e})")
    assert not missing, f"docs/contributing.md's Names table points at symbols that do not exist: {missing}"


def test_unit_has_one_meaning_no_module_is_named_units_outside_the_cluster():
    modules = sorted(str(p.relative_to(PKG)) for p in PKG.rglob("units.py"))
    assert modules == ["cluster/units.py"]
