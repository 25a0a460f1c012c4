"""The Insert Benchmark (workload "insert-benchmark")."""
