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
