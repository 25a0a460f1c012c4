"""An A/A campaign: one target of a campaign file against a copy of itself, in turns. The stored
campaign gives each microbenchmark's noise floor on this host; reports use the newest one
(`--noise-floor auto`) to raise the minimum effect of their verdicts. `run` executes it."""
from __future__ import annotations

from pathlib import Path

from dbdrift.plan.campaign import CampaignSpec as CampaignSpec  # what the verb hands to `run`
from dbdrift.plan.campaign import as_calibration
from dbdrift.workloads.registry import load_campaign


def campaign(path: Path, sets: list[str], target: str | None) -> CampaignSpec:
    """The file's campaign with `sets` applied, reduced to `target` (default: the base) and its copy."""
    return as_calibration(load_campaign(path, sets), target)
