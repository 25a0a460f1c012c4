"""TPROC-C, the TPC-C derived OLTP workload of HammerDB: new orders per minute over five transaction types."""
