"""A workload's own values (`CampaignSpec.params`: its slice's Params record, read from its table),
as each slice reads them typed, and the axes of a workload whose keys make none."""
from __future__ import annotations

from typing import Protocol, TypeVar

from dbdrift.plan import fields
from dbdrift.plan.axes import Axis

P = TypeVar("P")


class HasParams(Protocol):
    """What params_of reads of a campaign (plan.campaign.CampaignSpec)."""

    @property
    def name(self) -> str: ...
    @property
    def workload(self) -> str: ...
    @property
    def params(self) -> object: ...


def params_of(spec: HasParams, kind: type[P], table: str) -> P:
    """The campaign's `[table]` as read, as the slice's record `kind`; a campaign of another
    workload has none, which is a mistake of the caller's (TypeError, not an assert, so that it
    holds under -O)."""
    if not isinstance(spec.params, kind):
        raise TypeError(f"campaign {spec.name} is a {spec.workload} campaign: it has no [{table}]")
    return spec.params


def no_axes(top: fields.Table) -> tuple[Axis, ...]:
    """A workload whose keys make no axis: its variants are the campaign's [axes.NAME] only."""
    return ()
