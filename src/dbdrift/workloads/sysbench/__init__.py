"""The sysbench-style microbenchmarks: one statement mix per test, compared cell by cell."""
