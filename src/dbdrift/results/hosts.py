"""Which machine a stored campaign ran on, as history, detect and publish tell hosts apart."""
from __future__ import annotations

from dbdrift.model import JsonObject


def host_key(host: JsonObject) -> str:
    """Which machine: hostname, CPU model, CPU count and memory (whole GiB). Kernel, load and
    clock speed are left out: they change on one machine between campaigns."""
    memory = round((host.get("memory_bytes") or 0) / 2 ** 30)
    return f"{host.get('hostname') or '?'} ({host.get('cpu_model') or '?'}, {host.get('cpus') or '?'} cpus, {memory} GiB)"
