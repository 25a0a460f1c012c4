"""A store builder for tests of what campaigns in turns with repeats tell about a host: each
target's runs of each repeat (a server start) as 10 ms turns, with an offset drawn per start
and noise per turn, as `dbdrift run` stores them."""
from __future__ import annotations

import math
import random

from dbdrift.store.store import RunRecord, Store

HOST = {"hostname": "bench1", "cpu_model": "AMD EPYC", "cpus": 2, "memory_bytes": 25 * 2 ** 30}
OTHER_HOST = {"hostname": "bench2", "cpu_model": "Intel Xeon", "cpus": 8, "memory_bytes": 64 * 2 ** 30}


def add_turns(store: Store, name: str, rng: random.Random, starts: int, between: float = 0.01,
              turn_sd: float = 0.03, ratios: dict[str, float] | None = None, calibration: bool = False,
              host: dict | None = None, tests: tuple[str, ...] = ("point-query",), restart: str = "repeat",
              created: str | None = None, twin: bool = False, rounds: int = 200, read_s: float = 5.0) -> int:
    """A sysbench campaign in turns: the base `a` and each target of `ratios` (name -> its true
    rQPS against `a`; default one target `b` at 0.9), and with `twin` the base's twin `a-aa`
    (ratio 1, stored as a twin). Every start draws each non-base target an offset of sd `between`."""
    ratios = dict(ratios if ratios is not None else {"b": 0.9})
    if twin:
        ratios.setdefault("a-aa", 1.0)  # a twin is 1 by construction; a test may plant a lean to see it counted
    names = ["a", *ratios]
    targets = [{"name": n, "engine": "postgres", "version": "17.10", "settings": {}, "base": n == "a",
                **({"twin": True} if twin and n == "a-aa" else {})} for n in names]
    spec = {"name": name, "rows": 1000, "tables": 1, "order": "turns", "restart": restart, "read_s": read_s,
            "write_s": read_s, "repeats": starts, "calibration": calibration, "workload": "sysbench",
            "targets": targets, **({"aa_twin": True} if twin else {})}
    cid = store.add_campaign(name, spec, host or HOST, "0.1.0")
    if created:
        store.db.execute("UPDATE campaigns SET created_at = ? WHERE id = ?", (created, cid))
        store.db.commit()
    ids = {}
    for pos, t in enumerate(targets):
        ids[t["name"]] = store.ensure_target(cid, t["name"], "postgres", pos, pos == 0, t)
        store.set_target_facts(ids[t["name"]], server={"version": "17.10"}, install=None)
    for test in tests:
        for rep in range(starts):
            offsets = {n: (0.0 if n == "a" else math.log(ratios[n]) + rng.gauss(0.0, between)) for n in names}
            for pos, n in enumerate(names):
                intervals = []
                for r in range(rounds):
                    value = 1000.0 * math.exp(offsets[n] + rng.gauss(0.0, turn_sd))
                    start = r * 0.01 * len(names) + pos * 0.01
                    intervals.append({"index": r, "round": r, "position": (pos + r) % len(names), "start_s": start,
                                      "end_s": start + 0.01, "events": value * 0.01, "statements": value * 0.01,
                                      "rows": 0, "errors": {}, "latency_us": {}, "steal_pct": 0.0})
                mean = sum(iv["statements"] for iv in intervals) / (rounds * 0.01)
                store.add_run(ids[n], RunRecord(test=test, test_group="point", threads=1, repeat=rep, status="ok",
                                                warmup_s=1, duration_s=read_s, metric="qps", driver_spec={},
                                                value=mean, intervals=intervals))
    return cid
