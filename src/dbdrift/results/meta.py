"""What every workload's report says of its campaign besides its figures: who made it from what
(`meta`, the JSON's envelope, and its format version), where the servers ran and how (the host's
notes, the flush setting compared), which cluster host measured what, and the error for a
campaign the store does not hold. Read from the store; writes nothing."""
from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from datetime import datetime, timezone

from dbdrift.analysis.defaults import flush_note
from dbdrift.analysis.foreign import FOREIGN_KINDS, neighbours_note
from dbdrift.analysis.noise import Verdict
from dbdrift.cpus import Placement
from dbdrift.errors import InputError, UserError
from dbdrift.model import SLOW_FSYNC_US, JsonObject, is_warm_run
from dbdrift.results.targets import flush_settings_compared
from dbdrift.store.store import Store
from dbdrift.store.stored import TargetRecord
from dbdrift.version import __version__

# of the JSON and CSV layouts: raised when a field is renamed or removed, or changes meaning
# (5: every workload's JSON opens with one envelope and every CSV ends with the campaign columns,
# workload first; a default that differs fills its own `setting*` CSV columns;
# 4: rqps is the ratio of the targets' throughputs, docs/noise.md D6;
# 3: a `measure` field (timed | instructions); instruction counts are rows of their own)
FORMAT_VERSION = 5


def no_campaign(store: Store, campaign: str | None) -> UserError:
    """The error for a campaign the store does not hold, naming those it does."""
    known = [c["name"] for c in store.campaigns()]
    if not known:
        return UserError(f"store {store.path} holds no campaign",
                         "run `dbdrift compare 17.10 18.4`, `dbdrift run CAMPAIGN.toml` or `dbdrift demo` first")
    names = ", ".join(dict.fromkeys(reversed(known)))  # newest first, each name once
    return InputError(f"store {store.path} has no campaign {campaign!r}",
                      f"it holds {names}; `dbdrift campaigns --store {store.path}` lists them with ids")


def report_meta(store: Store, campaign_id: int, generated_at: str | None = None) -> JsonObject:
    """Who made this report from what: tool and format version, date, host, campaign settings."""
    row = store.campaign(campaign_id)
    host, spec = row.host, row.spec
    targets = []
    specs = {t["name"]: t for t in spec.get("targets", [])}
    for t in store.targets(campaign_id):
        server, install = t.server, t.install
        variant = {k: specs[t.name][k] for k in ("variant", "parent", "levels") if k in specs.get(t.name, {})}
        # how it was configured, where the campaign said (the post's "what was compared")
        variant.update({k: v for k in ("named_config", "config", "settings") if (v := specs.get(t.name, {}).get(k))})
        targets.append({"name": t.name, "engine": t.engine, "base": t.is_base,
                        "version": server.get("version", install.get("version")), "source": install.get("source"),
                        "binary": install.get("binary"), **variant})
    return {
        "dbdrift_version": __version__, "format_version": FORMAT_VERSION,
        "generated_at": generated_at or datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "host": {k: host.get(k) for k in ("hostname", "cpu_model", "cpus", "memory_bytes", "kernel", "os",
                                          "virtualized")},
        "campaign": {"id": campaign_id, "name": row.name, "created_at": row.created_at,
                     "dbdrift_version": row.dbdrift_version,
                     "settings": {k: v for k, v in spec.items() if k != "targets"}},
        "targets": targets,
        **({"units": units} if (units := unit_meta(store, campaign_id)) else {}),
    }


PINNED = "-pinned"  # app/recheck.py's campaign of a campaign's regressions with the defaults pinned


def followed(verdict: Verdict) -> str:
    """What a rechecked cell's verdict says of the regression it rechecks."""
    if verdict.unclear:
        return "too unclear to say whether it followed them"
    return "the regression followed the defaults" if verdict is not Verdict.REGRESSION else "it did not follow them"


def flush_notes(host: JsonObject, targets: list[TargetRecord], references: Mapping[str, str]) -> tuple[str, ...]:
    """Where targets differ in a setting that decides whether a commit waits for a flush: whether
    this host's device (its flush latency, stored with the host facts) or the server decides."""
    note = flush_note(flush_settings_compared(targets, dict(references)), host.get("fsync"), SLOW_FSYNC_US)
    return (note,) if note else ()


def foreign_notes(stored_runs: list[sqlite3.Row], spec: JsonObject) -> tuple[str, ...]:
    """A campaign of one repeat, its targets one after the other, whose runs saw foreign load
    (their `foreign_*` warnings, analysis/foreign.py): its ratios may be the neighbours'."""
    flagged = sum(1 for r in stored_runs if not is_warm_run(r["test"])
                  and any(w.get("kind") in FOREIGN_KINDS for w in json.loads(r["warnings_json"] or "[]")))
    return neighbours_note("this campaign", flagged, spec.get("repeats") or 1, spec.get("order") == "turns")


def host_notes(host: JsonObject, servers: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Where the servers ran (cpus), then `servers` (how they ran: the I/O method), and every
    warning the host raised when the campaign started."""
    placed = (f"cpus: {Placement.from_dict(host['placement']).describe()}",) if "placement" in host else ()
    return placed + servers + tuple(f"host warning: {w['message']} (hint: {w['hint']})" for w in host.get("warnings", []))


def unit_notes(store: Store, campaign_id: int) -> tuple[str, ...]:
    """A campaign run on a cluster: which host measured which tests."""
    rows = [u for u in store.units(campaign_id) if u.status != "kept"]
    if not rows:
        return ()
    measured = store.unit_workers([u.id for u in rows])
    parts = []
    for u in rows:
        what = ", ".join(u.tests) if u.tests else "repeats " + ", ".join(str(r + 1) for r in u.repeats) \
            if u.repeats else "all"
        status = "" if u.status == "done" else f", {u.status}" + (f": {u.error}" if u.error else "")
        again = f", {u.attempts} attempts" if u.attempts > 1 else ""
        name = (u.worker or "?").split()[0]
        where = name if u.hostname in (None, name) else f"{name} ({u.hostname})"
        hosts = list(dict.fromkeys(w.split()[0] for w in measured.get(u.id, [])))
        elsewhere = f"; its results measured on {', '.join(hosts)}" if hosts and hosts != [name] else ""
        parts.append(f"unit {u.number} on {where}: {what}{again}{status}{elsewhere}")
    return ("cluster: " + "; ".join(parts),)


def unit_meta(store: Store, campaign_id: int) -> list[JsonObject]:
    """Each unit with its last worker and `measured_on`, every worker whose results of it the
    report uses (a unit re-queued after its host was lost has more than one)."""
    rows = [u for u in store.units(campaign_id) if u.status != "kept"]
    measured = store.unit_workers([u.id for u in rows])
    return [{"unit": u.number, "status": u.status, "tests": u.tests, "repeats": u.repeats,
             "hostname": u.hostname, "worker": u.worker, "measured_on": measured.get(u.id, []),
             "attempts": u.attempts, "error": u.error,
             "host": {k: v for k, v in u.host.items() if k in ("hostname", "cpu_model", "cpus", "memory_bytes", "kernel")}}
            for u in rows]
