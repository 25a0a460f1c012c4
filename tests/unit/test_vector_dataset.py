"""Vector datasets: synthetic vectors with the shape of embeddings, exact neighbours, the cache."""
from __future__ import annotations

import json

import numpy as np
import pytest

from dbdrift.errors import UserError
from dbdrift.workloads.vector import dataset as ds
from dbdrift.workloads.vector.catalog import TRUTH_K, DatasetSpec


def test_exact_neighbours_match_a_full_sort_for_both_metrics():
    rng = np.random.default_rng(3)
    base = rng.standard_normal((5000, 24)).astype("f4")
    queries = rng.standard_normal((40, 24)).astype("f4")
    got_l2 = ds.exact_neighbours(base, queries, "euclidean", 10)
    want_l2 = np.argsort(((queries[:, None, :].astype("f8") - base[None, :, :]) ** 2).sum(-1), axis=1)[:, :10]
    assert (got_l2 == want_l2).all()
    bn = base / np.linalg.norm(base, axis=1, keepdims=True)
    qn = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    want_cos = np.argsort(-(qn.astype("f8") @ bn.T.astype("f8")), axis=1)[:, :10]
    assert (ds.exact_neighbours(base, queries, "cosine", 10) == want_cos).all()


def test_recall_counts_ids_as_row_numbers_plus_one():
    truth = np.array([[0, 1, 2], [5, 6, 7]], dtype=np.int32)
    assert ds.recall_at([[1, 2, 3], [6, 7, 9]], truth, 3) == pytest.approx(5 / 6)
    assert ds.recall_at([[1, 2, 3]], truth[:1], 2) == 1.0


def test_synthetic_vectors_are_unit_length_clustered_and_share_a_direction(tmp_path):
    spec = DatasetSpec("synthetic", rows=4000, queries=50, dim=256, seed=7)
    d = ds.prepare(spec, root=tmp_path)
    x = np.asarray(d.base())
    assert x.shape == (4000, 256) and d.query_vectors().shape == (50, 256)
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-5)
    cos = x[:500] @ x[500:1000].T
    assert 0.1 < float(cos.mean()) < 0.5  # a common direction, as real text embeddings have
    # low intrinsic dimension: a few dozen directions carry almost all of the variance
    s = np.linalg.svd(x - x.mean(0), compute_uv=False) ** 2
    assert s[:ds.SyntheticShape.for_dim(256, 4000, 7).intrinsic].sum() / s.sum() > 0.9
    # clustered: a query's nearest neighbour is much nearer than a random row
    q = np.asarray(d.query_vectors())
    t = d.truth("cosine")
    assert t.shape == (50, min(TRUTH_K, 4000))
    nearest = np.einsum("ij,ij->i", q, x[t[:, 0]])
    assert float(nearest.mean()) > float((q @ x[:1000].T).mean()) + 0.3


def test_a_dataset_is_made_once_and_the_same_seed_gives_the_same_vectors(tmp_path):
    spec = DatasetSpec("synthetic", rows=300, queries=10, dim=16, seed=2)
    said: list[str] = []
    a = ds.prepare(spec, said.append, root=tmp_path / "a")
    assert said and (a.directory / "meta.json").is_file()
    said.clear()
    again = ds.prepare(spec, said.append, root=tmp_path / "a")
    assert not said and again.fingerprint == a.fingerprint  # from the cache
    b = ds.prepare(spec, root=tmp_path / "b")
    assert b.fingerprint == a.fingerprint  # another host makes the same vectors
    other = ds.prepare(DatasetSpec("synthetic", rows=300, queries=10, dim=16, seed=3), root=tmp_path / "a")
    assert other.fingerprint != a.fingerprint
    assert not [p for p in (tmp_path / "a").iterdir() if p.name.startswith(".")]  # no work directory left
    meta = json.loads((a.directory / "meta.json").read_text())
    assert meta["dim"] == 16 and "synthetic" in meta["source"]


def test_bad_requests_are_refused_with_the_fix(tmp_path):
    with pytest.raises(UserError, match="unknown vector dataset 'sift'"):
        ds.prepare(DatasetSpec("sift"), root=tmp_path)
    with pytest.raises(UserError, match="at most 399,000 rows"):
        ds.prepare(DatasetSpec("glove-50", rows=400_000, queries=1000), root=tmp_path)


def test_a_damaged_cache_entry_names_the_directory_to_remove(tmp_path):
    spec = DatasetSpec("synthetic", rows=100, queries=5, dim=8)
    d = ds.prepare(spec, root=tmp_path)
    (d.directory / "meta.json").write_text("{")
    with pytest.raises(UserError, match="remove"):
        ds.prepare(spec, root=tmp_path)
