"""What the store says about each target beyond its runs' values: the server configuration it
ran with (`report --config`) and the stacks sampled from it (`report --flamegraphs`)."""
from dbdrift.results.targets import merged_stacks, server_configs
from dbdrift.store.store import RunRecord, Store


def two_targets(path) -> tuple[Store, int, list[int]]:
    store = Store(path)
    cid = store.add_campaign("c", {"name": "c"}, {"cpus": 2}, "0.1.0")
    ids = [store.ensure_target(cid, name, "mariadb", pos, pos == 0, {"name": name})
           for pos, name in enumerate(("old", "new"))]
    return store, cid, ids


def run(test: str, folded: dict[str, int] | None) -> RunRecord:
    return RunRecord(test=test, test_group="point", threads=1, repeat=0, status="ok", warmup_s=1, duration_s=5,
                     metric="qps", driver_spec={}, value=1.0, folded=folded)


def test_each_target_config_is_headed_by_engine_version_and_source_and_one_never_started_says_so(tmp_path):
    store, cid, (old, _new) = two_targets(tmp_path / "s.db")
    store.set_target_facts(old, install={"source": "system", "version": "10.11"},
                           server={"version": "10.11.6", "config_text": "[mysqld]\nport = 3307\n\n"})
    assert server_configs(store, cid) == ("# ===== target old: mariadb 10.11.6 (system)\n[mysqld]\nport = 3307\n\n"
                                          "# ===== target new: mariadb ? (?)\n"
                                          "# no configuration stored: its server never started\n")


def test_stacks_of_one_test_and_target_are_summed_over_runs_and_warm_ups_left_out(tmp_path):
    store, cid, (old, new) = two_targets(tmp_path / "s.db")
    for stacks in ({"main;a": 2, "main;b": 1}, {"main;a": 3}):
        store.add_run(old, run("point-query", stacks))
    store.add_run(old, run("point-query.warm", {"main;warm": 9}))
    store.add_run(new, run("point-query", None))
    assert merged_stacks(store, cid) == {("point-query", 1, "old"): {"main;a": 5, "main;b": 1}}


def test_sysbench_gives_each_measured_cells_stacks_merged_by_test_threads_and_target(tmp_path):
    from dbdrift.workloads.registry import WORKLOADS
    store, cid, (old, new) = two_targets(tmp_path / "s.db")
    for stacks in ({"main;a": 2}, {"main;a": 3, "main;b": 1}):
        store.add_run(old, run("point-query", stacks))
    store.add_run(old, run("point-query.warm", {"main;warm": 9}))
    store.add_run(new, run("point-query", None))
    assert WORKLOADS["sysbench"].stacks(store, cid) == [("point-query x1", "old", {"main;a": 5, "main;b": 1})]


def test_an_insert_benchmark_and_a_tpcc_campaign_write_a_flamegraph_per_step_and_target_and_one_against_the_base(
        tmp_path):
    from dbdrift.app.report import write_workload_flamegraphs
    from dbdrift.model import InsertStepResult, TpccResult
    from dbdrift.workloads.registry import WORKLOADS
    store, cid, (old, new) = two_targets(tmp_path / "s.db")
    for tid, name, stacks in ((old, "old", {"main;vacuum": 4, "main;insert": 6}), (new, "new", {"main;insert": 9})):
        for repeat in (0, 1):
            store.add_ibench_step(tid, InsertStepResult(name, "l.i1", "ok", 1, 5.0, 100, 100, 0, 20.0, 20.0, 0.0,
                                                        repeat=repeat, folded=stacks))
        store.add_tpcc_run(tid, TpccResult(name, "ok", 1, 1, False, folded=None if name == "new" else stacks))
    stored = store.ibench_steps(cid)
    assert stored[0].folded == {"main;vacuum": 4, "main;insert": 6}
    written = write_workload_flamegraphs(store, cid, WORKLOADS["insert-benchmark"], None, tmp_path / "ib")
    assert sorted(p.name for p in written) == ["l.i1.new-vs-old.diff.svg", "l.i1.new.folded", "l.i1.new.svg",
                                               "l.i1.old.folded", "l.i1.old.svg"]
    assert (tmp_path / "ib" / "l.i1.old.folded").read_text() == "main;insert 12\nmain;vacuum 8\n"  # both repeats
    written = write_workload_flamegraphs(store, cid, WORKLOADS["tpcc"], None, tmp_path / "tp")
    assert sorted(p.name for p in written) == ["tpcc.old.folded", "tpcc.old.svg"]  # no stacks of new: no diff
