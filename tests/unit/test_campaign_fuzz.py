"""Seeded fuzzing of campaign files: every mutation of a valid file (keys, values, types, deleted
keys, garbage bytes, invalid UTF-8) either loads as a CampaignSpec that keeps the invariants
below, or is refused with a UserError that has a message and a hint. Anything else is a bug:
the failure shows the seed and the file, and `fuzz_case(seed)` rebuilds that file."""
from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from dbdrift.errors import UserError
from dbdrift.model import IBENCH_STEPS
from dbdrift.plan.campaign import INT64_MAX, CampaignSpec
from dbdrift.workloads.registry import load_campaign
from dbdrift.workloads.sysbench.expand import estimate_s, expand
from dbdrift.workloads.ibench.plan import params as ibench_params
from dbdrift.workloads.sysbench.catalog import SysbenchParams
from dbdrift.workloads.sysbench.plan import params as sysbench_params

pytestmark = pytest.mark.fault("input")
SEEDS = range(1000)

SYSBENCH = {
    "name": "fuzz", "tables": 2, "rows": 10000, "threads": [1, 4], "warmup_s": 0.5, "read_s": "2s", "write_s": 3,
    "insert_s": 3, "scan_warm_s": 0.5, "settle_s": 0, "repeats": 2, "restart": "repeat", "order": "turns",
    "turn_s": 0.01, "cpus": "auto", "interval_s": 1, "seed": 7, "tests": ["point", "update-index"],
    "warm_runs": False, "prepared": True, "count_instructions": False, "flamegraphs": False,
    "targets": [
        {"name": "a", "version": "17.10", "base": True, "settings": {"shared_buffers": "256MB", "jit": False}},
        {"name": "b", "engine": "postgres", "version": "18.4", "port": 15432, "config": "extra.conf"},
        {"name": "c", "engine": "mariadb", "basedir": "build", "settings": {"innodb_buffer_pool_size": "1G"}},
    ],
}
IBENCH = {
    "name": "fuzz-ib", "workload": "insert-benchmark", "settle_s": 10, "interval_s": 1,
    "insert_benchmark": {"clients": 2, "rows_l_i0": 5000, "rows_l_i1": 2000, "rows_l_i2": 500, "query_s": "3s",
                         "deletes": True, "shared_table": False, "steps": ["l.i0", "l.x", "qr100"]},
    "targets": [{"name": "a", "version": "17.10", "base": True}, {"name": "b", "system": True}],
}
TOP_KEYS = sorted(set(SYSBENCH) | set(IBENCH) | {"allow_large"})
TARGET_KEYS = ["name", "engine", "version", "basedir", "system", "config", "settings", "data_checksums", "base",
               "port"]
IBENCH_KEYS = sorted(IBENCH["insert_benchmark"])
# Values near each limit, so accepted specs near the edges are checked too.
EDGES = {
    "rows": [1, 2**31 - 1, 2**31, 10**9, 10**9 + 1, 10**15], "tables": [1, 128, 129, 2**32 - 1, 2**32],
    "repeats": [1, 100, 101, 1000, 1001], "seed": [1, INT64_MAX - 1000, INT64_MAX, 2**64],
    "threads": [[1024], [1025], [0], [1, 1.5], [[1]], 8],
    "read_s": [0, "0s", 0.001, 86400, 86401, "24h", "25h", "365d", 365 * 86400 + 1, "1e999", "nan"],
    "warmup_s": [0, 7200, 7201, "2h", "121m", 2**63], "settle_s": ["auto", 0, 7201, "AUTO", -1],
    "turn_s": [0.001, 0.0009, 60, 61], "interval_s": [0, 0.5, 86401],
    "clients": [1, 1024, 1025, 2**32], "rows_l_i0": [1, 10**10, 10**10 + 1, INT64_MAX, 2**63],
    "query_s": [0, 1, 86400, 86401], "version": ["17.10", "17", "9.6.24", "", "17.10.1.1"],
    "port": [1024, 65535, 65536, 1023, 5432.0, True], "cpus": ["auto", "shared", {"driver": "0", "server": "1"},
                                                               {"driver": "0-99999", "server": "1"}],
}
STRINGS = ["", "auto", "shared", "nan", "inf", "-inf", "1e999", "60s", "2h", "500ms", "-5", "17.10", "x" * 300,
           "ünïcødé ✓", "\u0000", "a\nb", "0-99999", "default32", "point", "l.i0", "~nosuchuser/x", "/", ".",
           "postgres", "mariadb", "sequential", "reload", " 5 s ", "9" * 400]
NUMBERS = [0, 1, -1, 7, 1024, 2**31, 2**63 - 1, -2**63, 2**63, 2**64, 10**30, 0.0, -0.0, 0.5, -1.5, 17.10, 1e300,
           math.nan, math.inf, -math.inf, 5e-324]


class Raw(str):
    """Text put into the file as written (numbers TOML reads differently, dates, odd syntax)."""


RAWS = ["17.10", "1e999", "-1e999", "0x7fffffffffffffff", "0xffffffffffffffffff", "1_000", "+inf", "-nan",
        "1979-05-27T07:32:00Z", "1979-05-27", "07:32:00", "'literal'", '"""multi\nline"""', "9" * 40, "[]", "{}",
        "[[1], [2]]", "[1, 'a', 1.5]", "9" * 5000, "[" * 400 + "]" * 400, str(2**1100)]


def random_value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.choice(["string", "number", "number", "bool", "raw", "array", "table", "edge"])
    if depth > 2 and kind in ("array", "table"):
        kind = "number"
    if kind == "string":
        return rng.choice(STRINGS)
    if kind == "number":
        return rng.choice(NUMBERS)
    if kind == "bool":
        return rng.choice([True, False])
    if kind == "raw":
        return Raw(rng.choice(RAWS))
    if kind == "array":
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if kind == "table":
        keys = ["driver", "server", "a", "version", "name", "shared_buffers", "bad key", "ü"]
        return {rng.choice(keys): random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return rng.choice(rng.choice(list(EDGES.values())))


# --- TOML writing (tomllib only reads) ---------------------------------------------------------
def toml_key(key: str) -> str:
    return key if key and all(c.isascii() and (c.isalnum() or c in "_-") for c in key) else json.dumps(key)


def toml_value(value: object) -> str:
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(value)


def toml_document(doc: dict) -> str:
    """Top-level keys, then [insert_benchmark] and [[targets]] as tables when they are tables."""
    tables = {k: v for k, v in doc.items() if k == "insert_benchmark" and isinstance(v, dict)}
    arrays = {k: v for k, v in doc.items()
              if k == "targets" and isinstance(v, list) and v and all(isinstance(t, dict) for t in v)}
    lines = [f"{toml_key(k)} = {toml_value(v)}" for k, v in doc.items() if k not in tables and k not in arrays]
    for key, table in tables.items():
        lines += ["", f"[{key}]"] + [f"{toml_key(k)} = {toml_value(v)}" for k, v in table.items()]
    for key, items in arrays.items():
        for item in items:
            lines += ["", f"[[{key}]]"] + [f"{toml_key(k)} = {toml_value(v)}" for k, v in item.items()]
    return "\n".join(lines) + "\n"


# --- mutations ------------------------------------------------------------------------------------
def mutate_document(rng: random.Random, doc: dict) -> None:
    targets = doc.get("targets") if isinstance(doc.get("targets"), list) else []
    ibench = doc.get("insert_benchmark") if isinstance(doc.get("insert_benchmark"), dict) else None
    action = rng.choice(["top", "top", "top", "target", "target", "target", "ibench", "ibench", "delete",
                         "delete-target-key", "unknown", "edge", "edge", "edge", "edge", "allow_large", "targets"])
    if action == "top":
        doc[rng.choice(TOP_KEYS)] = random_value(rng)
    elif action == "target" and targets:
        target = rng.choice(targets)
        if isinstance(target, dict):
            target[rng.choice(TARGET_KEYS)] = random_value(rng)
    elif action == "ibench" and ibench is not None:
        ibench[rng.choice(IBENCH_KEYS)] = random_value(rng)
    elif action == "delete" and doc:
        del doc[rng.choice(list(doc))]
    elif action == "delete-target-key" and targets and isinstance(targets[0], dict) and targets[0]:
        del targets[0][rng.choice(list(targets[0]))]
    elif action == "unknown":
        doc[rng.choice(["treads", "slice_warmup_s", "rowz", "", "ü"])] = random_value(rng)
    elif action == "edge":
        key = rng.choice(list(EDGES))
        value = rng.choice(EDGES[key])
        if key in ("version", "port") and targets and isinstance(targets[0], dict):
            targets[0][key] = value
        elif key in IBENCH_KEYS:
            if ibench is not None:
                ibench[key] = value
        else:
            doc[key] = value
    elif action == "allow_large":
        doc["allow_large"] = rng.choice([True, True, False, 1, "yes"])
    elif action == "targets":
        doc["targets"] = rng.choice([[], {}, "a", [1], targets + targets, targets[:1], [{}]])


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    at = rng.randint(0, len(data))
    action = rng.choice(["garbage", "invalid-utf8", "truncate", "unquote-version", "duplicate-line", "drop-line",
                         "nul", "bom"])
    if action == "garbage":
        return data[:at] + rng.randbytes(rng.randint(1, 8)) + data[at:]
    if action == "invalid-utf8":
        return data[:at] + rng.choice([b"\xff", b"\xc3", b"\xe9", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"]) + data[at:]
    if action == "truncate":
        return data[:at]
    if action == "unquote-version":
        return data.replace(b'version = "17.10"', rng.choice([b"version = 17.10", b"version = 17", b"version = 1e3"]))
    lines = data.split(b"\n")
    n = rng.randrange(len(lines))
    if action == "duplicate-line":
        return b"\n".join(lines[:n + 1] + lines[n:])
    if action == "drop-line":
        return b"\n".join(lines[:n] + lines[n + 1:])
    if action == "nul":
        return data[:at] + b"\x00" + data[at:]
    return b"\xef\xbb\xbf" + data


def fuzz_case(seed: int) -> bytes:
    """The campaign file of one seed: a valid base file with one to three mutations, a quarter of
    them then mutated as bytes."""
    rng = random.Random(seed)
    doc = json.loads(json.dumps(rng.choice([SYSBENCH, SYSBENCH, IBENCH])))  # a deep copy
    for _ in range(rng.choice([1, 1, 2, 3])):
        mutate_document(rng, doc)
    data = toml_document(doc).encode()
    if rng.random() < 0.25:
        data = mutate_bytes(rng, data)
    return data


# --- what an accepted campaign always satisfies ---------------------------------------------------
def check_invariants(spec: CampaignSpec) -> None:
    large = spec.allow_large
    sizes = ibench_params(spec) if spec.workload == "insert-benchmark" else None
    own = sysbench_params(spec) if isinstance(spec.params, SysbenchParams) else SysbenchParams()
    measured = {"read_s": own.read_s, "write_s": own.write_s, "insert_s": own.insert_s,
                "interval_s": spec.interval_s, **({"query_s": sizes.query_s} if sizes else {})}
    waits = {"warmup_s": own.warmup_s, "scan_warm_s": own.scan_warm_s, "settle_s": spec.settle_total_s()}
    for key, seconds in {**measured, **waits, "turn_s": own.turn_s}.items():
        assert isinstance(seconds, float | int) and math.isfinite(seconds), key
        assert 0 <= seconds <= 365 * 86400, key
    for key, seconds in measured.items():
        assert seconds > 0 and (large or seconds <= 86400), key
    for key, seconds in waits.items():
        assert large or seconds <= 7200, key
    assert 0.001 <= own.turn_s <= 60
    assert 1 <= own.tables <= 2**32 - 1 and 1 <= own.rows <= 2**31 - 1 and 1 <= spec.repeats <= 1000
    assert large or (own.tables <= 128 and own.rows <= 10**9 and spec.repeats <= 100)
    assert 1 <= spec.seed and spec.seed + spec.repeats <= INT64_MAX
    assert own.threads and all(type(t) is int and 1 <= t <= 1024 for t in own.threads)
    if spec.workload == "sysbench":
        assert spec.tests and spec.test_names and all(isinstance(n, str) for n in spec.test_names)
        assert all(math.isfinite(estimate_s(plan, spec)) for plan in expand(spec))  # and it can be planned
    else:
        assert sizes is not None, spec.workload
        assert 1 <= sizes.clients <= 1024 and sizes.steps and set(sizes.steps) <= set(IBENCH_STEPS)
        for rows in (sizes.rows_l_i0, sizes.rows_l_i1, sizes.rows_l_i2):
            assert type(rows) is int and 1 <= rows <= INT64_MAX and (large or rows <= 10**10)
    assert spec.targets and sum(t.base for t in spec.targets) <= 1
    assert spec.base_is_implicit == (not any(t.base for t in spec.targets))
    for target in spec.targets:
        assert target.version is None or isinstance(target.version, str)
        assert type(target.port) is int or target.port is None
        assert all(isinstance(v, str) and "\n" not in v for v in target.settings.values())
    assert isinstance(spec.allow_large, bool)
    json.dumps(spec.to_dict(), allow_nan=False)  # storable as it is


def load(tmp_path: Path, data: bytes) -> CampaignSpec | UserError:
    (tmp_path / "extra.conf").write_text("work_mem = '4MB'\n")
    (tmp_path / "build").mkdir(exist_ok=True)
    path = tmp_path / "fuzz.toml"
    path.write_bytes(data)
    try:
        return load_campaign(path)
    except UserError as err:
        return err


def test_the_fuzzers_base_campaigns_are_valid(tmp_path):
    for doc in (SYSBENCH, IBENCH):
        spec = load(tmp_path, toml_document(doc).encode())
        assert isinstance(spec, CampaignSpec), spec
        check_invariants(spec)


def test_every_mutated_campaign_loads_within_limits_or_is_refused_with_message_and_hint(tmp_path):
    outcomes = {"accepted": 0, "refused": 0}
    for seed in SEEDS:
        data = fuzz_case(seed)
        shown = data.decode("utf-8", errors="backslashreplace")
        try:
            result = load(tmp_path, data)
            if isinstance(result, UserError):
                assert result.message.strip() and result.hint.strip(), "a UserError without message or hint"
                outcomes["refused"] += 1
            else:
                check_invariants(result)
                outcomes["accepted"] += 1
        except Exception as exc:  # noqa: BLE001 - any other exception is the finding
            pytest.fail(f"seed {seed}: {type(exc).__name__}: {exc}\n--- campaign file ---\n{shown}", pytrace=True)
    # a fuzzer that only ever refuses (or accepts) tests little: both happen often
    assert min(outcomes.values()) > len(SEEDS) // 20, outcomes
