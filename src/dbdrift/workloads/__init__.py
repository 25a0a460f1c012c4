"""Each workload as one package: what it is, how it runs, and how its results are reported."""
