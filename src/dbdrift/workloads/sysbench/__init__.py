"""The sysbench microbenchmarks."""
