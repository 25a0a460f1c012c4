"""Exact neighbours with numpy and in pure Python: why numpy is a dependency of dbdrift.

Vector search judges every target against the exact k nearest neighbours of each query, found
by brute force (workloads/vector/dataset.exact_neighbours). This times that with numpy on the
demo's data set (20,000 rows of 256 dimensions, 500 queries, both metrics) and times the same
brute force in pure Python (a dot product per pair, heapq for the nearest) on a slice of it,
extrapolated to the demo's set and to a default campaign's (100,000 rows of 1,536 dimensions,
1,000 queries). No server.

    .venv/bin/python bench/neighbours.py [--slice-rows 2000] [--slice-queries 50]
"""
from __future__ import annotations

import argparse
import heapq
import math
import operator
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import progress, run_main  # noqa: E402

from dbdrift.workloads.vector import dataset  # noqa: E402
from dbdrift.workloads.vector.catalog import METRICS, TRUTH_K, DatasetSpec  # noqa: E402

DEMO = DatasetSpec("synthetic", 20_000, 500, 256)
DEFAULT = DatasetSpec("synthetic", 100_000, 1_000, 1536)


def pure_python_s(base: list[list[float]], queries: list[list[float]], k: int) -> float:
    """Seconds of a pure-Python brute force by cosine: each query's k nearest of `base`."""
    start = time.perf_counter()
    inverse = [1.0 / math.sqrt(sum(map(operator.mul, b, b))) for b in base]
    for q in queries:
        heapq.nsmallest(k, range(len(base)), key=lambda i: -sum(map(operator.mul, q, base[i])) * inverse[i])
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slice-rows", type=int, default=2_000)
    parser.add_argument("--slice-queries", type=int, default=50)
    args = parser.parse_args()

    def body(out) -> None:
        with tempfile.TemporaryDirectory() as root:
            d = dataset.prepare(DEMO, progress, Path(root))
            base, queries = d.base(), d.query_vectors()
            start = time.perf_counter()
            for metric in METRICS:
                dataset.exact_neighbours(base, queries, metric, TRUTH_K)
            with_numpy = time.perf_counter() - start
            pairs = args.slice_rows * args.slice_queries
            per_pair = pure_python_s(base[:args.slice_rows].tolist(), queries[:args.slice_queries].tolist(),
                                     TRUTH_K) / pairs
        demo = per_pair * DEMO.rows * DEMO.queries * len(METRICS)
        default = per_pair * (DEFAULT.dim / DEMO.dim) * DEFAULT.rows * DEFAULT.queries * len(METRICS)
        out(f"exact {TRUTH_K} nearest neighbours by {' and '.join(METRICS)} distance")
        out(f"numpy, the demo's set ({DEMO.rows:,} x {DEMO.dim}, {DEMO.queries} queries): {with_numpy:.1f} s")
        out(f"pure Python: {per_pair * 1e6:.1f} us per pair of {DEMO.dim} dimensions "
            f"(a slice of {args.slice_rows:,} rows x {args.slice_queries} queries)")
        out(f"pure Python, the demo's set: {demo:,.0f} s (extrapolated)")
        out(f"pure Python, a default campaign's set ({DEFAULT.rows:,} x {DEFAULT.dim}, {DEFAULT.queries:,} "
            f"queries): {default / 3600:,.1f} h (extrapolated)")

    return run_main("neighbours", body)


if __name__ == "__main__":
    sys.exit(main())
