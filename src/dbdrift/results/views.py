"""What a report of cells (sysbench's comparison: a verdict per test x client count x target) is
asked besides its campaign: the reference, the chain of versions, how verdicts judge, the noise
floor, the hardware metrics, `--against`, the tests kept and the grouping. One record the verbs
hand the workload's views (the registry's Workload.views), so a view added is a field here and
not a new argument at every call."""
from __future__ import annotations

from dataclasses import dataclass

from dbdrift.analysis.noise import JUDGING, Judging


@dataclass(frozen=True)
class ViewOptions:
    """How `report` (or a verb reading a campaign back) shapes a report of cells."""

    base: str | None = None  # the reference of every target (None: the campaign's base)
    chain: bool = False  # each target against the one before it (a version chain)
    judging: Judging = JUDGING
    noise_floor: str = "none"  # auto (this host's A/A calibrations), none, or a calibration campaign
    metrics: bool = False  # the hardware used per operation, per cell
    against: str | None = None  # a matrix's reference per axis (results/targets.py's AGAINST)
    tests: frozenset[str] | None = None  # keep only these tests, their summaries included
    groups: str | None = None  # the grouping (the catalogue's; None: its default)
