"""A workload's own values (`CampaignSpec.params`: its slice's Params record, read from its table
or, sysbench's, from its top-level keys), as each slice reads them typed; the axes of a workload
whose keys make none, and what a workload of whole repeats answers of sysbench's per-test notions
(instruction counts, measured lengths by kind of test, turns); and the refusal of the top-level
keys a workload does not take."""
from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn, Protocol, TypeVar

from dbdrift.errors import InputError
from dbdrift.plan import fields, keys
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


def params_of(spec: HasParams, kind: type[P], table: str | None) -> P:
    """The campaign's `[table]` (None: the workload's top-level keys, sysbench's) as read, as the
    slice's record `kind`; a campaign of another workload has none, which is a mistake of the
    caller's (TypeError, not an assert, so that it holds under -O)."""
    if not isinstance(spec.params, kind):
        raise TypeError(f"campaign {spec.name} is a {spec.workload} campaign: it has no "
                        + (f"[{table}]" if table else f"{kind.__name__}"))
    return spec.params


def no_axes(top: fields.Table) -> tuple[Axis, ...]:
    """A workload whose keys make no axis: its variants are the campaign's [axes.NAME] only."""
    return ()


def counts_no_instructions(spec: HasParams) -> bool:
    """A workload without a catalogue of tests counts no instructions (caps.counts_instructions)."""
    return False


def refuse_counting(spec: HasParams, simulate_cache: bool) -> NoReturn:
    """A workload that counts no instructions cannot be made to: its callers ask
    caps.counts_instructions first, so this is their mistake (TypeError, as params_of)."""
    raise TypeError(f"campaign {spec.name} is a {spec.workload} campaign: it counts no instructions")


def no_measured_lengths(spec: HasParams) -> dict[str, float]:
    """A workload whose runs are whole repeats has no measured length per kind of test."""
    return {}


def no_thread_counts(spec: HasParams) -> tuple[int, ...]:
    """A workload whose runs are whole repeats runs no test at thread counts of its own."""
    return ()


def refuse_measured_lengths(spec: HasParams, lengths: dict[str, float]) -> NoReturn:
    """A workload whose runs are whole repeats has no lengths to choose: its callers ask
    caps.per_test_runs first, so this is their mistake."""
    raise TypeError(f"campaign {spec.name} is a {spec.workload} campaign: its runs are whole repeats")


def refuse_turns(spec: HasParams) -> NoReturn:
    """A workload whose targets do not take turns answers nothing of turns (their length, the rows
    each server taking them holds): its callers ask caps.takes_turns first, so this is their
    mistake."""
    raise TypeError(f"campaign {spec.name} is a {spec.workload} campaign: its targets take no turns")


@dataclass(frozen=True)
class RefuseTopLevelKeys:
    """A workload's `refuse` hook: the top-level keys that `workload` does not take (sysbench's
    sizes and durations, in a campaign of another workload) are refused rather than ignored: the
    rows of `top` (the core's and every workload's, plan/campaign.py's top_keys) say which those
    are. `title` names that workload in the message, `hint` follows "remove <key>; ". A value
    rather than a closure, so its Workload pickles and compares equal."""

    workload: str
    title: str
    hint: str

    def __call__(self, top: fields.Table) -> None:
        for key in keys.only_for(self.workload, top.every_row()):
            if key in top.data:
                takers = list(top.key(key).workloads)
                named = (f"the {takers[0]} workload" if len(takers) == 1
                         else "the " + ", ".join(takers[:-1]) + f" and {takers[-1]} workloads")
                raise InputError(f"{top.where}: {key} applies to {named}, not {self.title}",
                                 f"remove {key}; {self.hint}")
