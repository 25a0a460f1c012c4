"""How hard the vector data sets are: relative contrast and local intrinsic dimensionality.

A data set is as hard for an approximate index as its queries' neighbours are hard to tell from
the rest (Aumüller and Ceccarello, "The role of local intrinsic dimensionality in benchmarking
nearest neighbor search", 2019): relative contrast RC@10 = mean distance to a random row ÷
distance to the 10th nearest (lower is harder), and the local intrinsic dimensionality LID, the
maximum-likelihood estimate from each query's 20 nearest (higher is harder), both on unit
vectors. Prints them for GloVe-50 (the real set dbdrift fetches) and for the synthetic sets at
50, 256 and 1536 dimensions, made as a campaign makes them (workloads/vector/dataset.py), so the
synthetic shape can be held against a real one. Deterministic: no server, no timing.

    .venv/bin/python bench/vector_data.py [--rows 20000] [--queries 200]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from _common import progress, run_main  # noqa: E402

from dbdrift.workloads.vector import dataset  # noqa: E402
from dbdrift.workloads.vector.catalog import DatasetSpec  # noqa: E402


def hardness(base: np.ndarray, queries: np.ndarray) -> tuple[float, float]:
    """(RC@10 mean, LID median over the queries), euclidean on unit vectors."""
    unit = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)  # noqa: E731
    b, q = unit(np.asarray(base, dtype=np.float64)), unit(np.asarray(queries, dtype=np.float64))
    nn = dataset.exact_neighbours(b, q, "euclidean", 20)
    d = np.sqrt(np.maximum(((q[:, None, :] - b[nn]) ** 2).sum(-1), 1e-24))
    rng = np.random.default_rng(0)
    rand = np.sqrt(((q[:, None, :] - b[rng.integers(0, len(b), (len(q), 50))]) ** 2).sum(-1)).mean(1)
    lid = -1.0 / np.log(d[:, :19] / d[:, 19:20]).mean(1)
    return float((rand / d[:, 9]).mean()), float(np.median(lid))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()

    def body(out) -> None:
        out(f"data set hardness: {args.rows:,} rows, {args.queries} held-out queries (lower RC, higher LID: harder)")
        out(f"{'data set':<34} {'RC@10':>6} {'LID':>6}")
        with tempfile.TemporaryDirectory() as root:
            for spec in (DatasetSpec("glove-50", args.rows, args.queries),
                         *(DatasetSpec("synthetic", args.rows, args.queries, dim) for dim in (50, 256, 1536))):
                d = dataset.prepare(spec, progress, Path(root))
                rc, lid = hardness(d.base(), d.query_vectors())
                out(f"{spec.key:<34} {rc:6.2f} {lid:6.1f}")

    return run_main("vector_data", body)


if __name__ == "__main__":
    sys.exit(main())
