"""A comparison without a campaign file: two or more targets on the default suite, as the
campaign a file would hold, so a comparison can grow into a file when it needs more. `run`
executes it as it executes a file's."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dbdrift.app.targets import parse_target
from dbdrift.errors import UserError
from dbdrift.model import JsonObject
from dbdrift.plan.campaign import CampaignSpec as CampaignSpec  # what the verb hands to `run`
from dbdrift.workloads.registry import parse_campaign
from dbdrift.plan.fields import NAME
from dbdrift.plan.overrides import apply_sets
from dbdrift.server.versions import pinned

DEFAULT_DURATION_S = 60.0


@dataclass(frozen=True)
class CompareRequest:
    """The targets as written on the command line (the first is the base) and the campaign keys
    compare sets; `threads` is the text of --threads (`1,4`), `tests` None for default32."""
    targets: tuple[str, ...]
    rows: int = 1_000_000
    tables: int = 1
    threads: str = "1"
    duration_s: float = DEFAULT_DURATION_S
    repeats: int = 1
    name: str | None = None
    tests: tuple[str, ...] | None = None
    sets: tuple[str, ...] = ()
    source: str | None = None  # --source: every version from this source (packager) only


def campaign_data(request: CompareRequest) -> JsonObject:
    """The campaign as a file's table (`--set` applied), the keys compare sets and nothing more."""
    if len(request.targets) < 2:
        raise UserError("compare needs two targets or more (the first is the base)",
                        "e.g. dbdrift compare 17.10 18.4", exit_code=2)
    used: set[str] = set()
    targets = [parse_target(t, used) for t in request.targets]
    if request.source:  # a version the user wrote bare comes from the one source asked for
        targets = [{**t, "version": pinned(t["engine"], t["version"], request.source)} if "version" in t else t
                   for t in targets]
    try:
        threads = [int(t) for t in request.threads.split(",")]
    except ValueError:
        raise UserError(f"--threads {request.threads!r} is not a list of numbers", "e.g. --threads 1,4",
                        exit_code=2) from None
    name = request.name or "compare-" + "-vs-".join(t["name"] for t in targets)
    if not request.name and not NAME.match(name):
        name = name[:64].rstrip("._+-")
    data = {"name": name, "tables": request.tables, "rows": request.rows, "threads": threads,
            "read_s": request.duration_s, "write_s": request.duration_s, "repeats": request.repeats,
            "tests": list(request.tests) if request.tests else ["default32"], "targets": targets}
    return apply_sets(data, list(request.sets))


def campaign(data: JsonObject) -> CampaignSpec:
    """The campaign table checked whole, as a file's would be."""
    return parse_campaign(data, "dbdrift compare", Path.cwd(), data["name"])
