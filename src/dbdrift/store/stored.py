"""What the store's reads return of a campaign and its targets: their rows with the JSON
columns parsed once, typed, so that no reader parses a column itself. Holds no SQL (reads.py)."""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from dbdrift.model import JsonObject


def _object(text: str | None) -> JsonObject | None:
    return json.loads(text) if text else None


@dataclass(frozen=True)
class CampaignRecord:
    """A stored campaign: its spec (the campaign file as run) and the facts of the host that ran
    it (of one that measured it, on a cluster)."""

    id: int
    name: str
    created_at: str  # ISO 8601, UTC
    spec: JsonObject
    host: JsonObject
    dbdrift_version: str  # of the dbdrift that stored it

    @property
    def workload(self) -> str:
        """The workload it ran (campaigns stored before workloads had one: sysbench)."""
        return str(self.spec.get("workload", "sysbench"))

    @classmethod
    def of(cls, row: sqlite3.Row) -> CampaignRecord:
        return cls(id=int(row["id"]), name=row["name"], created_at=row["created_at"],
                   spec=json.loads(row["spec_json"]), host=_object(row["host_json"]) or {},
                   dbdrift_version=row["dbdrift_version"])


@dataclass(frozen=True)
class TargetRecord:
    """A stored target of a campaign: its spec (the campaign file's target as run) and the facts
    of its install and its server (empty: not stored, e.g. a server that never started)."""

    id: int
    campaign_id: int
    name: str
    engine: str  # postgres, mysql, mariadb
    position: int  # its place in the campaign's targets
    is_base: bool
    spec: JsonObject
    install: JsonObject  # server/ InstallInfo as stored: version, source, binary, build
    server: JsonObject  # what the running server reported: version, settings

    @classmethod
    def of(cls, row: sqlite3.Row) -> TargetRecord:
        return cls(id=int(row["id"]), campaign_id=int(row["campaign_id"]), name=row["name"], engine=row["engine"],
                   position=int(row["position"]), is_base=bool(row["is_base"]), spec=_object(row["spec_json"]) or {},
                   install=_object(row["install_json"]) or {}, server=_object(row["server_json"]) or {})


@dataclass(frozen=True)
class UnitRecord:
    """A unit of a campaign run on a cluster (`run --cluster`): what it measures (its tests, or
    its repeats of a workload judged over repeats; neither: all) and where it ran, as last known."""

    id: int
    campaign_id: int
    number: int
    host_kind: str | None
    tests: list[str]
    repeats: list[int]
    status: str  # as cluster/client.py sets it ("queued", "running", "done", "kept": complete before --resume, ...)
    attempts: int
    worker: str | None  # "name address" of its last worker
    hostname: str | None
    host: JsonObject  # that host's facts (empty: not known)
    error: str | None
    started_at: str | None
    ended_at: str | None

    @classmethod
    def of(cls, row: sqlite3.Row) -> UnitRecord:
        return cls(id=int(row["id"]), campaign_id=int(row["campaign_id"]), number=int(row["number"]),
                   host_kind=row["host_kind"], tests=json.loads(row["tests_json"]),
                   repeats=json.loads(row["repeats_json"] or "[]"), status=row["status"],
                   attempts=int(row["attempts"] or 0), worker=row["worker"], hostname=row["hostname"],
                   host=_object(row["host_json"]) or {}, error=row["error"], started_at=row["started_at"],
                   ended_at=row["ended_at"])
