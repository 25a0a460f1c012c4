"""What the listing verbs (`catalog`, `versions`, `bloat`) find, as records report/ renders and
app/ fills: plain data, no I/O. Their entries are the JSON objects `--format json` prints."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dbdrift.model import JsonObject


@dataclass(frozen=True)
class CatalogListing:
    """`entries`: catalog.sysbench.describe of each test, in report order; `group_titles`: group -> title."""
    entries: list[JsonObject]
    group_titles: dict[str, str]


@dataclass(frozen=True)
class VersionsOutcome:
    """One listing per engine; `failed`: a source could not be asked, or a Debian suite could not
    be read (the rest is still listed)."""
    engines: list[JsonObject]
    cache_dir: Path

    @property
    def failed(self) -> bool:
        return any(s.get("error") or s.get("unread") for entry in self.engines for s in entry["sources"])


@dataclass(frozen=True)
class BloatOutcome:
    """`binaries`: one row of sizes per target, the first the reference; `objects`: per target
    after the first with a build tree, its object files that grew most."""
    binaries: list[JsonObject]
    objects: list[JsonObject]

    def as_dict(self) -> JsonObject:
        return {"binaries": self.binaries, "objects": self.objects}
