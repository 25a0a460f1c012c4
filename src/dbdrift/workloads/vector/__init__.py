"""Vector search: k nearest neighbours by an index (pgvector, MariaDB VECTOR INDEX), recall against QPS."""
