"""A campaign on a cluster of hosts with network stacks of their own: network namespaces the test
makes (`ip netns`), `<tag>-s` with the Dask scheduler, the client and a bridge, and `<tag>-w1`,
`<tag>-w2` with a `dbdrift worker` each, joined to the bridge by veth pairs. Nothing is routed
out of them: every address is on the bridge's /24 or loopback. Then a host is lost mid-unit
(every process of its namespace killed) or cut off (its link taken down until the scheduler
drops it, then brought back), and the campaign must still store each cell once, with the host
that measured it."""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.helpers import cli_env, dbdrift, postgres_processes_under, query, shared_work_dir, wait_for
from tests.server.test_cluster import campaign, live_runs, measured_on

pytestmark = pytest.mark.server

WORKERS = ("w1", "w2")
TESTS = ["update-index", "update-nonindex", "update-one"]  # two units, one of two tests; writes: no warm-up runs
PORT = 8786  # the scheduler's, in a namespace of its own: no other run's port to collide with
WORKER_TTL_S = 6  # Dask drops a worker unheard of this long (5 min by default): the partition test waits on it


def ip(*args: str) -> None:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        raise OSError(f"ip {' '.join(args)}: {result.stderr.strip()}")


class Hosts:
    """Three namespaces on one bridge: the scheduler and client at 10.77.N.1, a worker at .2
    and .3, each with its work directory under `root/<worker name>`."""

    def __init__(self, tag: str, subnet: int, root: Path) -> None:
        self.tag, self.net, self.root = tag, f"10.77.{subnet}", root
        self.address = f"tcp://{self.net}.1:{PORT}"
        self.procs: dict[str, subprocess.Popen] = {}  # by name: "scheduler", a worker's, "client"
        self.logs: dict[str, Path] = {}

    def ns(self, host: str) -> str:
        return f"{self.tag}-{host}"

    def make(self) -> None:
        for host in ("s", *WORKERS):
            ip("netns", "add", self.ns(host))
            ip("-n", self.ns(host), "link", "set", "lo", "up")
        s = self.ns("s")
        ip("-n", s, "link", "add", "br0", "type", "bridge")
        ip("-n", s, "addr", "add", f"{self.net}.1/24", "dev", "br0")
        ip("-n", s, "link", "set", "br0", "up")
        for number, worker in enumerate(WORKERS, start=2):
            ip("-n", s, "link", "add", self.link(worker), "type", "veth", "peer", "name", "eth0", "netns",
               self.ns(worker))
            ip("-n", s, "link", "set", self.link(worker), "master", "br0", "up")
            ip("-n", self.ns(worker), "addr", "add", f"{self.net}.{number}/24", "dev", "eth0")
            ip("-n", self.ns(worker), "link", "set", "eth0", "up")

    def link(self, worker: str) -> str:
        """The bridge's end of a worker's veth pair (in the -s namespace)."""
        return f"v{worker}"

    def spawn(self, host: str, name: str, argv: list[str], extra_env: dict | None = None) -> subprocess.Popen:
        """`argv` in the namespace of `host`, its output in a log of its own (a full pipe would
        stall a Dask event loop and stop its heartbeats)."""
        log = self.root / f"{name}.log"
        self.logs[name] = log
        with log.open("w") as out:
            proc = subprocess.Popen(["ip", "netns", "exec", self.ns(host), *argv], stdout=out,
                                    stderr=subprocess.STDOUT, text=True, env=cli_env(extra_env=extra_env))
        self.procs[name] = proc
        return proc

    def log(self, name: str) -> str:
        return self.logs[name].read_text(errors="replace")

    def start(self) -> None:
        dask = str(Path(sys.executable).parent / "dask")
        scheduler = self.spawn("s", "scheduler", [dask, "scheduler", "--host", f"{self.net}.1", "--port", str(PORT),
                                                  "--no-dashboard"],
                               {"DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL": f"{WORKER_TTL_S}s",
                                # the partitioned worker's nanny is tried before it is dropped: fail fast
                                "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "3s"})
        wait_for(lambda: "Scheduler at:" in self.log("scheduler"), 60, "the scheduler", scheduler)
        for worker in WORKERS:
            self.spawn(worker, worker, [sys.executable, "-m", "dbdrift", "worker", self.address, "--name", worker,
                                        "--work-dir", str(self.root / worker)])
        for worker in WORKERS:
            wait_for(lambda: "serving" in self.log(worker), 120, f"worker {worker} to join")

    def client(self, *args: str) -> subprocess.Popen:
        """`dbdrift ARGS` in the scheduler's namespace."""
        return self.spawn("s", "client", [sys.executable, "-m", "dbdrift", *map(str, args)])

    def pids(self, host: str) -> list[int]:
        result = subprocess.run(["ip", "netns", "pids", self.ns(host)], capture_output=True, text=True, timeout=30)
        return [int(p) for p in result.stdout.split()]

    def kill(self, host: str) -> None:
        """SIGKILL every process of `host`'s namespace (the host is gone), until none is left."""
        deadline = time.monotonic() + 30
        while (pids := self.pids(host)) and time.monotonic() < deadline:
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)
        assert not self.pids(host), f"processes of {self.ns(host)} outlived SIGKILL"

    def remove(self) -> None:
        for host in ("s", *WORKERS):
            try:
                self.kill(host)
            except AssertionError:
                pass
        for proc in self.procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        for host in ("s", *WORKERS):
            subprocess.run(["ip", "netns", "del", self.ns(host)], capture_output=True, timeout=30)


@pytest.fixture
def hosts(tmp_path, pg17, pg18):
    """The cluster of three namespaces, started; torn down whatever the test did, its processes'
    logs kept in tmp_path. The builds are fetched first, from this namespace: the workers' reach
    no registry."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("network namespaces need root and `ip` (iproute2)")
    tag = f"dd{uuid.uuid4().hex[:6]}"  # parallel or leftover runs do not collide
    made = Hosts(tag, random.randint(1, 254), shared_work_dir("netns"))
    try:
        try:
            made.make()
        except OSError as exc:
            pytest.skip(f"cannot make network namespaces here: {exc}")
        made.start()
        yield made
    finally:
        made.remove()
        for log in made.logs.values():
            shutil.copy(log, tmp_path)
        shutil.rmtree(made.root, ignore_errors=True)


def first_test_of_a_longer_unit(store: Path) -> str | None:
    """The worker of a unit that has stored one whole test (every target's run) and has tests
    left to run: cutting it off now is mid-unit, and what it measured stays in the results."""
    rows = query(store, "SELECT r.test, r.worker, u.tests_json FROM runs r JOIN units u ON u.id = r.unit_id "
                        "JOIN targets t ON t.id = r.target_id WHERE r.status = 'ok' AND r.test NOT LIKE '%.warm' "
                        "GROUP BY r.unit_id, r.test HAVING count(DISTINCT t.name) = 2")
    for r in rows:
        if len(json.loads(r["tests_json"])) > 1:
            return r["worker"].split()[0]
    return None


def assert_each_cell_once_on_the_host_that_measured_it(store: Path, root: Path) -> list:
    """Every cell stored once and ok, and each run's worker is the host whose own unit store holds it."""
    runs = live_runs(store)
    cells = [(r["target"], r["test"]) for r in runs]
    assert len(cells) == len(set(cells)) == 2 * len(TESTS) and all(r["status"] == "ok" for r in runs), runs
    on_host = measured_on(root)
    for r in runs:
        assert (r["target"], r["test"]) in on_host[r["measured_by"].split()[0]], dict(r)
    return runs


def run_until_a_longer_unit_starts(tmp_path: Path, hosts, name: str):
    """A two-host run of TESTS under way: the store, the client, the host whose unit has tests still
    to run once its first is stored (the one to lose), and the other host."""
    store = tmp_path / "s.db"
    client = hosts.client("run", campaign(tmp_path, name, TESTS, read_s=0.5), "--store", store, "--cluster",
                          hosts.address, "--no-report")
    victim = wait_for(lambda: first_test_of_a_longer_unit(store), 300, "a unit's first test", client)
    return store, client, victim, next(w for w in WORKERS if w != victim)


def assert_the_unit_requeued_once(store: Path, hosts, client, victim: str, other: str) -> tuple[list, list]:
    """The run ends well, says the lost host's unit went to the other, and every cell is stored
    once; returns the live runs and the units, the lost one attempted twice."""
    assert client.wait(timeout=400) == 0, hosts.log("client")[-3000:]
    err = hosts.log("client")
    assert f"worker {victim} was lost; re-queued on {other}" in err, err[-3000:]
    runs = assert_each_cell_once_on_the_host_that_measured_it(store, hosts.root)
    units = query(store, "SELECT * FROM units ORDER BY number")
    assert sorted(u["attempts"] for u in units) == [1, 2] and {u["status"] for u in units} == {"done"}
    return runs, units


def test_a_host_killed_mid_unit_is_requeued_on_the_other_and_each_run_keeps_its_host(tmp_path, hosts):
    store, client, victim, other = run_until_a_longer_unit_starts(tmp_path, hosts, "lost")
    hosts.kill(victim)
    runs, units = assert_the_unit_requeued_once(store, hosts, client, victim, other)
    (requeued,) = [u for u in units if u["attempts"] == 2]
    assert requeued["worker"].split()[0] == other
    assert {r["measured_by"].split()[0] for r in runs if r["unit_id"] == requeued["id"]} == {victim, other}
    assert postgres_processes_under(hosts.root / victim) == [] and hosts.pids(victim) == []
    report = dbdrift("report", "--store", store, timeout=120)
    assert f"; its results measured on {victim}, {other}" in report.stdout, report.stdout[-3000:]


def test_a_partitioned_host_s_unit_is_requeued_and_its_late_results_are_not_stored(tmp_path, hosts):
    store, client, victim, other = run_until_a_longer_unit_starts(tmp_path, hosts, "cut")
    ip("-n", hosts.ns("s"), "link", "set", hosts.link(victim), "down")
    try:  # the scheduler drops the silent worker after its TTL, and the unit starts on the other host
        wait_for(lambda: query(store, "SELECT 1 FROM units WHERE attempts = 2"), 300, "the unit re-queued", client)
        cut_off = stored_from(store, victim)
    finally:
        ip("-n", hosts.ns("s"), "link", "set", hosts.link(victim), "up")
    runs, _ = assert_the_unit_requeued_once(store, hosts, client, victim, other)
    assert {r["measured_by"].split()[0] for r in runs} == {victim, other}
    # the cut-off attempt went on measuring into its own store; nothing it sent after the cut (its
    # late lines, once the link was back) is stored
    assert stored_from(store, victim) == cut_off
    late = measured_on(hosts.root)[victim] - {(target, test) for _, target, test in cut_off}
    assert late, cut_off
    # back on the network, the dropped worker is closed by Dask: `dbdrift worker` ends, its unit's servers stop
    wait_for(lambda: hosts.procs[victim].poll() is not None and not postgres_processes_under(hosts.root / victim),
             60, f"worker {victim} to end")
    assert hosts.procs[victim].returncode == 0, hosts.log(victim)[-3000:]


def stored_from(store: Path, worker: str) -> set[tuple[int, str, str]]:
    """(id, target, test) of every run in the store measured by `worker`, superseded ones included."""
    return {tuple(r) for r in query(store, "SELECT r.id, t.name, r.test FROM runs r JOIN targets t ON t.id = "
                                           "r.target_id WHERE r.worker LIKE ?", f"{worker} %")}
