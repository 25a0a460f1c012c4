"""One sub-package per workload; each role file (catalog, plan, run, cluster, results, report) sits in the layer of its name."""
