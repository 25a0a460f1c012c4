"""A host check: host facts, what perf and valgrind can measure here, and warnings with a concrete
fix each. Advice only: it changes nothing."""
from __future__ import annotations

import shutil
from dataclasses import asdict

from dbdrift.metrics import host, perf
from dbdrift.model import JsonObject


def check(steal_window_s: float) -> JsonObject:
    """`facts` (metrics/host.py), `warnings` (each a message and a hint), `perf` (what perf can
    count here) and `valgrind` (its path, or None): the JSON `dbdrift system check` prints."""
    facts = host.host_facts(steal_window_s=steal_window_s)
    return {"facts": facts, "warnings": host.check(facts), "perf": asdict(perf.probe()),
            "valgrind": shutil.which("valgrind")}
