"""docs/campaign.md, the campaign-file reference: it documents every key the parser accepts, in
the section of the key's table, and its example campaigns parse.

The accepted keys are not copied here: they are the `known` sets the parser hands to
fields.check_keys, the one place that rejects unknown keys, recorded while campaigns that reach
every checked table are parsed. A table read through fields.Table.subtable is credited to the
function that asks for it (the workload's parser), as if it called check_keys itself. A check_keys call the test campaigns do not reach fails the test,
so a new table cannot slip past it.
"""
from __future__ import annotations

import ast
import re
import socket
import sys
from pathlib import Path

import pytest

import dbdrift
from dbdrift.plan import fields
from dbdrift.workloads import registry

DOC = Path(__file__).resolve().parents[2] / "docs" / "campaign.md"
PACKAGE = Path(dbdrift.__file__).resolve().parent

# Campaigns that between them make the parser check the keys of every table it knows.
_TARGETS = [{"name": "a", "version": "17.10", "base": True}, {"name": "b", "version": "18.4"}]
_REACH_ALL_TABLES = [
    {"targets": _TARGETS, "cpus": {"driver": "0", "server": "1"}},
    {"targets": _TARGETS, "workload": "insert-benchmark", "insert_benchmark": {}},
    {"targets": _TARGETS, "workload": "tpcc", "tpcc": {}},
    {"targets": _TARGETS, "workload": "vector", "vector": {}},
    {"targets": _TARGETS, "workload": "htap", "htap": {}},
    {"targets": _TARGETS, "cluster": {}},
]
# The function that checks a table's keys -> text in the "## " heading of the doc section for it.
_SECTION_OF = {
    "parse_campaign": "Top-level keys",
    "_parse_target": "[[targets]]",
    "parse_insert_benchmark": "[insert_benchmark]",
    "parse_tpcc": "[tpcc]",
    "parse_vector": "[vector]",
    "parse_htap": "[htap]",
    "cpu_placement": "cpus",
    "parse_cluster": "[cluster]",
}
_WRAPPERS = ("check_keys", "subtable")  # calls that check a table's keys: check_keys and what calls it for a caller
_KEY_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|", re.MULTILINE)
_TOML_BLOCK = re.compile(r"^```toml[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _check_keys_call_sites() -> set[tuple[str, str]]:
    """(file, function) of every call to check_keys (or to subtable, which calls it) in the
    package's source, subtable's own call left out."""
    sites = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or func.name in _WRAPPERS:
                continue
            for node in ast.walk(func):
                if isinstance(node, ast.Call) and (
                        (isinstance(node.func, ast.Name) and node.func.id in _WRAPPERS)
                        or (isinstance(node.func, ast.Attribute) and node.func.attr in _WRAPPERS)):
                    sites.add((str(path), func.name))
    return sites


def _accepted_keys(monkeypatch) -> dict[tuple[str, str], set[str]]:
    """(file, function) of each check_keys call -> the keys it accepts, as the parser passes them."""
    seen: dict[tuple[str, str], set[str]] = {}
    real = fields.check_keys

    def spy(data, known, where, retired=None):
        depth = 1
        while sys._getframe(depth).f_code.co_name in _WRAPPERS:
            depth += 1
        caller = sys._getframe(depth).f_code
        seen.setdefault((str(Path(caller.co_filename).resolve()), caller.co_name), set()).update(known)
        return real(data, known, where, retired)

    monkeypatch.setattr(fields, "check_keys", spy)
    for data in _REACH_ALL_TABLES:
        registry.parse_campaign(data, "c.toml", Path("."), "c")
    return seen


def _doc_sections() -> dict[str, str]:
    """'## ' heading -> the text up to the next one."""
    parts = re.split(r"^## +(.+)$", DOC.read_text(), flags=re.MULTILINE)
    return {heading.strip(): body for heading, body in zip(parts[1::2], parts[2::2])}


def _section(sections: dict[str, str], label: str) -> tuple[str, str]:
    matches = [h for h in sections if label in h]
    assert len(matches) == 1, (f"docs/campaign.md needs exactly one '## ' section whose heading contains "
                               f"{label!r}, found {matches or 'none'}")
    return matches[0], sections[matches[0]]


def test_every_table_the_parser_checks_is_reached(monkeypatch):
    reached = set(_accepted_keys(monkeypatch))
    missed = _check_keys_call_sites() - reached
    assert not missed, (f"check_keys is called in {sorted(missed)} but no campaign in _REACH_ALL_TABLES reaches "
                        "it: add one that does, and its table to _SECTION_OF, so docs/campaign.md is checked "
                        "for that table's keys")


def test_doc_documents_every_accepted_key(monkeypatch):
    sections = _doc_sections()
    missing, stale = [], []
    for (path, function), known in sorted(_accepted_keys(monkeypatch).items()):
        assert function in _SECTION_OF, (f"{function} ({path}) checks the keys of a table this test does not "
                                         "know: add it to _SECTION_OF with the heading of its docs/campaign.md section")
        heading, body = _section(sections, _SECTION_OF[function])
        documented = set(_KEY_ROW.findall(body))
        missing += [f"{key} (section '{heading}')" for key in sorted(known - documented)]
        stale += [f"{key} (section '{heading}')" for key in sorted(documented - known)]
    assert not missing, ("campaign keys the parser accepts but docs/campaign.md does not document: "
                         + ", ".join(missing) + ". Document them in docs/campaign.md: a row starting with "
                         "| `key` | (key | type | default | meaning) in the section named.")
    assert not stale, ("docs/campaign.md documents keys the parser does not accept: " + ", ".join(stale)
                       + ". Remove or rename those rows in docs/campaign.md.")


def _examples() -> list[str]:
    return _TOML_BLOCK.findall(DOC.read_text())


def test_doc_has_examples():
    assert _examples(), "docs/campaign.md should hold at least one complete ```toml campaign"


@pytest.mark.parametrize("index", range(len(_examples())))
def test_doc_example_parses(index, tmp_path, monkeypatch):
    """load_campaign only reads and validates (versions are checked by `run`, not fetched here);
    any network use would be a bug, so sockets refuse to connect."""
    def no_network(*args, **kwargs):
        raise AssertionError("parsing a campaign must not use the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    path = tmp_path / f"example{index + 1}.toml"
    path.write_text(_examples()[index])
    spec = registry.load_campaign(path)
    assert spec.targets
