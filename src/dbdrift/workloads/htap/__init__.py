"""HTAP: CH-benCHmark, TPROC-C transactions with TPC-H-derived analytical queries on one database."""
