"""Vector search campaigns: the [vector] table, each engine's SQL, and the targets refused
before any server starts."""
from __future__ import annotations

from pathlib import Path

import pytest

from dbdrift.errors import InputError
from dbdrift.model import InstallInfo
from dbdrift.workloads.registry import parse_campaign
from dbdrift.workloads.vector import catalog
from dbdrift.workloads.vector.catalog import VectorParams, families, refuse_install, sql
from dbdrift.workloads.vector.keys import KEYS
from dbdrift.workloads.vector.plan import SWEEPS, check_lines, judged

PG = {"name": "pg18.6", "version": "debian:18.6", "base": True}
MA = {"name": "ma11.8.9", "engine": "mariadb", "version": "11.8.9"}


def parse(vector: dict, targets=(PG, MA), **top):
    return parse_campaign({"workload": "vector", "vector": vector, "targets": list(targets), **top}, "v.toml",
                          Path("."), "v")


def test_the_table_is_read_with_its_lists_and_defaults():
    spec = parse({"rows": 5000, "dim": 64, "ef_search": [10, 40], "m": 8, "types": "vector"})
    v = spec.params
    assert (v.rows, v.dim, v.ef_search, v.m, v.types, v.k, v.metric) == (5000, 64, (10, 40), (8,), ("vector",), 10,
                                                                         "cosine")
    assert spec.order == "sequential" and list(spec.to_dict()["vector"]["ef_search"]) == [10, 40]
    # a graph that does not fit slows everything: each engine gets room for it unless the target says
    by_name = {t.name: t.settings for t in spec.targets}
    assert "maintenance_work_mem" in by_name["pg18.6"] and "mhnsw_max_cache_size" in by_name["ma11.8.9"]
    own = parse({}, targets=({**PG, "settings": {"maintenance_work_mem": "64MB"}},))
    assert own.targets[0].settings["maintenance_work_mem"] == "64MB"


@pytest.mark.parametrize("vector, needle", [
    ({"ef_search": []}, "non-empty list of integers"),
    ({"ef_search": [10, "x"]}, "non-empty list of integers"),
    ({"ef_search": [0]}, "out of range"),
    ({"m": [16, 16]}, "twice"),
    ({"types": ["float8"]}, "unknown type"),
    ({"index": "ivfflat", "lists": [4], "probes": [8]}, "probes 8 is more than lists 4"),
    ({"ef_search": [5], "k": 10}, "every ef_search is below k"),
    ({"dataset": "glove-50", "dim": 64}, "dim applies to the synthetic"),
    ({"dataset": "glove-50", "rows": 399_500}, "glove-50 has 400,000 vectors"),
    ({"dataset": "sift"}, "sift"),
    ({"k": 101}, "k"),
    ({"rows": 20, "k": 50}, "fewer than k"),
    ({"efsearch": [10]}, "unknown key 'efsearch'"),
])
def test_bad_tables_name_the_key_and_the_fix(vector, needle):
    with pytest.raises(InputError) as err:
        parse(vector)
    assert needle in err.value.message, err.value.message


@pytest.mark.parametrize("name", SWEEPS)
def test_a_sweep_beyond_its_keys_range_is_refused_with_that_range(name):
    row = next(k for k in KEYS if k.name == name)
    low, high = int(row.low or 0), int(row.high or 0)
    with pytest.raises(InputError) as err:
        parse({name: [high + 1]})
    assert err.value.message == f"v.toml: [vector]: {name} = {high + 1} is out of range"
    assert err.value.hint == f"use {low} to {high}"
    parse({name: [high], **({"lists": [high], "index": "ivfflat"} if name == "probes" else {})})  # the top is in


def test_sysbench_keys_are_refused_in_a_vector_campaign():
    with pytest.raises(InputError, match="applies to the sysbench workload, not vector search"):
        parse({}, read_s=10)


def test_families_follow_the_sweep_and_mariadb_has_no_ef_construction():
    sizes = VectorParams(types=("vector", "halfvec"), m=(8, 16), ef_construction=(32, 64))
    pg = families(sizes, "postgres")
    assert [f.label for f in pg] == [
        "hnsw m=8 ef_construction=32 vector", "hnsw m=8 ef_construction=64 vector",
        "hnsw m=16 ef_construction=32 vector", "hnsw m=16 ef_construction=64 vector",
        "hnsw m=8 ef_construction=32 halfvec", "hnsw m=8 ef_construction=64 halfvec",
        "hnsw m=16 ef_construction=32 halfvec", "hnsw m=16 ef_construction=64 halfvec"]
    assert [f.number for f in pg] == list(range(8))
    ma = families(VectorParams(m=(8, 16)), "mariadb")
    assert [f.label for f in ma] == ["hnsw m=8 vector", "hnsw m=16 vector"]
    ivf = families(VectorParams(index="ivfflat", lists=(50, 100), probes=(1, 5)), "postgres")
    assert [(f.label, f.search_key, f.searches) for f in ivf] == [("ivfflat lists=50 vector", "probes", (1, 5)),
                                                                 ("ivfflat lists=100 vector", "probes", (1, 5))]


def test_each_engine_spells_the_index_the_distance_and_the_search_setting():
    sizes = VectorParams(dim=8, metric="euclidean", k=5)
    [fam] = families(sizes, "postgres")
    pg = sql(fam, sizes, "postgres")
    assert pg.create_index == "CREATE INDEX items_v ON items USING hnsw (v vector_l2_ops) WITH (m = 16, ef_construction = 64)"
    assert pg.query == "SELECT id FROM items ORDER BY v <-> '$VECTOR'::vector(8) LIMIT 5"
    assert [s.format(n=40) for s in pg.session] == ["SET hnsw.ef_search = 40"]
    [half] = families(VectorParams(dim=8, types=("halfvec",)), "postgres")
    assert "halfvec_cosine_ops" in sql(half, VectorParams(dim=8), "postgres").create_index
    [mfam] = families(sizes, "mariadb")
    ma = sql(mfam, sizes, "mariadb")
    assert ma.create_index == "ALTER TABLE items ADD VECTOR INDEX items_v (v) M=16 DISTANCE=euclidean"
    assert ma.query == "SELECT id FROM items ORDER BY VEC_DISTANCE_EUCLIDEAN(v, VEC_FromText('$VECTOR')) LIMIT 5"
    assert ma.load_value == "VEC_FromText('$VECTOR')" and ma.session == ("SET SESSION mhnsw_ef_search = {n}",)


def install(tmp: Path, engine: str, version: str, pgvector: str | None = None, debian: bool = False) -> InstallInfo:
    if debian:
        bindir = tmp / "usr/lib/postgresql/18/bin"
        ext = tmp / "usr/share/postgresql/18/extension"
    else:
        bindir, ext = tmp / "bin", tmp / "share/extension"
    bindir.mkdir(parents=True)
    if pgvector:
        ext.mkdir(parents=True)
        (ext / "vector.control").write_text(f"comment = 'vector'\ndefault_version = '{pgvector}'\n")
    return InstallInfo(engine, bindir, version, "test")


def test_targets_without_vector_search_are_refused_with_the_fix(tmp_path):
    sizes = VectorParams()
    with pytest.raises(InputError, match="has no pgvector extension") as err:
        refuse_install("pg17.10", install(tmp_path / "a", "postgres", "17.10"), sizes)
    assert "debian:17.12" in err.value.hint
    refuse_install("pg", install(tmp_path / "b", "postgres", "18.6", "0.8.7", debian=True), VectorParams(dim=1536))
    refuse_install("pg", install(tmp_path / "c", "postgres", "17.10", "0.8.0"), sizes)
    with pytest.raises(InputError, match="predates halfvec"):
        refuse_install("pg", install(tmp_path / "d", "postgres", "16.4", "0.6.2"), VectorParams(types=("halfvec",)))
    with pytest.raises(InputError, match="at most 2,000 dimensions"):
        refuse_install("pg", install(tmp_path / "e", "postgres", "18.6", "0.8.7"), VectorParams(dim=3072))
    refuse_install("pg", install(tmp_path / "f", "postgres", "18.6", "0.8.7"), VectorParams(dim=3072, types=("halfvec",)))
    with pytest.raises(InputError, match="has no VECTOR type"):
        refuse_install("ma", InstallInfo("mariadb", tmp_path, "11.4.5", "test"), sizes)
    refuse_install("ma", InstallInfo("mariadb", tmp_path, "11.8.9", "test"), sizes)
    with pytest.raises(InputError, match="no ivfflat"):
        refuse_install("ma", InstallInfo("mariadb", tmp_path, "11.8.9", "test"), VectorParams(index="ivfflat"))
    with pytest.raises(InputError, match="MySQL's VECTOR type"):
        refuse_install("my", InstallInfo("mysql", tmp_path, "9.7.4", "test"), sizes)


def test_check_lines_and_the_judged_comparisons_follow_the_families():
    spec = parse({"ef_search": [10, 40], "m": [8, 16]})
    lines = check_lines(spec)
    assert "2 index build(s)" in lines[1] and "4 search setting(s)" in lines[1]
    assert judged(spec)[:3] == ("hnsw m=8 ef_construction=64 vector @ recall 0.90",
                                "hnsw m=8 ef_construction=64 vector @ recall 0.95",
                                "hnsw m=8 ef_construction=64 vector @ recall 0.99")


def test_mariadb_index_files_are_told_from_the_table_file(tmp_path):
    db = tmp_path / catalog.DBNAME
    db.mkdir()
    (db / "items.ibd").write_bytes(b"x" * 100)
    (db / "items@0023i@002301.ibd").write_bytes(b"x" * 30)
    (db / "other.ibd").write_bytes(b"x" * 7)
    assert catalog.file_sizes(tmp_path) == (100, 30)
