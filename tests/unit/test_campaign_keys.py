"""The campaign keys are declared once, the core's tables in plan/keys.py and each workload's
keys in its slice's keys.py (its WorkloadPlan carries them: its own table's, or sysbench's
top-level ones): docs/campaign.md's key tables are their rows, word for word, and the parser and
to_dict take every key from them.

Run this file (`PYTHONPATH=src python tests/unit/test_campaign_keys.py`) to rewrite the rows of
docs/campaign.md from the table: a changed key's row in place, a new key's after the last row of
its section's first table (move it within the section if it reads better elsewhere; the order is
not checked), a removed key's row dropped.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import asdict
from pathlib import Path

import pytest

from dbdrift.errors import UserError
from dbdrift.plan import campaign, fields, keys
from dbdrift.workloads import registry
from dbdrift.workloads.sysbench.catalog import SysbenchParams

DOC = Path(__file__).resolve().parents[2] / "docs" / "campaign.md"
# every table's rows: the core's (plan/keys.py) with sysbench's top-level ones among them, then each
# workload's own table (its slice's keys.py)
TOP = registry.TOP_KEYS
ROWS: dict[str, tuple[keys.Key, ...]] = {**{t: keys.of(t) for t in keys.TABLES}, "top": TOP,
                                          **{p.table: p.keys for p in registry.PLANS.values() if p.table}}
# a table -> its "## " section of docs/campaign.md
SECTION = {"top": "Top-level keys", "targets": "`[[targets]]`", "cpus": "`cpus` table",
           "insert_benchmark": "`[insert_benchmark]`", "tpcc": "`[tpcc]`", "vector": "`[vector]`", "htap": "`[htap]`",
           "cluster": "`[cluster]`"}
_ROW = re.compile(r"^\| `([^`]+)` \|.*\|$", re.MULTILINE)
_LINE = re.compile(r"^\| `([^`]+)` \|.*\|$")


def _rows(table: str) -> dict[str, str]:
    parts = re.split(r"^## +(.+)$", DOC.read_text(), flags=re.MULTILINE)
    body = dict(zip((h.strip() for h in parts[1::2]), parts[2::2]))[SECTION[table]]
    return {m.group(1): m.group(0) for m in _ROW.finditer(body)}


def _names(table: str) -> set[str]:
    return {k.name for k in ROWS[table]}


def test_every_table_of_keys_has_a_section_of_the_doc():
    assert set(ROWS) == set(SECTION)


def test_every_workload_table_is_declared_by_its_slice_and_named_at_the_top_level():
    for plan in registry.PLANS.values():
        assert plan.keys, plan.name
        assert {k.table for k in plan.keys} == {plan.table or "top"}, plan.name
        assert plan.table is None or keys.key("top", plan.table).kind == keys.TABLE
    assert not set(keys.TABLES) & {p.table for p in registry.PLANS.values()}  # the core declares none of them


@pytest.mark.parametrize("table", list(SECTION))
def test_the_docs_key_table_is_the_key_tables_rows_word_for_word(table):
    documented = _rows(table)
    assert set(documented) == _names(table), "run this file to rewrite docs/campaign.md's rows"
    for key in ROWS[table]:
        assert documented[key.name] == key.doc_row(), (
            f"docs/campaign.md's row of {key.name} ({table}) differs from its Key: run this file")


def test_a_campaign_that_leaves_every_key_out_gets_each_default_of_the_table():
    spec = registry.parse_campaign({"targets": [{"name": "a", "version": "17.10"}]}, "c.toml", Path("."), "c")
    for key in TOP:
        if key.default not in (None, keys.REQUIRED) and hasattr(spec, key.field_name):
            assert getattr(spec, key.field_name) == key.default, key.name


def _other_value(key: keys.Key) -> object:
    """A valid value of `key` that is not its default."""
    if key.kind == keys.FLAG:
        return not key.default
    if key.kind == keys.CHOICE:
        return next(c for c in key.choices if c != key.default)
    if key.kind == keys.THREADS:
        return [2, 8]
    base = key.default if isinstance(key.default, (int, float)) else 1
    return base + 1 if key.kind == keys.INTEGER else float(base) + 1.5


def _as_stored(record: object) -> dict[str, object]:
    """A Params record's values as the stored spec holds them (a tuple as a list)."""
    return {name: list(value) if isinstance(value, tuple) else value for name, value in asdict(record).items()}


APART = {"dataset"}  # glove-50 takes no dim: tests/unit/test_vector_plan.py reads it


@pytest.mark.parametrize("workload, table", [("insert-benchmark", "insert_benchmark"), ("tpcc", "tpcc"),
                                             ("vector", "vector")])
def test_every_key_a_workload_table_sets_lands_in_its_params(workload, table):
    given = {k.name: _other_value(k) for k in ROWS[table] if k.kind in fields.SCALAR_KINDS and k.name not in APART}
    spec = registry.parse_campaign({"targets": [{"name": "a", "version": "17.10"}], "workload": workload,
                                    table: given}, "c.toml", Path("."), "c")
    field = {k.name: k.field_name for k in ROWS[table]}
    assert {name: getattr(spec.params, field[name]) for name in given} == given


def test_every_key_only_sysbenchs_steps_read_lands_in_its_params_and_is_stored_at_the_top_level():
    own = {f.name for f in dataclasses.fields(SysbenchParams)}
    given = {k.name: _other_value(k) for k in registry.PLANS["sysbench"].keys if k.name in own}
    assert set(given) == own  # each field of the record is a row of the slice's keys.py
    spec = registry.parse_campaign({"targets": [{"name": "a", "version": "17.10"}], **given}, "c.toml", Path("."), "c")
    assert _as_stored(spec.params) == given
    assert {name: spec.to_dict()[name] for name in given} == given


@pytest.mark.parametrize("workload", ["insert-benchmark", "tpcc", "vector", "htap"])
def test_a_campaign_of_another_workload_stores_sysbenchs_params_keys_at_their_defaults(workload):
    spec = registry.parse_campaign({"targets": [{"name": "a", "version": "17.10"}], "workload": workload},
                                   "c.toml", Path("."), "c")
    stored = spec.to_dict()
    assert {f.name: stored[f.name] for f in dataclasses.fields(SysbenchParams)} == _as_stored(SysbenchParams())


def test_to_dict_stores_every_top_level_value_key():
    stored = campaign.CampaignSpec(name="c", targets=(), tests=(), workload_plan=registry.PLANS["sysbench"],
                                   params=SysbenchParams()).to_dict()
    for key in TOP:
        if key.kind not in (keys.TABLE, keys.NAME) and key.name != "variants":
            assert key.name in stored, key.name


# the order of the keys in the spec JSON every store has held: sysbench's rows among the core's
STORED_ORDER = ["name", "source", "calibration", "timed", "workload", "allow_large", "tests", "tables", "rows",
                "threads", "count_instructions", "simulate_cache", "flamegraphs", "read_s", "write_s", "insert_s",
                "warmup_s", "scan_warm_s", "settle_s", "warm_runs", "interval_s", "repeats", "restart", "order",
                "turn_s", "round_order", "detect", "aa_twin", "budget", "sequential", "cpus", "seed", "prepared"]


@pytest.mark.parametrize("workload", list(registry.PLANS))
def test_to_dict_stores_sysbenchs_keys_among_the_cores_in_the_order_stores_always_had(workload):
    spec = registry.parse_campaign({"targets": [{"name": "a", "version": "17.10"}], "workload": workload},
                                   "c.toml", Path("."), "c")
    assert [k for k in spec.to_dict() if k not in ("targets", spec.workload_plan.table)] == STORED_ORDER


def test_a_sysbench_row_that_follows_no_top_level_row_is_a_mistake_said_at_once():
    row = keys.Key("top", "tabels", keys.INTEGER, "integer", default=1, workloads=("sysbench",), after="no_such_key")
    with pytest.raises(TypeError, match="tabels follows no_such_key"):
        keys.top((row,))


def test_a_retired_name_is_refused_with_the_current_one():
    with pytest.raises(Exception) as err:
        fields.check_keys({"slice_s": 0.02}, {k.name for k in TOP}, "c.toml", retired=fields.retired_hints(TOP))
    turn_s = next(k for k in TOP if k.name == "turn_s")
    assert "turn_s" in err.value.hint and keys.toml(turn_s.default) in err.value.hint


def test_a_retired_name_of_a_workloads_own_table_is_refused_with_the_current_one():
    rows = (keys.Key("t", "duration_s", keys.DURATION, "duration", default=60.0, retired={"window_s": None}),)
    with pytest.raises(UserError) as err:
        fields.Table({"t": {"window_s": 30}}, "c.toml").subtable("t", rows)
    assert err.value.message == "c.toml: [t]: window_s is no longer used"
    assert err.value.hint == "it is now called duration_s: write duration_s = <seconds> (default 60)"


def test_a_retired_value_is_refused_with_the_current_one():
    with pytest.raises(Exception) as err:
        fields.Table({"order": "interleaved"}, "c.toml", rows=TOP).choice("order")
    assert 'order = "turns"' in err.value.message


def test_the_keys_other_workloads_refuse_are_the_sysbench_only_ones():
    assert set(keys.only_for("tpcc", TOP)) == set(keys.only_for("insert-benchmark", TOP))
    assert set(keys.only_for("tpcc", TOP)) == {k.name for k in registry.PLANS["sysbench"].keys}
    assert set(keys.only_for("vector", TOP)) == set(keys.only_for("tpcc", TOP)) | {"flamegraphs"}  # the first two record
    assert not set(keys.only_for("sysbench", TOP))
    for name in ("insert-benchmark", "tpcc", "vector", "htap"):
        for key in keys.only_for(name, TOP):
            with pytest.raises(UserError, match=f"{key} applies to the sysbench"):
                registry.PLANS[name].refuse(fields.Table({key: 1}, "c.toml", rows=TOP))
    with pytest.raises(UserError, match="flamegraphs applies to the sysbench, insert-benchmark and tpcc workloads"):
        registry.PLANS["vector"].refuse(fields.Table({"flamegraphs": True}, "c.toml", rows=TOP))


@pytest.mark.parametrize("workload", ["sysbench", "insert-benchmark", "tpcc"])
def test_flamegraphs_is_read_for_every_workload_that_records_stacks(tmp_path, workload):
    path = tmp_path / "c.toml"
    path.write_text(f'name = "c"\nworkload = "{workload}"\nflamegraphs = true\n[[targets]]\nname = "a"\n'
                    'version = "17.10"\n')
    assert registry.load_campaign(path).flamegraphs
    path.write_text(path.read_text().replace("flamegraphs = true\n", ""))
    assert not registry.load_campaign(path).flamegraphs


def rewrite(text: str) -> str:
    """docs/campaign.md with its key rows made the table's."""
    lines: list[str | None] = list(text.split("\n"))
    section, seen, first_row = None, {}, {}
    for i, line in enumerate(lines):
        if line.startswith("## "):
            section = next((t for t, h in SECTION.items() if line[3:].strip() == h), None)
        elif section and (match := _LINE.match(line)):
            first_row.setdefault(section, i)
            if match.group(1) in _names(section):
                lines[i] = next(k for k in ROWS[section] if k.name == match.group(1)).doc_row()
                seen.setdefault(section, set()).add(match.group(1))
            else:
                lines[i] = None
    for table in sorted(first_row, key=first_row.get, reverse=True):  # from the end: earlier indexes hold
        at = first_row[table]
        while at + 1 < len(lines) and (lines[at + 1] is None or _LINE.match(lines[at + 1])):
            at += 1
        lines[at + 1:at + 1] = [k.doc_row() for k in ROWS[table] if k.name not in seen.get(table, set())]
    return "\n".join(line for line in lines if line is not None)


if __name__ == "__main__":
    DOC.write_text(rewrite(DOC.read_text()))
