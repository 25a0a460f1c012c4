"""TPROC-C, HammerDB's TPC-C derived workload."""
