"""The Insert Benchmark's steps, sizes and SQL per dialect, and its campaign keys."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from dbdrift.workloads.ibench import catalog as ibench
from dbdrift.errors import UserError
from dbdrift.model import IBENCH_STEPS
from dbdrift.workloads.registry import parse_campaign


def test_steps_follow_the_spec_table_with_rows_split_over_clients():
    sizes = ibench.IBenchParams(clients=2, rows_l_i0=1000, rows_l_i1=400, rows_l_i2=100, query_s=10)
    steps = {s.name: s for s in ibench.steps(sizes)}
    assert list(steps) == list(IBENCH_STEPS)
    assert (steps["l.i0"].rows_per_client, steps["l.i0"].rows_per_statement, steps["l.i0"].deletes) == (500, 100, False)
    assert steps["l.x"].create_indexes and steps["l.x"].rows_per_client == 100
    assert (steps["l.i1"].rows_per_client, steps["l.i1"].rows_per_statement, steps["l.i1"].deletes) == (200, 50, True)
    assert (steps["l.i2"].rows_per_client, steps["l.i2"].rows_per_statement) == (50, 5)
    # query steps: secs·rate rows per client at rate inserts/s, 50 per statement, deletes, one query kind
    assert (steps["qr500"].rows_per_client, steps["qr500"].inserts_per_second, steps["qr500"].query) == (5000, 500, "range")
    assert steps["qp1000"].query == "point" and steps["qp1000"].target_ips(2) == 2000.0
    assert steps["l.i1"].target_ips(2) is None


def test_settle_time_is_the_spec_formula():
    assert ibench.settle_seconds(ibench.IBenchParams(rows_l_i0=20 * 10_000_000)) == 260.0
    assert ibench.settle_seconds(ibench.IBenchParams(rows_l_i0=10**10)) == 1200.0


def test_postgres_and_innodb_sql_differ_as_the_spec_says():
    step = ibench.steps(ibench.IBenchParams())[1]  # l.x
    pg, my = ibench.ibench_sql("postgres", step), ibench.ibench_sql("mysql", step)
    assert "transactionid IN (SELECT transactionid FROM {table}" in pg["delete"]
    assert my["delete"].endswith("ORDER BY transactionid ASC LIMIT {rows}")
    assert "FORCE INDEX ({table}_marketsegment)" in my["range"][0]["sql"] and "FORCE" not in pg["range"][0]["sql"]
    assert "(productid >= $1)" in pg["range"][0]["sql"] and "(cashregisterid > ?)" in my["range"][1]["sql"]
    assert [q["domain"] for q in pg["range"]] == [10000, 1000, 500]
    assert pg["point"].endswith("IN ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)")
    assert len(pg["after"]) == 3 and len(my["after"]) == 1 and my["after"][0].count("ADD INDEX") == 3
    assert ibench.ibench_sql("postgres", ibench.steps(ibench.IBenchParams())[0])["after"] == []
    assert "bigserial primary key" in ibench.create_table_sql("pi1", "postgres")[1]
    assert ibench.create_table_sql("pi1", "postgres")[2] == "ALTER SEQUENCE pi1_transactionid_seq CACHE 1000"
    assert "auto_increment" in ibench.create_table_sql("pi1", "mysql")[1]


def campaign(extra: str) -> str:
    return f'workload = "insert-benchmark"\n{extra}\n[[targets]]\nname = "a"\nversion = "17.10"\n'


def test_an_insert_benchmark_campaign_reads_its_sizes():
    spec = parse_campaign(tomllib.loads(campaign(
        '[insert_benchmark]\nclients = 4\nrows_l_i0 = 1000\nrows_l_i1 = 400\nquery_s = "2m"\nsteps = ["l.i0", "l.x"]')),
        "c.toml", Path("."), "c")
    assert spec.params.clients == 4 and spec.params.rows_l_i2 == 100 and spec.params.query_s == 120
    assert spec.params.steps == ("l.i0", "l.x") and spec.order == "sequential"
    assert spec.to_dict()["insert_benchmark"]["clients"] == 4


@pytest.mark.parametrize("extra, needle", [
    ("[insert_benchmark]\nclients = 0", "clients"),
    ("[insert_benchmark]\nsteps = [\"qr200\"]", "unknown step 'qr200'"),
    ("[insert_benchmark]\nrows = 5", "rows"),
    ("[insert_benchmark]\nclients = 2\nshared_table = true", "shared_table with deletes"),
    ('tests = ["point-query"]', "tests applies to the sysbench workload"),
])
def test_bad_insert_benchmark_keys_name_the_key(extra, needle):
    with pytest.raises(UserError, match=needle):
        parse_campaign(tomllib.loads(campaign(extra)), "c.toml", Path("."), "c")


def test_an_insert_benchmark_table_without_the_workload_is_refused():
    text = '[insert_benchmark]\nclients = 2\n[[targets]]\nname = "a"\nversion = "17.10"\n'
    with pytest.raises(UserError, match="workload is sysbench"):
        parse_campaign(tomllib.loads(text), "c.toml", Path("."), "c")


def test_io_bound_sizes_each_targets_cache_to_a_tenth_of_the_table_and_repeats_are_accepted():
    text = ('workload = "insert-benchmark"\nrepeats = 3\n[insert_benchmark]\nrows_l_i0 = 20000000\nio_bound = true\n'
            '[[targets]]\nname = "pg"\nversion = "17.10"\n'
            '[[targets]]\nname = "ma"\nengine = "mariadb"\nversion = "10.11.5"\n'
            '[[targets]]\nname = "my"\nengine = "mysql"\nversion = "8.0.31"\nsettings = { innodb_buffer_pool_size = "1G" }\n')
    spec = parse_campaign(tomllib.loads(text), "c.toml", Path("."), "c")
    assert spec.repeats == 3
    mb = 20_000_000 * 250 // 10 // 2 ** 20  # 476
    assert [t.settings for t in spec.targets] == [
        {"shared_buffers": f"{mb}MB"},
        {"innodb_buffer_pool_size": f"{mb}M", "innodb_flush_method": "O_DIRECT"},
        {"innodb_buffer_pool_size": "1G", "innodb_flush_method": "O_DIRECT"}]  # the target's own setting wins
    assert ibench.io_bound_cache_mb(ibench.IBenchParams(rows_l_i0=1000)) == 16
